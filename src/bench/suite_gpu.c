/* SPDX-License-Identifier: Apache-2.0 */
/*
 * suite_gpu.c - the one-GPU suites: copy (host<->device), memory, compute
 * (FMA peak and cuBLAS GEMM per precision) and gemm (our kernels vs cuBLAS).
 * Each measurement is one module call on one GPU, with telemetry around it.
 */
#include "suite_int.h"

#include "latency.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define KiB (1ull << 10)
#define MiB (1ull << 20)
#define GiB (1ull << 30)

static void copy_one(struct bench_ctx *c, int slot, const char *test, const char *variant, int dir, int host_mem,
		     int engine, bool async, bool overlap, uint64_t bytes)
{
	struct bench_result *r = bench_start(c, "copy", test, variant, slot);
	if (!r)
		return;
	r->size_bytes = bytes;
	struct gk_copy_args a = { .c = bench_common(c, slot), .dir = dir, .host_mem = host_mem, .engine = engine,
				  .async = async, .overlap = overlap, .bytes = (size_t)bytes };
	struct gk_result g;
	memset(&g, 0, sizeof(g));
	int rc = c->api->copy(&a, &g);
	bench_finish(c, r, rc, &g, BM_BANDWIDTH, NAN, &slot, 1);
}

void bench_suite_copy(struct bench_ctx *c)
{
	static const uint64_t quick[] = { 4 * KiB, 1 * MiB, 64 * MiB, 1 * GiB };
	static const uint64_t full[] = { 4 * KiB, 64 * KiB, 1 * MiB, 16 * MiB, 256 * MiB, 1 * GiB };
	uint64_t sizes[BENCH_MAX_SIZES];
	unsigned n = c->plan->full ? bench_sizes(c, full, 6, sizes) : bench_sizes(c, quick, 4, sizes);
	uint64_t big = sizes[n - 1];
	for (unsigned s = 0; s < c->plan->ngpus; s++) {
		int slot = (int)s;
		/* the sweep: asynchronous copies from pinned memory, each direction */
		for (unsigned i = 0; i < n; i++) {
			copy_one(c, slot, "h2d", "pinned", GK_H2D, GK_PINNED, GK_CE, true, false, sizes[i]);
			copy_one(c, slot, "d2h", "pinned", GK_D2H, GK_PINNED, GK_CE, true, false, sizes[i]);
		}
		/* at the largest size: synchronous, pageable, both ways, SM engine, overlap */
		copy_one(c, slot, "h2d", "pinned_sync", GK_H2D, GK_PINNED, GK_CE, false, false, big);
		copy_one(c, slot, "d2h", "pinned_sync", GK_D2H, GK_PINNED, GK_CE, false, false, big);
		copy_one(c, slot, "h2d", "pageable", GK_H2D, GK_PAGEABLE, GK_CE, false, false, big);
		copy_one(c, slot, "d2h", "pageable", GK_D2H, GK_PAGEABLE, GK_CE, false, false, big);
		copy_one(c, slot, "bidir", "pinned", GK_BIDIR, GK_PINNED, GK_CE, true, false, big);
		copy_one(c, slot, "h2d", "pinned_sm", GK_H2D, GK_PINNED, GK_SM, true, false, big);
		copy_one(c, slot, "d2h", "pinned_sm", GK_D2H, GK_PINNED, GK_SM, true, false, big);
		copy_one(c, slot, "h2d", "pinned_overlap", GK_H2D, GK_PINNED, GK_CE, true, true, big);
	}
}

static const struct bench_result *mem_one(struct bench_ctx *c, int slot, int op, uint64_t bytes, bool runtime_copy,
					  const char *variant)
{
	struct bench_result *r = bench_start(c, "memory", kmod_mem_op_name(op), variant, slot);
	if (!r)
		return NULL;
	r->size_bytes = bytes;
	struct gk_mem_args a = { .c = bench_common(c, slot), .op = op, .bytes = (size_t)bytes,
				 .runtime_copy = runtime_copy };
	bool lat = op == GK_MEM_LATENCY;
	if (lat && c->plan->iters <= 0) /* a sample is ~0.2 s at HBM latency: the least samples unless asked */
		a.c.iters = GK_MIN_SAMPLES;
	struct gk_result g;
	memset(&g, 0, sizeof(g));
	int rc = c->api->memory(&a, &g);
	bench_finish(c, r, rc, &g, lat ? BM_LATENCY_NS : BM_BANDWIDTH, lat ? bench_latency_scale(rc, &g) : NAN, &slot, 1);
	return r;
}

/* One level's figure (variant "l1", "l2", "hbm") from the sweep points that
 * count towards it: their samples pooled (every point makes the same loads a
 * sample, so one scale holds for all). */
