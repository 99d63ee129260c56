/* SPDX-License-Identifier: Apache-2.0 */
/* test_bench.c - the benchmark result model: per-sample figures, nccl-tests'
 * bus bandwidth, datasheet limits, thresholds, the results file round trip and
 * the text and CSV output. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/pcie.h"
#include "bench/limits.h"
#include "device/gpu.h"
#include "bench/model.h"
#include "bench/output.h"
#include "bench/results_file.h"
#include "kernels_host/kmod.h"

/* The datasheet figures of an H200 SXM as the catalog gives them. */
static struct cat_gpu h200(void)
{
	struct cat_gpu g;
	memset(&g, 0, sizeof(g));
	strcpy(g.key, "H200 SXM");
	strcpy(g.architecture, "Hopper");
	g.cc_major = 9;
	g.mem_bw_gbs = 4800;
	g.tflops_fp64 = 34;
	g.tflops_fp64_tc = 67;
	g.tflops_fp32 = 67;
	g.tflops_tf32 = 494.7;
	g.tflops_fp16 = g.tflops_bf16 = 989.4;
	g.tflops_fp8 = 1978.9;
	g.nvlink_links = 18;
	g.nvlink_bw_gbs = 900;
	g.pcie_gen = 5;
	g.pcie_width = 16;
	return g;
}

static void ten(double *x, double ms)
{
	for (int i = 0; i < 10; i++)
		x[i] = ms * (1.0 + 0.001 * (i - 4.5)); /* symmetric: the median is ms */
}

static void test_bandwidth_from_samples(void **state)
{
	(void)state;
	struct bench_run run;
	bench_run_init(&run);
	struct bench_result *r = bench_run_add(&run, "memory", "copy", "");
	double x[10];
	ten(x, 2.0); /* 1.991 .. 2.009 ms for 8 GB read+written */
	assert_int_equal(bench_result_set_samples(r, BM_BANDWIDTH, x, 10, 8e9, 0, NAN), 0);
	assert_string_equal(r->unit, "GB/s");
	assert_int_equal(r->value.n, 10);
	/* the fastest sample gives the max, the slowest the min */
	assert_float_equal(r->value.max, 8e9 / 1.991e-3 / 1e9, 1e-6);
	assert_float_equal(r->value.min, 8e9 / 2.009e-3 / 1e9, 1e-6);
	assert_float_equal(r->time_ms.median, 2.0, 1e-12);
	assert_float_equal(r->value.median, 4000.0, 0.01);
	assert_float_equal(r->value.spread_pct, 100.0 * (8 / 1.991 - 8 / 2.009) / 4.0, 1e-3);
	bench_run_free(&run);
}

static void test_missing_work_fails_result(void **state)
{
	(void)state;
	struct bench_run run;
	bench_run_init(&run);
	struct bench_result *r = bench_run_add(&run, "compute", "cublas", "fp32");
	double x[10];
	ten(x, 1.0);
	assert_int_equal(bench_result_set_samples(r, BM_TFLOPS, x, 10, 0, 0, NAN), -1);
	assert_int_equal(r->status, BS_FAILED);
	assert_non_null(strstr(r->message, "flops"));
	r = bench_run_add(&run, "memory", "copy", "");
	assert_int_equal(bench_result_set_samples(r, BM_BANDWIDTH, x, 0, 1e9, 0, NAN), -1);
	bench_run_free(&run);
}

/* The factors themselves are tested with kmod (test_kmod.c); here: busbw and
 * algbw of a result built with them. */
static void test_busbw_of_a_result(void **state)
{
	(void)state;
	/* an 8-GPU all-reduce of 1 GiB in 5 ms: algbw 214.7 GB/s, busbw x1.75 */
	struct bench_run run;
	bench_run_init(&run);
	struct bench_result *r = bench_run_add(&run, "nccl", "all_reduce", "");
	double x[10];
	for (int i = 0; i < 10; i++)
		x[i] = 5.0;
	double f = kmod_busbw_factor(GK_ALL_REDUCE, 8);
	assert_int_equal(bench_result_set_samples(r, BM_BUSBW, x, 10, 1073741824.0, 0, f), 0);
	assert_float_equal(r->algbw_gbs, 1073741824.0 / 5e-3 / 1e9, 1e-9);
	assert_float_equal(r->value.median, r->algbw_gbs * 1.75, 1e-9);
	bench_run_free(&run);
}

