/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gk_train_attn.cu - fused causal attention for the bf16 training step,
 * flash-style: tiles of 64 queries by 64 keys in shared memory, BF16 tensor
 * cores (wmma 16x16x16, FP32 accumulation), an online softmax, and only each
 * query's log-sum-exp kept for the backward pass, which recomputes the
 * probabilities. No [seq][seq] matrix is ever in memory. Q, K and V are read
 * straight from the QKV GEMM's rows ([B][seq][3C], head h at columns h hs of
 * each third) and the output and gradients are written in rows too, so the
 * plain path's head permutes are gone.
 *
 * Four warps a block, each owning 16 rows of the tile: a warp's scores go
 * through shared memory (FP32) for the softmax, which two lanes a row do in
 * registers; the output and gradient accumulators stay in shared memory
 * (FP32) between tiles. The head size is padded with zeros to a multiple of
 * 16 (HSP: 16, 32, 64 or 128), so the tiny check model's heads of 8 run the
 * same code as GPT-2's heads of 64.
 *
 * Backward: dsum[q] = sum(dout out) first; then one kernel a key tile for
 * dK and dV (over the query tiles from the diagonal down) and one a query
 * tile for dQ (over the key tiles up to the diagonal): no atomics, each
 * gradient written once.
 */
#include "gk_train.cuh"

#include <mma.h>

using namespace nvcuda;

#define FA_TILE 64
#define FA_THREADS 128
#define FA_LDS (FA_TILE + 4) /* FP32 score tiles */
#define FA_LDP (FA_TILE + 8) /* bf16 probability tiles */

typedef wmma::fragment<wmma::matrix_a, 16, 16, 16, bf16, wmma::row_major> frag_a;
typedef wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::row_major> frag_b_row;
typedef wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::col_major> frag_b_col;
typedef wmma::fragment<wmma::accumulator, 16, 16, 16, float> frag_c;

/* rows r0.. of a [rows][ld] bf16 matrix, columns 0..hs-1, into dst[64][HSP + 8]; zeros
 * beyond S rows and hs columns */
template <int HSP> __device__ __forceinline__ void fa_load(bf16 *dst, const bf16 *src, int ld, int r0, int S, int hs)
{
	constexpr int LDB = HSP + 8, CH = HSP / 8;
	for (int i = threadIdx.x; i < FA_TILE * CH; i += FA_THREADS) {
		int row = i / CH, d = (i % CH) * 8;
		uint4 v = make_uint4(0, 0, 0, 0);
		if (r0 + row < S && d < hs) v = *(const uint4 *)(src + (size_t)(r0 + row) * ld + d);
		*(uint4 *)(dst + row * LDB + d) = v;
	}
}

/* D[16 x 64] (FP32, ldd) = A[16 x HSP] B[64 x HSP]^T: a warp's rows against a tile's rows */
template <int HSP> __device__ __forceinline__ void fa_abt(float *D, int ldd, const bf16 *A, const bf16 *B)
{
	constexpr int LDB = HSP + 8;
	for (int n = 0; n < FA_TILE / 16; n++) {
		frag_c acc;
		wmma::fill_fragment(acc, 0.0f);
		for (int kk = 0; kk < HSP / 16; kk++) {
			frag_a a;
			frag_b_col b;
			wmma::load_matrix_sync(a, A + kk * 16, LDB);
			wmma::load_matrix_sync(b, B + n * 16 * LDB + kk * 16, LDB);
			wmma::mma_sync(acc, a, b, acc);
		}
		wmma::store_matrix_sync(D + n * 16, acc, ldd, wmma::mem_row_major);
	}
}

