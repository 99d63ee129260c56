/* SPDX-License-Identifier: Apache-2.0 */
/* test_report.c - `gpuctl report` rendering from the saved results file
 * tests/data/results-h200x2.json (the kernels module's real figures of a 2x
 * H200 run in results-file form): claims, headline figures, chart data,
 * terminal text and the self-contained HTML. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/claims.h"
#include "bench/limits.h"
#include "bench/report.h"
#include "bench/results_file.h"
#include "core/data_path.h"
#include "plan/plan.h"
#include "bench_fixture.h"

struct fixture {
	struct bench_run run;
	struct catalog cat;
	struct claims claims;
	struct claim_eval evals[CLAIMS_MAX];
	struct gpu_static st[2];
	const struct cat_gpu *cats[2];
	struct gpu_link link[GPU_MAX_GPUS][GPU_MAX_GPUS];
	struct report rep;
};

static int setup(void **state)
{
	static struct fixture f;
	memset(&f, 0, sizeof(f));
	char err[512];
	const struct cat_gpu *h200 = bench_fixture_load("results-h200x2.json", &f.run, &f.cat);
	if (claims_load_default(&f.claims, getenv("GPUCTL_DATA_DIR"), err, sizeof(err)) != 0)
		fail_msg("%s", err);
	const struct cat_gpu *for_gpu[2] = { h200, h200 };
	bench_apply_limits(&f.run, for_gpu, 2, NULL);
	claims_evaluate(&f.claims, &f.run, NULL, f.evals);
	for (unsigned i = 0; i < 2; i++) {
		f.st[i].index = i;
		snprintf(f.st[i].name.s, sizeof(f.st[i].name.s), "NVIDIA H200");
		f.st[i].name.st = VAL_OK;
		VAL_SET(f.st[i].mem_total_bytes, 143771ull << 20);
		VAL_SET(f.st[i].ecc_mode, 1);
		f.cats[i] = h200;
		for (unsigned j = 0; j < 2; j++)
			f.link[i][j] = (struct gpu_link){ i == j ? LINK_SELF : LINK_NVLINK, i == j ? 0 : 18, LINK_PHB, i != j };
	}
	struct report *r = &f.rep;
	snprintf(r->generated_utc, sizeof(r->generated_utc), "2026-11-30T01:00:00Z");
	snprintf(r->sys.server_name, sizeof(r->sys.server_name), "node <1>");
	r->n = 2;
	r->st = f.st;
	r->cat = f.cats;
	r->link = (const struct gpu_link(*)[GPU_MAX_GPUS])f.link;
	snprintf(r->health_note, sizeof(r->health_note), "test: no health data");
	r->bench = &f.run;
	r->bench_cat = h200;
	snprintf(r->bench_source, sizeof(r->bench_source), "results file 'results-h200x2.json'");
	r->claims = &f.claims;
	r->evals = f.evals;
	r->plan_gpus = 2;
	r->plan_mem_bytes = 150.8e9;
	r->nplan = 1;
	r->plan[0] = (struct report_plan_row){ "llama-3-8b", 8.03e9, 177.6e9, 70.1e9, 9.2e9, true,
					       "fits (52 x 4096-token sequences)" };
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	bench_run_free(&f->run);
	catalog_free(&f->cat);
	return 0;
}

static const struct claim_eval *eval_of(const struct fixture *f, const char *id)
{
	for (unsigned i = 0; i < f->claims.n; i++)
		if (!strcmp(f->evals[i].claim->id, id))
			return &f->evals[i];
	fail_msg("no claim %s", id);
	return NULL;
}

static void test_fixture_is_marked(void **state)
{
	struct fixture *f = *state;
	assert_non_null(strstr(f->run.note, "TEST FIXTURE"));
	assert_int_equal(f->run.ngpus, 2);
	assert_int_equal(f->run.n, 52);
}

static void test_claims(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(f->claims.n, 11);
	/* C1: pinned 55.43 GB/s vs pageable 8.224 GB/s: 1 - 8.224/55.43 of the time saved */
	const struct claim_eval *e = eval_of(f, "C1");
	assert_float_equal(e->ours, 1.0 - 8.2238 / 55.427, 1e-3);
	assert_float_equal(e->ratio, (1.0 - 8.2238 / 55.427) / 0.30, 1e-2);
	assert_string_equal(e->ours_text, "85% of the time saved");
	/* C2: tiled 8.771 vs naive 5.716 TFLOP/s */
	e = eval_of(f, "C2");
	assert_float_equal(e->ours, 8.7713 / 5.7157, 1e-3);
	assert_string_equal(e->ours_text, "1.53x");
	/* C3: a training step's BF16 / FP32 speed-up; this file predates the train suite */
	e = eval_of(f, "C3");
	assert_true(isnan(e->ours));
	/* C4: the NVLink copy (394.6 GB/s) over the host-staged one (52.16 GB/s) */
	e = eval_of(f, "C4");
	assert_float_equal(e->ours, 394.6 / 52.161, 1e-2);
	/* C5: two GPUs but no data-parallel training row: not measured; the best all-reduce
	 * busbw only as a labelled proxy (test_claims_train.c has the rule) */
	e = eval_of(f, "C5");
	assert_true(isnan(e->ours));
	assert_true(isnan(e->ratio));
	assert_non_null(strstr(e->note, "Proxy only: all_reduce busbw 342.4 GB/s"));
	/* C6, C7, C8: no host memcpy, no telemetry, no sustained run in this file */
	e = eval_of(f, "C6");
	assert_true(isnan(e->ours));
	assert_string_equal(e->note, "no result for 'host memcpy' in this run");
	e = eval_of(f, "C7");
	assert_true(isnan(e->ours));
	assert_string_equal(e->ours_text, "not measured");
	e = eval_of(f, "C8");
	assert_true(isnan(e->ours));
	/* C9: a planner claim, not a bench figure */
	e = eval_of(f, "C9");
	assert_true(isnan(e->ours));
	assert_non_null(strstr(e->ours_text, "gpuctl plan"));

	/* nothing measured: every bench claim says so, with the reason */
	struct claim_eval none[CLAIMS_MAX];
	claims_evaluate(&f->claims, NULL, "simulated server", none);
	assert_string_equal(none[0].ours_text, "not measured");
	assert_string_equal(none[0].note, "simulated server");
	assert_true(isnan(none[1].ratio));
}