static void test_pcie_generations(void **state)
{
	(void)state;
	assert_float_equal(pcie_gbs(5, 16), 64.0, 0.0);
	assert_float_equal(pcie_gbs(4, 16), 32.0, 0.0);
	assert_float_equal(pcie_gbs(4, 8), 16.0, 0.0);
	assert_true(isnan(pcie_gbs(0, 16)));
	assert_true(isnan(pcie_gbs(9, 16)));
}

static double limit_of(const char *suite, const char *test, const char *variant, enum bench_metric m, double nvlinks)
{
	struct cat_gpu g = h200();
	struct bench_result r;
	bench_result_clear(&r);
	strcpy(r.suite, suite);
	strcpy(r.test, test);
	strcpy(r.variant, variant);
	r.metric = m;
	strcpy(r.unit, bench_metric_unit(m));
	if (!isnan(nvlinks))
		bench_result_add_aux(&r, "nvlinks", nvlinks, "");
	double lim = NAN;
	char what[64];
	if (bench_datasheet_limit(&g, &r, &lim, what, sizeof(what)) != 0)
		return NAN;
	assert_non_null(strstr(what, "H200 SXM"));
	return lim;
}

static void test_datasheet_limits_h200(void **state)
{
	(void)state;
	assert_float_equal(limit_of("memory", "copy", "", BM_BANDWIDTH, NAN), 4800, 0);
	assert_float_equal(limit_of("copy", "h2d", "pinned", BM_BANDWIDTH, NAN), 64, 0);
	assert_float_equal(limit_of("copy", "bidir", "pinned", BM_BANDWIDTH, NAN), 128, 0);
	assert_float_equal(limit_of("compute", "fma", "fp32", BM_TFLOPS, NAN), 67, 0);
	assert_float_equal(limit_of("compute", "fma", "fp64", BM_TFLOPS, NAN), 34, 0);
	assert_float_equal(limit_of("compute", "fma", "fp16x2", BM_TFLOPS, NAN), 134, 0);
	assert_float_equal(limit_of("compute", "cublas", "fp64", BM_TFLOPS, NAN), 67, 0);
	assert_float_equal(limit_of("compute", "cublas", "bf16", BM_TFLOPS, NAN), 989.4, 0);
	assert_float_equal(limit_of("compute", "cublaslt", "fp8_e4m3", BM_TFLOPS, NAN), 1978.9, 0);
	assert_float_equal(limit_of("gemm", "tiled", "fp32", BM_TFLOPS, NAN), 67, 0);
	/* 18 NVLinks between the pair: 450 GB/s one way, 900 both ways */
	assert_float_equal(limit_of("p2p", "ce", "uni", BM_BANDWIDTH, 18), 450, 0);
	assert_float_equal(limit_of("p2p", "ce", "bidir", BM_BANDWIDTH, 18), 900, 0);
	/* half the links: half the bandwidth; no NVLink: PCIe */
	assert_float_equal(limit_of("p2p", "ce", "uni", BM_BANDWIDTH, 9), 225, 0);
	assert_float_equal(limit_of("p2p", "ce", "uni", BM_BANDWIDTH, 0), 64, 0);
	assert_float_equal(limit_of("p2p", "host", "uni", BM_BANDWIDTH, 18), 64, 0);
	assert_float_equal(limit_of("nccl", "all_reduce", "", BM_BUSBW, NAN), 450, 0);
	/* latency and app speed-ups have no datasheet limit */
	assert_true(isnan(limit_of("memory", "latency", "", BM_LATENCY_NS, NAN)));
	assert_true(isnan(limit_of("apps", "spmv", "", BM_GFLOPS, NAN)));
}

