/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gk_train.cuh - the GPT-2 training step's pieces (gk_train*.cu): the element
 * type helpers, the kernels' launchers (gk_train_ops.cu) and the GEMMs through
 * cuBLASLt (gk_train_blas.cu). Activations are T = float (FP32 and TF32 runs)
 * or bf16 (mixed precision); parameter gradients, LayerNorm statistics, the
 * loss and AdamW's state are always float.
 */
#ifndef GK_TRAIN_CUH
#define GK_TRAIN_CUH

#include <cuda_bf16.h>

#include "gk_common.cuh"

typedef __nv_bfloat16 bf16;

__device__ __forceinline__ float tr_f(float x) { return x; }
__device__ __forceinline__ float tr_f(bf16 x) { return __bfloat162float(x); }
template <typename T> __device__ __forceinline__ T tr_to(float x);
template <> __device__ __forceinline__ float tr_to<float>(float x) { return x; }
template <> __device__ __forceinline__ bf16 tr_to<bf16>(float x) { return __float2bfloat16_rn(x); }

/* ---- kernels (gk_train_ops.cu); every launcher returns GK_OK or fails r ---- */
/* out[n, c] = wte[inp[n], c] + wpe[n % seq, c] */
template <typename T> int tr_encoder_fwd(struct gk_result *r, cudaStream_t s, T *out, const int *inp, const T *wte,
					 const T *wpe, int N, int seq, int C);
/* dwte[inp[n]] += dout[n]; dwpe[n % seq] += dout[n] */
template <typename T> int tr_encoder_bwd(struct gk_result *r, cudaStream_t s, float *dwte, float *dwpe, const T *dout,
					 const int *inp, int N, int seq, int C);
template <typename T> int tr_layernorm_fwd(struct gk_result *r, cudaStream_t s, T *out, float *mean, float *rstd,
					   const T *inp, const T *w, const T *b, int N, int C);
/* dinp += d(LN)/d(inp) dout; dw += ..., db += ... */
template <typename T> int tr_layernorm_bwd(struct gk_result *r, cudaStream_t s, T *dinp, float *dw, float *db, const T *dout,
					   const T *inp, const T *w, const float *mean, const float *rstd, int N, int C);
/* Between [B][seq][ld] rows (columns off + h hs + d) and [B][NH][seq][hs]:
 * to_heads true: heads = rows; false: rows = heads. */
template <typename T> int tr_permute(struct gk_result *r, cudaStream_t s, T *heads, T *rows, int B, int seq, int NH, int hs,
				     int ld, int off, bool to_heads);
/* att = causal softmax of pre, rows of seq (row i of a head is query i % seq); a row is
 * written up to the end of its query's block of `block` queries (zeros after the query),
 * not beyond: the attention GEMMs skip the blocks above the diagonal. block = seq: whole rows */
template <typename T> int tr_softmax_fwd(struct gk_result *r, cudaStream_t s, T *att, const T *pre, int rows, int seq,
					 int block);
/* dpre = scale * att * (datt - sum(att datt)), written as att is; dpre may be datt */
template <typename T> int tr_softmax_bwd(struct gk_result *r, cudaStream_t s, T *dpre, const T *datt, const T *att,
					 float scale, int rows, int seq, int block);
template <typename T> int tr_gelu_fwd(struct gk_result *r, cudaStream_t s, T *out, const T *inp, size_t n);
/* dinp = gelu'(inp) dout; dinp may be dout */
template <typename T> int tr_gelu_bwd(struct gk_result *r, cudaStream_t s, T *dinp, const T *inp, const T *dout, size_t n);
/* Cross-entropy of each row against its target; logits become their gradient
 * (softmax - one-hot) * dloss (0 in the padding columns); *loss += dloss * sum of row losses. */
template <typename T> int tr_crossentropy(struct gk_result *r, cudaStream_t s, T *logits, float *loss, const int *targets,
					  int N, int V, int Vp, float dloss);
