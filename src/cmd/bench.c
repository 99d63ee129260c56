/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench.c - `gpuctl bench`: what the server really delivers, next to its
 * datasheet (docs/bench.md). Runs the suites of src/bench/suite.h through the
 * CUDA kernels module, with NVML telemetry around each test, or re-reads a
 * saved results file (--results). Never measures a simulated server.
 *
 * Exit: 0 all measured results at or over their thresholds; 1 a result under
 * its --min-ratio; 2 a test failed (error or wrong result); 64 usage; 65/66 a
 * bad or missing results file; 69 no driver, GPU or kernels module; 74 output.
 */
#include "cmd.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/output.h"
#include "core/gpu_select.h"
#include "bench/results_file.h"
#include "kernels_host/train_ref.h"
#include "bench_measure.h"
#include "help.h"

struct bench_opts {
	struct bench_plan plan;
	struct bench_thresholds thr;
	const char *gpus, *save, *results, *kernels;
	bool json, csv, quiet, suites_given;
	unsigned long given; /* bit k: option k was given */
};

enum {
	OPT_BENCH_QUICK,
	OPT_BENCH_FULL,
	OPT_BENCH_SUITE,
	OPT_BENCH_ID,
	OPT_BENCH_SIZE,
	OPT_BENCH_ITERS,
	OPT_BENCH_SUSTAINED,
	OPT_BENCH_MODEL,
	OPT_BENCH_GRAD_ACCUM,
	OPT_BENCH_MIN_RATIO,
	OPT_BENCH_TIMEOUT,
	OPT_BENCH_WARMUP,
	OPT_BENCH_SEED,
	OPT_BENCH_JSON,
	OPT_BENCH_CSV,
	OPT_BENCH_SAVE,
	OPT_BENCH_RESULTS,
	OPT_BENCH_KERNELS,
	OPT_BENCH_QUIET,
};
static const struct opt_spec bench_opts[] = {
	[OPT_BENCH_QUICK] = { "quick", 0, OPT_FLAG, NULL, "the default suites, short sweeps (under a minute on one H200)", NULL,
			      0, 0, NULL },
	[OPT_BENCH_FULL] = { "full", 0, OPT_FLAG, NULL, "size and shape sweeps, and the sustained load (minutes)", NULL, 0, 0,
			     NULL },
	[OPT_BENCH_SUITE] = { "suite", 's', OPT_STRING, "LIST",
			      "suites, comma-separated (listed below), or all\n"
			      "(default: all but sustained; --full adds sustained)",
			      NULL, 0, 0, NULL },
	[OPT_BENCH_ID] = { "id", 'i', OPT_STRING, "GPUS", "GPUs to test: 0,1 / 0-3 / UUID / PCI bus id", "all", 0, 0, NULL },
	[OPT_BENCH_SIZE] = { "size", 0, OPT_STRING, "LIST",
			     "transfer sizes for copy/memory/p2p/nccl, 1 byte to 64G each,\n"
			     "e.g. 4K,1M,1.5G (docs/units.md)",
			     NULL, 0, 0, NULL },
	[OPT_BENCH_ITERS] = { "iters", 0, OPT_INT, NULL, "timed samples per test, 10 to 128", "10, --full 20", GK_MIN_SAMPLES,
			      GK_MAX_SAMPLES, NULL },
	[OPT_BENCH_SUSTAINED] = { "sustained-seconds", 0, OPT_INT, "S", "length of the sustained load per GPU, in seconds",
				  "60", 2, 86400, NULL },
	[OPT_BENCH_MODEL] = { "model", 0, OPT_STRING, "NAME", "train: GPT-2 124M, 350M or 774M", "124M", 0, 0, NULL },
	[OPT_BENCH_GRAD_ACCUM] = { "grad-accum", 0, OPT_INT, NULL, "train: micro-batches of 16 x 1024 tokens per step", "1",
				   1, 64, NULL },
	[OPT_BENCH_MIN_RATIO] = { "min-ratio", 0, OPT_STRING, "R",
				  "exit 1 when a result is under R x datasheet; SUITE=R,... per suite", NULL, 0, 0, NULL },
	[OPT_BENCH_TIMEOUT] = { "timeout", 0, OPT_DURATION, NULL, "per-test deadline, 1s to 1d (docs/units.md)", "120s",
				(long long)UNITS_NS_PER_S, (long long)UNITS_NS_PER_DAY, NULL },
	[OPT_BENCH_WARMUP] = { "warmup", 0, OPT_INT, NULL, "untimed runs before the samples", "the module's", 1, 1000, NULL },
	[OPT_BENCH_SEED] = { "seed", 0, OPT_INT, NULL, "seed of the random inputs", "fixed", 0, 0x7fffffff, NULL },
	[OPT_BENCH_JSON] = { "json", 0, OPT_FLAG, NULL, "machine output, the results file (docs/bench.md)", NULL, 0, 0, NULL },
	[OPT_BENCH_CSV] = { "csv", 0, OPT_FLAG, NULL, "machine output, one row per result (docs/bench.md)", NULL, 0, 0, NULL },
	[OPT_BENCH_SAVE] = { "save", 0, OPT_STRING, "FILE", "also write the results file", NULL, 0, 0, NULL },
	[OPT_BENCH_RESULTS] = { "results", 0, OPT_STRING, "FILE", "print a saved results file instead of measuring", NULL, 0,
				0, NULL },
	[OPT_BENCH_KERNELS] = { "kernels", 0, OPT_STRING, "PATH", "the kernels module",
				"$GPUCTL_KERNELS, build tree, install", 0, 0, NULL },
	[OPT_BENCH_QUIET] = { "quiet", 0, OPT_FLAG, NULL, "no progress lines on stderr", NULL, 0, 0, NULL },
};