/* C3 from two train rows: BF16 and FP32 steps of the same model and batch. */
static void test_claim_c3_from_training(void **state)
{
	const struct fixture *f = *state;
	struct bench_run run;
	bench_run_init(&run);
	static const char *const precs[] = { "bf16", "fp32" };
	static const double step_ms[] = { 55.06, 323.18 };
	for (int i = 0; i < 2; i++) {
		struct bench_result *r = bench_run_add(&run, "train", "124M", precs[i]);
		assert_non_null(r);
		r->gpu = 0;
		r->verified = true;
		double ms[10];
		for (int j = 0; j < 10; j++)
			ms[j] = step_ms[i];
		assert_int_equal(bench_result_set_samples(r, BM_TFLOPS, ms, 10, 0, 14.09e12, NAN), 0);
	}
	struct claim_eval evals[CLAIMS_MAX];
	claims_evaluate(&f->claims, &run, NULL, evals);
	for (unsigned i = 0; i < f->claims.n; i++)
		if (!strcmp(evals[i].claim->id, "C3"))
			assert_float_equal(evals[i].ours, 323.18 / 55.06, 1e-6);
	bench_run_free(&run);
}

static void test_claims_parse_errors(void **state)
{
	(void)state;
	struct claims c;
	char err[256];
	const char *bad[][2] = {
		{ "{\"schema\":\"x\",\"claims\":[]}", "'schema'" },
		{ "{\"schema\":\"gpuctl-claims\",\"claims\":[{\"id\":\"C1\",\"claim\":\"x\",\"kind\":\"magic\"}]}", "unknown kind" },
		{ "{\"schema\":\"gpuctl-claims\",\"claims\":[{\"id\":\"C1\",\"claim\":\"x\",\"kind\":\"ratio\",\"num\":{\"suite\":\"a\",\"test\":\"b\"}}]}", "'den' is missing" },
		{ "{\"schema\":\"gpuctl-claims\",\"claims\":[{\"id\":\"C1\",\"kind\":\"none\"}]}", "'claim' is missing" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(claims_parse(&c, bad[i][0], strlen(bad[i][0]), err, sizeof(err)), -1);
		if (!strstr(err, bad[i][1]))
			fail_msg("case %zu: '%s'", i, err);
	}
}

static void test_chart_data(void **state)
{
	struct fixture *f = *state;
	struct report_series s[16];
	unsigned n = report_bw_series(&f->run, s, 16);
	/* the 5 collectives; copies and P2P were measured at one size only */
	assert_int_equal(n, 5);
	assert_string_equal(s[0].name, "nccl all_reduce busbw");
	assert_int_equal(s[0].n, 7);
	assert_float_equal(s[0].x[0], 1048576.0, 0);
	assert_float_equal(s[0].x[6], 4294967296.0, 0);
	assert_float_equal(s[0].y[6], 342.41, 0.01);
	assert_string_equal(s[4].name, "nccl all_to_all busbw");
	assert_int_equal(s[4].n, 2);

	double m[16 * 16];
	assert_int_equal(report_p2p_matrix(&f->run, m, 16), 2);
	assert_true(isnan(m[0]) && isnan(m[3]));
	assert_float_equal(m[1], 394.6, 0.1);
	assert_true(isnan(m[2])); /* 1 -> 0 not measured */

	struct report_roof_point p[64];
	unsigned np = report_roof_points(&f->run, 0, p, 64);
	/* 4 FMA + 6 cuBLAS + 4 of our GEMMs + SpMV and LJ: FLOPs on GPU 0 */
	assert_int_equal(np, 16);
	unsigned compute_only = 0;
	for (unsigned i = 0; i < np; i++) {
		compute_only += p[i].compute_only;
		if (!strcmp(p[i].name, "compute cublas bf16")) {
			/* 2 * 8192^3 FLOP over 3 * 8192^2 * 2 bytes */
			assert_float_equal(p[i].ai, 2.0 * 8192 / 6.0, 0.01); /* the run rounded FLOPs to 6 digits */
			assert_float_equal(p[i].gflops, 794616.0, 10.0);
		}
	}
	assert_int_equal(compute_only, 5); /* FMA kernels and the LJ proxy count no DRAM bytes */

	struct report_highlight h[REPORT_MAX_HIGHLIGHTS];
	unsigned nh = report_highlights(&f->run, h, REPORT_MAX_HIGHLIGHTS);
	assert_true(nh >= 20);
	assert_string_equal(h[0].label, "device memory copy (read+write)");
	assert_float_equal(h[0].r->value.median, 4009.19, 0.01);
	assert_float_equal(h[0].r->limit, 4800.0, 0);
	/* this file predates the latency sweep: no HBM or L2 figure */
	assert_string_equal(h[2].label, "HBM latency (working sets >= 8x L2)");
	assert_null(h[2].r);
	assert_null(h[3].r);
	assert_null(h[20].r); /* host memcpy: not in this run */
}

static char *render(const struct report *rep, int html);

/* A run with the latency sweep, both device copies and no sustained load. */
static void add_point(struct bench_run *run, const char *test, const char *variant, uint64_t size, enum bench_metric m,
		      double ms, double bytes, double scale)
{
	struct bench_result *r = bench_run_add(run, "memory", test, variant);
	assert_non_null(r);
	r->gpu = 0;
	r->size_bytes = size;
	r->verified = true;
	double samples[10];
	for (int i = 0; i < 10; i++)
		samples[i] = ms;
	assert_int_equal(bench_result_set_samples(r, m, samples, 10, bytes, 0, scale), 0);
}

static void test_latency_and_variants(void **state)
{
	struct fixture *f = *state;
	struct bench_run run;
	bench_run_init(&run);
	snprintf(run.mode, sizeof(run.mode), "quick");
	static const uint64_t ws[] = { 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20, 512 << 20, 1ull << 30 };
	static const double ns[] = { 32, 33, 140, 146, 147, 220, 330, 342 };
	for (int i = 0; i < 8; i++) /* 100000 loads a sample: ns = ms x 10 */
		add_point(&run, "latency", "sweep", ws[i], BM_LATENCY_NS, ns[i] / 10, 0, 10);
	add_point(&run, "latency", "hbm", 1ull << 30, BM_LATENCY_NS, 33.6, 0, 10);
	add_point(&run, "copy", "kernel", 1ull << 30, BM_BANDWIDTH, 0.54, 2.0 * (1 << 30), NAN);
	add_point(&run, "copy", "cudaMemcpy", 1ull << 30, BM_BANDWIDTH, 0.51, 2.0 * (1 << 30), NAN);

	struct report_series s[4];
	assert_int_equal(report_latency_series(&run, s, 4), 1);
	assert_string_equal(s[0].name, "memory latency sweep GPU0");
	assert_int_equal(s[0].n, 8);
	assert_float_equal(s[0].y[7], 342, 1e-9);
	char steps[512];
	report_latency_steps_text(&s[0], steps, sizeof(steps));
	assert_string_equal(steps, "16 KiB .. 64 KiB: 32 ns; 256 KiB .. 4 MiB: 146 ns; 16 MiB: 220 ns; "
				   "512 MiB .. 1 GiB: 336 ns");
	/* the bandwidth chart does not take latency points */
	struct report_series bw[4];
	assert_int_equal(report_bw_series(&run, bw, 4), 0);

	/* the headline copy is the fastest checked variant, and its row names it */
	struct report_highlight h[REPORT_MAX_HIGHLIGHTS];
	report_highlights(&run, h, REPORT_MAX_HIGHLIGHTS);
	assert_string_equal(h[0].r->variant, "cudaMemcpy");
	char cells[REPORT_HL_COLS][REPORT_CELL];
	report_highlight_row(&h[0], cells);
	assert_string_equal(cells[0], "device memory copy (read+write), best: cudaMemcpy");
	assert_float_equal(h[2].r->value.median, 336, 1e-9);
	report_highlight_row(&h[2], cells);
	assert_string_equal(cells[0], "HBM latency (working sets >= 8x L2)");

	/* C8 in a quick run: why it is not measured */
	struct claim_eval ev[CLAIMS_MAX];
	claims_evaluate(&f->claims, &run, NULL, ev);
	for (unsigned i = 0; i < f->claims.n; i++)
		if (!strcmp(f->claims.c[i].id, "C8")) {
			assert_string_equal(ev[i].ours_text, "not measured");
			assert_non_null(strstr(ev[i].note, "--quick runs no sustained load"));
		}

	/* the HTML draws the staircase and its plateaus */
	struct report rep = f->rep;
	rep.bench = &run;
	char *html = render(&rep, 1);
	assert_non_null(strstr(html, "id=\"chart-latency\""));
	assert_non_null(strstr(html, "memory latency sweep GPU0 plateaus: 16 KiB .. 64 KiB: 32 ns"));
	free(html);
	char *text = render(&rep, 0);
	assert_non_null(strstr(text, "memory latency sweep GPU0 plateaus: 16 KiB"));
	free(text);
	bench_run_free(&run);
}

static char *render(const struct report *rep, int html)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	if (html)
		report_print_html(rep, out);
	else
		report_print_text(rep, out);
	fclose(out);
	return buf;
}