/* dbias[oc] += sum over rows of dout[n, oc] */
template <typename T> int tr_bias_bwd(struct gk_result *r, cudaStream_t s, float *dbias, const T *dout, int N, int OC);
/* Multi-tensor AdamW in one launch (bias-corrected, decoupled decay) over tensors laid end to
 * end in p, g, m, v: tensor t is [end[t - 1], end[t]), decayed by wd when bit t of decay is set;
 * copy, if not NULL, gets the new weights as T */
#define TR_ADAM_TENSORS 32
struct tr_adam_set { int n; unsigned decay; size_t end[TR_ADAM_TENSORS]; };
template <typename T> int tr_adamw(struct gk_result *r, cudaStream_t s, float *p, T *copy, const float *g, float *m, float *v,
				   const struct tr_adam_set *set, float lr, float beta1, float beta2, float eps, float wd, int step);
template <typename T> int tr_cast(struct gk_result *r, cudaStream_t s, T *dst, const float *src, size_t n);
/* *sum = the sum of the n floats' bit patterns (as unsigned 32-bit words): equal replicas give equal sums */
int tr_checksum(struct gk_result *r, cudaStream_t s, const float *p, size_t n, unsigned long long *sum);
/* p[i] = N(0, std) (std 0: value) from seed */
int tr_init(struct gk_result *r, cudaStream_t s, float *p, size_t n, uint64_t seed, float std, float value);
/* inp / tgt [nseq * seq] from nseq rows of seq + 1 uniform tokens in [0, V) */
int tr_tokens(struct gk_result *r, cudaStream_t s, int *inp, int *tgt, int nseq, int seq, int V, uint64_t seed);

/* ---- fused causal attention, bf16 (gk_train_attn.cu): heads of at most TR_FLASH_MAX_HS ---- */
#define TR_FLASH_MAX_HS 128
/* out [B][S][C] = causal softmax(Q K^T / sqrt(hs)) V per head, Q, K, V read from qkv [B][S][3C];
 * lse [B * NH][S] = each query's log-sum-exp (base 2, of the scores times log2(e) / sqrt(hs)) */
int tr_flash_fwd(struct gk_result *r, cudaStream_t s, bf16 *out, float *lse, const bf16 *qkv, int B, int S, int NH, int hs);
/* dqkv [B][S][3C] (every element written) from dout and the forward's out, lse and qkv;
 * dsum [B * NH][S] is scratch */
int tr_flash_bwd(struct gk_result *r, cudaStream_t s, bf16 *dqkv, float *dsum, const bf16 *dout, const bf16 *out, const float *lse,
		 const bf16 *qkv, int B, int S, int NH, int hs);

/* ---- GEMMs (gk_train_blas.cu): column-major D = alpha op(A) op(B) [+ C] [+ bias] ---- */
struct tr_blas;
int tr_blas_open(struct gk_result *r, struct gk_track *t, struct tr_blas **out, bool tf32);
void tr_blas_close(struct tr_blas *b);
enum { TR_EPI_NONE, TR_EPI_GELU, TR_EPI_DGELU };
struct tr_mm {
	bool ta, tb;
	int m, n, k;
	const void *A; int lda; long long sa;
	const void *B; int ldb; long long sb;
	void *D; int ldd; long long sd;
	const void *C;      /* NULL: beta 0; else beta 1, C laid out as D (C may be D) */
	const void *bias;   /* NULL or m values of D's type, added to every column */
	int batch;          /* 0/1: one; else strided batches sa, sb, sd */
	float alpha;        /* 0 means 1 */
	bool ab_bf16;       /* A and B bf16 (else float) */
	int epi;            /* TR_EPI_*: GELU (with bias; aux gets the input) or its gradient (aux: the input) */
	const void *aux;    /* laid out as D */
	bool d_bf16;        /* C and D bf16 (else float) */
};
int tr_matmul(struct gk_result *r, struct tr_blas *b, cudaStream_t s, const struct tr_mm *p);

#endif
