/* SPDX-License-Identifier: Apache-2.0 */
/*
 * diag.c - `gpuctl diag -r 1|2|3|4`: active diagnostics (docs/diag.md).
 *
 *   1  seconds: `health` plus software checks (driver, a CUDA context on every
 *      GPU, persistence, CUDA_VISIBLE_DEVICES and friends, running processes)
 *   2  about a minute: + memory pattern test, PCIe bandwidth, P2P reachability
 *   3  a few minutes: + verified GEMM stress (FP32, TF32, BF16, FP8), memory
 *      bandwidth, P2P bandwidth per pair, NCCL all-reduce, variation between GPUs
 *   4  long: extended memory test, sustained load
 * Levels 2-4 need real GPUs and the CUDA kernels module; the checks are diag's
 * engine (src/bench/diag_run.c), this file reads options and prints. On a
 * simulated server they stop with one line and exit 69, never with numbers.
 * Exit codes as for health: 0 pass, 1 warnings, 2 failure, 69 could not check.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "health_cmd.h"
#include "help.h"
#include "bench/diag_run.h"
#include "core/clock.h"
#include "core/gpu_select.h"
#include "view/json_util.h"
#include "core/table.h"
#include "kernels_host/kmod.h"

/* Past its deadline, how long a call may take before its GPU counts as hung. */
#define DIAG_HUNG_GRACE_S 20.0

/* The kernels module, loaded once (level 1's CUDA context check, then levels 2-4). */
struct diag_kernels {
	struct kmod km;
	bool tried;
	int rc;
	char err[512];
	struct diag_module m;
};

static const struct diag_module *kernels(struct diag_kernels *k, const char *path, const char *env)
{
	if (!k->tried) {
		k->tried = true;
		k->rc = kmod_open_default(&k->km, path, env, k->err, sizeof(k->err));
		if (k->rc == KMOD_OK)
			k->m.api = kguard_wrap(k->km.api, DIAG_HUNG_GRACE_S);
		k->m.err = k->err;
		k->m.absent = k->rc == KMOD_ENOMODULE;
	}
	return &k->m;
}

/* A call left behind in a hung GPU still runs in the module: it stays loaded. */
static void kernels_close(struct diag_kernels *k)
{
	if (k->m.api && kguard_hung_calls() == 0)
		kmod_close(&k->km);
	k->m.api = NULL;
}

static uint64_t now_ns(void *arg)
{
	(void)arg;
	return clock_mono_ns();
}

static void sleep_ns(void *arg, uint64_t ns)
{
	(void)arg;
	clock_sleep_ns(ns);
}

static void print_results(const struct diag_results *rs, FILE *out)
{
	struct table *t = table_new(5);
	if (!t)
		return;
	table_col(t, 0, "TEST", TABLE_LEFT);
	table_col(t, 1, "GPU", TABLE_RIGHT);
	table_col(t, 2, "RESULT", TABLE_LEFT);
	table_col(t, 3, "VALUE", TABLE_RIGHT);
	table_col(t, 4, "DETAIL", TABLE_LEFT);
	for (unsigned k = 0; k < rs->n; k++) {
		const struct diag_result *r = &rs->r[k];
		table_row(t);
		table_cell(t, r->test);
		if (r->gpu < 0)
			table_cell(t, "-");
		else if (r->peer >= 0)
			table_cellf(t, "%d->%d", r->gpu, r->peer);
		else
			table_cellf(t, "%d", r->gpu);
		table_cell(t, health_verdict_name(r->verdict));
		if (r->has_value)
			table_cellf(t, "%.4g%s%s", r->value, *r->unit ? " " : "", r->unit);
		else
			table_cell(t, "");
		table_cell(t, r->detail);
	}
	table_print(t, out);
	table_free(t);
	if (rs->truncated)
		fprintf(out, "(more results than %d: the rest are left out)\n", DIAG_MAX_RESULTS);
}

static json_t *results_json(const struct diag_results *rs)
{
	json_t *a = json_array();
	for (unsigned k = 0; k < rs->n; k++) {
		const struct diag_result *r = &rs->r[k];
		json_t *o = json_object();
		json_object_set_new(o, "test", json_string(r->test));
		json_object_set_new(o, "gpu", r->gpu >= 0 ? json_integer(r->gpu) : json_null());
		json_object_set_new(o, "peer", r->peer >= 0 ? json_integer(r->peer) : json_null());
		json_object_set_new(o, "verdict", json_string(health_verdict_name(r->verdict)));
		json_object_set_new(o, "value", r->has_value ? json_real(r->value) : json_null());
		json_object_set_new(o, "unit", json_string(r->unit));
		json_object_set_new(o, "detail", json_string(r->detail));
		json_array_append_new(a, o);
	}
	return a;
}

