/* SPDX-License-Identifier: Apache-2.0 */
/* test_bench_suite.c - the benchmark orchestration against a scripted kernels
 * module: which calls a plan makes, how module answers become results
 * (figures, skipped, failed, unverified, timed out), busbw, telemetry hooks,
 * and the pure telemetry accumulation. */
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <time.h>

#include "bench/suite.h"
#include "core/clock.h"
#include "kernels_host/kguard.h"
#include "bench/telemetry.h"
#include "sampler/sampler.h"

/* ---- a scripted module ---------------------------------------------------- */
static struct {
	int calls[16];             /* per entry kind */
	int timeout_device;        /* copy on this CUDA device times out (-1 none) */
	int last_nccl_ndevs;
	size_t copy_bytes_seen[64];
	int ncopy;
	int mem_sleep_ms;          /* memory calls take this long (telemetry test) */
	int runtime_copies;        /* memory copy calls asking for the runtime's cudaMemcpy */
	int latency_calls;
	int gemm_not_lt;           /* GEMM calls not through cuBLASLt */
} fake;

enum { K_COPY, K_MEM, K_FMA, K_GEMM, K_OWN, K_P2P, K_NCCL };

static void fill(struct gk_result *r, double ms, double bytes, double flops)
{
	memset(r, 0, sizeof(*r));
	r->nsamples = 10;
	for (int i = 0; i < 10; i++)
		r->samples_ms[i] = ms;
	r->bytes = bytes;
	r->flops = flops;
	r->verify.verified = true;
	r->verify.checked = 100;
}

/* A GPU stuck inside a CUDA call: copy on this CUDA device never returns
 * until released (checked before anything is written: its thread is left
 * behind by the guard and must not race with the test). */
static atomic_int hang_device = -1, hang_released, hang_returned;

static int f_copy(const struct gk_copy_args *a, struct gk_result *r)
{
	if (a->c.device == atomic_load(&hang_device)) {
		while (!atomic_load(&hang_released))
			nanosleep(&(struct timespec){ 0, 5000000 }, NULL);
		atomic_store(&hang_returned, 1);
		return GK_ETIMEOUT;
	}
	fake.calls[K_COPY]++;
	if (fake.ncopy < 64)
		fake.copy_bytes_seen[fake.ncopy++] = a->bytes;
	fill(r, 20.0, (double)a->bytes * (a->dir == GK_BIDIR ? 2 : 1), 0);
	if (a->c.device == fake.timeout_device) {
		snprintf(r->err, sizeof(r->err), "gk_copy.cu:10: deadline passed");
		return r->rc = GK_ETIMEOUT;
	}
	return GK_OK;
}

static int f_memory(const struct gk_mem_args *a, struct gk_result *r)
{
	fake.calls[K_MEM]++;
	if (fake.mem_sleep_ms) {
		struct timespec ts = { 0, fake.mem_sleep_ms * 1000000L };
		nanosleep(&ts, NULL);
	}
	fill(r, 1.0, (double)a->bytes * 2, 0);
	fake.runtime_copies += a->op == GK_MEM_COPY && a->runtime_copy;
	if (a->op == GK_MEM_LATENCY) { /* a staircase: L1 30 ns, L2 150, between 300, HBM 600 */
		fake.latency_calls++;
		double ns = a->bytes <= (128u << 10) ? 30 : a->bytes <= (16u << 20) ? 150 : a->bytes < (256u << 20) ? 300 : 600;
		double loads = 100000;
		fill(r, ns * loads / 1e6, 0, 0);
		r->naux = 2;
		strcpy(r->aux[0].name, "latency_ns");
		r->aux[0].value = ns;
		strcpy(r->aux[1].name, "loads");
		r->aux[1].value = loads;
	}
	return GK_OK;
}

/* an H200's L2 (50 MiB) and 140 GiB free */
static int f_device_info(int device, struct gk_device_info *out)
{
	memset(out, 0, sizeof(*out));
	(void)device;
	out->l2_bytes = 50 << 20;
	out->mem_free_bytes = 140ull << 30;
	return GK_OK;
}

static int f_fma(const struct gk_fma_args *a, struct gk_result *r)
{
	fake.calls[K_FMA]++;
	fill(r, 10.0, 0, 6.0e11);
	if (a->prec == GK_BF16X2)
		r->verify.verified = false; /* ran, but the check did not pass */
	return GK_OK;
}

static int f_gemm(const struct gk_gemm_args *a, struct gk_result *r)
{
	fake.calls[K_GEMM]++;
	fake.gemm_not_lt += a->lib != GK_CUBLASLT;
	fill(r, 2.0, 0, 2.0 * a->m * a->n * a->k);
	if (a->prec == GK_FP8_E4M3) {
		snprintf(r->err, sizeof(r->err), "cuBLASLt FP8 needs sm_89+");
		return r->rc = GK_EUNSUPPORTED;
	}
	if (a->prec == GK_FP16) {
		r->verify.mismatches = 7;
		r->verify.verified = false;
		return r->rc = GK_EVERIFY;
	}
	return GK_OK;
}

