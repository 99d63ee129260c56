/*
 * cdi.c - `gpuctl cdi generate|list`: the Container Device Interface spec of
 * the GPUs (docs/containers.md). src/pool/cdi_host.c gathers the host's facts
 * (device minors, MIG capability minors, the nodes that exist, the driver's
 * libraries as the dynamic loader finds them, its binaries on PATH; the pool
 * uses it too); src/view/cdi.c builds the spec from them.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "view/cdi.h"
#include "core/data_path.h"
#include "view/json_util.h"
#include "pool/cdi_host.h"

/* which: NULL the whole command, "generate" or "list" */
static void usage(FILE *out, const char *which)
{
	static const char gen[] = "usage: gpuctl cdi generate [--output FILE] [--dev-dir DIR] [--ldconfig-output FILE]\n";
	static const char list[] = "usage: gpuctl cdi list [--dev-dir DIR] [--ldconfig-output FILE]\n";
	if (!which)
		fprintf(out, "%s       %s\n", gen, list + strlen("usage: "));
	else
		fputs(!strcmp(which, "list") ? list : gen, out);
	if (!which)
		fputs("The Container Device Interface spec (kind nvidia.com/gpu) of the GPUs: one device per\n"
		      "GPU by index and UUID, per MIG instance (GPU:N and UUID), and 'all'; the driver's\n"
		      "libraries and binaries mounted read-only (docs/containers.md).\n"
		      "  generate   write the spec (JSON), for /etc/cdi/nvidia.json\n"
		      "  list       the devices it names, with their device nodes\n\n",
		      out);
	else if (!strcmp(which, "list"))
		fputs("\nThe spec's devices (nvidia.com/gpu=NAME), each with its device nodes.\n\n", out);
	else
		fputs("\nThe spec as JSON: for /etc/cdi/nvidia.json (podman --device nvidia.com/gpu=0).\n\n", out);
	if (!which || strcmp(which, "list"))
		fputs("  -o, --output FILE         write it to FILE (whole or not at all), not stdout\n", out);
	fputs("      --dev-dir DIR         the host's device nodes are in DIR (default /dev)\n"
	      "      --ldconfig-output FILE  read `ldconfig -p` output from FILE instead of running ldconfig\n"
	      "  -h, --help                this help\n\n"
	      "exit codes: 0 ok, 64 usage, 65 bad simulation file, 66 no simulation file,\n"
	      "            69 no driver, no GPU, a GPU's device node or a required library missing,\n"
	      "            74 output error (docs/exit-codes.md)\n",
	      out);
}

struct cdi_args {
	bool list;
	const char *output, *dev_dir, *ldconfig_file;
};

static int parse_args(int argc, char **argv, struct cmd_ctx *ctx, struct cdi_args *a)
{
	if (argc < 2) {
		cmd_error(ctx, "cdi", "a subcommand is needed (generate or list); see 'gpuctl cdi --help'");
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(ctx->out, NULL);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "list"))
		a->list = true;
	else if (strcmp(argv[1], "generate") != 0) {
		cmd_error(ctx, "cdi", "unknown subcommand '%s'; see 'gpuctl cdi --help'", argv[1]);
		return EXIT_USAGE;
	}
	for (int i = 2; i < argc; i++) {
		const char *o = argv[i];
		const char **dst = NULL;
		if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
			usage(ctx->out, argv[1]);
			return EXIT_OK;
		} else if ((!strcmp(o, "-o") || !strcmp(o, "--output")) && !a->list) {
			dst = &a->output;
		} else if (!strcmp(o, "--dev-dir")) {
			dst = &a->dev_dir;
		} else if (!strcmp(o, "--ldconfig-output")) {
			dst = &a->ldconfig_file;
		} else {
			cmd_error(ctx, "cdi", "unknown %s '%s'; see 'gpuctl cdi --help'", o[0] == '-' ? "option" : "argument",
				  o);
			return EXIT_USAGE;
		}
		if (i + 1 >= argc || !argv[i + 1][0]) {
			cmd_error(ctx, "cdi", "option '%s' needs a value", o);
			return EXIT_USAGE;
		}
		*dst = argv[++i];
	}
	return -1;
}

static int write_spec(struct cmd_ctx *ctx, const json_t *spec, const char *output)
{
	if (!output) {
		if (json_dumpf(spec, ctx->out, JSON_INDENT(2)) || fputc('\n', ctx->out) == EOF || fflush(ctx->out)) {
			cmd_error(ctx, "cdi", "cannot write the spec: %s", strerror(errno));
			return EXIT_IOERR;
		}
		return EXIT_OK;
	}
	char err[400];
	if (cdi_spec_write(spec, output, err, sizeof(err))) {
		cmd_error(ctx, "cdi", "%s", err);
		return EXIT_IOERR;
	}
	return EXIT_OK;
}

static void print_list(struct cmd_ctx *ctx, const json_t *spec)
{
	cmd_print_sim_banner(ctx, ctx->out);
	size_t i;
	json_t *d;
	json_array_foreach(json_object_get(spec, "devices"), i, d) {
		fprintf(ctx->out, "%s=%s", CDI_KIND, json_string_value(json_object_get(d, "name")));
		size_t k;
		json_t *n;
		const char *sep = "  ";
		json_array_foreach(json_object_get(json_object_get(d, "containerEdits"), "deviceNodes"), k, n) {
			fprintf(ctx->out, "%s%s", sep, json_string_value(json_object_get(n, "path")));
			sep = ",";
		}
		fputc('\n', ctx->out);
	}
}

int cmd_cdi(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct cdi_args a = { 0 };
	int rc = parse_args(argc, argv, ctx, &a);
	if (rc >= 0)
		return rc;
	if ((rc = cmd_backend(ctx)) != 0)
		return rc;
	struct cdi_host *h = calloc(1, sizeof(*h));
	struct cdi_gpu *gpus = calloc(GPU_MAX_GPUS, sizeof(*gpus));
	if (!h || !gpus) {
		free(h);
		free(gpus);
		cmd_error(ctx, "cdi", "out of memory");
		return EXIT_SOFTWARE;
	}
	unsigned ngpus = 0;
	json_t *spec = NULL;
	char err[300];
	enum cdi_host_err herr = cdi_host_gather(ctx->be, ctx->sys.simulated, a.dev_dir, a.ldconfig_file, h, gpus,
						 &ngpus, err, sizeof(err));
	if (herr != CDI_HOST_OK) {
		cmd_error(ctx, "cdi", "%s", err);
		rc = herr == CDI_HOST_NOINPUT ? EXIT_NOINPUT : EXIT_UNAVAILABLE;
		goto out;
	}
	if (!(spec = cdi_spec_build(h, gpus, ngpus, err, sizeof(err)))) {
		cmd_error(ctx, "cdi", "%s", err);
		rc = EXIT_UNAVAILABLE;
		goto out;
	}
	if (a.list) {
		print_list(ctx, spec);
		rc = EXIT_OK;
	} else {
		rc = write_spec(ctx, spec, a.output);
		if (rc == EXIT_OK && ctx->sys.simulated) /* the JSON has no place to say it */
			fprintf(ctx->err, "gpuctl cdi: SIMULATED server '%s': the spec names its device nodes under %s\n",
				ctx->sys.server_name, h->dev_dir);
	}
out:
	json_decref(spec);
	free(h);
	free(gpus);
	return rc;
}