static void test_text(void **state)
{
	struct fixture *f = *state;
	char *s = render(&f->rep, 0);
	assert_non_null(strstr(s, "== Inventory =="));
	assert_non_null(strstr(s, "NV18"));
	assert_non_null(strstr(s, "not evaluated: test: no health data"));
	assert_non_null(strstr(s, "H200 SXM"));
	assert_non_null(strstr(s, "4800 GB/s"));
	assert_non_null(strstr(s, "note: TEST FIXTURE"));
	assert_non_null(strstr(s, "device memory copy (read+write)"));
	assert_non_null(strstr(s, "4009 GB/s"));
	assert_non_null(strstr(s, "394.6 GB/s"));
	assert_non_null(strstr(s, "== The guide's claims =="));
	assert_non_null(strstr(s, "1.53x"));
	assert_non_null(strstr(s, "== Planning (gpuctl plan; 2 GPUs of 150.8 GB) =="));
	assert_non_null(strstr(s, "8.03 B"));
	assert_non_null(strstr(s, "177.6 GB/GPU, does not fit"));
	assert_non_null(strstr(s, "70.1 GB/GPU, fits"));
	assert_non_null(strstr(s, "9.2 GB/GPU, fits (52 x 4096-token sequences)"));
	assert_null(strstr(s, "SIMULATED"));
	free(s);
}

