/* SPDX-License-Identifier: Apache-2.0 */
/*
 * report.c - `gpuctl report`: the whole picture of one server in the terminal
 * and, with --html, as one self-contained HTML file (docs/report.md):
 * inventory, topology, health, benchmark results (a saved results file, or a
 * quick run on real GPUs) and the guide's claims. On a simulated server:
 * inventory and datasheet only, marked SIMULATED, no benchmark figures.
 * With --results alone no backend is opened: the inventory is the one the
 * results file recorded (a file copied off the GPU server renders anywhere);
 * --sim or --live reads GPUs beside it.
 */
#include "cmd.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#include "bench/claims.h"
#include "bench/report.h"
#include "bench/results_file.h"
#include "core/data_path.h"
#include "plan/plan.h"
#include "health/health.h"
#include "sampler/sampler.h"
#include "bench_measure.h"
#include "help.h"

struct report_opts {
	const char *results, *html, *kernels, *save;
	bool no_bench, quiet, live;
};

enum { OPT_REPORT_RESULTS, OPT_REPORT_LIVE, OPT_REPORT_HTML, OPT_REPORT_SAVE, OPT_REPORT_NO_BENCH, OPT_REPORT_KERNELS,
       OPT_REPORT_QUIET };
static const struct opt_spec report_opts_table[] = {
	[OPT_REPORT_RESULTS] = { "results", 0, OPT_STRING, "FILE",
				 "benchmark figures from a saved results file (no run), and the inventory\n"
				 "it recorded: no GPU, driver or simulator needed",
				 NULL, 0, 0, NULL },
	[OPT_REPORT_LIVE] = { "live", 0, OPT_FLAG, NULL,
			      "with --results: read this machine's GPUs (inventory, topology, health)\n"
			      "instead of the recorded inventory (--sim NAME: a simulated server's)",
			      NULL, 0, 0, NULL },
	[OPT_REPORT_HTML] = { "html", 0, OPT_STRING, "OUT.html",
			      "also write the report as one self-contained HTML file with charts, of the same run",
			      NULL, 0, 0, NULL },
	[OPT_REPORT_SAVE] = { "save", 0, OPT_STRING, "FILE",
			      "save the quick run as a results file: report --results FILE [--html OUT.html]\n"
			      "renders it again without measuring",
			      NULL, 0, 0, NULL },
	[OPT_REPORT_NO_BENCH] = { "no-bench", 0, OPT_FLAG, NULL, "no quick run when there is no results file", NULL, 0, 0,
				  NULL },
	[OPT_REPORT_KERNELS] = { "kernels", 0, OPT_STRING, "PATH", "the kernels module for the quick run", NULL, 0, 0,
				 NULL },
	[OPT_REPORT_QUIET] = { "quiet", 0, OPT_FLAG, NULL, "no progress lines from the quick run", NULL, 0, 0, NULL },
};

static const struct cmd_help report_help = {
	.name = "report",
	.usage = "[--results FILE [--live]] [--html OUT.html] [--save FILE] [--no-bench] [--kernels PATH] [--quiet]",
	.what = "The whole picture of this server: inventory, topology, health, benchmark figures against the\n"
		"datasheet, and the guide's claims (guide's figure, ours, ratio). Benchmark figures come from a\n"
		"results file (gpuctl bench --save FILE) or, on real GPUs, from a quick run now; a simulated\n"
		"server gets all of it but measured figures: inventory, topology, health, datasheet, planning\n"
		"and the claims that need no measurement (with --results FILE, that run's figures too).\n",
	.opts = report_opts_table,
	.nopts = sizeof(report_opts_table) / sizeof(report_opts_table[0]),
	.exits = "0 written, 64 usage, 65 bad results file, 66 missing file, 69 no GPU/driver, 74 output",
};