/* D[16 x HSP] (FP32, ldd) += P[16 x 64] (bf16, FA_LDP) B[64 x HSP] */
template <int HSP> __device__ __forceinline__ void fa_acc_pb(float *D, int ldd, const bf16 *P, const bf16 *B)
{
	constexpr int LDB = HSP + 8;
	for (int n = 0; n < HSP / 16; n++) {
		frag_c acc;
		wmma::load_matrix_sync(acc, D + n * 16, ldd, wmma::mem_row_major);
		for (int kk = 0; kk < FA_TILE / 16; kk++) {
			frag_a a;
			frag_b_row b;
			wmma::load_matrix_sync(a, P + kk * 16, FA_LDP);
			wmma::load_matrix_sync(b, B + kk * 16 * LDB + n * 16, LDB);
			wmma::mma_sync(acc, a, b, acc);
		}
		wmma::store_matrix_sync(D + n * 16, acc, ldd, wmma::mem_row_major);
	}
}

/* A warp's 16 rows of an FP32 [64][HSP + 4] accumulator times `mul`, into rows of dst
 * (column 0 there = column 0 here, up to hs), rows r0.. below S. Two lanes a row. */
template <int HSP>
__device__ __forceinline__ void fa_store_rows(bf16 *dst, int ld, const float *acc, int r0, int S, int hs, const float *mul,
					      float scale)
{
	constexpr int LDO = HSP + 4;
	int warp = threadIdx.x / 32, lane = threadIdx.x % 32, row = warp * 16 + lane / 2, half = lane % 2;
	if (r0 + row >= S) return;
	float f = scale * (mul ? mul[row] : 1.0f);
	for (int d = half * (HSP / 2); d < (half + 1) * (HSP / 2) && d < hs; d++)
		dst[(size_t)(r0 + row) * ld + d] = __float2bfloat16_rn(acc[row * LDO + d] * f);
}

template <int HSP> constexpr int fa_fwd_smem()
{
	return 3 * FA_TILE * (HSP + 8) * 2 + FA_TILE * FA_LDS * 4 + FA_TILE * FA_LDP * 2 + FA_TILE * (HSP + 4) * 4 + FA_TILE * 4;
}

template <int HSP>
__global__ void __launch_bounds__(FA_THREADS) k_flash_fwd(bf16 *out, float *lse, const bf16 *qkv, int S, int NH, int hs, float scale2)
{
#if __CUDA_ARCH__ >= 800 /* bf16 tensor cores; the host runs the plain path below 8.0 */
	constexpr int LDB = HSP + 8, LDO = HSP + 4;
	extern __shared__ __align__(128) unsigned char fa_sm[];
	bf16 *Qs = (bf16 *)fa_sm, *Ks = Qs + FA_TILE * LDB, *Vs = Ks + FA_TILE * LDB;
	float *Ss = (float *)(Vs + FA_TILE * LDB);
	bf16 *Ps = (bf16 *)(Ss + FA_TILE * FA_LDS);
	float *Os = (float *)(Ps + FA_TILE * FA_LDP), *Ls = Os + FA_TILE * LDO;
	int qt = gridDim.x - 1 - blockIdx.x, bh = blockIdx.y, b = bh / NH, h = bh % NH, C = NH * hs, ld = 3 * C, q0 = qt * FA_TILE;
	const bf16 *base = qkv + (size_t)b * S * ld + (size_t)h * hs;
	int warp = threadIdx.x / 32, lane = threadIdx.x % 32, row = warp * 16 + lane / 2, half = lane % 2, qi = q0 + row;
	fa_load<HSP>(Qs, base, ld, q0, S, hs);
	for (int i = threadIdx.x; i < FA_TILE * LDO; i += FA_THREADS) Os[i] = 0;
	float m = -INFINITY, l = 0;
	for (int kt = 0; kt <= qt; kt++) {
		int k0 = kt * FA_TILE;
		__syncthreads(); /* the last tile's K and V are no longer read */
		fa_load<HSP>(Ks, base + C, ld, k0, S, hs);
		fa_load<HSP>(Vs, base + 2 * C, ld, k0, S, hs);
		__syncthreads();
		fa_abt<HSP>(Ss + warp * 16 * FA_LDS, FA_LDS, Qs + warp * 16 * LDB, Ks);
		__syncwarp();
		float v[32], mx = -INFINITY;
		const float *srow = Ss + row * FA_LDS + half * 32;
#pragma unroll
		for (int c = 0; c < 32; c++) {
			v[c] = k0 + half * 32 + c <= qi ? srow[c] * scale2 : -INFINITY;
			mx = fmaxf(mx, v[c]);
		}
		mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
		float mnew = fmaxf(m, mx); /* finite: key k0 <= qi in every tile up to the diagonal */
		float alpha = exp2f(m - mnew), sum = 0;
		bf16 *prow = Ps + row * FA_LDP + half * 32;
#pragma unroll
		for (int c = 0; c < 32; c++) {
			float p = exp2f(v[c] - mnew);
			sum += p;
			prow[c] = __float2bfloat16_rn(p);
		}
		sum += __shfl_xor_sync(0xffffffffu, sum, 1);
		l = l * alpha + sum;
		m = mnew;
		float *orow = Os + row * LDO + half * (HSP / 2);
		for (int d = 0; d < HSP / 2; d++) orow[d] *= alpha;
		__syncwarp();
		fa_acc_pb<HSP>(Os + warp * 16 * LDO, LDO, Ps + warp * 16 * FA_LDP, Vs);
		__syncwarp();
	}
	if (half == 0) {
		Ls[row] = 1.0f / l;
		if (qi < S) lse[(size_t)bh * S + qi] = m + log2f(l);
	}
	__syncwarp();
	fa_store_rows<HSP>(out + (size_t)b * S * C + (size_t)h * hs, C, Os, q0, S, hs, Ls, 1.0f);
#endif
}

