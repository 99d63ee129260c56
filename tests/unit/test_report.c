/* test_report.c - `gpuctl report` rendering from the saved results file
 * tests/data/results-h200x2.json (a hand-made fixture): claims, headline
 * figures, chart data, terminal text and the self-contained HTML. */
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
	char path[4096], err[512];
	const char *dir = getenv("GPUCTL_TEST_DIR");
	snprintf(path, sizeof(path), "%s/data/results-h200x2.json", dir ? dir : "tests");
	if (bench_results_load(&f.run, path, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	if (catalog_load_default(&f.cat, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	if (claims_load_default(&f.claims, getenv("GPUCTL_DATA_DIR"), err, sizeof(err)) != 0)
		fail_msg("%s", err);
	const struct cat_gpu *h200 = catalog_find(&f.cat, "H200 SXM");
	assert_non_null(h200);
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
	r->plan[0] = (struct report_plan_row){ "llama-3-8b", 8.03e9, 177.6e9, 70.1e9, 9.2e9, 52 };
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
	assert_non_null(strstr(f->run.note, "HAND-MADE TEST FIXTURE"));
	assert_int_equal(f->run.ngpus, 2);
	assert_true(f->run.n > 90);
}

static void test_claims(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(f->claims.n, 11);
	/* C1: pinned 55.4 GB/s vs pageable 7.6 GB/s: 1 - 7.6/55.4 of the time saved */
	const struct claim_eval *e = eval_of(f, "C1");
	assert_float_equal(e->ours, 1.0 - 7.6 / 55.4, 1e-3);
	assert_float_equal(e->ratio, (1.0 - 7.6 / 55.4) / 0.30, 1e-2);
	assert_string_equal(e->ours_text, "86% of the time saved");
	/* C2: tiled 9.8 vs naive 4.1 TFLOP/s */
	e = eval_of(f, "C2");
	assert_float_equal(e->ours, 9.8 / 4.1, 1e-3);
	assert_string_equal(e->ours_text, "2.39x");
	/* C4: the best NVLink copy (393 GB/s) over the host-staged one (24.5 GB/s) */
	e = eval_of(f, "C4");
	assert_float_equal(e->ours, 393.0 / 24.5, 1e-2);
	/* C7: a value without a guide number: no ratio */
	e = eval_of(f, "C7");
	assert_true(isfinite(e->ours));
	assert_true(isnan(e->ratio));
	/* C8: loss_pct 4.99 % of the sustained run */
	e = eval_of(f, "C8");
	assert_float_equal(e->ours, 0.0499, 1e-6);
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
	/* h2d/d2h pinned on 2 GPUs, p2p copy both ways, 5 collectives */
	assert_int_equal(n, 11);
	assert_string_equal(s[0].name, "copy h2d pinned GPU0");
	assert_int_equal(s[0].n, 4);
	assert_float_equal(s[0].x[0], 4096, 0);
	assert_float_equal(s[0].x[3], 1073741824.0, 0);
	assert_true(s[0].y[3] > 55 && s[0].y[3] < 56);

	double m[16 * 16];
	assert_int_equal(report_p2p_matrix(&f->run, m, 16), 2);
	assert_true(isnan(m[0]) && isnan(m[3]));
	assert_float_equal(m[1], 391.0, 0.5);
	assert_float_equal(m[2], 393.0, 0.5);

	struct report_roof_point p[64];
	unsigned np = report_roof_points(&f->run, 0, p, 64);
	/* 4 FMA + 6 cuBLAS + 4 GEMM kernels + 3 apps + sustained: FLOPs on GPU 0 */
	assert_int_equal(np, 17);
	unsigned compute_only = 0;
	for (unsigned i = 0; i < np; i++) {
		compute_only += p[i].compute_only;
		if (!strcmp(p[i].name, "compute cublas bf16")) {
			/* 2 * 8192^3 FLOP over 3 * 8192^2 * 2 bytes */
			assert_float_equal(p[i].ai, 2.0 * 8192 / 6.0, 1e-6);
			assert_float_equal(p[i].gflops, 781000.0, 10.0);
		}
	}
	assert_int_equal(compute_only, 5); /* FMA kernels and the LJ proxy count no DRAM bytes */

	struct report_highlight h[REPORT_MAX_HIGHLIGHTS];
	unsigned nh = report_highlights(&f->run, h, REPORT_MAX_HIGHLIGHTS);
	assert_true(nh >= 20);
	assert_string_equal(h[0].label, "device memory copy (read+write)");
	assert_float_equal(h[0].r->value.median, 4160.0, 1.0);
	assert_float_equal(h[0].r->limit, 4800.0, 0);
	assert_float_equal(h[2].r->value.median, 652.0, 0.5); /* latency: the lowest */
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
	assert_non_null(strstr(s, "note: HAND-MADE TEST FIXTURE"));
	assert_non_null(strstr(s, "device memory copy (read+write)"));
	assert_non_null(strstr(s, "0.87")); /* 4160 / 4800 */
	assert_non_null(strstr(s, "== The guide's claims =="));
	assert_non_null(strstr(s, "2.39x"));
	assert_non_null(strstr(s, "== Planning (gpuctl plan; 2 GPUs of 150.8 GB) =="));
	assert_non_null(strstr(s, "8.03 B"));
	assert_non_null(strstr(s, "177.6 GB/GPU, does not fit"));
	assert_non_null(strstr(s, "70.1 GB/GPU, fits"));
	assert_non_null(strstr(s, "9.2 GB/GPU, fits (52 x 4K-token sequences)"));
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
	/* 11 series (lines) with their points */
	assert_true(marks_in(s, "chart-bw") >= 11 + 2 * 4 * 2);
	assert_int_equal(marks_in(s, "chart-roofline"), 17);
	assert_int_equal(marks_in(s, "chart-p2p"), 2);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixture_is_marked),
		cmocka_unit_test(test_claims),
		cmocka_unit_test(test_claims_parse_errors),
		cmocka_unit_test(test_chart_data),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_html),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
