/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_health_diag_gpu.c - diag's engine (src/bench/diag_run.c) on a fake
 * kernels-module table behind the guard (kernels_host/kguard.h), without CUDA:
 * results judged against the catalog's thresholds, a corrupted memory test
 * FAILs, a GEMM miscompare FAILs, a GPU whose call never returns is declared
 * hung while the others go on, and a failed NCCL all-reduce is narrowed down
 * to the failing pair, and the PCIe copy test is not taken while the driver
 * clears memory that was just freed (issue 31: `diag -r 2` measured 29.6 GB/s
 * host-to-device on a healthy H200 right after its own memory test). It links
 * the engine as the command does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "bench/diag_run.h"
#include "core/clock.h"
#include "core/gpu_select.h"

/* ---- the fake module: figures of a healthy H200 unless told otherwise ---- */
static struct {
	int ndev;
	int hang_dev;            /* memtest on this CUDA device never returns (until released) */
	atomic_int released;
	atomic_int hung_returned; /* the hung memtest has returned (its thread left the fake) */
	double h2d_gbs[8];
	int miscompare_dev;
	int bad_nccl_a, bad_nccl_b; /* NCCL with both of these hangs (-1: none) */
	/* What an H200 does (bench/h2d_probe.cu, bench/RESULTS.md): once a process
	 * frees most of the GPU's memory, the driver clears it on the copy engine
	 * that host-to-device copies use, and for about half a second they run at
	 * 29.6 GB/s instead of 55. model_scrub: a memory test (which frees 85% of
	 * the memory when it ends) starts that on its device; scrubbing[d]: it is
	 * going on; the engine's sleep hook lets it end. */
	bool model_scrub;
	atomic_bool scrubbing[8];
	uint64_t slept_ns;
	bool with_sleep;         /* run() gives the engine a sleep hook */
} fk;

static void fake_reset(int ndev)
{
	memset((void *)&fk, 0, sizeof(fk));
	fk.ndev = ndev;
	fk.hang_dev = fk.miscompare_dev = fk.bad_nccl_a = fk.bad_nccl_b = -1;
	for (int i = 0; i < 8; i++)
		fk.h2d_gbs[i] = 55.0;
}

static void fill_rate(struct gk_result *r, double bytes_or_flops, double per_s, bool flops)
{
	r->nsamples = GK_MIN_SAMPLES;
	for (int i = 0; i < r->nsamples; i++)
		r->samples_ms[i] = bytes_or_flops / per_s * 1e3;
	if (flops)
		r->flops = bytes_or_flops;
	else
		r->bytes = bytes_or_flops;
}

static int f_count(int *count, char *err, size_t errlen)
{
	(void)err; (void)errlen;
	*count = fk.ndev;
	return GK_OK;
}

static int f_info(int device, struct gk_device_info *out)
{
	snprintf(out->pci_bus_id, sizeof(out->pci_bus_id), "0000:%02X:00.0", 0x10 + device);
	snprintf(out->name, sizeof(out->name), "NVIDIA H200");
	out->mem_total_bytes = 150000000000ull;
	out->mem_free_bytes = 149000000000ull;
	return GK_OK;
}

static int f_memtest(const struct gk_memtest_args *a, struct gk_result *r)
{
	if (a->c.device == fk.hang_dev) {
		while (!atomic_load(&fk.released)) /* a hung GPU: ignores its deadline */
			nanosleep(&(struct timespec){ 0, 5000000 }, NULL);
		atomic_store(&fk.hung_returned, 1);
		return GK_ETIMEOUT;
	}
	r->bytes = 2 * 120e9;
	r->naux = 1;
	snprintf(r->aux[0].name, sizeof(r->aux[0].name), "tested_bytes");
	r->aux[0].value = 120.0 * 1024 * 1024 * 1024;
	r->verify.checked = 30000000000ull;
	r->verify.mismatches = a->flip_bits;
	r->rc = a->flip_bits ? GK_EVERIFY : GK_OK;
	if (fk.model_scrub)
		atomic_store(&fk.scrubbing[a->c.device], true);
	return r->rc;
}