/* dsum[bh][q] = sum over d of dout out (the rows' dot products) */
__global__ void k_flash_dsum(float *dsum, const bf16 *dout, const bf16 *out, int S, int NH, int hs, size_t total)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total; i += (size_t)gridDim.x * blockDim.x) {
		size_t q = i % S, bh = i / S, b = bh / NH, h = bh % NH;
		size_t at = (b * S + q) * NH * hs + h * hs;
		float acc = 0;
		for (int d = 0; d < hs; d++) acc += __bfloat162float(dout[at + d]) * __bfloat162float(out[at + d]);
		dsum[i] = acc;
	}
}

template <int HSP> constexpr int fa_bwd_smem()
{
	return 4 * FA_TILE * (HSP + 8) * 2 + FA_TILE * FA_LDS * 4 + 2 * FA_TILE * FA_LDP * 2 + 2 * FA_TILE * (HSP + 4) * 4 + 2 * FA_TILE * 4;
}

/* The backward kernels' shared memory: four bf16 tiles, a score tile, two probability
 * tiles, two FP32 accumulators and the query tile's log-sum-exps and dsums. */
template <int HSP> struct fa_bwd_sm {
	bf16 *t[4], *P, *dS;
	float *S, *acc[2], *Lq, *Dq;
	__device__ fa_bwd_sm(unsigned char *sm)
	{
		for (int i = 0; i < 4; i++) t[i] = (bf16 *)sm + i * FA_TILE * (HSP + 8);
		S = (float *)(t[3] + FA_TILE * (HSP + 8));
		P = (bf16 *)(S + FA_TILE * FA_LDS);
		dS = P + FA_TILE * FA_LDP;
		acc[0] = (float *)(dS + FA_TILE * FA_LDP);
		acc[1] = acc[0] + FA_TILE * (HSP + 4);
		Lq = acc[1] + FA_TILE * (HSP + 4);
		Dq = Lq + FA_TILE;
	}
	/* the log-sum-exps and dsums of queries q0.. (0 beyond S) */
	__device__ void load_stats(const float *lse, const float *dsum, int bh, int q0, int S)
	{
		for (int i = threadIdx.x; i < FA_TILE; i += FA_THREADS) {
			bool in = q0 + i < S;
			Lq[i] = in ? lse[(size_t)bh * S + q0 + i] : 0.0f;
			Dq[i] = in ? dsum[(size_t)bh * S + q0 + i] : 0.0f;
		}
	}
};