/* The suite words, from the suites' table (bench/suite.h). */
static void print_suites(FILE *out)
{
	fputs("suites:", out);
	for (unsigned i = 0; i < BENCH_NSUITES; i++)
		fprintf(out, "%s %s", i ? "," : "", bench_suite_name(1u << i));
	fputc('\n', out);
}

static const struct cmd_help bench_help = {
	.name = "bench",
	.usage = "[--quick | --full] [-s SUITES] [-i GPUS] [--size LIST] [--iters N]\n"
		 "                    [--min-ratio R | SUITE=R,...] [--json | --csv] [--save FILE]\n"
		 "       gpuctl bench --results FILE [-s SUITES] [-i GPUS] [--min-ratio ...] [--json | --csv]",
	.what = "Measures the GPUs against their datasheet: each figure is the median of device-timed\n"
		"samples, verified, with min, max, spread, the bytes or FLOPs counted, the datasheet\n"
		"limit and the ratio; clocks, power, temperature and throttle reasons kept per test.\n",
	.opts = bench_opts,
	.nopts = sizeof(bench_opts) / sizeof(bench_opts[0]),
	.more = print_suites,
	.exits = "0 ok, 1 a result under its threshold, 2 a test failed, 64 usage, 65 bad results file,\n"
		 "            66 no results file, 69 no driver, GPU or kernels module, 74 output error\n"
		 "            (docs/exit-codes.md)",
};

/* One option's value read further (suites, sizes, thresholds, the model): 0, or its one-line error printed. */
static int take_value(struct cmd_ctx *ctx, struct bench_opts *o, int opt, const char *text)
{
	char err[256];
	int rc = 0;
	switch (opt) {
	case OPT_BENCH_SUITE:
		rc = bench_suites_parse(text, &o->plan.suites, err, sizeof(err));
		o->suites_given = true;
		break;
	case OPT_BENCH_SIZE:
		rc = bench_sizes_parse(&o->plan, text, err, sizeof(err));
		break;
	case OPT_BENCH_MIN_RATIO:
		rc = bench_thresholds_parse(&o->thr, text, err, sizeof(err));
		break;
	case OPT_BENCH_MODEL: {
		struct gk_train_cfg m;
		char q[41];
		rc = ktrain_preset(text, &m) != 0 || strcmp(text, "tiny") == 0;
		if (rc)
			snprintf(err, sizeof(err), "unknown model '%s' (124M, 350M, 774M)", units_quoted(text, q));
		else
			snprintf(o->plan.train_model, sizeof(o->plan.train_model), "%s", text);
		break;
	}
	}
	if (rc) {
		char name[64];
		cmd_error(ctx, "bench", "option '%s': %s", opt_spelling(&bench_opts[opt], name, sizeof(name)), err);
		return EXIT_USAGE;
	}
	return 0;
}