/* Returns -1 after --help, else the exit code (0: go on). */
static int parse(int argc, char **argv, struct cmd_ctx *ctx, struct report_opts *o)
{
	struct opt_parser p;
	struct opt_value v;
	int k, rc;
	opt_init(&p, argc, argv, report_help.opts, report_help.nopts);
	while ((k = help_opt_next(ctx, &report_help, &p, &v, &rc)) != OPT_DONE) {
		switch (k) {
		case OPT_HELP: return -1;
		case OPT_ERROR: return rc;
		case OPT_REPORT_RESULTS: o->results = v.text; break;
		case OPT_REPORT_HTML: o->html = v.text; break;
		case OPT_REPORT_SAVE: o->save = v.text; break;
		case OPT_REPORT_NO_BENCH: o->no_bench = true; break;
		case OPT_REPORT_KERNELS: o->kernels = v.text; break;
		case OPT_REPORT_LIVE: o->live = true; break;
		default: o->quiet = true; break; /* -q */
		}
	}
	if (o->save && (o->results || o->no_bench)) {
		cmd_error(ctx, "report", "--save keeps a quick run: %s", o->results ? "with --results the figures are already "
			  "in a file" : "--no-bench makes none");
		return EXIT_USAGE;
	}
	if (o->live && !o->results) {
		cmd_error(ctx, "report", "--live goes with --results (without it the GPUs are read anyway)");
		return EXIT_USAGE;
	}
	return 0;
}

/* Everything the report needs, on the heap (snapshots are large). */
struct report_state {
	struct gpu_static st[GPU_MAX_GPUS];
	const struct cat_gpu *cat_for[GPU_MAX_GPUS];
	struct gpu_link link[GPU_MAX_GPUS][GPU_MAX_GPUS];
	struct snapshot snap;       /* its arrays: */
	struct gpu_view snap_views[GPU_MAX_GPUS];
	struct gpu_link snap_links[GPU_MAX_GPUS][GPU_MAX_GPUS];
	struct snapshot_tables snap_tables;
	struct health_rules rules;
	struct health_report health;
	struct catalog cat, bench_catalog;
	struct bench_run run;
	bool have_run;
	bool saved, save_failed;    /* --save: the quick run written, or not */
	const struct cat_gpu *bench_for[BENCH_MAX_GPUS];
	struct claims claims;
	struct claim_eval evals[CLAIMS_MAX];
	struct report rep;
};

static void inventory(struct cmd_ctx *ctx, struct report_state *s)
{
	struct gpu_backend *be = ctx->be;
	struct gpu_err err = { "" };
	char msg[256];
	struct report *rep = &s->rep;
	rep->sys = ctx->sys;
	rep->simulated = ctx->sys.simulated;
	rep->n = be->gpu_count > GPU_MAX_GPUS ? GPU_MAX_GPUS : be->gpu_count;
	if (catalog_load_dir(&s->cat, ctx->data_dir, msg, sizeof(msg)) != 0)
		cmd_error(ctx, "report", "no datasheet figures: %s", msg);
	for (unsigned i = 0; i < rep->n; i++) {
		s->st[i].index = i;
		if (be->ops->static_info(be, i, &s->st[i], &err) != GPU_OK)
			cmd_error(ctx, "report", "GPU %u: %s", i, err.msg);
		s->cat_for[i] = catalog_match(&s->cat, VAL_HAS(s->st[i].name) ? s->st[i].name.s : "",
					      VAL_HAS(s->st[i].mem_total_bytes) ? s->st[i].mem_total_bytes.v : 0);
	}
	rep->st = s->st;
	rep->cat = s->cat_for;
	bool links = be->ops->link != NULL;
	for (unsigned i = 0; links && i < rep->n; i++)
		for (unsigned j = 0; j < rep->n; j++) {
			if (i == j) {
				s->link[i][j].kind = LINK_SELF;
				continue;
			}
			if (be->ops->link(be, i, j, &s->link[i][j], &err) != GPU_OK)
				s->link[i][j].kind = LINK_UNKNOWN;
		}
	rep->link = links ? (const struct gpu_link(*)[GPU_MAX_GPUS])s->link : NULL;
}

/* The inventory a results file recorded (s->run, loaded; bench/report.h). */
static void recorded_inventory(struct cmd_ctx *ctx, const char *path, struct report_state *s)
{
	struct report *rep = &s->rep;
	char msg[256];
	if (catalog_load_dir(&s->cat, ctx->data_dir, msg, sizeof(msg)) != 0)
		cmd_error(ctx, "report", "no datasheet figures: %s", msg);
	report_recorded_inventory(rep, &s->run, path, &s->cat, s->st, s->cat_for);
}