static int f_copy(const struct gk_copy_args *a, struct gk_result *r)
{
	bool halved = a->dir == GK_H2D && atomic_load(&fk.scrubbing[a->c.device]);
	fill_rate(r, (double)a->bytes, (halved ? 29.6 : fk.h2d_gbs[a->c.device]) * 1e9, false);
	return GK_OK;
}

static int f_memory(const struct gk_mem_args *a, struct gk_result *r)
{
	fill_rate(r, 2.0 * (double)a->bytes, 4100e9, false);
	return GK_OK;
}

static int f_stress(const struct gk_stress_args *a, struct gk_result *r)
{
	static const double tflops[GK_PREC_COUNT] = { [GK_FP32] = 50, [GK_TF32] = 400, [GK_BF16] = 780, [GK_FP8_E4M3] = 1370 };
	fill_rate(r, 2.0 * 8192.0 * 8192.0 * 8192.0, tflops[a->prec] * 1e12, true);
	r->verify.checked = 1000;
	if (a->c.device == fk.miscompare_dev && a->prec == GK_BF16) {
		r->verify.mismatches = 5;
		return GK_EVERIFY;
	}
	return GK_OK;
}

static int f_p2p(const struct gk_p2p_args *a, struct gk_result *r)
{
	fill_rate(r, (double)a->bytes, 390e9, false);
	return GK_OK;
}

static int f_nccl(const struct gk_nccl_args *a, struct gk_result *r)
{
	bool has_a = false, has_b = false;
	for (int i = 0; i < a->ndevs; i++) {
		has_a |= a->devs[i] == fk.bad_nccl_a;
		has_b |= a->devs[i] == fk.bad_nccl_b;
	}
	if (has_a && has_b) {
		snprintf(r->err, sizeof(r->err), "ncclAllReduce: deadline passed");
		return GK_ETIMEOUT;
	}
	/* busbw 330 GB/s whatever the count: algbw = busbw / (2(n-1)/n) */
	double factor = 2.0 * (a->ndevs - 1) / a->ndevs;
	fill_rate(r, (double)a->bytes, 330e9 / factor, false);
	return GK_OK;
}

static const struct gk_api fake_api = {
	.abi_version = GK_ABI_VERSION, .struct_size = sizeof(struct gk_api), .build_info = "fake",
	.device_count = f_count, .device_info = f_info, .copy = f_copy, .memory = f_memory, .p2p = f_p2p,
	.nccl = f_nccl, .memtest = f_memtest, .stress = f_stress,
};

/* ---- fixtures -------------------------------------------------------------- */
static struct catalog cat;
static struct snapshot *snap;
static struct diag_results *res;