static int f_own(const struct gk_own_gemm_args *a, struct gk_result *r)
{
	fake.calls[K_OWN]++;
	fill(r, 40.0 / (a->variant + 1), 0, 2.0 * a->m * a->n * a->k);
	return GK_OK;
}

static int f_p2p(const struct gk_p2p_args *a, struct gk_result *r)
{
	fake.calls[K_P2P]++;
	fill(r, 3.0, (double)a->bytes * (a->bidirectional ? 2 : 1), 0);
	if (a->mode == GK_P2P_LATENCY) {
		r->naux = 1;
		strcpy(r->aux[0].name, "latency_ns");
		r->aux[0].value = 830.0;
	}
	return GK_OK;
}

static int f_nccl(const struct gk_nccl_args *a, struct gk_result *r)
{
	fake.calls[K_NCCL]++;
	fake.last_nccl_ndevs = a->ndevs;
	fill(r, 4.0, (double)a->bytes, 0);
	return GK_OK;
}

/* sustained load: each step 1% slower than the one before; step 7 miscompares when asked */
static struct gk_load { int step; bool miscompare; } load_state;
static bool fake_miscompare;
static int f_load_open(const struct gk_load_args *a, struct gk_load **out, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	if (a->prec != GK_BF16 || a->n != 8192)
		return GK_EARG;
	load_state = (struct gk_load){ 0, fake_miscompare };
	*out = &load_state;
	return GK_OK;
}
static int f_load_step(struct gk_load *l, double seconds, uint64_t deadline_ns, struct gk_result *r)
{
	(void)seconds;
	(void)deadline_ns;
	fill(r, 1.4 * (1.0 + 0.01 * l->step), 0, 2.0 * 8192.0 * 8192 * 8192);
	if (l->miscompare && l->step == 7)
		r->verify.mismatches = 3;
	l->step++;
	return GK_OK;
}
static void f_load_close(struct gk_load *l) { l->step = -1; }

static const struct gk_api api = {
	.abi_version = GK_ABI_VERSION, .struct_size = sizeof(struct gk_api), .build_info = "fake",
	.device_info = f_device_info, .copy = f_copy, .memory = f_memory, .fma = f_fma, .gemm = f_gemm, .own_gemm = f_own, .p2p = f_p2p,
	.nccl = f_nccl, .load_open = f_load_open, .load_step = f_load_step, .load_close = f_load_close,
};

/* ---- hooks ------------------------------------------------------------------ */
static struct { int begins, ends, done; uint64_t t; } hk;
static uint64_t h_now(void *arg) { (void)arg; return hk.t += 1000; }
static void h_begin(void *arg, const int *g, unsigned n) { (void)arg; (void)g; (void)n; hk.begins++; }
static void h_end(void *arg, struct bench_result *r)
{
	(void)arg;
	hk.ends++;
	r->tel.samples = 2;
	r->tel.power_w_avg = 500.0;
}
static void h_done(void *arg, const struct bench_result *r) { (void)arg; (void)r; hk.done++; }

static void plan_for(struct bench_plan *p, unsigned suites, unsigned ngpus)
{
	bench_plan_default(p);
	p->suites = suites;
	p->ngpus = ngpus;
	for (unsigned i = 0; i < ngpus; i++) {
		p->gpu[i] = (int)i;
		p->cuda[i] = (int)(ngpus - 1 - i); /* CUDA's order differs from NVML's */
	}
	if (ngpus > 1)
		p->nvlinks[0][1] = p->nvlinks[1][0] = 18;
}

static int run_plan(const struct bench_plan *p, struct bench_run *run)
{
	memset(&fake, 0, sizeof(fake));
	memset(&hk, 0, sizeof(hk));
	fake.timeout_device = -1;
	struct bench_hooks h = { .now_ns = h_now, .tel_begin = h_begin, .tel_end = h_end, .done = h_done };
	char err[128];
	bench_run_init(run);
	return bench_run_plan(&api, p, &h, run, err, sizeof(err));
}

static const struct bench_result *find(const struct bench_run *run, const char *suite, const char *test,
				       const char *variant)
{
	for (size_t i = 0; i < run->n; i++)
		if (!strcmp(run->r[i].suite, suite) && !strcmp(run->r[i].test, test) &&
		    (!variant || !strcmp(run->r[i].variant, variant)))
			return &run->r[i];
	return NULL;
}