static void test_thresholds_parse(void **state)
{
	(void)state;
	struct bench_thresholds t;
	char err[128];
	bench_thresholds_init(&t);
	assert_true(isnan(bench_threshold_for(&t, "copy")));
	assert_int_equal(bench_thresholds_parse(&t, "0.8", err, sizeof(err)), 0);
	assert_int_equal(bench_thresholds_parse(&t, "copy=0.86,memory=0.9", err, sizeof(err)), 0);
	assert_float_equal(bench_threshold_for(&t, "copy"), 0.86, 0);
	assert_float_equal(bench_threshold_for(&t, "memory"), 0.9, 0);
	assert_float_equal(bench_threshold_for(&t, "p2p"), 0.8, 0);
	assert_int_equal(bench_thresholds_parse(&t, "copy=0.5", err, sizeof(err)), 0);
	assert_float_equal(bench_threshold_for(&t, "copy"), 0.5, 0);
	assert_int_equal(t.n, 2);
	assert_int_equal(bench_thresholds_parse(&t, "x", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "'x'"));
	assert_int_equal(bench_thresholds_parse(&t, "copy=", err, sizeof(err)), -1);
	assert_int_equal(bench_thresholds_parse(&t, "=0.5", err, sizeof(err)), -1);
	assert_int_equal(bench_thresholds_parse(&t, "0", err, sizeof(err)), -1);
	assert_int_equal(bench_thresholds_parse(&t, "3", err, sizeof(err)), -1);
	assert_int_equal(bench_thresholds_parse(&t, "0.5,", err, sizeof(err)), -1);
	assert_int_equal(bench_thresholds_parse(&t, "", err, sizeof(err)), -1);
}

/* A small run: memory copy at 0.88 of datasheet, h2d at 0.85, a failed and a
 * skipped test. */
static void make_run(struct bench_run *run)
{
	bench_run_init(run);
	strcpy(run->mode, "quick");
	strcpy(run->host, "node1");
	strcpy(run->started_utc, "2026-11-30T01:00:00Z");
	strcpy(run->driver_version, "580.159.04");
	strcpy(run->cuda_version, "13.0");
	run->duration_s = 42.5;
	run->ngpus = 1;
	strcpy(run->gpu[0].name, "NVIDIA H200");
	strcpy(run->gpu[0].catalog_model, "H200 SXM");
	double x[10];
	struct bench_result *r = bench_run_add(run, "memory", "copy", "");
	r->gpu = 0;
	r->size_bytes = 4ull << 30;
	ten(x, 8.59e9 / 4224e9 * 1e3);
	bench_result_set_samples(r, BM_BANDWIDTH, x, 10, 8.59e9, 0, NAN);
	r->verified = true;
	r->tel.samples = 3;
	r->tel.power_w_avg = 512.5;
	r->tel.sm_clock_mhz_min = 1755;
	r->tel.sm_clock_mhz_max = 1980;
	r->tel.clock_event_reasons = CLK_EVT_SW_POWER_CAP | CLK_EVT_GPU_IDLE;
	r->tel.test_s = 0.25;
	r->tel.energy_j = 128.125;
	strcpy(r->tel.energy_from, "readings");
	r->tel.gpm_pct[BENCH_GPM_sm_active_pct] = 91.5; /* the profiling means; the others stay n/a */
	r->tel.gpm_pct[BENCH_GPM_dram_active_pct] = 87.25;
	r = bench_run_add(run, "copy", "h2d", "pinned");
	r->gpu = 0;
	r->size_bytes = 1ull << 30;
	ten(x, 1073741824.0 / 54.3e9 * 1e3);
	bench_result_set_samples(r, BM_BANDWIDTH, x, 10, 1073741824.0, 0, NAN);
	bench_result_add_aux(r, "overlap", 0.93, "");
	r = bench_run_add(run, "compute", "cublaslt", "fp8_e4m3");
	r->gpu = 0;
	bench_result_fail(r, BS_FAILED, "verification failed: 12 of 4096 entries off, \"max\" 0.5");
	r = bench_run_add(run, "p2p", "ce", "uni");
	bench_result_fail(r, BS_SKIPPED, "one GPU: no peer");
}