#define DIAG_DEFAULT_VARIATION_TEXT "10" /* for the help text */
_Static_assert(DIAG_DEFAULT_VARIATION_PCT == 10.0, "DIAG_DEFAULT_VARIATION_TEXT is DIAG_DEFAULT_VARIATION_PCT");

enum { OPT_DIAG_LEVEL, OPT_DIAG_ID, OPT_DIAG_JSON, OPT_DIAG_TIMEOUT_SCALE, OPT_DIAG_VARIATION, OPT_DIAG_KERNELS,
       OPT_DIAG_FLIP_BITS };
static const struct opt_spec diag_opts[] = {
	[OPT_DIAG_LEVEL] = { "level", 'r', OPT_STRING, "N", "1 (default) to 4; 2-4 need real GPUs and the kernels module",
			     NULL, 0, 0, NULL },
	[OPT_DIAG_ID] = OPT_SPEC_GPU_IDS,
	[OPT_DIAG_JSON] = { "json", 0, OPT_FLAG, NULL, "machine-readable output (docs/diag.md)", NULL, 0, 0, NULL },
	[OPT_DIAG_TIMEOUT_SCALE] = { "timeout-scale", 0, OPT_NUMBER, "F", "multiply every test's timeout", "1",
				     OPT_MILLI(0.05), OPT_MILLI(100), NULL },
	[OPT_DIAG_VARIATION] = { "variation", 0, OPT_NUMBER, "PCT",
				 "a GPU this much slower than the others' median is a WARN", DIAG_DEFAULT_VARIATION_TEXT,
				 OPT_MILLI(0.1), OPT_MILLI(90), NULL },
	[OPT_DIAG_KERNELS] = { "kernels", 0, OPT_STRING, "PATH", "the kernels module",
			       "$GPUCTL_KERNELS, build tree, install", 0, 0, NULL },
	[OPT_DIAG_FLIP_BITS] = { "flip-bits", 0, OPT_INT, NULL,
				 "TEST ONLY: flip N bits in the memory test's buffer; the test must FAIL", NULL, 0,
				 1000000000, NULL },
};

static const struct cmd_help diag_help = {
	.name = "diag",
	.usage = "[-r 1|2|3|4] [-i ID[,ID...]] [--json] [--timeout-scale F]\n"
		 "                   [--variation PCT] [--kernels PATH] [--flip-bits N]",
	.what = "Active diagnostics (docs/diag.md). Levels:\n"
		"  1  seconds: health + software checks (driver, CUDA context, persistence, environment, processes)\n"
		"  2  about a minute: + memory pattern test, PCIe bandwidth, P2P reachability\n"
		"  3  a few minutes: + GEMM stress FP32/TF32/BF16/FP8, memory bandwidth, P2P bandwidth,\n"
		"     NCCL all-reduce, variation between GPUs\n"
		"  4  long: + extended memory test, 5 minutes of sustained load per GPU\n",
	.opts = diag_opts,
	.nopts = sizeof(diag_opts) / sizeof(diag_opts[0]),
	.exits = "0 pass, 1 warnings, 2 failure, 64 usage, 69 could not check (no GPU, simulated server\n"
		 "            for -r 2+), 74 output could not be written",
};