static void test_suite_names(void **state)
{
	(void)state;
	unsigned m;
	char err[128];
	assert_int_equal(bench_suites_parse("copy,nccl", &m, err, sizeof(err)), 0);
	assert_int_equal(m, BENCH_COPY | BENCH_NCCL);
	assert_int_equal(bench_suites_parse("all", &m, err, sizeof(err)), 0);
	assert_int_equal(m, BENCH_ALL_SUITES);
	assert_int_equal(bench_suites_parse("copy,warp", &m, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "unknown suite 'warp'"));
	for (unsigned i = 0; i < BENCH_NSUITES; i++) /* the error names every suite of the table */
		assert_non_null(strstr(err, bench_suite_name(1u << i)));
	assert_non_null(strstr(err, ", all)"));
	assert_string_equal(bench_suite_name(BENCH_TRAIN), "train");
	assert_int_equal(BENCH_ALL_SUITES, (1u << BENCH_NSUITES) - 1);
	assert_string_equal(bench_suite_name(BENCH_P2P), "p2p");
	struct bench_plan p;
	bench_plan_default(&p);
	assert_int_equal(bench_sizes_parse(&p, "4K,1M,2G,512", err, sizeof(err)), 0);
	assert_int_equal(p.nsizes, 4);
	assert_int_equal(p.sizes[0], 4096);
	assert_int_equal(p.sizes[2], 2ull << 30);
	assert_int_equal(p.sizes[3], 512);
	assert_int_equal(bench_sizes_parse(&p, "1X", err, sizeof(err)), -1);
	assert_int_equal(bench_sizes_parse(&p, "0", err, sizeof(err)), -1);
	assert_int_equal(bench_sizes_parse(&p, "", err, sizeof(err)), -1);
	/* core/units.h's grammar (docs/units.md): fractions, KiB/KB, either case; 64G at most */
	assert_int_equal(bench_sizes_parse(&p, "1.5k,2MiB,64G", err, sizeof(err)), 0);
	assert_int_equal(p.nsizes, 3);
	assert_int_equal(p.sizes[0], 1536);
	assert_int_equal(p.sizes[1], 2ull << 20);
	assert_int_equal(p.sizes[2], 64ull << 30);
	assert_int_equal(bench_sizes_parse(&p, "65G", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "out of range (1 to 64G)"));
	assert_int_equal(bench_sizes_parse(&p, "4K,,1M", err, sizeof(err)), -1);
	assert_int_equal(bench_sizes_parse(&p, "0000000000000000000000000000000000000000000000000000000000000004K", err,
					    sizeof(err)), -1);
}

/* --results with -s and -i: which results of a saved run are kept */
static void test_run_keep(void **state)
{
	(void)state;
	struct bench_run run;
	bench_run_init(&run);
	struct { const char *suite; int gpu, peer; } rows[] = {
		{ "memory", 0, -1 }, { "memory", 1, -1 }, { "p2p", 0, 1 }, { "nccl", -1, -1 }, { "future", 1, -1 },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct bench_result *r = bench_run_add(&run, rows[i].suite, "t", "");
		assert_non_null(r);
		r->gpu = rows[i].gpu;
		r->peer = rows[i].peer;
	}
	size_t n0 = run.n;
	static struct bench_result copy[5];
	memcpy(copy, run.r, sizeof(copy));
	/* every suite, no -i: all kept */
	assert_int_equal(bench_run_keep(&run, BENCH_ALL_SUITES, false, 0), 5);
	/* -s memory: two; a suite this build does not know only with every suite */
	assert_int_equal(bench_run_keep(&run, BENCH_MEMORY, false, 0), 2);
	memcpy(run.r, copy, sizeof(copy));
	run.n = n0;
	/* -i 1: GPU 1's memory row, the p2p pair towards it, the unknown suite's row; nccl (all GPUs) goes */
	assert_int_equal(bench_run_keep(&run, BENCH_ALL_SUITES, true, 1u << 1), 3);
	assert_string_equal(run.r[0].suite, "memory");
	assert_int_equal(run.r[0].gpu, 1);
	assert_string_equal(run.r[1].suite, "p2p");
	assert_string_equal(run.r[2].suite, "future");
	/* -s memory -i 0 on what is left: none */
	assert_int_equal(bench_run_keep(&run, BENCH_MEMORY, true, 1u << 0), 0);
	bench_run_free(&run);
}

