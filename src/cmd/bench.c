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

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/output.h"
#include "bench/results_file.h"
#include "kernels_host/train_ref.h"
#include "bench_measure.h"

struct bench_opts {
	struct bench_plan plan;
	struct bench_thresholds thr;
	const char *gpus, *save, *results, *kernels;
	bool json, csv, quiet, suites_given;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: gpuctl bench [--quick | --full] [-s SUITES] [-i GPUS] [--size LIST] [--iters N]\n"
		"                    [--min-ratio R | SUITE=R,...] [--json | --csv] [--save FILE]\n"
		"       gpuctl bench --results FILE [--min-ratio ...] [--json | --csv]\n\n"
		"Measures the GPUs against their datasheet: each figure is the median of device-timed\n"
		"samples, verified, with min, max, spread, the bytes or FLOPs counted, the datasheet\n"
		"limit and the ratio; clocks, power, temperature and throttle reasons kept per test.\n\n"
		"  --quick             the default suites, short sweeps (under a minute on one H200)\n"
		"  --full              size and shape sweeps, and the sustained load (minutes)\n"
		"  -s, --suite LIST    copy,memory,compute,gemm,p2p,nccl,apps,sustained,host,train or all\n"
		"                      (default: all but sustained; --full adds sustained)\n"
		"  -i, --id GPUS       GPUs to test: 0,1 / 0-3 / UUID / PCI bus id (default: all)\n"
		"  --size LIST         transfer sizes for copy/memory/p2p/nccl, e.g. 4K,1M,1G\n"
		"  --iters N           timed samples per test (10..128; default 10, --full 20)\n"
		"  --sustained-seconds S   length of the sustained load per GPU (default 60)\n"
		"  --model NAME        train: GPT-2 124M (default), 350M or 774M\n"
		"  --grad-accum N      train: micro-batches of 16 x 1024 tokens per step (1..64, default 1)\n"
		"  --min-ratio R       exit 1 when a result is under R x datasheet; SUITE=R per suite\n"
		"  --timeout S         per-test deadline in seconds (default 120)\n"
		"  --warmup N          untimed runs before the samples (default: the module's)\n"
		"  --seed N            seed of the random inputs (default: fixed)\n"
		"  --json, --csv       machine output (docs/bench.md); --json is the results file\n"
		"  --save FILE         also write the results file\n"
		"  --results FILE      print a saved results file instead of measuring\n"
		"  --kernels PATH      the kernels module (default: $GPUCTL_KERNELS, build tree, install)\n"
		"  -q, --quiet         no progress lines on stderr\n"
		"exit: 0 ok, 1 under threshold, 2 a test failed, 64 usage, 65 bad file, 69 no GPU/driver/module\n");
}