int cmd_diag(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct diag_run_opts o = { .level = 1, .timeout_scale = 1, .variation_pct = DIAG_DEFAULT_VARIATION_PCT };
	const char *ids = NULL, *kernels_path = NULL;
	bool json = false;
	struct opt_parser p;
	struct opt_value val;
	int opt, opt_rc;
	opt_init(&p, argc, argv, diag_help.opts, diag_help.nopts);
	while ((opt = help_opt_next(ctx, &diag_help, &p, &val, &opt_rc)) != OPT_DONE) {
		switch (opt) {
		case OPT_HELP:
		case OPT_ERROR: return opt_rc;
		case OPT_DIAG_LEVEL:
			if (strlen(val.text) != 1 || val.text[0] < '1' || val.text[0] > '4') {
				cmd_error(ctx, "diag", "unknown level '%s' (1, 2, 3 or 4)", val.text);
				return EXIT_USAGE;
			}
			o.level = val.text[0] - '0';
			break;
		case OPT_DIAG_ID: ids = val.text; break;
		case OPT_DIAG_JSON: json = true; break;
		case OPT_DIAG_KERNELS: kernels_path = val.text; break;
		case OPT_DIAG_TIMEOUT_SCALE: o.timeout_scale = val.real; break;
		case OPT_DIAG_VARIATION: o.variation_pct = val.real; break;
		default: o.flip_bits = (uint64_t)val.num; break; /* --flip-bits */
		}
	}
	if (cmd_check_gpu_spec(ctx, "diag", ids) != EXIT_OK)
		return EXIT_USAGE;
	int rc = cmd_backend(ctx); /* only now: usage errors need no driver */
	if (rc != EXIT_OK)
		return rc;
	if (o.level >= 2 && ctx->sys.simulated) {
		cmd_error(ctx, "diag", "level %d runs tests on real GPUs; '%s' is a simulated server (level 1 works here)",
			  o.level, ctx->sys.server_name);
		return EXIT_UNAVAILABLE;
	}
	const char *kernels_env = getenv("GPUCTL_KERNELS");
	struct health_run *hr = calloc(1, sizeof(*hr));
	struct diag_results *rs = calloc(1, sizeof(*rs));
	struct diag_kernels *dk = calloc(1, sizeof(*dk));
	struct catalog cat = { 0 };
	rc = hr && rs && dk ? EXIT_OK : EXIT_SOFTWARE;
	if (rc != EXIT_OK)
		cmd_error(ctx, "diag", "out of memory");
	if (rc == EXIT_OK)
		rc = health_run_collect(ctx, "diag", hr, 1.0, NULL, ids);
	if (rc == EXIT_OK) {
		o.mask = hr->mask;
		struct diag_env env = {
			.cuda_visible_devices = getenv("CUDA_VISIBLE_DEVICES"),
			.cuda_device_order = getenv("CUDA_DEVICE_ORDER"),
			.cuda_launch_blocking = getenv("CUDA_LAUNCH_BLOCKING"),
			.nccl_p2p_disable = getenv("NCCL_P2P_DISABLE"),
			.nccl_shm_disable = getenv("NCCL_SHM_DISABLE"),
		};
		static const struct diag_module simulated = { .err = "simulated server" };
		const struct diag_module *km = hr->now.sys.simulated ? &simulated : kernels(dk, kernels_path, kernels_env);
		diag_software_checks(&hr->now, &o, km, &env, rs);
	}
	if (rc == EXIT_OK && o.level >= 2) {
		char err[512];
		const struct diag_module *km = kernels(dk, kernels_path, kernels_env);
		if (catalog_load_dir(&cat, ctx->data_dir, err, sizeof(err)) != 0) {
			cmd_error(ctx, "diag", "%s", err);
			rc = EXIT_NOINPUT;
		} else if (!km->api) {
			cmd_error(ctx, "diag", "level %d needs the CUDA kernels module: %s", o.level, km->err);
			rc = EXIT_UNAVAILABLE;
		} else {
			if (!json)
				fprintf(ctx->err, "gpuctl diag: level %d on %d GPU(s); every test has a timeout\n", o.level,
					__builtin_popcountll(o.mask));
			const struct diag_hooks hooks = { .now_ns = now_ns, .sleep_ns = sleep_ns };
			if (diag_run_gpu_tests(km->api, &hooks, &hr->now, &cat, &o, rs, err, sizeof(err)) != 0) {
				cmd_error(ctx, "diag", "CUDA finds no GPU: %s", err);
				rc = EXIT_UNAVAILABLE;
			} else if (o.level >= 3) {
				diag_run_variation(&hr->now, &o, rs);
			}
		}
	}
	if (rc == EXIT_OK) {
		enum health_verdict hv = health_run_verdict(hr), tv = diag_results_verdict(rs);
		enum health_verdict v = hv > tv ? hv : tv;
		if (json) {
			json_t *doc = json_object();
			json_object_set_new(doc, "simulated", json_boolean(hr->now.sys.simulated));
			json_object_set_new(doc, "level", json_integer(o.level));
			json_object_set_new(doc, "verdict", json_string(health_verdict_name(v)));
			json_object_set_new(doc, "health", health_report_json(hr));
			json_object_set_new(doc, "tests", results_json(rs));
			if (json_write(doc, ctx->out) != 0)
				rc = EXIT_IOERR;
			json_decref(doc);
		} else {
			health_print_table(ctx, hr, ctx->out);
			fprintf(ctx->out, "\n");
			print_results(rs, ctx->out);
			fprintf(ctx->out, "\ndiag level %d: %s\n", o.level, health_verdict_name(v));
		}
		if (rc == EXIT_OK)
			rc = health_exit_code(v);
	}
	if (cat.gpus)
		catalog_free(&cat);
	if (dk)
		kernels_close(dk);
	free(dk);
	free(rs);
	free(hr);
	return rc;
}