static void test_quick_copy_memory(void **state)
{
	(void)state;
	char err[64];
	struct bench_plan p;
	struct bench_run run;
	plan_for(&p, BENCH_COPY | BENCH_MEMORY, 1);
	assert_int_equal(run_plan(&p, &run), 0);
	/* quick copy: 4 sizes x 2 directions + 8 at the largest size */
	assert_int_equal(fake.calls[K_COPY], 16);
	/* memory: read, write, copy (ours and the runtime's), triad at 1 GiB, and
	 * the latency sweep: 16 KiB, 64 KiB .. 64 MiB (every second octave), then
	 * every octave from 256 MiB (the power of two under 8 x L2) to 1 GiB */
	assert_int_equal(fake.calls[K_MEM], 5 + 10);
	assert_int_equal(fake.runtime_copies, 1);
	assert_int_equal(fake.latency_calls, 10);
	assert_int_equal(hk.begins, 16 + 15);
	assert_int_equal(hk.ends, 16 + 15);
	assert_int_equal(hk.done, 16 + 15 + 3); /* + the L1, L2 and HBM figures */
	const struct bench_result *r = find(&run, "copy", "h2d", "pinned");
	assert_non_null(r);
	assert_int_equal(r->size_bytes, 4096);
	assert_int_equal(r->status, BS_OK);
	assert_true(r->verified);
	assert_int_equal(r->tel.samples, 2);
	r = find(&run, "memory", "latency", "sweep");
	assert_int_equal(r->metric, BM_LATENCY_NS);
	assert_int_equal(r->size_bytes, 16 << 10);
	assert_float_equal(r->value.median, 30.0, 1e-9);
	assert_string_equal(r->unit, "ns");
	/* HBM from the working sets of 8 x L2 (400 MiB) and more: 512 MiB and 1 GiB, not 256 MiB */
	r = find(&run, "memory", "latency", "hbm");
	assert_int_equal(r->status, BS_OK);
	assert_float_equal(r->value.median, 600.0, 1e-9);
	assert_int_equal(r->nsamples, 20);
	assert_float_equal(bench_result_aux(r, "points"), 2, 0);
	assert_float_equal(bench_result_aux(r, "from_ws"), 512.0 * (1 << 20), 0);
	assert_int_equal(r->size_bytes, 1 << 30);
	r = find(&run, "memory", "latency", "l2"); /* 1 and 4 MiB (16 MiB is over L2/4) */
	assert_float_equal(r->value.median, 150.0, 1e-9);
	assert_float_equal(bench_result_aux(r, "points"), 2, 0);
	r = find(&run, "memory", "latency", "l1");
	assert_float_equal(r->value.median, 30.0, 1e-9);
	/* the device copy: our kernels and the runtime's, each a named row */
	r = find(&run, "memory", "copy", "kernel");
	assert_float_equal(r->value.median, 2.0 * (1 << 30) / 1e-3 / 1e9, 1e-6);
	assert_non_null(find(&run, "memory", "copy", "cudaMemcpy"));
	bench_run_free(&run);

	/* a sweep without a working set of 8 x L2: no HBM figure, and why */
	plan_for(&p, BENCH_MEMORY, 1);
	bench_sizes_parse(&p, "16K,1M", err, sizeof(err));
	assert_int_equal(run_plan(&p, &run), 0);
	assert_int_equal(fake.latency_calls, 2);
	r = find(&run, "memory", "latency", "hbm");
	assert_int_equal(r->status, BS_SKIPPED);
	assert_non_null(strstr(r->message, "8 x L2 (400 MiB)"));
	assert_int_equal(find(&run, "memory", "latency", "l2")->status, BS_OK);
	bench_run_free(&run);

	/* --size overrides every sweep */
	plan_for(&p, BENCH_COPY, 1);
	bench_sizes_parse(&p, "1M", err, sizeof(err));
	assert_int_equal(run_plan(&p, &run), 0);
	assert_int_equal(fake.calls[K_COPY], 10);
	for (int i = 0; i < fake.ncopy; i++)
		assert_int_equal(fake.copy_bytes_seen[i], 1 << 20);
	bench_run_free(&run);
}

static void test_compute_statuses(void **state)
{
	(void)state;
	struct bench_plan p;
	struct bench_run run;
	plan_for(&p, BENCH_COMPUTE, 1);
	assert_int_equal(run_plan(&p, &run), 0);
	assert_int_equal(fake.calls[K_FMA], 4);
	assert_int_equal(fake.calls[K_GEMM], 6);
	assert_int_equal(fake.gemm_not_lt, 0); /* every precision through cuBLASLt */
	const struct bench_result *r = find(&run, "compute", "cublas", "bf16");
	assert_int_equal(r->status, BS_OK);
	assert_int_equal(r->m, 8192);
	assert_float_equal(r->value.median, 2.0 * 8192.0 * 8192 * 8192 / 2e-3 / 1e12, 1e-6);
	/* 2 * 8192^3 FLOP in 2 ms at 500 W */
	assert_float_equal(r->gflops_per_watt, 2.0 * 8192.0 * 8192 * 8192 / 1e9 / 2e-3 / 500.0, 1e-6);
	r = find(&run, "compute", "cublaslt", "fp8_e4m3");
	assert_int_equal(r->status, BS_SKIPPED);
	assert_non_null(strstr(r->message, "sm_89"));
	r = find(&run, "compute", "cublas", "fp16");
	assert_int_equal(r->status, BS_FAILED);
	assert_non_null(strstr(r->message, "verification failed: 7 of 100"));
	assert_true(isnan(r->value.median));
	/* GK_OK but not verified: the time does not count */
	r = find(&run, "compute", "fma", "bf16x2");
	assert_int_equal(r->status, BS_FAILED);
	assert_true(isnan(r->value.median));
	bench_run_free(&run);
}