static unsigned count(const char *s, const char *what)
{
	unsigned n = 0;
	for (const char *p = strstr(s, what); p; p = strstr(p + 1, what))
		n++;
	return n;
}

/* data marks inside one chart's <svg id=...> ... </svg> */
static unsigned marks_in(const char *html, const char *id)
{
	char key[64];
	snprintf(key, sizeof(key), "id=\"%s\"", id);
	const char *a = strstr(html, key);
	if (!a)
		return 0;
	const char *b = strstr(a, "</svg>");
	unsigned n = 0;
	for (const char *p = strstr(a, "class=\"data\""); p && p < b; p = strstr(p + 1, "class=\"data\""))
		n++;
	return n;
}

static void test_html(void **state)
{
	struct fixture *f = *state;
	char *s = render(&f->rep, 1);
	assert_true(strncmp(s, "<!DOCTYPE html>", 15) == 0);
	assert_non_null(strstr(s, "</html>\n"));
	/* self-contained: nothing fetched, no script */
	assert_null(strstr(s, "<script"));
	assert_null(strstr(s, "src=\""));
	assert_null(strstr(s, "href=\"http"));
	/* the server name is escaped */
	assert_non_null(strstr(s, "node &lt;1&gt;"));
	assert_int_equal(count(s, "<svg class=\"chart\""), 4);
	/* 5 lines with 7 + 4 x 2 points */
	assert_int_equal(marks_in(s, "chart-bw"), 5 + 7 + 4 * 2);
	assert_int_equal(marks_in(s, "chart-roofline"), 16);
	assert_int_equal(marks_in(s, "chart-p2p"), 1);
	assert_int_equal(marks_in(s, "chart-gemm"), 9);
	assert_non_null(strstr(s, "<h2>The guide's claims</h2>"));
	assert_null(strstr(s, "SIMULATED"));
	free(s);

	/* a simulated server: banner, no benchmark section figures */
	struct report sim = f->rep;
	sim.simulated = true;
	sim.bench = NULL;
	snprintf(sim.bench_note, sizeof(sim.bench_note), "simulated server: benchmarks run on real GPUs only");
	struct claim_eval none[CLAIMS_MAX];
	claims_evaluate(&f->claims, NULL, sim.bench_note, none);
	sim.evals = none;
	s = render(&sim, 1);
	assert_non_null(strstr(s, "class=\"sim\">SIMULATED server"));
	assert_non_null(strstr(s, "Inventory (SIMULATED)"));
	assert_int_equal(count(s, "<svg"), 0);
	assert_non_null(strstr(s, "no benchmark figures: simulated server"));
	free(s);
	s = render(&sim, 0);
	assert_non_null(strstr(s, "== Inventory (SIMULATED) =="));
	assert_null(strstr(s, "GB/s (median)"));
	free(s);
}