static void health(struct cmd_ctx *ctx, struct report_state *s)
{
	char msg[256];
	struct gpu_err err = { "" };
	struct report *rep = &s->rep;
	if (health_rules_load_default(&s->rules, ctx->data_dir, msg, sizeof(msg)) != 0) {
		snprintf(rep->health_note, sizeof(rep->health_note), "no health rules: %.150s", msg);
		return;
	}
	snapshot_attach(&s->snap, s->snap_views, s->snap_links, &s->snap_tables, GPU_MAX_GPUS);
	if (snapshot_take_with_sys(ctx->be, &ctx->sys, GPU_GRP_ALL, 0, &s->snap, &err) != GPU_OK) {
		snprintf(rep->health_note, sizeof(rep->health_note), "cannot read the GPUs: %.150s", err.msg);
		return;
	}
	/* one snapshot: rate rules need two and are left out; XIDs are not watched here */
	struct health_opts opts = { .xids_unknown = true };
	if (health_evaluate(&s->rules, &s->snap, NULL, &opts, &s->health, msg, sizeof(msg)) != 0) {
		snprintf(rep->health_note, sizeof(rep->health_note), "%.190s", msg);
		return;
	}
	rep->health = &s->health;
}

/* What the preset models need here: training on one GPU and on all, serving. */
static void planning(struct cmd_ctx *ctx, struct report_state *s)
{
	struct report *rep = &s->rep;
	const struct cat_gpu *g = rep->n ? s->cat_for[0] : NULL;
	char err[256];
	if (!rep->n || !VAL_HAS(s->st[0].mem_total_bytes)) {
		snprintf(rep->plan_note, sizeof(rep->plan_note), "GPU memory unknown: no planning figures");
		return;
	}
	rep->plan_mem_bytes = (double)s->st[0].mem_total_bytes.v;
	rep->plan_gpus = rep->n;
	struct data_file f = { .text = NULL };
	struct plan_presets pre = { 0 };
	if (data_file_read(ctx->data_dir, "plan/models.json", 1 << 20, &f, err, sizeof(err)) != DATA_OK ||
	    plan_presets_parse(&pre, f.text, f.len, err, sizeof(err)) != 0) {
		snprintf(rep->plan_note, sizeof(rep->plan_note), "model presets: %.180s", err);
		data_file_free(&f);
		return;
	}
	data_file_free(&f);
	report_plan_rows(rep, &pre, g);
	plan_presets_free(&pre);
}

/* The figures: the results file cmd_report loaded, or a quick run now. */
static void benchmark(struct cmd_ctx *ctx, const struct report_opts *o, struct report_state *s)
{
	struct report *rep = &s->rep;
	if (o->results) {
		s->have_run = true; /* loaded by cmd_report */
		bench_saved_catalog(&s->run, &s->cat, s->bench_for);
		bench_apply_limits(&s->run, s->bench_for, BENCH_MAX_GPUS, NULL);
		snprintf(rep->bench_source, sizeof(rep->bench_source), "results file '%.150s'", o->results);
		if (rep->simulated)
			snprintf(rep->bench_note, sizeof(rep->bench_note),
				 "these figures were measured on host '%.60s', not on this simulated server", s->run.host);
	} else if (rep->simulated) {
		snprintf(rep->bench_note, sizeof(rep->bench_note),
			 "simulated server: benchmarks run on real GPUs only (give --results FILE to show a saved run)");
		return;
	} else if (o->no_bench) {
		snprintf(rep->bench_note, sizeof(rep->bench_note), "not run (--no-bench)");
		return;
	} else {
		struct bench_plan plan;
		struct bench_thresholds thr;
		bench_plan_default(&plan);
		bench_thresholds_init(&thr);
		struct bench_measure_opts mo = { .cmd = "report", .kernels = o->kernels, .quiet = o->quiet };
		int rc = bench_measure(ctx, &mo, &plan, &thr, &s->run, &s->bench_catalog, s->bench_for);
		if (rc != EXIT_OK) {
			bench_run_free(&s->run);
			snprintf(rep->bench_note, sizeof(rep->bench_note), "the quick benchmark could not run (exit %d): "
				 "see the message above", rc);
			return;
		}
		s->have_run = true;
		snprintf(rep->bench_source, sizeof(rep->bench_source), "a quick run now");
		if (o->save) {
			char err[512];
			if (bench_results_save(&s->run, o->save, err, sizeof(err)) != 0) {
				cmd_error(ctx, "report", "%s", err);
				s->save_failed = true;
			} else {
				s->saved = true;
			}
		}
	}
	rep->bench = &s->run;
	rep->bench_cat = s->run.ngpus && s->run.gpu[0].catalog_model[0] ? catalog_find(&s->cat, s->run.gpu[0].catalog_model)
									  : NULL;
}