static void latency_level(struct bench_ctx *c, int slot, enum bench_lat_level lvl, uint64_t l2, const size_t *pts,
			  unsigned npts)
{
	struct bench_result *r = bench_new(c, "memory", "latency", bench_lat_level_name(lvl), slot);
	if (!r)
		return;
	snprintf(r->tel.energy_from, sizeof(r->tel.energy_from), "in the sweep's rows");
	double samples[BENCH_MAX_SAMPLES], scale = NAN;
	unsigned n = 0, used = 0;
	uint64_t from = 0;
	for (unsigned i = 0; i < npts; i++) {
		const struct bench_result *p = &c->run->r[pts[i]];
		if (p->status != BS_OK || bench_latency_level(p->size_bytes, l2) != lvl)
			continue;
		if (isnan(scale))
			scale = p->scale;
		if (fabs(p->scale - scale) > 1e-9 * scale)
			continue;
		if (!used++)
			from = p->size_bytes;
		r->size_bytes = p->size_bytes;
		for (unsigned k = 0; k < p->nsamples && n < BENCH_MAX_SAMPLES; k++)
			samples[n++] = p->samples_ms[k];
	}
	if (!used) {
		if (c->hung[slot])
			bench_result_fail(r, BS_SKIPPED, "GPU %d timed out in an earlier test", r->gpu);
		else if (!l2)
			bench_result_fail(r, BS_SKIPPED, "the L2 size is unknown (no device info from the kernels module)");
		else if (lvl == BLAT_HBM)
			bench_result_fail(r, BS_SKIPPED, "no verified working set of %d x L2 (%llu MiB) or more in the sweep",
					  BENCH_LAT_HBM_L2S, (unsigned long long)(BENCH_LAT_HBM_L2S * l2 >> 20));
		else
			bench_result_fail(r, BS_SKIPPED, "no verified working set of this level in the sweep");
	} else if (bench_result_set_samples(r, BM_LATENCY_NS, samples, n, 0, 0, scale) == 0) {
		r->verified = true;
		bench_result_add_aux(r, "points", used, "count");
		bench_result_add_aux(r, "from_ws", (double)from, "B");
		bench_result_add_aux(r, "l2_bytes", (double)l2, "B");
	}
	if (c->hooks->done)
		c->hooks->done(c->hooks->arg, r);
}

/* The latency staircase: a chase at each working set of the sweep, then the
 * L1, L2 and HBM figures from the points of each level (latency.h). */
static void latency_sweep(struct bench_ctx *c, int slot)
{
	uint64_t l2 = 0, free_b = 0, ws[BENCH_MAX_SIZES + 16];
	struct gk_device_info di;
	memset(&di, 0, sizeof(di));
	if (c->api->device_info && c->api->device_info(c->plan->cuda[slot], &di) == GK_OK) {
		l2 = di.l2_bytes > 0 ? (uint64_t)di.l2_bytes : 0;
		free_b = di.mem_free_bytes;
	}
	unsigned n;
	if (c->plan->nsizes) {
		n = bench_sizes(c, NULL, 0, ws);
	} else if (c->plan->full) { /* every octave up to 8 GiB, or a quarter of the free memory */
		uint64_t top = free_b ? bench_pow2_floor(free_b / 4) : 4 * GiB;
		top = top > 8 * GiB ? 8 * GiB : top < 64 * MiB ? 64 * MiB : top;
		n = bench_latency_sweep(BENCH_LAT_MIN_WS, top, BENCH_LAT_MIN_WS, ws, sizeof(ws) / sizeof(ws[0]));
	} else { /* every second octave to 1 GiB, every octave from 8 x L2 */
		uint64_t dense = l2 ? bench_pow2_floor(BENCH_LAT_HBM_L2S * l2) : GiB;
		n = bench_latency_sweep(BENCH_LAT_MIN_WS, GiB, dense, ws, sizeof(ws) / sizeof(ws[0]));
	}
	/* results live in a growing array: indexes, not pointers */
	size_t pts[BENCH_MAX_SIZES + 16];
	unsigned npts = 0;
	for (unsigned i = 0; i < n; i++) {
		const struct bench_result *r = mem_one(c, slot, GK_MEM_LATENCY, ws[i], false, "sweep");
		if (r)
			pts[npts++] = (size_t)(r - c->run->r);
	}
	static const enum bench_lat_level levels[] = { BLAT_HBM, BLAT_L2, BLAT_L1 };
	for (unsigned k = 0; k < 3; k++)
		latency_level(c, slot, levels[k], l2, pts, npts);
}

void bench_suite_memory(struct bench_ctx *c)
{
	/* far beyond L2 (50 MB on H200): 1 GiB per array; the full run sweeps */
	static const uint64_t quick[] = { 1 * GiB };
	static const uint64_t full[] = { 64 * MiB, 256 * MiB, 1 * GiB, 4 * GiB };
	uint64_t sizes[BENCH_MAX_SIZES];
	unsigned n = c->plan->full ? bench_sizes(c, full, 4, sizes) : bench_sizes(c, quick, 1, sizes);
	for (unsigned s = 0; s < c->plan->ngpus; s++) {
		for (unsigned i = 0; i < n; i++)
			for (int op = GK_MEM_READ; op <= GK_MEM_TRIAD; op++) {
				/* copy: our kernels (the fastest checked one) and the runtime's cudaMemcpy */
				mem_one(c, (int)s, op, sizes[i], false, op == GK_MEM_COPY ? "kernel" : "");
				if (op == GK_MEM_COPY)
					mem_one(c, (int)s, op, sizes[i], true, "cudaMemcpy");
			}
		latency_sweep(c, (int)s);
	}
}

