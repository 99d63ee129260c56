/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gk_owngemm.cu - three FP32 GEMMs of our own, C = A B, row-major, the guide's
 * lesson made measurable: naive (one thread per output, every operand from
 * memory), shared-memory tiled (32 x 32 tiles), and register-blocked (a 128 x
 * 128 block tile, 8 x 8 outputs a thread, double-buffered shared memory,
 * 16-byte loads). Buffers are padded with zeros to whole tiles, so no kernel
 * needs bounds checks; FLOPs count only the m x n x k asked for. Each result is
 * compared with cuBLAS FP32 (no TF32), or with sampled FP64 dot products when
 * cuBLAS cannot be loaded.
 */
#include "gk_blas.cuh"
#include "gk_entries.cuh"

#include <math.h>

#define RB_BM 128
#define RB_BN 128
#define RB_BK 8
#define T_TILE 32

__global__ void k_sgemm_naive(const float *A, const float *B, float *C, int N, int K)
{
	int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y * blockDim.y + threadIdx.y;
	float acc = 0;
	for (int p = 0; p < K; p++) acc = fmaf(A[(size_t)row * K + p], B[(size_t)p * N + col], acc);
	C[(size_t)row * N + col] = acc;
}

__global__ void k_sgemm_tiled(const float *A, const float *B, float *C, int N, int K)
{
	__shared__ float As[T_TILE][T_TILE], Bs[T_TILE][T_TILE + 1];
	int tx = threadIdx.x, ty = threadIdx.y;
	int row = blockIdx.y * T_TILE + ty, col = blockIdx.x * T_TILE + tx;
	float acc = 0;
	for (int k0 = 0; k0 < K; k0 += T_TILE) {
		As[ty][tx] = A[(size_t)row * K + k0 + tx];
		Bs[ty][tx] = B[(size_t)(k0 + ty) * N + col];
		__syncthreads();
#pragma unroll
		for (int p = 0; p < T_TILE; p++) acc = fmaf(As[ty][p], Bs[p][tx], acc);
		__syncthreads();
	}
	C[(size_t)row * N + col] = acc;
}

/* 256 threads; thread (ty, tx) = (tid / 16, tid % 16) owns rows ty*4..+3 and
 * 64+ty*4..+3, columns tx*4..+3 and 64+tx*4..+3 of the block tile: the split
 * keeps a warp's 16-byte shared-memory reads free of bank conflicts. */
__global__ void __launch_bounds__(256, 2) k_sgemm_regblock(const float *__restrict__ A, const float *__restrict__ B,
							   float *__restrict__ C, int N, int K)
{
	__shared__ __align__(16) float As[2][RB_BK][RB_BM];
	__shared__ __align__(16) float Bs[2][RB_BK][RB_BN];
	int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
	const float *Ab = A + (size_t)blockIdx.y * RB_BM * K;
	const float *Bb = B + (size_t)blockIdx.x * RB_BN;
	int a_row = tid / 2, a_col = (tid % 2) * 4;  /* A tile 128 x 8: one float4 a thread */
	int b_row = tid / 32, b_col = (tid % 32) * 4; /* B tile 8 x 128: one float4 a thread */
	float acc[8][8];
#pragma unroll
	for (int i = 0; i < 8; i++)
#pragma unroll
		for (int j = 0; j < 8; j++) acc[i][j] = 0;

	float4 la = *(const float4 *)(Ab + (size_t)a_row * K + a_col);
	float4 lb = *(const float4 *)(Bb + (size_t)b_row * N + b_col);
	As[0][a_col + 0][a_row] = la.x; As[0][a_col + 1][a_row] = la.y;
	As[0][a_col + 2][a_row] = la.z; As[0][a_col + 3][a_row] = la.w;
	*(float4 *)&Bs[0][b_row][b_col] = lb;
	__syncthreads();
	int buf = 0;
	for (int k0 = 0; k0 < K; k0 += RB_BK) {
		bool more = k0 + RB_BK < K;
		if (more) { /* fetch the next tile into registers while this one is used */
			la = *(const float4 *)(Ab + (size_t)a_row * K + k0 + RB_BK + a_col);
			lb = *(const float4 *)(Bb + (size_t)(k0 + RB_BK + b_row) * N + b_col);
		}
#pragma unroll
		for (int kk = 0; kk < RB_BK; kk++) {
			float4 a0 = *(const float4 *)&As[buf][kk][ty * 4], a1 = *(const float4 *)&As[buf][kk][64 + ty * 4];
			float4 b0 = *(const float4 *)&Bs[buf][kk][tx * 4], b1 = *(const float4 *)&Bs[buf][kk][64 + tx * 4];
			float av[8] = { a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w };
			float bv[8] = { b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w };
#pragma unroll
			for (int i = 0; i < 8; i++)
#pragma unroll
				for (int j = 0; j < 8; j++) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
		}
		if (more) {
			int nb = buf ^ 1;
			As[nb][a_col + 0][a_row] = la.x; As[nb][a_col + 1][a_row] = la.y;
			As[nb][a_col + 2][a_row] = la.z; As[nb][a_col + 3][a_row] = la.w;
			*(float4 *)&Bs[nb][b_row][b_col] = lb;
			__syncthreads();
			buf = nb;
		}
	}
	float *Cb = C + (size_t)blockIdx.y * RB_BM * N + (size_t)blockIdx.x * RB_BN;
#pragma unroll
	for (int i = 0; i < 8; i++) {
		int row = (i < 4 ? ty * 4 + i : 64 + ty * 4 + i - 4);
		*(float4 *)(Cb + (size_t)row * N + tx * 4) = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
		*(float4 *)(Cb + (size_t)row * N + 64 + tx * 4) = make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]);
	}
}

