/*
 * cdi.c - `gpuctl cdi generate|list`: the Container Device Interface spec of
 * the GPUs (docs/containers.md). This file gathers the host's facts (device
 * minors, MIG capability minors, the nodes that exist, the driver's libraries
 * as the dynamic loader finds them, its binaries on PATH); src/core/cdi.c
 * builds the spec from them.
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
#include "pool/devcg.h"

#if defined(__x86_64__)
#define LDCONFIG_ARCH "x86-64"
#elif defined(__aarch64__)
#define LDCONFIG_ARCH "AArch64"
#else
#define LDCONFIG_ARCH ""
#endif

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

/* `ldconfig -p`'s output (from the file the tests give, or ldconfig itself,
 * which is in /sbin for those without it on PATH). NULL with err set. */
static char *ldconfig_text(const char *file, char *err, size_t errlen)
{
	if (file)
		return read_whole_file(file, 16 << 20, NULL, err, errlen);
	static const char *const cmds[] = { "ldconfig -p 2>/dev/null", "/sbin/ldconfig -p 2>/dev/null" };
	for (unsigned c = 0; c < 2; c++) {
		FILE *p = popen(cmds[c], "r");
		if (!p)
			continue;
		size_t cap = 1 << 16, len = 0;
		char *buf = malloc(cap);
		while (buf) {
			if (len + 4096 > cap) {
				char *nb = cap < (16u << 20) ? realloc(buf, cap * 2) : NULL;
				if (!nb) {
					free(buf);
					buf = NULL;
					break;
				}
				buf = nb;
				cap *= 2;
			}
			size_t got = fread(buf + len, 1, cap - len - 1, p);
			if (got == 0)
				break;
			len += got;
		}
		int st = pclose(p);
		if (buf && st == 0 && len) {
			buf[len] = '\0';
			return buf;
		}
		free(buf);
	}
	snprintf(err, errlen, "cannot run 'ldconfig -p'");
	return NULL;
}

static int find_libs(struct cmd_ctx *ctx, const struct cdi_args *a, struct cdi_host *h)
{
	char err[300], path[PATH_MAX], real[PATH_MAX];
	char *text = ldconfig_text(a->ldconfig_file, err, sizeof(err));
	if (!text) {
		cmd_error(ctx, "cdi", "%s", err);
		return a->ldconfig_file ? EXIT_NOINPUT : EXIT_UNAVAILABLE;
	}
	for (unsigned i = 0; i < cdi_driver_libs_n && h->nlibs < CDI_MAX_FILES; i++) {
		int r = cdi_ldconfig_find(text, cdi_driver_libs[i], LDCONFIG_ARCH, path, sizeof(path));
		if (r == 1 && realpath(path, real) && strlen(real) < sizeof(h->libs[0].host_path)) {
			struct cdi_file *f = &h->libs[h->nlibs++];
			memcpy(f->host_path, real, strlen(real) + 1); /* fits: checked above */
			snprintf(f->name, sizeof(f->name), "%s", cdi_driver_libs[i]);
		} else if (i < cdi_driver_libs_required && !ctx->sys.simulated) {
			free(text);
			cmd_error(ctx, "cdi", "the driver's %s is not in the loader's cache (ldconfig -p)", cdi_driver_libs[i]);
			return EXIT_UNAVAILABLE;
		}
	}
	free(text);
	return 0;
}

static void find_bins(struct cdi_host *h)
{
	const char *path_env = getenv("PATH");
	if (!path_env)
		return;
	char real[PATH_MAX], cand[PATH_MAX];
	for (unsigned b = 0; b < cdi_driver_bins_n && h->nbins < CDI_MAX_FILES; b++) {
		for (const char *d = path_env; *d;) {
			size_t len = strcspn(d, ":");
			if (len && (size_t)snprintf(cand, sizeof(cand), "%.*s/%s", (int)len, d, cdi_driver_bins[b]) <
					   sizeof(cand) &&
			    access(cand, X_OK) == 0 && realpath(cand, real) && strlen(real) < sizeof(h->bins[0].host_path)) {
				struct cdi_file *f = &h->bins[h->nbins++];
				memcpy(f->host_path, real, strlen(real) + 1); /* fits: checked above */
				snprintf(f->name, sizeof(f->name), "%s", cdi_driver_bins[b]);
				break;
			}
			d += len;
			d += *d == ':';
		}
	}
}

static bool node_exists(const char *dev_dir, const char *name)
{
	char p[PATH_MAX];
	struct stat st;
	snprintf(p, sizeof(p), "%s/%s", dev_dir, name);
	return stat(p, &st) == 0 && (S_ISCHR(st.st_mode) || S_ISREG(st.st_mode));
}

/* The MIG capability minors ("gpuM/giG/access" ...): real drivers only. */
static int cap_minor(const struct devcg_cap *caps, int ncaps, const char *name)
{
	for (int i = 0; i < ncaps; i++)
		if (!strcmp(caps[i].name, name))
			return (int)caps[i].minor;
	return -1;
}