/* 0, -1 after --help, or the exit code of a usage error (printed). */
static int parse_args(int argc, char **argv, struct cmd_ctx *ctx, struct bench_opts *o)
{
	struct opt_parser p;
	struct opt_value v;
	int opt, rc;
	opt_init(&p, argc, argv, bench_help.opts, bench_help.nopts);
	while ((opt = help_opt_next(ctx, &bench_help, &p, &v, &rc)) != OPT_DONE) {
		if (opt == OPT_HELP)
			return -1;
		if (opt == OPT_ERROR)
			return rc;
		o->given |= 1ul << opt;
		switch (opt) {
		case OPT_BENCH_QUICK: o->plan.full = false; break;
		case OPT_BENCH_FULL: o->plan.full = true; break;
		case OPT_BENCH_ID: o->gpus = v.text; break;
		case OPT_BENCH_ITERS: o->plan.iters = (int)v.num; break;
		case OPT_BENCH_SUSTAINED: o->plan.sustained_s = (double)v.num; break;
		case OPT_BENCH_GRAD_ACCUM: o->plan.grad_accum = (int)v.num; break;
		case OPT_BENCH_TIMEOUT: o->plan.test_timeout_s = (double)v.num / 1e9; break;
		case OPT_BENCH_WARMUP: o->plan.warmup = (int)v.num; break;
		case OPT_BENCH_SEED: o->plan.seed = (uint64_t)v.num; break;
		case OPT_BENCH_JSON: o->json = true; break;
		case OPT_BENCH_CSV: o->csv = true; break;
		case OPT_BENCH_SAVE: o->save = v.text; break;
		case OPT_BENCH_RESULTS: o->results = v.text; break;
		case OPT_BENCH_KERNELS: o->kernels = v.text; break;
		case OPT_BENCH_QUIET: o->quiet = true; break;
		default:
			if (take_value(ctx, o, opt, v.text))
				return EXIT_USAGE;
		}
	}
	if (o->json && o->csv) {
		cmd_error(ctx, "bench", "--json and --csv exclude each other");
		return EXIT_USAGE;
	}
	if (o->plan.full && !o->suites_given)
		o->plan.suites = BENCH_ALL_SUITES;
	/* a saved run is filtered and judged again, not measured again */
	static const int measure_only[] = { OPT_BENCH_QUICK,  OPT_BENCH_FULL,	 OPT_BENCH_SIZE, OPT_BENCH_ITERS,
					    OPT_BENCH_SUSTAINED, OPT_BENCH_MODEL, OPT_BENCH_GRAD_ACCUM,
					    OPT_BENCH_TIMEOUT, OPT_BENCH_WARMUP, OPT_BENCH_SEED, OPT_BENCH_KERNELS };
	for (size_t i = 0; o->results && i < sizeof(measure_only) / sizeof(measure_only[0]); i++) {
		if (o->given >> measure_only[i] & 1ul) {
			char name[64];
			cmd_error(ctx, "bench", "option '%s' is for measuring; with --results only -s, -i, --min-ratio, "
				  "--json, --csv and --save apply",
				  opt_spelling(&bench_opts[measure_only[i]], name, sizeof(name)));
			return EXIT_USAGE;
		}
	}
	return 0;
}

static void finish_output(struct cmd_ctx *ctx, const struct bench_opts *o, const struct bench_run *run)
{
	if (o->json) {
		char *text = bench_results_to_json(run);
		if (text)
			fputs(text, ctx->out);
		free(text);
	} else if (o->csv) {
		bench_print_csv(run, ctx->out);
	} else {
		bench_print_text(run, ctx->out);
	}
}

static int verdict(const struct bench_run *run)
{
	size_t c[BS_STATUS_COUNT];
	bench_count_status(run, c);
	if (c[BS_FAILED])
		return EXIT_FAIL;
	if (c[BS_LOW])
		return EXIT_WARN;
	return EXIT_OK;
}