/* Every precision through cuBLASLt, the route PyTorch's matmul takes: a 64 MiB
 * workspace, the heuristic's first algorithms each timed, the fastest kept (its
 * id in aux). The test stays "cublas" (the library; results files and claims
 * name it so), FP8 "cublaslt" as before. */
static void gemm_one(struct bench_ctx *c, int slot, int prec, int dim)
{
	struct bench_result *r = bench_start(c, "compute", prec == GK_FP8_E4M3 ? "cublaslt" : "cublas", kmod_prec_name(prec), slot);
	if (!r)
		return;
	r->m = r->n = r->k = (unsigned)dim;
	struct gk_gemm_args a = { .c = bench_common(c, slot), .lib = GK_CUBLASLT, .prec = prec, .m = dim, .n = dim, .k = dim };
	struct gk_result g;
	memset(&g, 0, sizeof(g));
	int rc = c->api->gemm(&a, &g);
	bench_finish(c, r, rc, &g, BM_TFLOPS, NAN, &slot, 1);
}

void bench_suite_compute(struct bench_ctx *c)
{
	static const int fma_prec[] = { GK_FP64, GK_FP32, GK_FP16X2, GK_BF16X2 };
	static const int gemm_prec[] = { GK_FP64, GK_FP32, GK_TF32, GK_FP16, GK_BF16, GK_FP8_E4M3 };
	static const int quick_dims[] = { 8192 };
	static const int full_dims[] = { 4096, 8192, 16384 };
	const int *dims = c->plan->full ? full_dims : quick_dims;
	unsigned ndims = c->plan->full ? 3 : 1;
	for (unsigned s = 0; s < c->plan->ngpus; s++) {
		int slot = (int)s;
		for (unsigned i = 0; i < sizeof(fma_prec) / sizeof(fma_prec[0]); i++) {
			struct bench_result *r = bench_start(c, "compute", "fma", kmod_prec_name(fma_prec[i]), slot);
			if (!r)
				continue;
			struct gk_fma_args a = { .c = bench_common(c, slot), .prec = fma_prec[i] };
			struct gk_result g;
			memset(&g, 0, sizeof(g));
			int rc = c->api->fma(&a, &g);
			bench_finish(c, r, rc, &g, BM_TFLOPS, NAN, &slot, 1);
		}
		/* the shape sweep: the report picks the best shape per precision */
		for (unsigned i = 0; i < sizeof(gemm_prec) / sizeof(gemm_prec[0]); i++)
			for (unsigned d = 0; d < ndims; d++)
				gemm_one(c, slot, gemm_prec[i], dims[d]);
	}
}

void bench_suite_gemm(struct bench_ctx *c)
{
	static const struct { int variant; const char *name; } own[] = {
		{ GK_GEMM_NAIVE, "naive" }, { GK_GEMM_TILED, "tiled" }, { GK_GEMM_REGBLOCK, "regblock" },
	};
	static const int quick_dims[] = { 4096 };
	static const int full_dims[] = { 4096, 8192 };
	const int *dims = c->plan->full ? full_dims : quick_dims;
	unsigned ndims = c->plan->full ? 2 : 1;
	for (unsigned s = 0; s < c->plan->ngpus; s++) {
		int slot = (int)s;
		for (unsigned d = 0; d < ndims; d++) {
			for (unsigned i = 0; i < 3; i++) {
				struct bench_result *r = bench_start(c, "gemm", own[i].name, "fp32", slot);
				if (!r)
					continue;
				r->m = r->n = r->k = (unsigned)dims[d];
				struct gk_own_gemm_args a = { .c = bench_common(c, slot), .variant = own[i].variant,
							      .m = dims[d], .n = dims[d], .k = dims[d] };
				struct gk_result g;
				memset(&g, 0, sizeof(g));
				int rc = c->api->own_gemm(&a, &g);
				bench_finish(c, r, rc, &g, BM_TFLOPS, NAN, &slot, 1);
			}
			/* cuBLAS FP32 (no TF32) at the same size, the yardstick */
			struct bench_result *r = bench_start(c, "gemm", "cublas", "fp32", slot);
			if (!r)
				continue;
			r->m = r->n = r->k = (unsigned)dims[d];
			struct gk_gemm_args a = { .c = bench_common(c, slot), .lib = GK_CUBLAS, .prec = GK_FP32,
						  .m = dims[d], .n = dims[d], .k = dims[d] };
			struct gk_result g;
			memset(&g, 0, sizeof(g));
			int rc = c->api->gemm(&a, &g);
			bench_finish(c, r, rc, &g, BM_TFLOPS, NAN, &slot, 1);
		}
	}
}