static void test_p2p_and_nccl(void **state)
{
	(void)state;
	struct bench_plan p;
	struct bench_run run;
	plan_for(&p, BENCH_P2P | BENCH_NCCL, 2);
	assert_int_equal(run_plan(&p, &run), 0);
	/* 2 ordered pairs x (ce, sm, host, latency) + one bidirectional */
	assert_int_equal(fake.calls[K_P2P], 9);
	/* 5 collectives x 3 quick sizes, over both GPUs */
	assert_int_equal(fake.calls[K_NCCL], 15);
	assert_int_equal(fake.last_nccl_ndevs, 2);
	const struct bench_result *r = find(&run, "p2p", "ce", "uni");
	assert_int_equal(r->gpu, 0);
	assert_int_equal(r->peer, 1);
	assert_float_equal(bench_result_aux(r, "nvlinks"), 18, 0);
	r = find(&run, "nccl", "all_reduce", NULL);
	assert_int_equal(r->ngpus, 2);
	assert_int_equal(r->gpu, -1);
	assert_int_equal(r->metric, BM_BUSBW);
	/* two ranks: all-reduce busbw = algbw x 2(n-1)/n = algbw */
	assert_float_equal(r->value.median, r->algbw_gbs, 1e-9);
	r = find(&run, "nccl", "all_gather", NULL);
	assert_float_equal(r->value.median, r->algbw_gbs * 0.5, 1e-9);
	bench_run_free(&run);

	/* one GPU: both suites say why they did not run */
	plan_for(&p, BENCH_P2P | BENCH_NCCL, 1);
	assert_int_equal(run_plan(&p, &run), 0);
	assert_int_equal(fake.calls[K_P2P] + fake.calls[K_NCCL], 0);
	assert_int_equal(run.n, 2);
	assert_int_equal(run.r[0].status, BS_SKIPPED);
	assert_non_null(strstr(run.r[0].message, "two GPUs"));
	bench_run_free(&run);
}

static void test_timeout_skips_the_gpu(void **state)
{
	(void)state;
	struct bench_plan p;
	struct bench_run run;
	plan_for(&p, BENCH_COPY | BENCH_MEMORY, 2);
	memset(&fake, 0, sizeof(fake));
	memset(&hk, 0, sizeof(hk));
	fake.timeout_device = 1; /* CUDA 1 = NVML GPU 0 in this plan */
	struct bench_hooks h = { .now_ns = h_now, .tel_begin = h_begin, .tel_end = h_end, .done = h_done };
	char err[128];
	bench_run_init(&run);
	assert_int_equal(bench_run_plan(&api, &p, &h, &run, err, sizeof(err)), 0);
	size_t failed = 0, skipped = 0, ok0 = 0, ok1 = 0;
	for (size_t i = 0; i < run.n; i++) {
		const struct bench_result *r = &run.r[i];
		failed += r->status == BS_FAILED;
		skipped += r->status == BS_SKIPPED;
		ok0 += r->gpu == 0 && r->status == BS_OK;
		ok1 += r->gpu == 1 && r->status == BS_OK;
	}
	/* per GPU: 16 copy, 5 memory bandwidth, 10 latency sweep points and the 3 level figures */
	assert_int_equal(failed, 1);   /* the first test on GPU 0 */
	assert_int_equal(ok0, 0);      /* nothing more runs on it */
	assert_int_equal(skipped, 33);
	assert_int_equal(ok1, 34);     /* the other GPU goes on */
	const struct bench_result *hbm0 = NULL;
	for (size_t i = 0; i < run.n; i++)
		if (run.r[i].gpu == 0 && !strcmp(run.r[i].variant, "hbm"))
			hbm0 = &run.r[i];
	assert_non_null(hbm0);
	assert_non_null(strstr(hbm0->message, "timed out"));
	assert_non_null(strstr(run.r[0].message, "timed out"));
	bench_run_free(&run);
}

static uint64_t mono_now(void *arg)
{
	(void)arg;
	return clock_mono_ns(); /* the guard's watchdog runs on the deadlines' clock */
}