/* The inventory a results file recorded (report_build.c): its host, driver and GPUs. */
static void test_recorded_inventory(void **state)
{
	struct fixture *f = *state;
	struct report *rep = calloc(1, sizeof(*rep));
	struct gpu_static st[GPU_MAX_GPUS];
	const struct cat_gpu *cat_for[GPU_MAX_GPUS];
	assert_non_null(rep);
	memset(st, 0, sizeof(st));
	report_recorded_inventory(rep, &f->run, "r.json", &f->cat, st, cat_for);
	assert_string_equal(rep->sys.backend, "results");
	assert_int_equal(rep->n, f->run.ngpus);
	assert_int_equal(rep->sys.gpu_count, f->run.ngpus);
	assert_ptr_equal(rep->st, st);
	assert_null(rep->link); /* topology not recorded */
	for (unsigned i = 0; i < rep->n; i++) {
		assert_string_equal(st[i].name.s, f->run.gpu[i].name);
		assert_non_null(cat_for[i]); /* the fixture's H200 is in the catalog */
		assert_true(VAL_HAS(st[i].mem_total_bytes));
	}
	assert_non_null(strstr(rep->inventory_source, "results file 'r.json'"));
	assert_non_null(strstr(rep->health_note, "no health data"));
	free(rep);
}