/* Random values in the m x k (or k x n) corner of a zeroed padded matrix. */
__global__ void k_fill_corner(float *p, int rows, int cols, int ld, uint64_t seed)
{
	size_t n = (size_t)rows * cols;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		p[(i / cols) * ld + i % cols] = gk_unit(seed, i);
}

/* max |c - ref| / sqrt(k) over the m x n corner (scaled so the tolerance holds for any k) */
__global__ void k_cmp_corner(const float *c, const float *ref, int m, int n, int ld, float scale, float tol,
			     unsigned long long *bad, unsigned long long *nans, unsigned *max_bits)
{
	size_t tot = (size_t)m * n;
	unsigned long long b = 0, q = 0;
	float mx = 0;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < tot; i += (size_t)gridDim.x * blockDim.x) {
		size_t at = (i / n) * ld + i % n;
		float v = c[at];
		if (!isfinite(v)) { q++; continue; }
		float e = fabsf(v - ref[at]) / scale;
		mx = fmaxf(mx, e);
		b += e > tol;
	}
	if (b) atomicAdd(bad, b);
	if (q) atomicAdd(nans, q);
	atomicMax(max_bits, __float_as_uint(mx)); /* non-negative floats order as their bits */
}

struct own_ctx { int variant, Mp, Np, Kp; const float *A, *B; float *C; };

static int own_body(void *vctx, cudaStream_t s, struct gk_result *r)
{
	struct own_ctx *o = (struct own_ctx *)vctx;
	if (o->variant == GK_GEMM_NAIVE) {
		dim3 blk(32, 8), grd(o->Np / 32, o->Mp / 8);
		k_sgemm_naive<<<grd, blk, 0, s>>>(o->A, o->B, o->C, o->Np, o->Kp);
	} else if (o->variant == GK_GEMM_TILED) {
		dim3 blk(T_TILE, T_TILE), grd(o->Np / T_TILE, o->Mp / T_TILE);
		k_sgemm_tiled<<<grd, blk, 0, s>>>(o->A, o->B, o->C, o->Np, o->Kp);
	} else {
		dim3 grd(o->Np / RB_BN, o->Mp / RB_BM);
		k_sgemm_regblock<<<grd, 256, 0, s>>>(o->A, o->B, o->C, o->Np, o->Kp);
	}
	CKL();
	return GK_OK;
}

static int round_up(int x, int m) { return (x + m - 1) / m * m; }

/* Fallback check without cuBLAS: sampled FP64 dot products. */
static int own_check_sampled(struct gk_result *r, struct gk_track *t, const struct own_ctx *o, int m, int n, int k,
			     uint64_t seed)
{
	float *arow, *bcol;
	CKR(gk_hmalloc(t, r, (void **)&arow, sizeof(float) * k));
	CKR(gk_hmalloc(t, r, (void **)&bcol, sizeof(float) * k));
	uint64_t bad = 0, nans = 0;
	double mx = 0;
	for (int q = 0; q < 32; q++) {
		int i = gk_hash32(seed + 3 * q) % m, j = gk_hash32(seed + 3 * q + 1) % n;
		float c;
		CK(cudaMemcpy(arow, o->A + (size_t)i * o->Kp, sizeof(float) * k, cudaMemcpyDeviceToHost));
		CK(cudaMemcpy2D(bcol, sizeof(float), o->B + j, sizeof(float) * o->Np, sizeof(float), k, cudaMemcpyDeviceToHost));
		CK(cudaMemcpy(&c, o->C + (size_t)i * o->Np + j, sizeof c, cudaMemcpyDeviceToHost));
		double ref = 0;
		for (int p = 0; p < k; p++) ref += (double)arow[p] * bcol[p];
		if (!isfinite(c)) { nans++; continue; }
		double e = fabs(c - ref) / sqrt((double)k);
		mx = e > mx ? e : mx;
		bad += e > 1e-4;
	}
	r->verify.checked = 32;
	r->verify.mismatches = bad;
	r->verify.nans = nans;
	r->verify.max_err = mx;
	return GK_OK;
}