static int parse_int(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (!*s || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int parse_args(int argc, char **argv, struct cmd_ctx *ctx, struct bench_opts *o)
{
	enum { O_FULL = 256, O_QUICK, O_SIZE, O_ITERS, O_MINR, O_JSON, O_CSV, O_SAVE, O_RESULTS, O_KERNELS,
	       O_SUST, O_TIMEOUT, O_WARMUP, O_SEED, O_MODEL, O_ACCUM };
	static const struct option lo[] = {
		{ "full", no_argument, 0, O_FULL }, { "quick", no_argument, 0, O_QUICK },
		{ "suite", required_argument, 0, 's' }, { "id", required_argument, 0, 'i' },
		{ "size", required_argument, 0, O_SIZE }, { "iters", required_argument, 0, O_ITERS },
		{ "warmup", required_argument, 0, O_WARMUP }, { "seed", required_argument, 0, O_SEED },
		{ "min-ratio", required_argument, 0, O_MINR }, { "json", no_argument, 0, O_JSON },
		{ "csv", no_argument, 0, O_CSV }, { "save", required_argument, 0, O_SAVE },
		{ "results", required_argument, 0, O_RESULTS }, { "kernels", required_argument, 0, O_KERNELS },
		{ "sustained-seconds", required_argument, 0, O_SUST }, { "timeout", required_argument, 0, O_TIMEOUT },
		{ "model", required_argument, 0, O_MODEL }, { "grad-accum", required_argument, 0, O_ACCUM },
		{ "quiet", no_argument, 0, 'q' }, { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 },
	};
	char err[256];
	long v;
	opterr = 0;
	optind = 1;
	int c;
	while ((c = getopt_long(argc, argv, ":s:i:qh", lo, NULL)) != -1) {
		switch (c) {
		case O_FULL: o->plan.full = true; break;
		case O_QUICK: o->plan.full = false; break;
		case 's':
			if (bench_suites_parse(optarg, &o->plan.suites, err, sizeof(err)) != 0) {
				cmd_error(ctx, "bench", "%s", err);
				return EXIT_USAGE;
			}
			o->suites_given = true;
			break;
		case 'i': o->gpus = optarg; break;
		case O_SIZE:
			if (bench_sizes_parse(&o->plan, optarg, err, sizeof(err)) != 0) {
				cmd_error(ctx, "bench", "%s", err);
				return EXIT_USAGE;
			}
			break;
		case O_ITERS:
			if (parse_int(optarg, GK_MIN_SAMPLES, GK_MAX_SAMPLES, &v) != 0) {
				cmd_error(ctx, "bench", "bad --iters '%s' (want %d..%d)", optarg, GK_MIN_SAMPLES, GK_MAX_SAMPLES);
				return EXIT_USAGE;
			}
			o->plan.iters = (int)v;
			break;
		case O_WARMUP:
			if (parse_int(optarg, 1, 1000, &v) != 0) {
				cmd_error(ctx, "bench", "bad --warmup '%s' (want 1..1000)", optarg);
				return EXIT_USAGE;
			}
			o->plan.warmup = (int)v;
			break;
		case O_SEED:
			if (parse_int(optarg, 0, 0x7fffffffL, &v) != 0) {
				cmd_error(ctx, "bench", "bad --seed '%s'", optarg);
				return EXIT_USAGE;
			}
			o->plan.seed = (uint64_t)v;
			break;
		case O_SUST:
			if (parse_int(optarg, 2, 86400, &v) != 0) {
				cmd_error(ctx, "bench", "bad --sustained-seconds '%s' (want 2..86400)", optarg);
				return EXIT_USAGE;
			}
			o->plan.sustained_s = (double)v;
			break;
		case O_TIMEOUT:
			if (parse_int(optarg, 1, 86400, &v) != 0) {
				cmd_error(ctx, "bench", "bad --timeout '%s' (want 1..86400 seconds)", optarg);
				return EXIT_USAGE;
			}
			o->plan.test_timeout_s = (double)v;
			break;
		case O_MODEL: {
			struct gk_train_cfg m;
			if (ktrain_preset(optarg, &m) != 0 || strcmp(optarg, "tiny") == 0) {
				cmd_error(ctx, "bench", "unknown --model '%s' (124M, 350M, 774M)", optarg);
				return EXIT_USAGE;
			}
			snprintf(o->plan.train_model, sizeof(o->plan.train_model), "%s", optarg);
			break;
		}
		case O_ACCUM:
			if (parse_int(optarg, 1, 64, &v) != 0) {
				cmd_error(ctx, "bench", "bad --grad-accum '%s' (want 1..64)", optarg);
				return EXIT_USAGE;
			}
			o->plan.grad_accum = (int)v;
			break;
		case O_MINR:
			if (bench_thresholds_parse(&o->thr, optarg, err, sizeof(err)) != 0) {
				cmd_error(ctx, "bench", "--min-ratio: %s", err);
				return EXIT_USAGE;
			}
			break;
		case O_JSON: o->json = true; break;
		case O_CSV: o->csv = true; break;
		case O_SAVE: o->save = optarg; break;
		case O_RESULTS: o->results = optarg; break;
		case O_KERNELS: o->kernels = optarg; break;
		case 'q': o->quiet = true; break;
		case 'h': usage(ctx->out); return -1;
		case ':': cmd_error(ctx, "bench", "option '%s' needs a value", argv[optind - 1]); return EXIT_USAGE;
		default: cmd_error(ctx, "bench", "unknown option '%s'; see 'gpuctl bench --help'", argv[optind - 1]); return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		cmd_error(ctx, "bench", "unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	if (o->json && o->csv) {
		cmd_error(ctx, "bench", "--json and --csv exclude each other");
		return EXIT_USAGE;
	}
	if (o->plan.full && !o->suites_given)
		o->plan.suites = BENCH_ALL_SUITES;
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