static void test_hung_gpu_through_the_guard(void **state)
{
	(void)state;
	struct bench_plan p;
	struct bench_run run;
	plan_for(&p, BENCH_COPY | BENCH_MEMORY, 2);
	p.test_timeout_s = 0.05;
	memset(&fake, 0, sizeof(fake));
	memset(&hk, 0, sizeof(hk));
	fake.timeout_device = -1;
	atomic_store(&hang_device, 1); /* CUDA 1 = NVML GPU 0 in this plan */
	struct bench_hooks h = { .now_ns = mono_now, .done = h_done };
	char err[128];
	bench_run_init(&run);
	assert_int_equal(bench_run_plan(kguard_wrap(&api, 0.2), &p, &h, &run, err, sizeof(err)), 0);
	size_t failed = 0, skipped = 0, ok0 = 0, ok1 = 0;
	for (size_t i = 0; i < run.n; i++) {
		const struct bench_result *r = &run.r[i];
		failed += r->status == BS_FAILED;
		skipped += r->status == BS_SKIPPED;
		ok0 += r->gpu == 0 && r->status == BS_OK;
		ok1 += r->gpu == 1 && r->status == BS_OK;
	}
	assert_int_equal(failed, 1); /* the call that never came back */
	assert_non_null(strstr(run.r[0].message, "GPU hung"));
	assert_non_null(strstr(run.r[0].message, "past its deadline"));
	assert_int_equal(ok0, 0);    /* nothing more is asked of it */
	assert_int_equal(skipped, 33);
	assert_int_equal(ok1, 34);   /* the other GPU goes on */
	assert_int_equal(kguard_hung_calls(), 1);
	atomic_store(&hang_released, 1);
	for (int i = 0; i < 12000 && kguard_hung_calls() > 0; i++) /* 60 s bound */
		nanosleep(&(struct timespec){ 0, 5000000 }, NULL);
	assert_int_equal(kguard_hung_calls(), 0);
	assert_true(atomic_load(&hang_returned));
	atomic_store(&hang_device, -1);
	bench_run_free(&run);
}

static void test_sustained(void **state)
{
	(void)state;
	struct bench_plan p;
	struct bench_run run;
	plan_for(&p, BENCH_SUSTAINED, 1);
	p.sustained_s = 20; /* 20 steps of 1 s */
	fake_miscompare = false;
	assert_int_equal(run_plan(&p, &run), 0);
	assert_int_equal(run.n, 1);
	const struct bench_result *r = &run.r[0];
	assert_int_equal(r->status, BS_OK);
	assert_int_equal(r->nsamples, 20);
	assert_int_equal(load_state.step, -1); /* closed */
	double first = 2.0 * 8192.0 * 8192 * 8192 / 1.4e-3 / 1e12;
	/* the first and last tenth: steps 0-1 and 18-19 */
	assert_float_equal(bench_result_aux(r, "first_tflops"), (first + first / 1.01) / 2, 1e-6);
	assert_float_equal(bench_result_aux(r, "last_tflops"), (first / 1.18 + first / 1.19) / 2, 1e-6);
	double loss = bench_result_aux(r, "loss_pct");
	assert_true(loss > 14.5 && loss < 15.5);
	assert_float_equal(r->value.max, first, 1e-6);
	bench_run_free(&run);

	/* one miscompare anywhere fails the whole run: no figure */
	fake_miscompare = true;
	assert_int_equal(run_plan(&p, &run), 0);
	assert_int_equal(run.r[0].status, BS_FAILED);
	assert_string_equal(run.r[0].message, "verification failed: 3 values off, 0 NaN: GEMM results of the sustained "
					       "load differ from the first, checked one");
	assert_true(isnan(run.r[0].value.median));
	bench_run_free(&run);
}

static void test_bad_plan(void **state)
{
	(void)state;
	struct bench_plan p;
	struct bench_run run;
	plan_for(&p, BENCH_COPY, 0);
	struct bench_hooks h = { .now_ns = h_now };
	char err[128];
	bench_run_init(&run);
	assert_int_equal(bench_run_plan(&api, &p, &h, &run, err, sizeof(err)), -1);
	assert_string_equal(err, "no GPU selected");
}

/* ---- telemetry through the real sampler on a simulated server --------------- */
static void rec_begin(void *arg, const int *g, unsigned n) { bench_tel_rec_begin(arg, g, n); }
static void rec_end(void *arg, struct bench_result *r) { bench_tel_rec_end(arg, r); }

/* Runs the memory suite (six figures, each call 300 ms: several 20 ms samples,
 * even on a busy machine) on NVML GPU gpu of the simulated server, with the
 * sampler reading groups, telemetry recorded per figure. */
static void run_memory_with_sampler(const char *server, int gpu, unsigned groups, struct bench_run *run)
{
	struct gpu_backend be = { 0 };
	struct gpu_err gerr = { "" };
	if (gpu_backend_open(&be, "sim", server, &gerr) != GPU_OK)
		fail_msg("sim: %s", gerr.msg);
	struct sampler_config cfg;
	sampler_config_default(&cfg);
	cfg.interval_ns = 20000000ull;
	cfg.groups = groups;
	struct sampler *smp = NULL;
	assert_int_equal(sampler_start(&smp, &be, &cfg, &gerr), 0);
	assert_true(sampler_wait_first(smp, 5000000000ull));
	struct bench_tel_rec *rec = bench_tel_rec_start(smp, 5);
	assert_non_null(rec);

	struct bench_plan p;
	plan_for(&p, BENCH_MEMORY, 1);
	char serr[64];
	bench_sizes_parse(&p, "64M", serr, sizeof(serr)); /* one latency point */
	p.gpu[0] = gpu;
	memset(&fake, 0, sizeof(fake));
	fake.timeout_device = -1;
	fake.mem_sleep_ms = 300;
	struct bench_hooks h = { .arg = rec, .now_ns = h_now, .tel_begin = rec_begin, .tel_end = rec_end };
	char err[128];
	bench_run_init(run);
	assert_int_equal(bench_run_plan(&api, &p, &h, run, err, sizeof(err)), 0);
	bench_tel_rec_stop(rec);
	sampler_stop(smp);
	gpu_backend_close(&be);
	/* read, write, copy (ours, runtime), triad, latency at 64 MiB; the 3 level figures */
	assert_int_equal(run->n, 6 + 3);
}