/* dK and dV of one key tile, over the query tiles from the diagonal on; a warp owns 16 keys */
template <int HSP>
__global__ void __launch_bounds__(FA_THREADS) k_flash_bwd_kv(bf16 *dqkv, const bf16 *dout, const float *lse, const float *dsum,
							     const bf16 *qkv, int S, int NH, int hs, float scale2, float scale)
{
#if __CUDA_ARCH__ >= 800 /* bf16 tensor cores; the host runs the plain path below 8.0 */
	constexpr int LDB = HSP + 8, LDO = HSP + 4;
	extern __shared__ __align__(128) unsigned char fa_sm[];
	fa_bwd_sm<HSP> sm(fa_sm);
	bf16 *Ks = sm.t[0], *Vs = sm.t[1], *Qs = sm.t[2], *dOs = sm.t[3], *Ps = sm.P, *dSs = sm.dS;
	float *Ss = sm.S, *dK = sm.acc[0], *dV = sm.acc[1], *Lq = sm.Lq, *Dq = sm.Dq;
	int kt = blockIdx.x, bh = blockIdx.y, b = bh / NH, h = bh % NH, C = NH * hs, ld = 3 * C, k0 = kt * FA_TILE;
	int nq = (S + FA_TILE - 1) / FA_TILE;
	const bf16 *base = qkv + (size_t)b * S * ld + (size_t)h * hs, *dob = dout + (size_t)b * S * C + (size_t)h * hs;
	int warp = threadIdx.x / 32, lane = threadIdx.x % 32, row = warp * 16 + lane / 2, half = lane % 2, kj = k0 + row;
	fa_load<HSP>(Ks, base + C, ld, k0, S, hs);
	fa_load<HSP>(Vs, base + 2 * C, ld, k0, S, hs);
	for (int i = threadIdx.x; i < 2 * FA_TILE * LDO; i += FA_THREADS) dK[i] = 0; /* dK and dV are adjacent */
	for (int qt = kt; qt < nq; qt++) {
		int q0 = qt * FA_TILE;
		__syncthreads();
		fa_load<HSP>(Qs, base, ld, q0, S, hs);
		fa_load<HSP>(dOs, dob, C, q0, S, hs);
		sm.load_stats(lse, dsum, bh, q0, S);
		__syncthreads();
		/* P^T[key][query] */
		fa_abt<HSP>(Ss + warp * 16 * FA_LDS, FA_LDS, Ks + warp * 16 * LDB, Qs);
		__syncwarp();
		float p[32];
		float *srow = Ss + row * FA_LDS + half * 32;
		bf16 *prow = Ps + row * FA_LDP + half * 32, *dsrow = dSs + row * FA_LDP + half * 32;
#pragma unroll
		for (int c = 0; c < 32; c++) {
			int j = half * 32 + c, qi = q0 + j;
			p[c] = qi >= kj && qi < S ? exp2f(srow[c] * scale2 - Lq[j]) : 0.0f;
			prow[c] = __float2bfloat16_rn(p[c]);
		}
		__syncwarp();
		/* dP^T = V dO^T */
		fa_abt<HSP>(Ss + warp * 16 * FA_LDS, FA_LDS, Vs + warp * 16 * LDB, dOs);
		__syncwarp();
#pragma unroll
		for (int c = 0; c < 32; c++) dsrow[c] = __float2bfloat16_rn(p[c] * (srow[c] - Dq[half * 32 + c]));
		__syncwarp();
		fa_acc_pb<HSP>(dV + warp * 16 * LDO, LDO, Ps + warp * 16 * FA_LDP, dOs);
		fa_acc_pb<HSP>(dK + warp * 16 * LDO, LDO, dSs + warp * 16 * FA_LDP, Qs);
		__syncwarp();
	}
	bf16 *db = dqkv + (size_t)b * S * ld + (size_t)h * hs;
	fa_store_rows<HSP>(db + C, ld, dK, k0, S, hs, NULL, scale);
	fa_store_rows<HSP>(db + 2 * C, ld, dV, k0, S, hs, NULL, 1.0f);
#endif
}

