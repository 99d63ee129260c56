/* SPDX-License-Identifier: Apache-2.0 */
/*
 * slurm_sweep_node.c - `gpuctl slurm sweep`: writing the result
 * files, and what each node's job runs (--run-node): the health check at the
 * sweep's window, the links, and at diagN `gpuctl diag -r N --json`, at
 * bench-quick `gpuctl bench --quick --json` (measured) or, on a simulated
 * server, SIMULATED figures (src/slurm/fleet_sim.c), into DIR/nodes/NODE.json.
 */
#include "slurm_sweep_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/catalog.h"
#include "core/readfile.h"
#include "health_cmd.h"
#include "sampler/sampler.h"
#include "slurm/fleet.h"
#include "slurm/gres.h"
#include "view/json_util.h"

/* ---- writing files ----------------------------------------------------------------------- */

/* Writes path atomically (path.tmp, then rename) with writer(arg, FILE*). 0, or -1 with errno. */
int sweep_write_file(const char *path, void (*writer)(const void *, FILE *), const void *arg)
{
	char tmp[4200];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return -1;
	writer(arg, f);
	int bad = ferror(f);
	if (fclose(f) != 0 || bad || rename(tmp, path) != 0) {
		int e = errno ? errno : EIO;
		unlink(tmp);
		errno = e;
		return -1;
	}
	return 0;
}

void sweep_write_json(const void *doc, FILE *f)
{
	json_dumpf((const json_t *)doc, f, JSON_INDENT(1) | JSON_REAL_DIGITS);
	fputc('\n', f);
}

/* ---- on the node: --run-node ------------------------------------------------------------- */

/* `gpuctl [--sim S] [--data-dir D] ARGS...` (this binary) as JSON; NULL and errline on failure. */
static json_t *run_self_json(const struct cmd_ctx *ctx, const char *const *args, char *errline, size_t errlen)
{
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return snprintf(errline, errlen, "cannot find this gpuctl (/proc/self/exe)"), NULL;
	self[n] = '\0';
	char *argv[24];
	unsigned a = 0;
	argv[a++] = self;
	if (ctx->sim) {
		argv[a++] = (char *)"--sim";
		argv[a++] = (char *)ctx->sim;
	}
	if (ctx->data_dir) {
		argv[a++] = (char *)"--data-dir";
		argv[a++] = (char *)ctx->data_dir;
	}
	for (unsigned i = 0; args[i] && a < 23; i++)
		argv[a++] = (char *)args[i];
	argv[a] = NULL;
	char *out;
	char err[400];
	int rc = sweep_spawn_read(argv, &out, err, sizeof(err));
	json_error_t je;
	json_t *doc = out ? json_loads(out, 0, &je) : NULL;
	free(out);
	if (!json_is_object(doc)) {
		json_decref(doc);
		snprintf(errline, errlen, "gpuctl %s %s exited %d%s%s", args[0], args[1] ? args[1] : "", rc, err[0] ? ": " : "", err);
		return NULL;
	}
	return doc;
}

static json_t *links_json(const struct snapshot *snap)
{
	json_t *arr = json_array();
	for (unsigned i = 0; i < snap->n; i++) {
		const struct gpu_view *v = &snap->gpu[i];
		int active = 0;
		for (unsigned l = 0; l < v->s.nvlink_n; l++)
			active += v->s.nvlink[l].active.st == VAL_OK && v->s.nvlink[l].active.v;
#define U(f) ((f).st == VAL_OK ? json_integer((json_int_t)(f).v) : json_null())
		json_array_append_new(arr, json_pack("{sI so so so so so so so so}", "index", (json_int_t)v->st.index, "pcie_gen",
						     U(v->s.pcie_gen), "pcie_gen_max", U(v->st.pcie_gen_max), "pcie_width",
						     U(v->s.pcie_width), "pcie_width_max", U(v->st.pcie_width_max), "nvlink_active",
						     v->st.nvlink_count.st == VAL_OK ? json_integer(active) : json_null(),
						     "nvlink_count", U(v->st.nvlink_count), "ecc_vol_uncorrected",
						     U(v->s.ecc_vol_uncorrected), "remap_pending", U(v->s.remap_pending)));
#undef U
	}
	return arr;
}