static void test_apply_limits_and_thresholds(void **state)
{
	(void)state;
	struct bench_run run;
	make_run(&run);
	struct cat_gpu g = h200();
	const struct cat_gpu *cats[1] = { &g };
	struct bench_thresholds t;
	bench_thresholds_init(&t);
	/* no threshold: nothing low, ratios attached */
	assert_int_equal(bench_apply_limits(&run, cats, 1, &t), 0);
	assert_float_equal(run.r[0].limit, 4800, 0);
	assert_true(run.r[0].ratio > 0.86 && run.r[0].ratio < 0.89);
	assert_true(run.r[1].ratio > 0.83 && run.r[1].ratio < 0.86);
	/* 0.86 for all: h2d (0.85) is low, device copy (0.875) is not */
	char err[64];
	assert_int_equal(bench_thresholds_parse(&t, "0.86", err, sizeof(err)), 0);
	assert_int_equal(bench_apply_limits(&run, cats, 1, &t), 1);
	assert_int_equal(run.r[0].status, BS_OK);
	assert_int_equal(run.r[1].status, BS_LOW);
	assert_int_equal(run.r[2].status, BS_FAILED);
	assert_int_equal(run.r[3].status, BS_SKIPPED);
	/* a per-suite threshold overrides: copy=0.8 lets h2d pass, memory=0.9 fails the copy */
	assert_int_equal(bench_thresholds_parse(&t, "copy=0.8,memory=0.9", err, sizeof(err)), 0);
	assert_int_equal(bench_apply_limits(&run, cats, 1, &t), 1);
	assert_int_equal(run.r[0].status, BS_LOW);
	assert_int_equal(run.r[1].status, BS_OK);
	/* unknown GPU: no limit, nothing can be low */
	const struct cat_gpu *none[1] = { NULL };
	assert_int_equal(bench_apply_limits(&run, none, 1, &t), 0);
	assert_true(isnan(run.r[0].ratio));
	size_t c[BS_STATUS_COUNT];
	bench_count_status(&run, c);
	assert_int_equal(c[BS_OK], 2);
	assert_int_equal(c[BS_FAILED], 1);
	assert_int_equal(c[BS_SKIPPED], 1);
	bench_run_free(&run);
}

/* a saved run's GPUs get the catalog entry of the model it names, by GPU index */
static void test_saved_catalog(void **state)
{
	(void)state;
	struct cat_gpu g = h200();
	struct catalog cat = { 1, &g };
	struct bench_run run;
	make_run(&run);
	run.ngpus = 3;
	run.gpu[0].index = 2;
	run.gpu[1].index = 0; /* names no model */
	run.gpu[2].index = 5;
	strcpy(run.gpu[2].catalog_model, "B300");
	const struct cat_gpu *for_gpu[BENCH_MAX_GPUS];
	for (unsigned i = 0; i < BENCH_MAX_GPUS; i++)
		for_gpu[i] = &g;
	bench_saved_catalog(&run, &cat, for_gpu);
	assert_ptr_equal(for_gpu[2], &g);
	assert_null(for_gpu[0]);
	assert_null(for_gpu[5]);
	assert_null(for_gpu[1]);
	bench_run_free(&run);
}

/* Equal in the results file's 15 significant digits (docs/json.md), or both NaN. */
static bool same15(double a, double b)
{
	return (isnan(a) && isnan(b)) || fabs(a - b) <= fabs(a) * 1e-14;
}