/* dQ of one query tile, over the key tiles up to the diagonal; a warp owns 16 queries */
template <int HSP>
__global__ void __launch_bounds__(FA_THREADS) k_flash_bwd_q(bf16 *dqkv, const bf16 *dout, const float *lse, const float *dsum,
							    const bf16 *qkv, int S, int NH, int hs, float scale2, float scale)
{
#if __CUDA_ARCH__ >= 800 /* bf16 tensor cores; the host runs the plain path below 8.0 */
	constexpr int LDB = HSP + 8, LDO = HSP + 4;
	extern __shared__ __align__(128) unsigned char fa_sm[];
	fa_bwd_sm<HSP> sm(fa_sm);
	bf16 *Qs = sm.t[0], *dOs = sm.t[1], *Ks = sm.t[2], *Vs = sm.t[3], *dSs = sm.dS;
	float *Ss = sm.S, *dQ = sm.acc[0], *Lq = sm.Lq, *Dq = sm.Dq;
	int qt = gridDim.x - 1 - blockIdx.x, bh = blockIdx.y, b = bh / NH, h = bh % NH, C = NH * hs, ld = 3 * C, q0 = qt * FA_TILE;
	const bf16 *base = qkv + (size_t)b * S * ld + (size_t)h * hs, *dob = dout + (size_t)b * S * C + (size_t)h * hs;
	int warp = threadIdx.x / 32, lane = threadIdx.x % 32, row = warp * 16 + lane / 2, half = lane % 2, qi = q0 + row;
	fa_load<HSP>(Qs, base, ld, q0, S, hs);
	fa_load<HSP>(dOs, dob, C, q0, S, hs);
	for (int i = threadIdx.x; i < FA_TILE * LDO; i += FA_THREADS) dQ[i] = 0;
	sm.load_stats(lse, dsum, bh, q0, S);
	for (int kt = 0; kt <= qt; kt++) {
		int k0 = kt * FA_TILE;
		__syncthreads();
		fa_load<HSP>(Ks, base + C, ld, k0, S, hs);
		fa_load<HSP>(Vs, base + 2 * C, ld, k0, S, hs);
		__syncthreads();
		fa_abt<HSP>(Ss + warp * 16 * FA_LDS, FA_LDS, Qs + warp * 16 * LDB, Ks);
		__syncwarp();
		float p[32], lq = Lq[row], dq = Dq[row];
		float *srow = Ss + row * FA_LDS + half * 32;
		bf16 *dsrow = dSs + row * FA_LDP + half * 32;
#pragma unroll
		for (int c = 0; c < 32; c++) p[c] = k0 + half * 32 + c <= qi ? exp2f(srow[c] * scale2 - lq) : 0.0f;
		__syncwarp();
		/* dP = dO V^T */
		fa_abt<HSP>(Ss + warp * 16 * FA_LDS, FA_LDS, dOs + warp * 16 * LDB, Vs);
		__syncwarp();
#pragma unroll
		for (int c = 0; c < 32; c++) dsrow[c] = __float2bfloat16_rn(p[c] * (srow[c] - dq));
		__syncwarp();
		fa_acc_pb<HSP>(dQ + warp * 16 * LDO, LDO, dSs + warp * 16 * FA_LDP, Ks);
		__syncwarp();
	}
	fa_store_rows<HSP>(dqkv + (size_t)b * S * ld + (size_t)h * hs, ld, dQ, q0, S, hs, NULL, scale);
#endif
}