int sweep_run_node(struct cmd_ctx *ctx, const struct sweep_args *a)
{
	const char *node = a->node ? a->node : getenv("SLURMD_NODENAME");
	if (!node || !node[0]) { /* a sweep's job has it */
		cmd_error(ctx, CMD_NAME, "which node? (--node NAME, or SLURMD_NODENAME)");
		return EXIT_USAGE;
	}
	if (!slurm_host_name_ok(node) || strlen(node) >= FLEET_NAME_LEN) {
		cmd_error(ctx, CMD_NAME, "bad node name '%s'", node);
		return EXIT_USAGE;
	}
	struct health_run *hr = calloc(1, sizeof(*hr));
	if (!hr) {
		cmd_error(ctx, CMD_NAME, "out of memory");
		return EXIT_SOFTWARE;
	}
	int rc = health_run_collect(ctx, CMD_NAME, hr, (double)a->window_ns / SEC, NULL, NULL);
	if (rc) {
		free(hr);
		return rc;
	}
	/* the driver and its CUDA: the fleet compares a node with those of its model, driver and CUDA */
	const strv *drv = &ctx->sys.driver_version, *cuda = &ctx->sys.cuda_driver_version;
	json_t *doc = json_pack("{ss si ss ss sb ss ss ss so so}", "schema", "gpuctl-sweep-node", "version", 1, "node", node,
				"level", sweep_levels[a->level], "simulated", ctx->sys.simulated, "server",
				ctx->sys.server_name, "driver", drv->st == VAL_OK ? drv->s : "", "cuda",
				cuda->st == VAL_OK ? cuda->s : "", "health", health_report_json(hr), "links",
				links_json(&hr->now));
	char err[512];
	if (a->level >= LEVEL_DIAG1 && a->level <= LEVEL_DIAG3) {
		char lvl[4];
		snprintf(lvl, sizeof(lvl), "%d", a->level - LEVEL_DIAG1 + 1);
		const char *args[] = { "diag", "-r", lvl, "--json", NULL };
		json_t *d = run_self_json(ctx, args, err, sizeof(err));
		json_object_set_new(doc, "diag", d ? d : json_pack("{ss ss}", "verdict", "N/A", "error", err));
	} else if (a->level == LEVEL_BENCH_QUICK && ctx->sys.simulated) {
		struct catalog cat = { 0 };
		if (catalog_load_dir(&cat, ctx->data_dir, err, sizeof(err)) != 0) {
			cmd_error(ctx, CMD_NAME, "%s", err);
			json_decref(doc);
			free(hr);
			return EXIT_DATAERR;
		}
		json_object_set_new(doc, "figures", fleet_sim_figures(&hr->now, &cat, node));
		catalog_free(&cat);
	} else if (a->level == LEVEL_BENCH_QUICK) {
		const char *args[] = { "bench", "--quick", "-s", "memory,compute,copy,p2p,nccl", "--json", NULL };
		json_t *b = run_self_json(ctx, args, err, sizeof(err));
		json_object_set_new(doc, b ? "bench" : "bench_error", b ? b : json_string(err));
	}
	const char *verdict = health_verdict_name(health_run_verdict(hr));
	free(hr);
	char path[4096];
	/* DIR too: the sweep made it, but --run-node by hand may be the first to write there */
	snprintf(path, sizeof(path), "%s/nodes", a->out);
	if ((mkdir(a->out, 0755) != 0 && errno != EEXIST) || (mkdir(path, 0755) != 0 && errno != EEXIST)) {
		cmd_error(ctx, CMD_NAME, "cannot create '%s': %s", path, strerror(errno));
		json_decref(doc);
		return EXIT_IOERR;
	}
	snprintf(path, sizeof(path), "%s/nodes/%s.json", a->out, node);
	rc = sweep_write_file(path, sweep_write_json, doc);
	json_decref(doc);
	if (rc) {
		cmd_error(ctx, CMD_NAME, "cannot write '%s': %s", path, strerror(errno));
		return EXIT_IOERR;
	}
	fprintf(ctx->out, "%s: health %s, %s%s\n", node, verdict, path, ctx->sys.simulated ? " (SIMULATED server)" : "");
	return EXIT_OK;
}