static void test_results_file_round_trip(void **state)
{
	(void)state;
	struct bench_run run, back;
	make_run(&run);
	struct cat_gpu g = h200();
	const struct cat_gpu *cats[1] = { &g };
	bench_apply_limits(&run, cats, 1, NULL);
	char *text = bench_results_to_json(&run);
	assert_non_null(text);
	assert_non_null(strstr(text, "\"schema\": \"gpuctl-bench-results\""));
	assert_non_null(strstr(text, "\"simulated\": false"));
	char err[256];
	assert_int_equal(bench_results_parse(&back, text, strlen(text), err, sizeof(err)), 0);
	assert_int_equal(back.n, run.n);
	assert_string_equal(back.mode, "quick");
	assert_string_equal(back.gpu[0].catalog_model, "H200 SXM");
	assert_float_equal(back.duration_s, 42.5, 0);
	for (size_t i = 0; i < run.n; i++) {
		const struct bench_result *a = &run.r[i], *b = &back.r[i];
		assert_string_equal(a->suite, b->suite);
		assert_string_equal(a->test, b->test);
		assert_string_equal(a->variant, b->variant);
		assert_string_equal(a->message, b->message);
		assert_int_equal(a->status, b->status);
		assert_int_equal(a->metric, b->metric);
		assert_int_equal(a->nsamples, b->nsamples);
		assert_int_equal(a->size_bytes, b->size_bytes);
		for (unsigned k = 0; k < a->nsamples; k++) /* 15 significant digits (docs/json.md) */
			assert_float_equal(a->samples_ms[k], b->samples_ms[k], fabs(a->samples_ms[k]) * 1e-14);
		assert_true(same15(a->value.median, b->value.median));
		assert_true(same15(a->ratio, b->ratio));
		assert_int_equal(a->naux, b->naux);
		assert_int_equal(a->tel.clock_event_reasons, b->tel.clock_event_reasons);
		assert_string_equal(a->tel.energy_from, b->tel.energy_from);
		assert_true(same15(a->tel.energy_j, b->tel.energy_j));
		assert_true(same15(a->tel.test_s, b->tel.test_s));
		for (unsigned k = 0; k < BENCH_TEL_NGPM; k++)
			assert_true(same15(a->tel.gpm_pct[k], b->tel.gpm_pct[k]));
	}
	assert_float_equal(bench_result_aux(&back.r[1], "overlap"), 0.93, 0);
	/* the same text again: the format is stable (15 digits read back to the same 15) */
	char *again = bench_results_to_json(&back);
	assert_string_equal(text, again);
	free(again);
	free(text);
	bench_run_free(&back);
	bench_run_free(&run);
}

static void test_results_file_rejects(void **state)
{
	(void)state;
	struct bench_run run;
	char err[256];
	const char *bad[][2] = {
		{ "[1]", "is not a JSON object" },
		{ "{\"schema\":\"x\",\"version\":1,\"results\":[]}", "'schema'" },
		{ "{\"schema\":\"gpuctl-bench-results\",\"version\":2,\"results\":[]}", "newer" },
		{ "{\"schema\":\"gpuctl-bench-results\",\"version\":1,\"simulated\":true,\"results\":[]}", "simulated" },
		{ "{\"schema\":\"gpuctl-bench-results\",\"version\":1}", "'results' is missing" },
		{ "{\"schema\":\"gpuctl-bench-results\",\"version\":1,\"results\":[{\"suite\":\"memory\",\"test\":\"copy\","
		  "\"status\":\"ok\",\"metric\":\"bandwidth\"}]}", "results[0]: 'value' has no median" },
		{ "{\"schema\":\"gpuctl-bench-results\",\"version\":1,\"results\":[{\"suite\":\"memory\",\"test\":\"copy\","
		  "\"status\":\"great\",\"metric\":\"bandwidth\"}]}", "'status'" },
		{ "{\"schema\":\"gpuctl-bench-results\",\"version\":1,\"results\":[{\"suite\":\"m\",\"test\":\"c\","
		  "\"gpu\":99,\"status\":\"skipped\",\"metric\":\"bandwidth\"}]}", "'gpu' is out of range" },
		{ "{\"schema\":", "not valid JSON" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(bench_results_parse(&run, bad[i][0], strlen(bad[i][0]), err, sizeof(err)), -1);
		if (!strstr(err, bad[i][1]))
			fail_msg("case %zu: '%s' does not say '%s'", i, err, bad[i][1]);
		assert_int_equal(run.n, 0);
	}
	assert_int_equal(bench_results_load(&run, "/nonexistent/results.json", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "cannot open"));
}

static char *capture_text(const struct bench_run *run, int csv)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (csv)
		bench_print_csv(run, f);
	else
		bench_print_text(run, f);
	fclose(f);
	return buf;
}