/* The planning rows (report_build.c) for the shipped presets on two H200s. */
static void test_plan_rows(void **state)
{
	struct fixture *f = *state;
	struct report *rep = calloc(1, sizeof(*rep));
	assert_non_null(rep);
	rep->n = rep->plan_gpus = 2;
	rep->plan_mem_bytes = 150.8e9;
	char err[256];
	struct data_file df;
	struct plan_presets pre = { 0 };
	assert_int_equal(data_file_read(getenv("GPUCTL_DATA_DIR"), "plan/models.json", 1 << 20, &df, err, sizeof(err)),
			 DATA_OK);
	assert_int_equal(plan_presets_parse(&pre, df.text, df.len, err, sizeof(err)), 0);
	data_file_free(&df);
	report_plan_rows(rep, &pre, f->cats[0]);
	assert_int_equal(rep->nplan, 5);
	assert_string_equal(rep->plan[0].model, plan_presets_find(&pre, "gpt2-xl")->name);
	for (unsigned i = 0; i < rep->nplan; i++) {
		assert_true(rep->plan[i].params > 1e9);
		assert_true(rep->plan[i].train1_bytes > rep->plan[i].trainn_bytes); /* ZeRO-3 over 2 GPUs needs less */
	}
	/* GPT-2 XL's 25 heads do not split over 2 GPUs: not served; Llama 3 8B fits two H200s */
	assert_true(isnan(rep->plan[0].serve_bytes));
	assert_string_equal(rep->plan[1].model, plan_presets_find(&pre, "llama-3-8b")->name);
	assert_false(isnan(rep->plan[1].serve_bytes));
	assert_true(rep->plan[1].serve_fits);
	report_plan_rows(rep, &pre, NULL);     /* no GPU: no serving figures */
	assert_true(isnan(rep->plan[5].serve_bytes));
	plan_presets_free(&pre);
	free(rep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixture_is_marked),
		cmocka_unit_test(test_claims),
		cmocka_unit_test(test_claim_c3_from_training),
		cmocka_unit_test(test_claims_parse_errors),
		cmocka_unit_test(test_chart_data),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_html),
		cmocka_unit_test(test_latency_and_variants),
		cmocka_unit_test(test_recorded_inventory),
		cmocka_unit_test(test_plan_rows),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