/* The kernels' shared memory is over the default 48 KiB: opted in on the current device at every
 * call (the attribute is per device, and the data-parallel replicas run one thread a device). */
template <int HSP> static int fa_smem_opt_in(struct gk_result *r)
{
	CK(cudaFuncSetAttribute(k_flash_fwd<HSP>, cudaFuncAttributeMaxDynamicSharedMemorySize, fa_fwd_smem<HSP>()));
	CK(cudaFuncSetAttribute(k_flash_bwd_kv<HSP>, cudaFuncAttributeMaxDynamicSharedMemorySize, fa_bwd_smem<HSP>()));
	CK(cudaFuncSetAttribute(k_flash_bwd_q<HSP>, cudaFuncAttributeMaxDynamicSharedMemorySize, fa_bwd_smem<HSP>()));
	return GK_OK;
}

template <int HSP>
static int fa_run(struct gk_result *r, cudaStream_t s, bool fwd, bf16 *o, float *lse, float *dsum, const bf16 *dout, const bf16 *out,
		  const bf16 *qkv, int B, int S, int NH, int hs)
{
	CKR(fa_smem_opt_in<HSP>(r));
	float scale = 1.0f / sqrtf((float)hs), scale2 = scale * 1.4426950408889634f;
	dim3 grid((S + FA_TILE - 1) / FA_TILE, B * NH);
	if (fwd) {
		k_flash_fwd<HSP><<<grid, FA_THREADS, fa_fwd_smem<HSP>(), s>>>(o, lse, qkv, S, NH, hs, scale2);
		CKL();
		return GK_OK;
	}
	size_t n = (size_t)B * NH * S;
	k_flash_dsum<<<gk_grid(n, 256, 132 * 16), 256, 0, s>>>(dsum, dout, out, S, NH, hs, n);
	CKL();
	k_flash_bwd_kv<HSP><<<grid, FA_THREADS, fa_bwd_smem<HSP>(), s>>>(o, dout, lse, dsum, qkv, S, NH, hs, scale2, scale);
	CKL();
	k_flash_bwd_q<HSP><<<grid, FA_THREADS, fa_bwd_smem<HSP>(), s>>>(o, dout, lse, dsum, qkv, S, NH, hs, scale2, scale);
	CKL();
	return GK_OK;
}

static int fa_dispatch(struct gk_result *r, cudaStream_t s, bool fwd, bf16 *o, float *lse, float *dsum, const bf16 *dout,
		       const bf16 *out, const bf16 *qkv, int B, int S, int NH, int hs)
{
	if (hs <= 16) return fa_run<16>(r, s, fwd, o, lse, dsum, dout, out, qkv, B, S, NH, hs);
	if (hs <= 32) return fa_run<32>(r, s, fwd, o, lse, dsum, dout, out, qkv, B, S, NH, hs);
	if (hs <= 64) return fa_run<64>(r, s, fwd, o, lse, dsum, dout, out, qkv, B, S, NH, hs);
	if (hs <= TR_FLASH_MAX_HS) return fa_run<TR_FLASH_MAX_HS>(r, s, fwd, o, lse, dsum, dout, out, qkv, B, S, NH, hs);
	return gk_fail(r, GK_EARG, "flash attention: head size %d over %d", hs, TR_FLASH_MAX_HS);
}

int tr_flash_fwd(struct gk_result *r, cudaStream_t s, bf16 *out, float *lse, const bf16 *qkv, int B, int S, int NH, int hs)
{
	return fa_dispatch(r, s, true, out, lse, NULL, NULL, NULL, qkv, B, S, NH, hs);
}

int tr_flash_bwd(struct gk_result *r, cudaStream_t s, bf16 *dqkv, float *dsum, const bf16 *dout, const bf16 *out, const float *lse,
		 const bf16 *qkv, int B, int S, int NH, int hs)
{
	return fa_dispatch(r, s, false, dqkv, (float *)lse, dsum, dout, out, qkv, B, S, NH, hs);
}
