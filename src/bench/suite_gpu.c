/*
 * suite_gpu.c - the one-GPU suites: copy (host<->device), memory, compute
 * (FMA peak and cuBLAS GEMM per precision) and gemm (our kernels vs cuBLAS).
 * Each measurement is one module call on one GPU, with telemetry around it.
 */
#include "suite_int.h"

#include <math.h>
#include <string.h>

#define KiB (1ull << 10)
#define MiB (1ull << 20)
#define GiB (1ull << 30)

/* A result for slot, or NULL (out of memory, or the GPU hung earlier: then
 * the result is recorded as skipped and NULL returned). */
static struct bench_result *start(struct bench_ctx *c, const char *suite, const char *test, const char *variant,
				  int slot)
{
	struct bench_result *r = bench_new(c, suite, test, variant, slot);
	if (r && c->hung[slot]) {
		bench_result_fail(r, BS_SKIPPED, "GPU %d timed out in an earlier test", r->gpu);
		if (c->hooks->done)
			c->hooks->done(c->hooks->arg, r);
		return NULL;
	}
	if (r)
		bench_tel_begin(c, &slot, 1);
	return r;
}

static void copy_one(struct bench_ctx *c, int slot, const char *test, const char *variant, int dir, int host_mem,
		     int engine, bool async, bool overlap, uint64_t bytes)
{
	struct bench_result *r = start(c, "copy", test, variant, slot);
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

static void mem_one(struct bench_ctx *c, int slot, int op, uint64_t bytes)
{
	struct bench_result *r = start(c, "memory", kmod_mem_op_name(op), "", slot);
	if (!r)
		return;
	r->size_bytes = bytes;
	struct gk_mem_args a = { .c = bench_common(c, slot), .op = op, .bytes = (size_t)bytes };
	struct gk_result g;
	memset(&g, 0, sizeof(g));
	int rc = c->api->memory(&a, &g);
	bool lat = op == GK_MEM_LATENCY;
	bench_finish(c, r, rc, &g, lat ? BM_LATENCY_NS : BM_BANDWIDTH, lat ? bench_latency_scale(rc, &g) : NAN, &slot, 1);
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
			for (int op = GK_MEM_READ; op <= GK_MEM_TRIAD; op++)
				mem_one(c, (int)s, op, sizes[i]);
		mem_one(c, (int)s, GK_MEM_LATENCY, sizes[n - 1]);
	}
}

static void gemm_one(struct bench_ctx *c, int slot, int lib, int prec, int dim)
{
	struct bench_result *r = start(c, "compute", lib == GK_CUBLASLT ? "cublaslt" : "cublas", kmod_prec_name(prec), slot);
	if (!r)
		return;
	r->m = r->n = r->k = (unsigned)dim;
	struct gk_gemm_args a = { .c = bench_common(c, slot), .lib = lib, .prec = prec, .m = dim, .n = dim, .k = dim };
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
			struct bench_result *r = start(c, "compute", "fma", kmod_prec_name(fma_prec[i]), slot);
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
				gemm_one(c, slot, gemm_prec[i] == GK_FP8_E4M3 ? GK_CUBLASLT : GK_CUBLAS, gemm_prec[i], dims[d]);
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
				struct bench_result *r = start(c, "gemm", own[i].name, "fp32", slot);
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
			struct bench_result *r = start(c, "gemm", "cublas", "fp32", slot);
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
