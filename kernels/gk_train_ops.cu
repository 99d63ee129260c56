/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gk_train_ops.cu - the GPT-2 training step's own kernels (everything but the
 * GEMMs): embeddings, LayerNorm, head permutes, causal softmax, GELU, fused
 * cross-entropy, bias gradients and AdamW, forward and backward, for float and
 * bf16 activations. Plain, readable versions (one warp a row for the row
 * reductions, grid-stride loops for the element-wise ones); the CPU reference
 * of each is src/kernels_host/train_ref.c.
 */
#include "gk_train.cuh"

#include <math.h>

#define TR_BLOCK 256

static int tr_blocks(size_t n) { return gk_grid(n, TR_BLOCK, 132 * 32); }

__device__ __forceinline__ float warp_sum(float v)
{
	for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
	return v;
}

__device__ __forceinline__ float warp_max(float v)
{
	for (int o = 16; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
	return v;
}

#define GRID_STRIDE(i, n) for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < (n); i += (size_t)gridDim.x * blockDim.x)

/* ---- embeddings ------------------------------------------------------------------ */
template <typename T>
__global__ void k_encoder_fwd(T *out, const int *inp, const T *wte, const T *wpe, int seq, int C, size_t total)
{
	GRID_STRIDE(i, total) {
		size_t n = i / C, c = i % C;
		out[i] = tr_to<T>(tr_f(wte[(size_t)inp[n] * C + c]) + tr_f(wpe[(n % seq) * C + c]));
	}
}

template <typename T>
__global__ void k_encoder_bwd(float *dwte, float *dwpe, const T *dout, const int *inp, int seq, int C, size_t total)
{
	GRID_STRIDE(i, total) {
		size_t n = i / C, c = i % C;
		float d = tr_f(dout[i]);
		atomicAdd(&dwte[(size_t)inp[n] * C + c], d);
		atomicAdd(&dwpe[(n % seq) * C + c], d);
	}
}

template <typename T>
int tr_encoder_fwd(struct gk_result *r, cudaStream_t s, T *out, const int *inp, const T *wte, const T *wpe, int N, int seq, int C)
{
	size_t n = (size_t)N * C;
	k_encoder_fwd<T><<<tr_blocks(n), TR_BLOCK, 0, s>>>(out, inp, wte, wpe, seq, C, n);
	CKL();
	return GK_OK;
}

template <typename T>
int tr_encoder_bwd(struct gk_result *r, cudaStream_t s, float *dwte, float *dwpe, const T *dout, const int *inp, int N, int seq, int C)
{
	size_t n = (size_t)N * C;
	k_encoder_bwd<T><<<tr_blocks(n), TR_BLOCK, 0, s>>>(dwte, dwpe, dout, inp, seq, C, n);
	CKL();
	return GK_OK;
}

/* ---- LayerNorm (eps 1e-5): a warp a row ---------------------------------------------- */
template <typename T>
__global__ void k_layernorm_fwd(T *out, float *mean, float *rstd, const T *inp, const T *w, const T *b, int N, int C)
{
	int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
	if (row >= N) return;
	const T *x = inp + (size_t)row * C;
	T *y = out + (size_t)row * C;
	float sum = 0;
	for (int c = lane; c < C; c += 32) sum += tr_f(x[c]);
	float m = warp_sum(sum) / C;
	float var = 0;
	for (int c = lane; c < C; c += 32) { float d = tr_f(x[c]) - m; var += d * d; }
	float rs = rsqrtf(warp_sum(var) / C + 1e-5f);
	for (int c = lane; c < C; c += 32) y[c] = tr_to<T>((tr_f(x[c]) - m) * rs * tr_f(w[c]) + tr_f(b[c]));
	if (lane == 0) { mean[row] = m; rstd[row] = rs; }
}

/* Each block keeps its rows' weight and bias gradients in shared memory and
 * adds them to the global ones once at its end. */
template <typename T>
__global__ void k_layernorm_bwd(T *dinp, float *dw, float *db, const T *dout, const T *inp, const T *w, const float *mean,
				const float *rstd, int N, int C)
{
	extern __shared__ float sh[];
	float *sdw = sh, *sdb = sh + C;
	for (int c = threadIdx.x; c < 2 * C; c += blockDim.x) sh[c] = 0;
	__syncthreads();
	int warps = blockDim.x / 32, lane = threadIdx.x % 32;
	for (int row = blockIdx.x * warps + threadIdx.x / 32; row < N; row += gridDim.x * warps) {
		const T *x = inp + (size_t)row * C, *dy = dout + (size_t)row * C;
		T *dx = dinp + (size_t)row * C;
		float m = mean[row], rs = rstd[row], a = 0, bsum = 0;
		for (int c = lane; c < C; c += 32) {
			float dn = tr_f(w[c]) * tr_f(dy[c]);
			a += dn;
			bsum += dn * (tr_f(x[c]) - m) * rs;
		}
		a = warp_sum(a) / C;
		bsum = warp_sum(bsum) / C;
		for (int c = lane; c < C; c += 32) {
			float g = tr_f(dy[c]), nrm = (tr_f(x[c]) - m) * rs, dn = tr_f(w[c]) * g;
			atomicAdd(&sdw[c], nrm * g);
			atomicAdd(&sdb[c], g);
			dx[c] = tr_to<T>(tr_f(dx[c]) + (dn - a - nrm * bsum) * rs);
		}
	}
	__syncthreads();
	for (int c = threadIdx.x; c < C; c += blockDim.x) {
		atomicAdd(&dw[c], sdw[c]);
		atomicAdd(&db[c], sdb[c]);
	}
}

template <typename T>
int tr_layernorm_fwd(struct gk_result *r, cudaStream_t s, T *out, float *mean, float *rstd, const T *inp, const T *w, const T *b,
		     int N, int C)
{
	k_layernorm_fwd<T><<<(N + 7) / 8, 256, 0, s>>>(out, mean, rstd, inp, w, b, N, C);
	CKL();
	return GK_OK;
}

template <typename T>
int tr_layernorm_bwd(struct gk_result *r, cudaStream_t s, T *dinp, float *dw, float *db, const T *dout, const T *inp, const T *w,
		     const float *mean, const float *rstd, int N, int C)
{
	int blocks = (N + 15) / 16;
	if (blocks > 132 * 4) blocks = 132 * 4;
	k_layernorm_bwd<T><<<blocks, 512, 2 * C * sizeof(float), s>>>(dinp, dw, db, dout, inp, w, mean, rstd, N, C);
	CKL();
	return GK_OK;
}

/* ---- heads <-> rows ------------------------------------------------------------------- */
template <typename T>
__global__ void k_permute(T *heads, T *rows, int seq, int NH, int hs, int ld, int off, bool to_heads, size_t total)
{
	GRID_STRIDE(i, total) {
		size_t d = i % hs, t = (i / hs) % seq, h = (i / ((size_t)hs * seq)) % NH, b = i / ((size_t)hs * seq * NH);
		size_t j = (b * seq + t) * ld + off + h * hs + d;
		if (to_heads) heads[i] = rows[j];
		else rows[j] = heads[i];
	}
}

template <typename T>
int tr_permute(struct gk_result *r, cudaStream_t s, T *heads, T *rows, int B, int seq, int NH, int hs, int ld, int off, bool to_heads)
{
	size_t n = (size_t)B * seq * NH * hs;
	k_permute<T><<<tr_blocks(n), TR_BLOCK, 0, s>>>(heads, rows, seq, NH, hs, ld, off, to_heads, n);
	CKL();
	return GK_OK;
}

/* ---- causal softmax: a warp a row --------------------------------------------------------- */
/* A row's columns from q + 1 to the end of q's block of `block` queries are written as zeros
 * (the attention GEMMs read up to there); the columns after that are not written. */
__device__ __forceinline__ int block_end(int q, int block, int seq)
{
	int end = (q / block + 1) * block;
	return end < seq ? end : seq;
}

template <typename T>
__global__ void k_softmax_fwd(T *att, const T *pre, int rows, int seq, int block)
{
	int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
	if (row >= rows) return;
	int q = row % seq, end = block_end(q, block, seq);
	const T *x = pre + (size_t)row * seq;
	T *y = att + (size_t)row * seq;
	float mx = -INFINITY;
	for (int c = lane; c <= q; c += 32) mx = fmaxf(mx, tr_f(x[c]));
	mx = warp_max(mx);
	float sum = 0;
	for (int c = lane; c <= q; c += 32) sum += expf(tr_f(x[c]) - mx);
	float inv = 1.0f / warp_sum(sum);
	for (int c = lane; c < end; c += 32) y[c] = tr_to<T>(c <= q ? expf(tr_f(x[c]) - mx) * inv : 0.0f);
}

template <typename T>
__global__ void k_softmax_bwd(T *dpre, const T *datt, const T *att, float scale, int rows, int seq, int block)
{
	int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
	if (row >= rows) return;
	int q = row % seq, end = block_end(q, block, seq);
	const T *a = att + (size_t)row * seq, *da = datt + (size_t)row * seq;
	T *dp = dpre + (size_t)row * seq;
	float dot = 0;
	for (int c = lane; c <= q; c += 32) dot += tr_f(a[c]) * tr_f(da[c]);
	dot = warp_sum(dot);
	for (int c = lane; c < end; c += 32) dp[c] = tr_to<T>(c <= q ? scale * tr_f(a[c]) * (tr_f(da[c]) - dot) : 0.0f);
}

template <typename T>
int tr_softmax_fwd(struct gk_result *r, cudaStream_t s, T *att, const T *pre, int rows, int seq, int block)
{
	k_softmax_fwd<T><<<(rows + 7) / 8, 256, 0, s>>>(att, pre, rows, seq, block);
	CKL();
	return GK_OK;
}

template <typename T>
int tr_softmax_bwd(struct gk_result *r, cudaStream_t s, T *dpre, const T *datt, const T *att, float scale, int rows, int seq,
		   int block)
{
	k_softmax_bwd<T><<<(rows + 7) / 8, 256, 0, s>>>(dpre, datt, att, scale, rows, seq, block);
	CKL();
	return GK_OK;
}

/* ---- GELU, tanh form (GPT-2) ---------------------------------------------------------------- */
#define GELU_K 0.7978845608028654f /* sqrt(2 / pi) */
template <typename T>
__global__ void k_gelu_fwd(T *out, const T *inp, size_t n)
{
	GRID_STRIDE(i, n) {
		float x = tr_f(inp[i]);
		out[i] = tr_to<T>(0.5f * x * (1.0f + tanhf(GELU_K * (x + 0.044715f * x * x * x))));
	}
}

template <typename T>
__global__ void k_gelu_bwd(T *dinp, const T *inp, const T *dout, size_t n)
{
	GRID_STRIDE(i, n) {
		float x = tr_f(inp[i]), th = tanhf(GELU_K * (x + 0.044715f * x * x * x));
		float d = 0.5f * (1.0f + th) + 0.5f * x * (1.0f - th * th) * GELU_K * (1.0f + 3.0f * 0.044715f * x * x);
		dinp[i] = tr_to<T>(d * tr_f(dout[i]));
	}
}

template <typename T>
int tr_gelu_fwd(struct gk_result *r, cudaStream_t s, T *out, const T *inp, size_t n)
{
	k_gelu_fwd<T><<<tr_blocks(n), TR_BLOCK, 0, s>>>(out, inp, n);
	CKL();
	return GK_OK;
}

template <typename T>
int tr_gelu_bwd(struct gk_result *r, cudaStream_t s, T *dinp, const T *inp, const T *dout, size_t n)
{
	k_gelu_bwd<T><<<tr_blocks(n), TR_BLOCK, 0, s>>>(dinp, inp, dout, n);
	CKL();
	return GK_OK;
}

/* ---- cross-entropy with its gradient, a block a row ------------------------------------------ */
__device__ float block_reduce(float v, bool is_max, float *sh)
{
	int lane = threadIdx.x % 32, wid = threadIdx.x / 32, nw = blockDim.x / 32;
	v = is_max ? warp_max(v) : warp_sum(v);
	__syncthreads();
	if (lane == 0) sh[wid] = v;
	__syncthreads();
	v = lane < nw ? sh[lane] : (is_max ? -INFINITY : 0.0f);
	return is_max ? warp_max(v) : warp_sum(v);
}

template <typename T>
__global__ void k_crossentropy(T *logits, float *loss, const int *targets, int V, int Vp, float dloss)
{
	__shared__ float sh[32];
	T *x = logits + (size_t)blockIdx.x * Vp;
	int tgt = targets[blockIdx.x];
	float mx = -INFINITY;
	for (int i = threadIdx.x; i < V; i += blockDim.x) mx = fmaxf(mx, tr_f(x[i]));
	mx = block_reduce(mx, true, sh);
	float sum = 0;
	for (int i = threadIdx.x; i < V; i += blockDim.x) sum += expf(tr_f(x[i]) - mx);
	sum = block_reduce(sum, false, sh);
	float xt = tr_f(x[tgt]);
	__syncthreads(); /* everyone has read x[tgt] before it is overwritten */
	float inv = 1.0f / sum;
	for (int i = threadIdx.x; i < Vp; i += blockDim.x) {
		float g = i < V ? expf(tr_f(x[i]) - mx) * inv - (i == tgt ? 1.0f : 0.0f) : 0.0f;
		x[i] = tr_to<T>(g * dloss);
	}
	if (threadIdx.x == 0) atomicAdd(loss, dloss * (logf(sum) + mx - xt));
}

template <typename T>
int tr_crossentropy(struct gk_result *r, cudaStream_t s, T *logits, float *loss, const int *targets, int N, int V, int Vp, float dloss)
{
	k_crossentropy<T><<<N, 1024, 0, s>>>(logits, loss, targets, V, Vp, dloss);
	CKL();
	return GK_OK;
}

/* ---- bias gradient: 32 columns x 8 row lanes a block, a slice of the rows each ------------------ */
template <typename T>
__global__ void k_bias_bwd(float *dbias, const T *dout, int N, int OC, int rows_per_block)
{
	__shared__ float part[8][33];
	int col = blockIdx.x * 32 + threadIdx.x;
	int r0 = blockIdx.y * rows_per_block, r1 = min(N, r0 + rows_per_block);
	float acc = 0;
	if (col < OC)
		for (int n = r0 + threadIdx.y; n < r1; n += 8) acc += tr_f(dout[(size_t)n * OC + col]);
	part[threadIdx.y][threadIdx.x] = acc;
	__syncthreads();
	if (threadIdx.y == 0 && col < OC) {
		for (int j = 1; j < 8; j++) acc += part[j][threadIdx.x];
		atomicAdd(&dbias[col], acc);
	}
}

template <typename T>
int tr_bias_bwd(struct gk_result *r, cudaStream_t s, float *dbias, const T *dout, int N, int OC)
{
	int slices = N < 64 ? 1 : 64, per = (N + slices - 1) / slices;
	dim3 grid((OC + 31) / 32, slices), block(32, 8);
	k_bias_bwd<T><<<grid, block, 0, s>>>(dbias, dout, N, OC, per);
	CKL();
	return GK_OK;
}

/* ---- AdamW --------------------------------------------------------------------------------------- */
template <typename T>
__global__ void k_adamw(float *p, T *copy, const float *g, float *m, float *v, struct tr_adam_set set, float lr, float b1, float b2,
			float eps, float wd_all, float c1, float c2)
{
	int t = 0;
	GRID_STRIDE(i, set.end[set.n - 1]) {
		while (i >= set.end[t]) t++; /* i only grows: the search goes on from the last tensor */
		float wd = set.decay >> t & 1 ? wd_all : 0.0f;
		float gi = g[i], mi = b1 * m[i] + (1.0f - b1) * gi, vi = b2 * v[i] + (1.0f - b2) * gi * gi;
		m[i] = mi;
		v[i] = vi;
		float pi = p[i] - lr * ((mi / c1) / (sqrtf(vi / c2) + eps) + wd * p[i]);
		p[i] = pi;
		if (copy) copy[i] = tr_to<T>(pi);
	}
}

template <typename T>
int tr_adamw(struct gk_result *r, cudaStream_t s, float *p, T *copy, const float *g, float *m, float *v, const struct tr_adam_set *set,
	     float lr, float beta1, float beta2, float eps, float wd, int step)
{
	if (set->n < 1 || set->n > TR_ADAM_TENSORS) return gk_fail(r, GK_EARG, "adamw: %d tensors (1..%d)", set->n, TR_ADAM_TENSORS);
	float c1 = 1.0f - powf(beta1, (float)step), c2 = 1.0f - powf(beta2, (float)step);
	k_adamw<T><<<tr_blocks(set->end[set->n - 1]), TR_BLOCK, 0, s>>>(p, copy, g, m, v, *set, lr, beta1, beta2, eps, wd, c1, c2);
	CKL();
	return GK_OK;
}

template <typename T>
__global__ void k_cast(T *dst, const float *src, size_t n)
{
	GRID_STRIDE(i, n) dst[i] = tr_to<T>(src[i]);
}

template <typename T>
int tr_cast(struct gk_result *r, cudaStream_t s, T *dst, const float *src, size_t n)
{
	k_cast<T><<<tr_blocks(n), TR_BLOCK, 0, s>>>(dst, src, n);
	CKL();
	return GK_OK;
}

__global__ void k_checksum(const float *p, size_t n, unsigned long long *sum)
{
	unsigned long long acc = 0;
	GRID_STRIDE(i, n) acc += __float_as_uint(p[i]);
	atomicAdd(sum, acc);
}

int tr_checksum(struct gk_result *r, cudaStream_t s, const float *p, size_t n, unsigned long long *sum)
{
	CK(cudaMemsetAsync(sum, 0, sizeof *sum, s));
	k_checksum<<<tr_blocks(n), TR_BLOCK, 0, s>>>(p, n, sum);
	CKL();
	return GK_OK;
}

/* ---- initial weights and tokens ---------------------------------------------------------------- */
__global__ void k_init(float *p, size_t n, uint64_t seed, float std, float value)
{
	GRID_STRIDE(i, n) {
		if (std == 0) { p[i] = value; continue; }
		/* Box-Muller on two hashed uniforms in (0, 1] */
		float u1 = ((gk_hash32(seed * 0x9e3779b97f4a7c15ULL + 2 * i) >> 8) + 1) * (1.0f / 16777216.0f);
		float u2 = (gk_hash32(seed * 0x9e3779b97f4a7c15ULL + 2 * i + 1) >> 8) * (1.0f / 16777216.0f);
		p[i] = std * sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
	}
}

int tr_init(struct gk_result *r, cudaStream_t s, float *p, size_t n, uint64_t seed, float std, float value)
{
	k_init<<<tr_blocks(n), TR_BLOCK, 0, s>>>(p, n, seed, std, value);
	CKL();
	return GK_OK;
}

__global__ void k_tokens(int *inp, int *tgt, int seq, int V, uint64_t seed, size_t n)
{
	GRID_STRIDE(i, n) {
		size_t b = i / seq, t = i % seq, j = b * (seq + 1) + t; /* position in the rows of seq + 1 */
		inp[i] = (int)(gk_hash32(seed * 0x9e3779b97f4a7c15ULL + j) % (uint32_t)V);
		tgt[i] = (int)(gk_hash32(seed * 0x9e3779b97f4a7c15ULL + j + 1) % (uint32_t)V);
	}
}

int tr_tokens(struct gk_result *r, cudaStream_t s, int *inp, int *tgt, int nseq, int seq, int V, uint64_t seed)
{
	size_t n = (size_t)nseq * seq;
	k_tokens<<<tr_blocks(n), TR_BLOCK, 0, s>>>(inp, tgt, seq, V, seed, n);
	CKL();
	return GK_OK;
}

/* ---- the two element types --------------------------------------------------------------------- */
#define TR_INSTANTIATE(T) \
	template int tr_encoder_fwd<T>(struct gk_result *, cudaStream_t, T *, const int *, const T *, const T *, int, int, int); \
	template int tr_encoder_bwd<T>(struct gk_result *, cudaStream_t, float *, float *, const T *, const int *, int, int, int); \
	template int tr_layernorm_fwd<T>(struct gk_result *, cudaStream_t, T *, float *, float *, const T *, const T *, const T *, int, int); \
	template int tr_layernorm_bwd<T>(struct gk_result *, cudaStream_t, T *, float *, float *, const T *, const T *, const T *, \
					 const float *, const float *, int, int); \
	template int tr_permute<T>(struct gk_result *, cudaStream_t, T *, T *, int, int, int, int, int, int, bool); \
	template int tr_softmax_fwd<T>(struct gk_result *, cudaStream_t, T *, const T *, int, int, int); \
	template int tr_softmax_bwd<T>(struct gk_result *, cudaStream_t, T *, const T *, const T *, float, int, int, int); \
	template int tr_gelu_fwd<T>(struct gk_result *, cudaStream_t, T *, const T *, size_t); \
	template int tr_gelu_bwd<T>(struct gk_result *, cudaStream_t, T *, const T *, const T *, size_t); \
	template int tr_crossentropy<T>(struct gk_result *, cudaStream_t, T *, float *, const int *, int, int, int, float); \
	template int tr_bias_bwd<T>(struct gk_result *, cudaStream_t, float *, const T *, int, int); \
	template int tr_adamw<T>(struct gk_result *, cudaStream_t, float *, T *, const float *, float *, float *, \
				 const struct tr_adam_set *, float, float, float, float, float, int); \
	template int tr_cast<T>(struct gk_result *, cudaStream_t, T *, const float *, size_t);
TR_INSTANTIATE(float)
TR_INSTANTIATE(bf16)