static int own_inner(const struct gk_own_gemm_args *a, struct gk_result *r, struct gk_track *t)
{
	CKR(gk_set_device(r, a->c.device));
	if (a->variant < GK_GEMM_NAIVE || a->variant > GK_GEMM_REGBLOCK) return gk_fail(r, GK_EARG, "unknown gemm variant %d", a->variant);
	if (a->m < 1 || a->n < 1 || a->k < 1) return gk_fail(r, GK_EARG, "gemm shape %dx%dx%d must be positive", a->m, a->n, a->k);
	struct own_ctx o = {};
	o.variant = a->variant;
	o.Mp = round_up(a->m, RB_BM); o.Np = round_up(a->n, RB_BN); o.Kp = round_up(a->k, T_TILE);
	uint64_t seed = gk_seed(&a->c);
	cudaStream_t s; cudaEvent_t e0, e1;
	float *A, *Bm, *C, *ref;
	CKR(gk_stream(t, r, &s));
	CKR(gk_event(t, r, &e0)); CKR(gk_event(t, r, &e1));
	CKR(gk_dmalloc(t, r, (void **)&A, sizeof(float) * o.Mp * o.Kp));
	CKR(gk_dmalloc(t, r, (void **)&Bm, sizeof(float) * o.Kp * o.Np));
	CKR(gk_dmalloc(t, r, (void **)&C, sizeof(float) * o.Mp * o.Np));
	CK(cudaMemsetAsync(A, 0, sizeof(float) * o.Mp * o.Kp, s));
	CK(cudaMemsetAsync(Bm, 0, sizeof(float) * o.Kp * o.Np, s));
	CK(cudaMemsetAsync(C, 0xff, sizeof(float) * o.Mp * o.Np, s)); /* poison: NaN */
	k_fill_corner<<<1024, 256, 0, s>>>(A, a->m, a->k, o.Kp, seed);
	CKL();
	k_fill_corner<<<1024, 256, 0, s>>>(Bm, a->k, a->n, o.Np, seed + 1);
	CKL();
	o.A = A; o.B = Bm; o.C = C;
	CKR(gk_time_body(r, &a->c, 1, s, e0, e1, own_body, &o));
	r->flops = 2.0 * a->m * (double)a->n * a->k;

	/* reference: cuBLAS on the same padded buffers */
	struct gk_result rb;
	gk_result_init(&rb);
	CKR(gk_dmalloc(t, r, (void **)&ref, sizeof(float) * o.Mp * o.Np));
	int brc = gk_sgemm_rowmajor(&rb, o.Mp, o.Np, o.Kp, A, o.Kp, Bm, o.Np, ref, o.Np, s);
	if (brc == GK_EUNSUPPORTED) {
		gk_aux(r, "vs_cublas", 0, "bool");
		CKR(own_check_sampled(r, t, &o, a->m, a->n, a->k, seed));
	} else {
		if (brc != GK_OK) { memcpy(r->err, rb.err, sizeof r->err); return brc; }
		gk_aux(r, "vs_cublas", 1, "bool");
		unsigned long long *cnt;
		CKR(gk_dmalloc(t, r, (void **)&cnt, 3 * sizeof(unsigned long long)));
		CK(cudaMemsetAsync(cnt, 0, 3 * sizeof(unsigned long long), s));
		k_cmp_corner<<<1024, 256, 0, s>>>(C, ref, a->m, a->n, o.Np, sqrtf((float)a->k), 1e-4f, cnt, cnt + 1,
						  (unsigned *)(cnt + 2));
		CKL();
		CKR(gk_wait_stream(r, s, a->c.deadline_ns));
		unsigned long long h[3];
		CK(cudaMemcpy(h, cnt, sizeof h, cudaMemcpyDeviceToHost));
		unsigned bits = (unsigned)h[2];
		float mx;
		memcpy(&mx, &bits, sizeof mx);
		r->verify.checked = (uint64_t)a->m * a->n;
		r->verify.mismatches = h[0];
		r->verify.nans = h[1];
		r->verify.max_err = mx;
	}
	r->verify.verified = r->verify.mismatches == 0 && r->verify.nans == 0;
	gk_aux(r, "max_rel_err", r->verify.max_err, "ratio");
	if (!r->verify.verified)
		return gk_fail(r, GK_EVERIFY, "own gemm: %llu entries off, %llu NaN (max error %.3g)",
			       (unsigned long long)r->verify.mismatches, (unsigned long long)r->verify.nans, r->verify.max_err);
	return GK_OK;
}

int gk_own_gemm(const struct gk_own_gemm_args *a, struct gk_result *r) { GK_ENTRY(r, own_inner(a, r, GK_T)); }