static void test_telemetry_from_sampler(void **state)
{
	(void)state;
	struct bench_run run;
	run_memory_with_sampler("h200x8", 3, GPU_GRP_BASIC, &run);
	for (size_t i = 0; i < 6; i++) {
		const struct bench_telemetry *t = &run.r[i].tel;
		if (t->samples < 2)
			fail_msg("%s: %u telemetry samples in 300 ms at 20 ms", run.r[i].test, t->samples);
		assert_true(t->power_w_avg > 0);
		assert_true(t->sm_clock_mhz_min > 0 && t->sm_clock_mhz_min <= t->sm_clock_mhz_max);
		assert_true(t->temp_c_max > 0);
		assert_true(t->window_s > 0.02 && t->window_s < 1.0);
		/* every row carries its test's energy: mean power x the call's time */
		assert_true(t->test_s >= 0.3); /* the call sleeps 300 ms */
		assert_float_equal(t->energy_j, t->power_w_avg * t->test_s, 1e-9);
		assert_string_equal(t->energy_from, "readings");
		/* the GPM group not read: no profiling figure, never a made-up 0 */
		for (unsigned k = 0; k < BENCH_TEL_NGPM; k++)
			assert_true(isnan(t->gpm_pct[k]));
	}
	bench_run_free(&run);
}

/* The profiling means per row (issue 32): on the simulated workloads' server,
 * GPU 0 runs a GEMM-bound job (tensor busy), GPU 2 holds memory and runs
 * nothing (every figure 0, present). */
static void test_telemetry_gpm(void **state)
{
	(void)state;
	struct bench_run run;
	run_memory_with_sampler("h200-workloads", 0, GPU_GRP_BASIC | GPU_GRP_GPM, &run);
	for (size_t i = 0; i < 6; i++) {
		const struct bench_telemetry *t = &run.r[i].tel;
		double tensor = t->gpm_pct[BENCH_GPM_tensor_active_pct], sm = t->gpm_pct[BENCH_GPM_sm_active_pct];
		if (!(tensor > 50 && sm > 50 && sm <= 100 && tensor <= sm))
			fail_msg("%s on the GEMM GPU: SM active %.1f %%, tensor %.1f %%", run.r[i].test, sm, tensor);
		assert_true(t->gpm_pct[BENCH_GPM_dram_active_pct] < tensor);
		assert_true(t->gpm_pct[BENCH_GPM_sm_occupancy_pct] >= 0);
	}
	bench_run_free(&run);
	run_memory_with_sampler("h200-workloads", 2, GPU_GRP_BASIC | GPU_GRP_GPM, &run);
	for (size_t i = 0; i < 6; i++)
		for (unsigned k = 0; k < BENCH_TEL_NGPM; k++)
			assert_float_equal(run.r[i].tel.gpm_pct[k], 0, 0);
	bench_run_free(&run);
}

/* ---- telemetry accumulation ------------------------------------------------- */
static struct gpu_sample sample(uint64_t t_ms, uint64_t energy_mj, uint64_t power_mw, uint64_t mhz, uint64_t temp,
				uint64_t reasons)
{
	struct gpu_sample s;
	memset(&s, 0, sizeof(s));
	s.timestamp_ns = t_ms * 1000000ull;
	VAL_SET(s.energy_mj, energy_mj);
	VAL_SET(s.power_mw, power_mw);
	VAL_SET(s.sm_clock_mhz, mhz);
	VAL_SET(s.temp_c, temp);
	VAL_SET(s.clock_event_reasons, reasons);
	return s;
}