static void test_text_output(void **state)
{
	(void)state;
	struct bench_run run;
	make_run(&run);
	struct cat_gpu g = h200();
	const struct cat_gpu *cats[1] = { &g };
	struct bench_thresholds t;
	char err[64];
	bench_thresholds_init(&t);
	bench_thresholds_parse(&t, "0.86", err, sizeof(err));
	bench_apply_limits(&run, cats, 1, &t);
	char *s = capture_text(&run, 0);
	assert_non_null(strstr(s, "gpuctl bench (quick): 1 GPU, NVIDIA H200 (H200 SXM)"));
	assert_non_null(strstr(s, "4224 GB/s"));   /* the median with its unit */
	assert_non_null(strstr(s, "4800 GB/s"));   /* the datasheet limit */
	assert_non_null(strstr(s, "8.59 GB"));     /* bytes counted */
	assert_non_null(strstr(s, "0.88"));        /* the ratio */
	assert_non_null(strstr(s, "LOW (< 0.86)"));
	assert_non_null(strstr(s, "failed: verification failed"));
	assert_non_null(strstr(s, "skipped: one GPU: no peer"));
	assert_non_null(strstr(s, "1755-1980 MHz"));
	assert_non_null(strstr(s, "SM act/occ/tensor/DRAM"));
	assert_non_null(strstr(s, "92/-/-/87 %")); /* the profiling means, one a figure missing */
	assert_non_null(strstr(s, "SW Power Cap"));
	assert_null(strstr(s, "Idle"));
	/* the telemetry table: every row that ran, with its energy or why none */
	assert_non_null(strstr(s, "128.1 J"));
	assert_non_null(strstr(s, "readings"));
	assert_non_null(strstr(s, "no telemetry recorded"));
	assert_non_null(strstr(s, "4 results: 1 ok, 1 under threshold, 1 failed, 1 skipped (42.5 s)"));
	free(s);
	bench_run_free(&run);
}

static void test_csv_output(void **state)
{
	(void)state;
	struct bench_run run;
	make_run(&run);
	char *s = capture_text(&run, 1);
	/* an offset, not strchr(s) + 1: gcc -O2 takes memstream's buffer for a dangling pointer */
	const char *line2 = s + strcspn(s, "\n") + 1;
	assert_true(strncmp(s, "suite,test,variant,gpu,peer,ngpus,size_bytes,", 45) == 0);
	assert_true(strncmp(line2, "memory,copy,,0,-1,1,4294967296,0,0,0,bandwidth,GB/s,4224", 56) == 0);
	/* a message with a comma and quotes is quoted as RFC 4180 says */
	assert_non_null(strstr(s, "\"verification failed: 12 of 4096 entries off, \"\"max\"\" 0.5\",\n"));
	/* the last field: where the energy came from */
	assert_non_null(strstr(line2, ",readings\n"));
	/* every line has the header's number of fields (no commas inside fields but the quoted one) */
	int lines = 0;
	for (char *p = s; *p; p++)
		lines += *p == '\n';
	assert_int_equal(lines, 5);
	free(s);
	bench_run_free(&run);
}

static void test_formats(void **state)
{
	(void)state;
	char b[64];
	bench_fmt_size(4096, b, sizeof(b));
	assert_string_equal(b, "4 KiB");
	bench_fmt_size(1ull << 30, b, sizeof(b));
	assert_string_equal(b, "1 GiB");
	bench_fmt_size(3ull << 19, b, sizeof(b));
	assert_string_equal(b, "1.5 MiB");
	bench_fmt_num(NAN, b, sizeof(b));
	assert_string_equal(b, "n/a");
	bench_fmt_num(54.321, b, sizeof(b));
	assert_string_equal(b, "54.32");
	bench_fmt_reasons(0, b, sizeof(b));
	assert_string_equal(b, "none");
	bench_fmt_reasons(CLK_EVT_HW_THERMAL | CLK_EVT_SW_POWER_CAP | 0x100000, b, sizeof(b));
	assert_string_equal(b, "SW Power Cap, HW Thermal Slowdown, 0x100000");
	bench_fmt_reasons(CLK_EVT_GPU_IDLE, b, sizeof(b));
	assert_string_equal(b, "none");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bandwidth_from_samples),
		cmocka_unit_test(test_missing_work_fails_result),
		cmocka_unit_test(test_busbw_of_a_result),
		cmocka_unit_test(test_pcie_generations),
		cmocka_unit_test(test_datasheet_limits_h200),
		cmocka_unit_test(test_thresholds_parse),
		cmocka_unit_test(test_apply_limits_and_thresholds),
		cmocka_unit_test(test_saved_catalog),
		cmocka_unit_test(test_results_file_round_trip),
		cmocka_unit_test(test_results_file_rejects),
		cmocka_unit_test(test_text_output),
		cmocka_unit_test(test_csv_output),
		cmocka_unit_test(test_formats),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