static int write_html(struct cmd_ctx *ctx, const char *path, const struct report *rep)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		cmd_error(ctx, "report", "cannot write '%s': %s", path, strerror(errno));
		return EXIT_IOERR;
	}
	report_print_html(rep, f);
	if (ferror(f) | (fclose(f) != 0)) {
		cmd_error(ctx, "report", "cannot write '%s': %s", path, strerror(errno));
		return EXIT_IOERR;
	}
	return EXIT_OK;
}

int cmd_report(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct report_opts o = { 0 };
	int rc = parse(argc, argv, ctx, &o);
	if (rc != 0)
		return rc < 0 ? EXIT_OK : rc;
	/* a missing results file is the user's mistake too: said before any driver is asked */
	if (o.results && access(o.results, R_OK) != 0) {
		cmd_error(ctx, "report", "cannot read '%s': %s", o.results, strerror(errno));
		return EXIT_NOINPUT;
	}
	/* GPUs are read only when asked: no --results, --live, or a simulator named */
	bool read_gpus = !o.results || o.live || ctx->sim || ctx->or_sim;
	if (read_gpus) {
		rc = cmd_backend(ctx); /* only now: usage errors need no driver */
		if (rc != EXIT_OK)
			return rc;
	}
	struct report_state *s = calloc(1, sizeof(*s));
	if (!s) {
		cmd_error(ctx, "report", "out of memory");
		return EXIT_SOFTWARE;
	}
	bench_run_init(&s->run);
	if (o.results) {
		char err[512];
		rc = bench_results_load(&s->run, o.results, err, sizeof(err));
		if (rc != 0) {
			cmd_error(ctx, "report", "%s", err);
			rc = rc == -1 ? EXIT_NOINPUT : EXIT_DATAERR;
			goto out;
		}
	}
	struct report *rep = &s->rep;
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(rep->generated_utc, sizeof(rep->generated_utc), "%Y-%m-%dT%H:%M:%SZ", &tm);

	if (read_gpus) {
		inventory(ctx, s);
		health(ctx, s);
	} else {
		recorded_inventory(ctx, o.results, s);
	}
	planning(ctx, s);
	benchmark(ctx, &o, s);
	char msg[256];
	if (claims_load_default(&s->claims, ctx->data_dir, msg, sizeof(msg)) == 0) {
		claims_evaluate(&s->claims, rep->bench, rep->bench_note, s->evals);
		rep->claims = &s->claims;
		rep->evals = s->evals;
	} else {
		cmd_error(ctx, "report", "no claims table: %s", msg);
	}
	cmd_print_sim_banner(ctx, ctx->out);
	report_print_text(rep, ctx->out);
	if (o.html) {
		rc = write_html(ctx, o.html, rep); /* the same run as the text: nothing measured twice */
		if (rc == EXIT_OK)
			fprintf(ctx->out, "\nHTML report: %s\n", o.html);
	}
	/* a quick run is kept only when asked; say how to render it again without measuring */
	if (s->saved)
		fprintf(ctx->out, "\nquick run saved: %s (gpuctl report --results %s --html OUT.html renders it without "
			"measuring)\n", o.save, o.save);
	else if (o.save)
		fprintf(ctx->out, "\nnot saved (--save): %s\n", s->save_failed ? "see the message above" : "no quick run was made");
	else if (s->have_run && !o.results)
		fprintf(ctx->out, "\nthis quick run is not kept: --save FILE keeps it for report --results FILE --html OUT.html\n");
	if (rc == EXIT_OK && s->save_failed)
		rc = EXIT_IOERR;
out:
	bench_run_free(&s->run);
	catalog_free(&s->cat);
	catalog_free(&s->bench_catalog);
	free(s);
	return rc;
}