static int setup(void **state)
{
	(void)state;
	char err[256];
	if (catalog_load_default(&cat, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	snap = snapshot_new(GPU_MAX_GPUS);
	res = calloc(1, sizeof(*res));
	return snap && res ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	atomic_store(&fk.released, 1);
	/* a released call left behind by the guard frees itself: wait for it (60 s bound) */
	for (int i = 0; i < 12000 && kguard_hung_calls() > 0; i++)
		nanosleep(&(struct timespec){ 0, 5000000 }, NULL);
	assert_int_equal(kguard_hung_calls(), 0);
	catalog_free(&cat);
	free(snap);
	free(res);
	return 0;
}

static void make_snapshot(unsigned n)
{
	snapshot_clear(snap);
	snap->n = n;
	for (unsigned i = 0; i < n; i++) {
		struct gpu_static *st = &snap->gpu[i].st;
		snprintf(st->pci_bus_id.s, sizeof(st->pci_bus_id.s), "00000000:%02X:00.0", 0x10 + i);
		st->pci_bus_id.st = VAL_OK;
		snprintf(st->catalog_model.s, sizeof(st->catalog_model.s), "H200 SXM");
		st->catalog_model.st = VAL_OK;
		snap->gpu[i].up = true;
		for (unsigned j = 0; j < n; j++)
			snap->link[i][j] = (struct gpu_link){ .kind = i == j ? LINK_SELF : LINK_NVLINK, .nvlinks = i == j ? 0 : 18,
							      .p2p_supported = i != j };
	}
}

static uint64_t now_ns(void *arg)
{
	(void)arg;
	return clock_mono_ns();
}

static void sleep_ns(void *arg, uint64_t ns)
{
	(void)arg;
	fk.slept_ns += ns; /* time passes: the driver is done clearing */
	for (int i = 0; i < 8; i++)
		atomic_store(&fk.scrubbing[i], false);
}

static void run(int level, unsigned n, uint64_t flip_bits, double timeout_scale)
{
	make_snapshot(n);
	memset(res, 0, sizeof(*res));
	struct diag_run_opts o = { .level = level, .mask = gpu_select_all(n), .flip_bits = flip_bits,
				   .timeout_scale = timeout_scale, .variation_pct = 10 };
	const struct diag_hooks hooks = { .now_ns = now_ns, .sleep_ns = fk.with_sleep ? sleep_ns : NULL };
	const struct gk_api *guarded = kguard_wrap(&fake_api, 0.3);
	char err[128];
	assert_int_equal(diag_run_gpu_tests(guarded, &hooks, snap, &cat, &o, res, err, sizeof(err)), 0);
}

static const struct diag_result *result(const char *test, int gpu, int peer)
{
	for (unsigned k = 0; k < res->n; k++)
		if (strcmp(res->r[k].test, test) == 0 && res->r[k].gpu == gpu && res->r[k].peer == peer)
			return &res->r[k];
	return NULL;
}

static void expect(const char *test, int gpu, int peer, enum health_verdict v, const char *detail_has)
{
	const struct diag_result *r = result(test, gpu, peer);
	if (!r)
		fail_msg("no result %s GPU %d peer %d", test, gpu, peer);
	if (r->verdict != v || (detail_has && !strstr(r->detail, detail_has)))
		fail_msg("%s GPU %d peer %d: %s '%s', want %s '%s'", test, gpu, peer, health_verdict_name(r->verdict),
			 r->detail, health_verdict_name(v), detail_has ? detail_has : "");
}

static void test_healthy_level3(void **state)
{
	(void)state;
	fake_reset(2);
	run(3, 2, 0, 1);
	static const char *const local[] = { "memtest_walking_ones", "memtest_address", "memtest_random", "mem_bw",
					     "gemm_fp32", "gemm_tf32", "gemm_bf16", "gemm_fp8", "pcie_h2d", "pcie_d2h" };
	for (int g = 0; g < 2; g++)
		for (size_t t = 0; t < sizeof(local) / sizeof(local[0]); t++)
			expect(local[t], g, -1, HEALTH_PASS, NULL);
	expect("pcie_h2d", 0, -1, HEALTH_PASS, "measured 55 GB/s >= threshold 48 GB/s");
	expect("mem_bw", 1, -1, HEALTH_PASS, "measured 4100 GB/s >= threshold 3360 GB/s");
	expect("gemm_bf16", 0, -1, HEALTH_PASS, "measured 780 TFLOP/s >= threshold 643.1 TFLOP/s");
	expect("p2p", 0, 1, HEALTH_PASS, "measured 390 GB/s >= threshold 337.5 GB/s");
	expect("p2p", 1, 0, HEALTH_PASS, NULL);
	expect("nccl_all_reduce", -1, -1, HEALTH_PASS, "measured 330 GB/s >= threshold 292.5 GB/s");
	assert_float_equal(result("pcie_h2d", 0, -1)->value, 55.0, 1e-6);
	assert_string_equal(result("gemm_fp8", 1, -1)->unit, "TFLOP/s");
	for (unsigned k = 0; k < res->n; k++)
		if (res->r[k].verdict != HEALTH_PASS)
			fail_msg("unexpected %s %s: %s", res->r[k].test, health_verdict_name(res->r[k].verdict), res->r[k].detail);
}

static void test_slow_pcie_fails_with_value_and_threshold(void **state)
{
	(void)state;
	fake_reset(2);
	fk.h2d_gbs[1] = 27.1; /* a link trained down to Gen4 */
	run(2, 2, 0, 1);
	expect("pcie_h2d", 1, -1, HEALTH_FAIL, "measured 27.1 GB/s < threshold 48 GB/s (0.75 x 64 GB/s");
	expect("pcie_h2d", 0, -1, HEALTH_PASS, NULL);
	/* level 2: P2P is reachability with a data check, GEMMs are not run */
	expect("p2p", 0, 1, HEALTH_PASS, "reachable, data verified");
	assert_null(result("gemm_bf16", 0, -1));
	assert_null(result("nccl_all_reduce", -1, -1));
}

/* The copy test must not follow the memory test: on the old order (memory test
 * first) every healthy GPU failed pcie_h2d at level 2 with 29.6 GB/s. */
static void test_memtest_free_does_not_halve_the_copy_test(void **state)
{
	(void)state;
	for (int level = 2; level <= 3; level++) {
		fake_reset(2);
		fk.model_scrub = true;
		run(level, 2, 0, 1);
		for (int g = 0; g < 2; g++) {
			expect("pcie_h2d", g, -1, HEALTH_PASS, "measured 55 GB/s");
			expect("memtest_random", g, -1, HEALTH_PASS, NULL);
		}
	}
}

/* A job that ended just before (a Slurm epilog) freed its memory: the first
 * figure is halved, the retake a second later is judged, and says so. */
static void test_pcie_under_threshold_is_retaken_after_a_second(void **state)
{
	(void)state;
	fake_reset(2);
	fk.with_sleep = true;
	atomic_store(&fk.scrubbing[1], true);
	run(2, 2, 0, 1);
	expect("pcie_h2d", 0, -1, HEALTH_PASS, "measured 55 GB/s >= threshold 48 GB/s");
	expect("pcie_h2d", 1, -1, HEALTH_PASS, "measured 55 GB/s >= threshold 48 GB/s");
	expect("pcie_h2d", 1, -1, HEALTH_PASS, "(retaken 1 s after a first 29.6 GB/s)");
	assert_float_equal(result("pcie_h2d", 1, -1)->value, 55.0, 1e-6);
	assert_int_equal(fk.slept_ns, 1000000000ull);
	/* a link that is really slow stays FAIL after its retake */
	fake_reset(2);
	fk.with_sleep = true;
	fk.h2d_gbs[0] = 27.1;
	run(2, 2, 0, 1);
	expect("pcie_h2d", 0, -1, HEALTH_FAIL, "measured 27.1 GB/s < threshold 48 GB/s (0.75 x 64 GB/s");
	expect("pcie_h2d", 0, -1, HEALTH_FAIL, "(retaken 1 s after a first 27.1 GB/s)");
	expect("pcie_d2h", 0, -1, HEALTH_FAIL, "(retaken 1 s after a first 27.1 GB/s)"); /* the fake's figure is both ways */
	expect("pcie_h2d", 1, -1, HEALTH_PASS, "measured 55 GB/s >= threshold 48 GB/s (0.75 x 64 GB/s");
	assert_int_equal(fk.slept_ns, 2000000000ull);
}

static void test_flip_bits_fails_the_memory_test(void **state)
{
	(void)state;
	fake_reset(2);
	run(2, 2, 64, 1);
	for (int g = 0; g < 2; g++) {
		expect("memtest_walking_ones", g, -1, HEALTH_FAIL, "64 wrong 32-bit words");
		expect("memtest_address", g, -1, HEALTH_FAIL, "over 120.0 GiB x 1 pass");
		expect("memtest_random", g, -1, HEALTH_FAIL, "--flip-bits");
	}
}

static void test_gemm_miscompare_fails(void **state)
{
	(void)state;
	fake_reset(2);
	fk.miscompare_dev = 0;
	run(3, 2, 0, 1);
	expect("gemm_bf16", 0, -1, HEALTH_FAIL, "5 miscompares");
	expect("gemm_bf16", 1, -1, HEALTH_PASS, NULL);
	expect("gemm_fp8", 0, -1, HEALTH_PASS, NULL);
}

static void test_hung_gpu_fails_and_others_go_on(void **state)
{
	(void)state;
	fake_reset(3);
	fk.hang_dev = 1;
	uint64_t t0 = clock_mono_ns();
	run(3, 3, 0, 0.001);
	double took = (double)(clock_mono_ns() - t0) / 1e9;
	assert_true(took < 10);
	expect("memtest_walking_ones", 1, -1, HEALTH_FAIL, "GPU 1 is hung");
	for (int g = 0; g <= 2; g += 2) {
		expect("gemm_bf16", g, -1, HEALTH_PASS, NULL);
		expect("pcie_h2d", g, -1, HEALTH_PASS, NULL);
	}
	/* the bandwidth and P2P tests ran before the memory test; the hung GPU's
	 * remaining tests are skipped */
	expect("pcie_h2d", 1, -1, HEALTH_PASS, NULL);
	expect("p2p", 0, 1, HEALTH_PASS, NULL);
	assert_null(result("memtest_address", 1, -1));
	assert_null(result("gemm_fp32", 1, -1));
	expect("p2p", 0, 2, HEALTH_PASS, NULL);
	expect("nccl_all_reduce", -1, -1, HEALTH_PASS, NULL); /* over GPUs 0 and 2 */
	atomic_store(&fk.released, 1);
	/* the abandoned thread leaves the fake before the next test resets it (60 s bound) */
	for (int i = 0; i < 12000 && !atomic_load(&fk.hung_returned); i++)
		nanosleep(&(struct timespec){ 0, 5000000 }, NULL);
	assert_true(atomic_load(&fk.hung_returned));
	for (int i = 0; i < 12000 && kguard_hung_calls() > 0; i++)
		nanosleep(&(struct timespec){ 0, 5000000 }, NULL);
	assert_int_equal(kguard_hung_calls(), 0);
}

static void test_nccl_failure_named_by_pair(void **state)
{
	(void)state;
	fake_reset(3);
	fk.bad_nccl_a = 1;
	fk.bad_nccl_b = 2;
	run(3, 3, 0, 1);
	expect("nccl_all_reduce", -1, -1, HEALTH_FAIL, "timed out");
	expect("nccl_pair", 0, 1, HEALTH_PASS, "pair 0-1");
	expect("nccl_pair", 0, 2, HEALTH_PASS, NULL);
	expect("nccl_pair", 1, 2, HEALTH_FAIL, "timed out");
}

static void test_gpu_cuda_does_not_see(void **state)
{
	(void)state;
	fake_reset(2); /* CUDA sees 2 of the 3 GPUs */
	run(2, 3, 0, 1);
	expect("cuda_visible", 2, -1, HEALTH_FAIL, "does not see");
	expect("memtest_address", 0, -1, HEALTH_PASS, NULL);
	assert_null(result("memtest_address", 2, -1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_healthy_level3),
		cmocka_unit_test(test_slow_pcie_fails_with_value_and_threshold),
		cmocka_unit_test(test_memtest_free_does_not_halve_the_copy_test),
		cmocka_unit_test(test_pcie_under_threshold_is_retaken_after_a_second),
		cmocka_unit_test(test_flip_bits_fails_the_memory_test),
		cmocka_unit_test(test_gemm_miscompare_fails),
		cmocka_unit_test(test_hung_gpu_fails_and_others_go_on),
		cmocka_unit_test(test_nccl_failure_named_by_pair),
		cmocka_unit_test(test_gpu_cuda_does_not_see),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
