/* SPDX-License-Identifier: Apache-2.0 */
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
#include "help.h"
#include "view/cdi.h"
#include "core/data_path.h"
#include "view/json_util.h"
#include "pool/cdi_host.h"
#include "core/table.h"

/* generate's options; list takes all but the first (--output) */
enum { OPT_CDI_OUTPUT, OPT_CDI_DEV_DIR, OPT_CDI_LDCONFIG };
static const struct opt_spec cdi_opts[] = {
	[OPT_CDI_OUTPUT] = { "output", 'o', OPT_STRING, "FILE", "generate: write it to FILE (whole or not at all), not stdout",
			     NULL, 0, 0, NULL },
	[OPT_CDI_DEV_DIR] = { "dev-dir", 0, OPT_STRING, "DIR", "the host's device nodes are in DIR", "/dev", 0, 0, NULL },
	[OPT_CDI_LDCONFIG] = { "ldconfig-output", 0, OPT_STRING, "FILE",
			       "read `ldconfig -p` output from FILE instead of running ldconfig", NULL, 0, 0, NULL },
};
#define CDI_NOPTS (sizeof(cdi_opts) / sizeof(cdi_opts[0]))
#define CDI_GENERATE_USAGE "[--output FILE] [--dev-dir DIR] [--ldconfig-output FILE]"
#define CDI_LIST_USAGE "[--dev-dir DIR] [--ldconfig-output FILE]"
#define CDI_EXITS                                                                                              \
	"0 ok, 64 usage, 65 bad simulation file, 66 no simulation file,\n"                                    \
	"            69 no driver, no GPU, a GPU's device node or a required library missing,\n"               \
	"            74 output error (docs/exit-codes.md)"

static const struct cmd_help cdi_help = {
	.name = "cdi",
	.usage = "generate " CDI_GENERATE_USAGE "\n       gpuctl cdi list " CDI_LIST_USAGE,
	.what = "The Container Device Interface spec (kind nvidia.com/gpu) of the GPUs: one device per\n"
		"GPU by index and UUID, per MIG instance (GPU:N and UUID), and 'all'; the driver's\n"
		"libraries and binaries mounted read-only (docs/containers.md).\n"
		"  generate   write the spec (JSON), for /etc/cdi/nvidia.json\n"
		"  list       the devices it names, with their device nodes\n",
	.opts = cdi_opts,
	.nopts = CDI_NOPTS,
	.exits = CDI_EXITS,
};
static const struct cmd_help cdi_generate_help = {
	.name = "cdi generate",
	.usage = CDI_GENERATE_USAGE,
	.what = "The spec as JSON: for /etc/cdi/nvidia.json (podman --device nvidia.com/gpu=0).\n",
	.opts = cdi_opts,
	.nopts = CDI_NOPTS,
	.exits = CDI_EXITS,
};
static const struct cmd_help cdi_list_help = {
	.name = "cdi list",
	.usage = CDI_LIST_USAGE,
	.what = "The spec's devices (nvidia.com/gpu=NAME), each with its device nodes.\n",
	.opts = cdi_opts + 1,
	.nopts = CDI_NOPTS - 1,
	.exits = CDI_EXITS,
};

struct cdi_args {
	bool list;
	const char *output, *dev_dir, *ldconfig_file;
};

/* -1 to go on, else the exit code (0 after --help, 64 a usage error printed). */
static int parse_args(int argc, char **argv, struct cmd_ctx *ctx, struct cdi_args *a)
{
	static const struct sub_help subs[] = { { .name = "generate" }, { .name = "list" } };
	int sub = help_sub_find(ctx, "cdi", subs, 2, argc, argv);
	if (sub == HELP_SUB_HELP)
		help_print_cmd(ctx->out, &cdi_help);
	if (sub < 0)
		return sub == HELP_SUB_HELP ? EXIT_OK : EXIT_USAGE;
	a->list = sub == 1;
	const struct cmd_help *h = a->list ? &cdi_list_help : &cdi_generate_help;
	struct opt_parser p;
	struct opt_value v;
	int opt, rc;
	opt_init(&p, argc - 1, argv + 1, h->opts, h->nopts);
	while ((opt = help_opt_next(ctx, h, &p, &v, &rc)) != OPT_DONE) {
		if (opt == OPT_HELP || opt == OPT_ERROR)
			return rc;
		switch (opt + (int)(h->opts - cdi_opts)) { /* list's table starts one row down */
		case OPT_CDI_OUTPUT: a->output = v.text; break;
		case OPT_CDI_DEV_DIR: a->dev_dir = v.text; break;
		case OPT_CDI_LDCONFIG: a->ldconfig_file = v.text; break;
		}
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
		/* names and paths hold UUIDs, as the driver or a server file gives them */
		char line[2048];
		size_t at = (size_t)snprintf(line, sizeof(line), "%s=%s", CDI_KIND,
					     json_string_value(json_object_get(d, "name")));
		size_t k;
		json_t *n;
		const char *sep = "  ";
		json_array_foreach(json_object_get(json_object_get(d, "containerEdits"), "deviceNodes"), k, n) {
			if (at < sizeof(line))
				at += (size_t)snprintf(line + at, sizeof(line) - at, "%s%s", sep,
						       json_string_value(json_object_get(n, "path")));
			sep = ",";
		}
		text_line(ctx->out, "%s", line);
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
		/* a missing node: say where else they may be */
		const char *hint = !strstr(err, "no device node") ? ""
				   : ctx->sys.simulated ? " (a simulated server's GPUs have no device nodes here: give "
							  "--dev-dir DIR, a directory with files nvidia0, nvidia1, ...)"
							: " (are the device nodes in another directory? --dev-dir DIR)";
		cmd_error(ctx, "cdi", "%s%s", err, hint);
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
			text_line(ctx->err, "gpuctl cdi: SIMULATED server '%s': the spec names its device nodes under %s",
				  ctx->sys.server_name, h->dev_dir);
	}
out:
	json_decref(spec);
	free(h);
	free(gpus);
	return rc;
}