static int gather_gpus(struct cmd_ctx *ctx, const char *dev_dir, struct cdi_gpu *gpus, unsigned *ngpus)
{
	struct gpu_backend *be = ctx->be;
	struct gpu_err ge;
	char err[300], name[48];
	struct devcg_cap *caps = NULL;
	int ncaps = 0;
	if (!ctx->sys.simulated) {
		char ignore[300];
		char *text = read_whole_file("/proc/driver/nvidia-caps/mig-minors", 16 << 20, NULL, ignore, sizeof(ignore));
		if (text && (caps = calloc(DEVCG_MAX_CAPS, sizeof(*caps))))
			ncaps = devcg_parse_mig_minors(text, caps, DEVCG_MAX_CAPS);
		free(text);
		if (ncaps < 0)
			ncaps = 0;
	}
	int rc = 0;
	*ngpus = 0;
	for (unsigned i = 0; i < be->gpu_count && i < GPU_MAX_GPUS; i++) {
		struct gpu_static st = { 0 };
		struct cdi_gpu *g = &gpus[(*ngpus)++];
		memset(g, 0, sizeof(*g));
		g->index = i;
		if (be->ops->static_info(be, i, &st, &ge) != 0) {
			cmd_error(ctx, "cdi", "GPU %u: %s", i, ge.msg);
			rc = EXIT_UNAVAILABLE;
			break;
		}
		if (VAL_HAS(st.uuid))
			snprintf(g->uuid, sizeof(g->uuid), "%s", st.uuid.s);
		if (devcg_gpu_minor(ctx->sys.simulated, i, VAL_HAS(st.pci_bus_id) ? st.pci_bus_id.s : "", &g->minor, err,
				    sizeof(err))) {
			cmd_error(ctx, "cdi", "GPU %u: %s", i, err);
			rc = EXIT_UNAVAILABLE;
			break;
		}
		snprintf(name, sizeof(name), "nvidia%u", g->minor);
		if (!node_exists(dev_dir, name)) {
			cmd_error(ctx, "cdi", "GPU %u: no device node %s/%s", i, dev_dir, name);
			rc = EXIT_UNAVAILABLE;
			break;
		}
		struct gpu_mig mig[GPU_MAX_MIG];
		unsigned nmig = 0;
		if (be->ops->mig_instances && be->ops->mig_instances(be, i, mig, GPU_MAX_MIG, &nmig, &ge) != 0)
			nmig = 0; /* MIG off or not supported: the whole GPU only */
		for (unsigned k = 0; k < nmig && k < GPU_MAX_MIG; k++) {
			struct cdi_mig *m = &g->mig[g->nmig++];
			m->gi = mig[k].gi_id;
			m->ci = mig[k].ci_id;
			snprintf(m->uuid, sizeof(m->uuid), "%s", mig[k].uuid);
			snprintf(name, sizeof(name), "gpu%u/gi%u/access", g->minor, m->gi);
			m->gi_cap_minor = cap_minor(caps, ncaps, name);
			snprintf(name, sizeof(name), "gpu%u/gi%u/ci%u/access", g->minor, m->gi, m->ci);
			m->ci_cap_minor = cap_minor(caps, ncaps, name);
		}
	}
	free(caps);
	return rc;
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
	/* whole or not at all: runtimes read /etc/cdi whenever a container starts */
	char tmp[PATH_MAX];
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", output, (long)getpid()) >= sizeof(tmp)) {
		cmd_error(ctx, "cdi", "output path too long");
		return EXIT_USAGE;
	}
	FILE *f = fopen(tmp, "w");
	bool ok = f && !json_dumpf(spec, f, JSON_INDENT(2)) && fputc('\n', f) != EOF && fflush(f) == 0 &&
		  fsync(fileno(f)) == 0;
	int saved = errno;
	if (f && fclose(f) != 0 && ok) {
		ok = false;
		saved = errno;
	}
	if (ok && rename(tmp, output) != 0) {
		ok = false;
		saved = errno;
	}
	if (!ok) {
		unlink(tmp);
		cmd_error(ctx, "cdi", "cannot write '%s': %s", output, strerror(saved));
		return EXIT_IOERR;
	}
	chmod(output, 0644);
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
	h->dev_dir = a.dev_dir ? a.dev_dir : "/dev";
	static const char *const common[] = { "nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-modeset" };
	for (unsigned i = 0; i < sizeof(common) / sizeof(common[0]); i++)
		if (node_exists(h->dev_dir, common[i]))
			h->common_nodes[h->ncommon++] = common[i];
	unsigned ngpus = 0;
	json_t *spec = NULL;
	char err[300];
	if ((rc = gather_gpus(ctx, h->dev_dir, gpus, &ngpus)) || (rc = find_libs(ctx, &a, h)))
		goto out;
	find_bins(h);
	if (!ctx->sys.simulated && !node_exists(h->dev_dir, "nvidiactl")) {
		cmd_error(ctx, "cdi", "no device node %s/nvidiactl", h->dev_dir);
		rc = EXIT_UNAVAILABLE;
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