/* --results FILE: print a saved run (thresholds re-applied when given). */
static int from_file(struct cmd_ctx *ctx, struct bench_opts *o)
{
	struct bench_run run;
	char err[512];
	int rc = bench_results_load(&run, o->results, err, sizeof(err));
	if (rc != 0) {
		cmd_error(ctx, "bench", "%s", err);
		return rc == -1 ? EXIT_NOINPUT : EXIT_DATAERR;
	}
	/* -s and -i: the suites and GPUs asked for (the GPUs as the file names them) */
	uint64_t gpus = 0;
	if (o->gpus) {
		struct gpu_ident ids[BENCH_MAX_GPUS] = { { NULL, NULL } };
		unsigned n = run.ngpus < BENCH_MAX_GPUS ? run.ngpus : BENCH_MAX_GPUS;
		for (unsigned k = 0; k < n; k++)
			ids[k] = (struct gpu_ident){ run.gpu[k].uuid[0] ? run.gpu[k].uuid : NULL,
						     run.gpu[k].pci_bus_id[0] ? run.gpu[k].pci_bus_id : NULL };
		if (gpu_select_parse(o->gpus, ids, n, &gpus, err, sizeof(err)) != 0) {
			cmd_error(ctx, "bench", "option '-i': %s in '%s' (%u GPU%s)", err, o->results, n, n == 1 ? "" : "s");
			bench_run_free(&run);
			return EXIT_USAGE;
		}
	}
	bench_run_keep(&run, o->suites_given ? o->plan.suites : BENCH_ALL_SUITES, o->gpus != NULL, gpus);
	/* datasheet limits from today's catalog; thresholds only when given again */
	bool any_thr = !isnan(o->thr.all) || o->thr.n;
	struct catalog cat = { 0 };
	if (catalog_load_dir(&cat, ctx->data_dir, err, sizeof(err)) != 0) {
		cmd_error(ctx, "bench", "cannot read the GPU catalog: %s", err);
		bench_run_free(&run);
		return EXIT_NOINPUT;
	}
	const struct cat_gpu *for_gpu[BENCH_MAX_GPUS];
	bench_saved_catalog(&run, &cat, for_gpu);
	bench_apply_limits(&run, for_gpu, BENCH_MAX_GPUS, any_thr ? &o->thr : NULL);
	catalog_free(&cat);
	finish_output(ctx, o, &run);
	rc = o->save && bench_results_save(&run, o->save, err, sizeof(err)) != 0 ? EXIT_IOERR : verdict(&run);
	if (rc == EXIT_IOERR)
		cmd_error(ctx, "bench", "%s", err);
	bench_run_free(&run);
	return rc;
}

int cmd_bench(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct bench_opts o;
	memset(&o, 0, sizeof(o));
	bench_plan_default(&o.plan);
	bench_thresholds_init(&o.thr);
	int rc = parse_args(argc, argv, ctx, &o);
	if (rc != 0)
		return rc < 0 ? EXIT_OK : rc;
	if (o.results)
		return from_file(ctx, &o);
	if (ctx->sim) {
		cmd_error(ctx, "bench", "refusing to benchmark the simulated server '%s': figures come from real GPUs only",
			  ctx->sim);
		return EXIT_UNAVAILABLE;
	}
	struct bench_measure_opts mo = { .cmd = "bench", .gpus = o.gpus, .kernels = o.kernels, .quiet = o.quiet };
	struct bench_run run;
	struct catalog cat;
	const struct cat_gpu *for_gpu[BENCH_MAX_GPUS];
	rc = bench_measure(ctx, &mo, &o.plan, &o.thr, &run, &cat, for_gpu);
	if (rc == EXIT_OK) {
		char err[512];
		finish_output(ctx, &o, &run);
		rc = verdict(&run);
		if (o.save && bench_results_save(&run, o.save, err, sizeof(err)) != 0) {
			cmd_error(ctx, "bench", "%s", err);
			rc = EXIT_IOERR;
		}
	}
	bench_run_free(&run);
	catalog_free(&cat);
	return rc;
}