static void test_telemetry_accumulation(void **state)
{
	(void)state;
	struct bench_tel_acc a[2];
	bench_tel_acc_init(&a[0]);
	bench_tel_acc_init(&a[1]);
	struct gpu_sample s0 = sample(1000, 50000, 400000, 1980, 40, CLK_EVT_GPU_IDLE);
	struct gpu_sample s1 = sample(2000, 500000, 600000, 1755, 55, CLK_EVT_SW_POWER_CAP);
	bench_tel_acc_add(&a[0], &s0);
	bench_tel_acc_add(&a[0], &s0); /* the same sample twice counts once */
	bench_tel_acc_add(&a[0], &s1);
	assert_int_equal(a[0].n, 2);
	struct bench_telemetry t;
	bench_tel_summarise(a, 1, 2.0, &t);
	/* 450 J over 1 s = 450 W from the energy counter (not the 500 W mean of the
	 * readings); the test's energy: that power over its 2 s */
	assert_float_equal(t.power_w_avg, 450.0, 1e-9);
	assert_float_equal(t.energy_j, 900.0, 1e-9);
	assert_float_equal(t.test_s, 2.0, 1e-9);
	assert_string_equal(t.energy_from, "counter");
	assert_float_equal(t.power_w_max, 600.0, 1e-9);
	assert_float_equal(t.sm_clock_mhz_min, 1755, 0);
	assert_float_equal(t.sm_clock_mhz_max, 1980, 0);
	assert_float_equal(t.temp_c_max, 55, 0);
	assert_int_equal(t.clock_event_reasons, CLK_EVT_SW_POWER_CAP); /* idle left out */
	/* no GPM in the samples: no profiling figure */
	assert_true(isnan(t.gpm_pct[BENCH_GPM_tensor_active_pct]));
	/* a second GPU with one sample only: no energy window, power from its reading */
	struct gpu_sample s2 = sample(1200, 70000, 300000, 1600, 61, 0);
	/* (first, the profiling figures: each GPU's mean, then the mean over the GPUs that have them) */
	struct gpu_sample g2 = s2;
	VAL_SET(g2.prof_tensor_active_pct, 80);
	bench_tel_acc_add(&a[1], &g2);
	struct gpu_sample s3 = sample(1300, 70000, 300000, 1600, 61, 0);
	VAL_SET(s3.prof_tensor_active_pct, 90);
	bench_tel_acc_add(&a[1], &s3);
	bench_tel_summarise(a, 2, 2.0, &t);
	assert_float_equal(t.gpm_pct[BENCH_GPM_tensor_active_pct], 85.0, 1e-9); /* GPU 0 has none */
	assert_true(isnan(t.gpm_pct[BENCH_GPM_dram_active_pct]));
	bench_tel_acc_init(&a[1]);
	bench_tel_acc_add(&a[1], &s2);
	bench_tel_summarise(a, 2, 2.0, &t);
	assert_float_equal(t.power_w_avg, 750.0, 1e-9);
	assert_float_equal(t.energy_j, 1500.0, 1e-9);
	assert_string_equal(t.energy_from, "readings");
	/* a window under a second: the counter's coarse steps would mislead (0 W or
	 * double), so the readings' mean counts: 500 W over the 60 ms test */
	struct bench_tel_acc shortw;
	bench_tel_acc_init(&shortw);
	struct gpu_sample q0 = sample(1000, 50000, 400000, 1980, 40, 0);
	struct gpu_sample q1 = sample(1050, 50000, 600000, 1980, 41, 0);
	bench_tel_acc_add(&shortw, &q0);
	bench_tel_acc_add(&shortw, &q1);
	struct bench_telemetry ts;
	bench_tel_summarise(&shortw, 1, 0.06, &ts);
	assert_float_equal(ts.power_w_avg, 500.0, 1e-9);
	assert_float_equal(ts.energy_j, 30.0, 1e-9);
	assert_string_equal(ts.energy_from, "readings");
	/* no reading at all during a 3 ms test: no energy, and the reason */
	struct bench_tel_acc none;
	bench_tel_acc_init(&none);
	bench_tel_summarise(&none, 1, 0.003, &ts);
	assert_true(isnan(ts.energy_j));
	assert_string_equal(ts.energy_from, "no reading in the 3 ms test");
	/* the duration unknown: power, but no energy */
	bench_tel_summarise(&shortw, 1, 0, &ts);
	assert_true(isnan(ts.energy_j));
	assert_string_equal(ts.energy_from, "the test's duration is unknown");
	assert_float_equal(t.sm_clock_mhz_min, 1600, 0);
	assert_float_equal(t.temp_c_max, 61, 0);
	/* a GPU with no sample at all: no power figure for the test */
	bench_tel_acc_init(&a[1]);
	bench_tel_summarise(a, 2, 2.0, &t);
	assert_true(isnan(t.power_w_avg));
	assert_true(isnan(t.energy_j));
	assert_string_equal(t.energy_from, "a GPU under test had no power reading");
	assert_int_equal(t.samples, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_suite_names),
		cmocka_unit_test(test_run_keep),
		cmocka_unit_test(test_quick_copy_memory),
		cmocka_unit_test(test_compute_statuses),
		cmocka_unit_test(test_p2p_and_nccl),
		cmocka_unit_test(test_timeout_skips_the_gpu),
		cmocka_unit_test(test_hung_gpu_through_the_guard),
		cmocka_unit_test(test_sustained),
		cmocka_unit_test(test_bad_plan),
		cmocka_unit_test(test_telemetry_accumulation),
		cmocka_unit_test(test_telemetry_from_sampler),
		cmocka_unit_test(test_telemetry_gpm),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
