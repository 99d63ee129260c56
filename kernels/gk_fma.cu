/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gk_fma.cu - peak FMA throughput for FP64, FP32, packed FP16x2 and BF16x2.
 *
 * Each thread runs CHAINS independent chains of x = fma(x, a, b) with a = -1,
 * b = 3 passed at run time (so nothing folds): x -> 3 - x -> x, exact in every
 * precision for the small dyadic start values used. After an even number of
 * steps every chain must hold its start value again: the check is exact.
 */
#include "gk_common.cuh"
#include "gk_entries.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#define CHAINS 8
#define INNER 16
#define FMA_BLOCK 256

__host__ __device__ static inline float start_value(unsigned tid, int c)
{
	return 1.0f + 0.25f * (float)((tid * CHAINS + c) % 64);
}

/* One kernel per type; T the register type, FMA(x,a,b) the instruction,
 * MK(f) builds a T from a float, OUT(x) writes its lanes as floats. */
#define FMA_KERNEL(NAME, T, MK, FMA, LANES, OUT)                                      \
	__global__ void NAME(float *out, long iters, float af, float bf)                  \
	{                                                                                 \
		unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;                         \
		T a = MK(af), b = MK(bf), x[CHAINS];                                          \
		_Pragma("unroll") for (int c = 0; c < CHAINS; c++) x[c] = MK(start_value(tid, c)); \
		for (long i = 0; i < iters; i += INNER) {                                     \
			_Pragma("unroll") for (int k = 0; k < INNER; k++)                         \
				_Pragma("unroll") for (int c = 0; c < CHAINS; c++) x[c] = FMA(x[c], a, b); \
		}                                                                             \
		_Pragma("unroll") for (int c = 0; c < CHAINS; c++) OUT(out + ((size_t)tid * CHAINS + c) * LANES, x[c]); \
	}

#define MK_F64(f) ((double)(f))
#define MK_F32(f) (f)
#define MK_H2(f) __float2half2_rn(f)
#define MK_B2(f) __float2bfloat162_rn(f)
#define FMA_F64(x, a, b) fma(x, a, b)
#define FMA_F32(x, a, b) fmaf(x, a, b)
#define FMA_H2(x, a, b) __hfma2(x, a, b)
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
/* no BF16 arithmetic before sm_80: fma_inner never launches k_fma_b2 there */
#define FMA_B2(x, a, b) (x)
#else
#define FMA_B2(x, a, b) __hfma2(x, a, b)
#endif
#define OUT_1(p, v) (*(p) = (float)(v))
#define OUT_H2(p, v) ((p)[0] = __low2float(v), (p)[1] = __high2float(v))
#define OUT_B2(p, v) ((p)[0] = __low2float(v), (p)[1] = __high2float(v))

FMA_KERNEL(k_fma_f64, double, MK_F64, FMA_F64, 1, OUT_1)
FMA_KERNEL(k_fma_f32, float, MK_F32, FMA_F32, 1, OUT_1)
FMA_KERNEL(k_fma_h2, __half2, MK_H2, FMA_H2, 2, OUT_H2)
FMA_KERNEL(k_fma_b2, __nv_bfloat162, MK_B2, FMA_B2, 2, OUT_B2)

struct fma_ctx { int prec, grid; long iters; float *out; };

static int fma_body(void *vctx, cudaStream_t s, struct gk_result *r)
{
	struct fma_ctx *f = (struct fma_ctx *)vctx;
	switch (f->prec) {
	case GK_FP64: k_fma_f64<<<f->grid, FMA_BLOCK, 0, s>>>(f->out, f->iters, -1.0f, 3.0f); break;
	case GK_FP32: k_fma_f32<<<f->grid, FMA_BLOCK, 0, s>>>(f->out, f->iters, -1.0f, 3.0f); break;
	case GK_FP16X2: k_fma_h2<<<f->grid, FMA_BLOCK, 0, s>>>(f->out, f->iters, -1.0f, 3.0f); break;
	case GK_BF16X2: k_fma_b2<<<f->grid, FMA_BLOCK, 0, s>>>(f->out, f->iters, -1.0f, 3.0f); break;
	}
	CKL();
	return GK_OK;
}

static int fma_inner(const struct gk_fma_args *a, struct gk_result *r, struct gk_track *t)
{
	CKR(gk_set_device(r, a->c.device));
	if (a->prec != GK_FP64 && a->prec != GK_FP32 && a->prec != GK_FP16X2 && a->prec != GK_BF16X2)
		return gk_fail(r, GK_EARG, "fma peak supports fp64, fp32, fp16x2, bf16x2 (got precision %d)", a->prec);
	int cc_major = 0;
	CK(cudaDeviceGetAttribute(&cc_major, cudaDevAttrComputeCapabilityMajor, a->c.device));
	if (a->prec == GK_BF16X2 && cc_major < 8)
		return gk_fail(r, GK_EUNSUPPORTED, "fma bf16x2 needs compute capability 8.0 or newer");
	struct fma_ctx f = {};
	f.prec = a->prec;
	f.grid = gk_sm_count(a->c.device) * 8;
	/* about 10 ms a sample on an H100-class GPU; an even multiple of INNER */
	f.iters = a->prec == GK_FP64 ? 65536 : 131072;
	int lanes = (a->prec == GK_FP16X2 || a->prec == GK_BF16X2) ? 2 : 1;
	size_t nthreads = (size_t)f.grid * FMA_BLOCK, nout = nthreads * CHAINS * lanes;
	float *h;
	cudaStream_t s; cudaEvent_t e0, e1;
	CKR(gk_stream(t, r, &s));
	CKR(gk_event(t, r, &e0)); CKR(gk_event(t, r, &e1));
	CKR(gk_dmalloc(t, r, (void **)&f.out, nout * sizeof(float)));
	CKR(gk_hmalloc(t, r, (void **)&h, nout * sizeof(float)));
	CK(cudaMemsetAsync(f.out, 0xff, nout * sizeof(float), s)); /* poison: NaN */
	CKR(gk_time_body(r, &a->c, 1, s, e0, e1, fma_body, &f));
	r->flops = 2.0 * lanes * CHAINS * (double)f.iters * (double)nthreads;
	CK(cudaMemcpy(h, f.out, nout * sizeof(float), cudaMemcpyDeviceToHost));
	uint64_t bad = 0, nans = 0;
	for (size_t i = 0; i < nout; i++) {
		size_t chain = i / lanes;
		float want = start_value((unsigned)(chain / CHAINS), (int)(chain % CHAINS));
		if (h[i] != h[i]) nans++;
		else if (h[i] != want) bad++;
	}
	r->verify.checked = nout;
	r->verify.mismatches = bad;
	r->verify.nans = nans;
	r->verify.verified = bad == 0 && nans == 0;
	if (!r->verify.verified)
		return gk_fail(r, GK_EVERIFY, "fma: %llu wrong and %llu NaN results of %zu",
			       (unsigned long long)bad, (unsigned long long)nans, nout);
	return GK_OK;
}

int gk_fma(const struct gk_fma_args *a, struct gk_result *r) { GK_ENTRY(r, fma_inner(a, r, GK_T)); }
