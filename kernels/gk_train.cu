/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gk_train.cu - the `train` entry: a GPT-2 training step (forward, backward,
 * AdamW) from the module's own kernels (gk_train_ops.cu) and cuBLASLt GEMMs
 * (gk_train_blas.cu). Layout and order follow llm.c's train_gpt2.cu:
 * activations row-major [batch * seq][channels], weights [out][in], so
 * y = x W^T + b is one column-major GEMM with A = W transposed.
 *
 * Attention in bf16 with GK_TRAIN_ATTN=flash is fused (gk_train_attn.cu,
 * flash-style: only each query's log-sum-exp is kept). The plain path (the
 * default): per layer the [B][NH][seq][seq] softmax
 * output is kept for the backward pass; scores and their gradient use one
 * scratch buffer. Its GEMMs and softmax skip the query-by-key blocks above
 * the causal diagonal (attention_fwd). The residual stream's gradient is one buffer that every
 * LayerNorm backward adds into. Parameter gradients accumulate in FP32 over
 * the micro-batches (the weight-gradient GEMMs write FP32 with beta 1).
 *
 * Data parallel (ndevs > 1): one thread and one replica per GPU, the same
 * initial weights, each its own batch. In the last micro-batch's backward
 * each layer's gradients (its 12 slices) are averaged by one grouped NCCL
 * all-reduce on a second stream as soon as that layer is done, while the
 * layers below it run their backward; the embeddings and the final
 * LayerNorm go last. AdamW waits for the all-reduces.
 */
#include "gk_entries.cuh"
#include "gk_nccl.cuh"
#include "gk_train.cuh"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { P_WTE, P_WPE, P_LN1W, P_LN1B, P_QKVW, P_QKVB, P_ATTPW, P_ATTPB, P_LN2W, P_LN2B, P_FCW, P_FCB, P_FCPW, P_FCPB, P_LNFW, P_LNFB };
/* weight decay applies to the 2-D weights only */
static const bool decays[GK_TRAIN_NTENSORS] = { 1, 1, 0, 0, 1, 0, 1, 0, 0, 0, 1, 0, 1, 0, 0, 0 };

static size_t align_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

/*
 * GK_TRAIN_PROFILE=1: one more step after the timed ones with a CUDA event between
 * every two ops; the time of each op (summed over the layers) goes to stderr as a table.
 */
#define PROF_MAX 4096
struct tr_prof {
	bool on;
	int n;
	cudaEvent_t ev[PROF_MAX];
	const char *name[PROF_MAX]; /* op name[i] runs from ev[i] to ev[i + 1] */
};

template <typename T> struct tr_model {
	struct gk_train_cfg m;
	int B, S, GA, N, C, L, NH, hs, Vp;
	size_t sz[GK_TRAIN_NTENSORS], off[GK_TRAIN_NTENSORS], nalloc; /* device tensors start 64 elements apart */
	float *master, *grad, *adam_m, *adam_v;
	T *w;                        /* the weights the forward pass reads (master itself when T is float) */
	int *inp, *tgt;              /* [GA][N] */
	float *loss;                 /* one per step */
	T *res, *ln1, *qkv, *atty, *res2, *ln2, *fch, *gelu, *att, *lnf, *logits;
	float *ln1_mean, *ln1_rstd, *ln2_mean, *ln2_rstd, *lnf_mean, *lnf_rstd;
	T *q, *k, *v, *y, *pre, *dres, *dbig, *dsmall, *dqkv;
	bool flash;                  /* fused attention (gk_train_attn.cu): no att, pre, q, k, v, y */
	float *lse, *dsum;           /* flash: [L][B * NH][S] log-sum-exps, [B * NH][S] scratch */
	int cls_rows;                /* the classifier's chunk of rows (logits holds that many) */
	bool epi;                    /* GK_TRAIN_EPILOGUE=1: GELU and its gradient in the GEMMs' epilogues */
	struct tr_blas *blas;
	cudaStream_t s;
	size_t model_bytes;
	/* data parallel */
	int rank, ndevs;
	ncclComm_t comm;
	const struct gk_nccl_api *nccl;
	cudaStream_t comm_s;         /* the all-reduces */
	cudaEvent_t grads_ready, reduced;
	unsigned long long *checksum; /* device word */
	unsigned long long sum_out;   /* its value after the run */
	struct tr_prof *prof;         /* NULL unless GK_TRAIN_PROFILE is set */
};

/* The op `name` starts here (the one before it ends). */
template <typename T> static void prof(tr_model<T> *M, const char *name)
{
	struct tr_prof *p = M->prof;
	if (!p || !p->on || p->n >= PROF_MAX) return;
	cudaEventRecord(p->ev[p->n], M->s);
	p->name[p->n++] = name;
}

template <typename T> static T *wt(tr_model<T> *M, int i) { return M->w + M->off[i]; }
template <typename T> static float *gr(tr_model<T> *M, int i) { return M->grad + M->off[i]; }
template <typename T> static constexpr bool is_bf16() { return sizeof(T) == 2; }

/* Bump allocation in one cudaMalloc: 256-byte aligned pieces. */
struct arena { char *base; size_t used, size; };
template <typename P> static P *take(struct arena *a, size_t count)
{
	size_t at = align_up(a->used, 256);
	a->used = at + count * sizeof(P);
	return a->base ? (P *)(a->base + at) : NULL;
}

template <typename T> static void carve(tr_model<T> *M, struct arena *a, int nsteps)
{
	size_t N = M->N, C = M->C, L = M->L, BH = (size_t)M->B * M->NH, S = M->S;
	M->master = take<float>(a, M->nalloc);
	M->grad = take<float>(a, M->nalloc);
	M->adam_m = take<float>(a, M->nalloc);
	M->adam_v = take<float>(a, M->nalloc);
	M->w = is_bf16<T>() ? take<T>(a, M->nalloc) : (T *)M->master;
	M->inp = take<int>(a, N * M->GA);
	M->tgt = take<int>(a, N * M->GA);
	M->loss = take<float>(a, nsteps);
	M->checksum = take<unsigned long long>(a, 1);
	M->res = take<T>(a, (L + 1) * N * C);
	M->ln1 = take<T>(a, L * N * C);
	M->qkv = take<T>(a, L * N * 3 * C);
	M->atty = take<T>(a, L * N * C);
	M->res2 = take<T>(a, L * N * C);
	M->ln2 = take<T>(a, L * N * C);
	M->fch = take<T>(a, L * N * 4 * C);
	M->gelu = take<T>(a, L * N * 4 * C);
	size_t sq = M->flash ? 0 : S * S; /* flash attention keeps no scores */
	M->att = take<T>(a, L * BH * sq);
	M->lnf = take<T>(a, N * C);
	M->logits = take<T>(a, (size_t)M->cls_rows * M->Vp);
	M->ln1_mean = take<float>(a, L * N);
	M->ln1_rstd = take<float>(a, L * N);
	M->ln2_mean = take<float>(a, L * N);
	M->ln2_rstd = take<float>(a, L * N);
	M->lnf_mean = take<float>(a, N);
	M->lnf_rstd = take<float>(a, N);
	size_t nh = M->flash ? 0 : N * C;
	M->q = take<T>(a, nh);
	M->k = take<T>(a, nh);
	M->v = take<T>(a, nh);
	M->y = take<T>(a, nh);
	M->pre = take<T>(a, BH * sq);
	M->lse = take<float>(a, M->flash ? L * BH * S : 0);
	M->dsum = take<float>(a, M->flash ? BH * S : 0);
	M->dres = take<T>(a, N * C);
	M->dbig = take<T>(a, N * 4 * C);
	M->dsmall = take<T>(a, N * C);
	M->dqkv = take<T>(a, N * 3 * C);
}

/* y[n][OC] = x[n][IC] W[OC][IC]^T (+ bias) (+ add); n = 0: N rows; epi TR_EPI_GELU: y = GELU of
 * that, aux = that */
template <typename T>
static int fwd_linear(struct gk_result *r, tr_model<T> *M, T *y, const T *x, const T *W, const T *bias, const T *add, int IC, int OC,
		      int n = 0, int epi = TR_EPI_NONE, T *aux = NULL)
{
	struct tr_mm p = {};
	p.epi = epi; p.aux = aux;
	p.ta = true; p.m = OC; p.n = n ? n : M->N; p.k = IC;
	p.A = W; p.lda = IC; p.B = x; p.ldb = IC; p.D = y; p.ldd = OC; p.C = add; p.bias = bias;
	p.ab_bf16 = p.d_bf16 = is_bf16<T>();
	return tr_matmul(r, M->blas, M->s, &p);
}

/* dx[n][IC] = dy[n][OC] W[OC][IC] (epi TR_EPI_DGELU: times GELU'(aux)); dW[OC][IC] += dy^T x (FP32);
 * n = 0: N rows */
template <typename T>
static int bwd_linear(struct gk_result *r, tr_model<T> *M, T *dx, float *dW, const T *dy, const T *x, const T *W, int IC, int OC,
		      int n = 0, int epi = TR_EPI_NONE, const T *aux = NULL)
{
	struct tr_mm p = {};
	p.epi = epi; p.aux = aux;
	p.m = IC; p.n = n ? n : M->N; p.k = OC;
	p.A = W; p.lda = IC; p.B = dy; p.ldb = OC; p.D = dx; p.ldd = IC;
	p.ab_bf16 = p.d_bf16 = is_bf16<T>();
	CKR(tr_matmul(r, M->blas, M->s, &p));
	struct tr_mm g = {};
	g.tb = true; g.m = IC; g.n = OC; g.k = p.n;
	g.A = x; g.lda = IC; g.B = dy; g.ldb = OC; g.D = dW; g.ldd = IC; g.C = dW;
	g.ab_bf16 = is_bf16<T>();
	return tr_matmul(r, M->blas, M->s, &g);
}

/* One batched GEMM over the B * NH heads. */
template <typename T>
static int heads_mm(struct gk_result *r, tr_model<T> *M, bool ta, bool tb, int m, int n, int k, const T *A, int lda, long long sa,
		    const T *Bm, int ldb, long long sb, T *D, int ldd, long long sd, float alpha)
{
	struct tr_mm p = {};
	p.ta = ta; p.tb = tb; p.m = m; p.n = n; p.k = k;
	p.A = A; p.lda = lda; p.sa = sa; p.B = Bm; p.ldb = ldb; p.sb = sb; p.D = D; p.ldd = ldd; p.sd = sd;
	p.batch = M->B * M->NH; p.alpha = alpha;
	p.ab_bf16 = p.d_bf16 = is_bf16<T>();
	return tr_matmul(r, M->blas, M->s, &p);
}

/*
 * Causal attention skips the blocks above the diagonal: the queries go in ATT_BLOCKS
 * blocks, and each block's GEMMs with the keys stop at the block's last query (scores,
 * att V, their gradients); the GEMMs that sum over queries for each key (dV, dK) go by
 * key block and start at the block's first query. 8 blocks do 9/16 of the whole GEMMs'
 * work and the softmax writes 9/16 of the rows' columns. A sequence that 8 does not
 * divide runs as one block (whole rows).
 */
#define ATT_BLOCKS 8
static int att_block(int S) { return S % ATT_BLOCKS == 0 ? S / ATT_BLOCKS : S; }

/* layer l's attention (flash: its log-sum-exps are lse + l B NH S; else att holds its softmax) */
template <typename T> static int attention_fwd(struct gk_result *r, tr_model<T> *M, T *atty, T *att, T *qkv, size_t l)
{
	int B = M->B, S = M->S, NH = M->NH, hs = M->hs, C = M->C, Sb = att_block(S);
	if (M->flash)
		return tr_flash_fwd(r, M->s, (bf16 *)atty, M->lse + l * B * NH * S, (const bf16 *)qkv, B, S, NH, hs);
	long long sh = (long long)S * hs, ss = (long long)S * S;
	CKR(tr_permute<T>(r, M->s, M->q, qkv, B, S, NH, hs, 3 * C, 0, true));
	CKR(tr_permute<T>(r, M->s, M->k, qkv, B, S, NH, hs, 3 * C, C, true));
	CKR(tr_permute<T>(r, M->s, M->v, qkv, B, S, NH, hs, 3 * C, 2 * C, true));
	/* pre[q][k] = Q K^T / sqrt(hs): column-major (k x q) = K^T Q, the keys up to the block's last query */
	for (int q0 = 0; q0 < S; q0 += Sb)
		CKR(heads_mm<T>(r, M, true, false, q0 + Sb, Sb, hs, M->k, hs, sh, M->q + (size_t)q0 * hs, hs, sh,
				M->pre + (size_t)q0 * S, S, ss, 1.0f / sqrtf((float)hs)));
	CKR(tr_softmax_fwd<T>(r, M->s, att, M->pre, B * NH * S, S, Sb));
	/* y[q][d] = att V: column-major (d x q) = V (d x k) att (k x q) */
	for (int q0 = 0; q0 < S; q0 += Sb)
		CKR(heads_mm<T>(r, M, false, false, hs, Sb, q0 + Sb, M->v, hs, sh, att + (size_t)q0 * S, S, ss,
				M->y + (size_t)q0 * hs, hs, sh, 1.0f));
	return tr_permute<T>(r, M->s, M->y, atty, B, S, NH, hs, C, 0, false);
}

/* datty -> dqkv, with q, k, v permuted again from qkv */
template <typename T>
static int attention_bwd(struct gk_result *r, tr_model<T> *M, T *dqkv, T *datty, T *qkv, const T *att, const T *atty, size_t l)
{
	int B = M->B, S = M->S, NH = M->NH, hs = M->hs, C = M->C, Sb = att_block(S);
	if (M->flash)
		return tr_flash_bwd(r, M->s, (bf16 *)dqkv, M->dsum, (const bf16 *)datty, (const bf16 *)atty, M->lse + l * B * NH * S,
				    (const bf16 *)qkv, B, S, NH, hs);
	long long sh = (long long)S * hs, ss = (long long)S * S;
	T *dy = M->y, *dq = M->dbig, *dk = M->dbig + (size_t)M->N * C, *dv = M->dbig + 2 * (size_t)M->N * C;
	CKR(tr_permute<T>(r, M->s, M->q, qkv, B, S, NH, hs, 3 * C, 0, true));
	CKR(tr_permute<T>(r, M->s, M->k, qkv, B, S, NH, hs, 3 * C, C, true));
	CKR(tr_permute<T>(r, M->s, M->v, qkv, B, S, NH, hs, 3 * C, 2 * C, true));
	CKR(tr_permute<T>(r, M->s, dy, datty, B, S, NH, hs, C, 0, true));
	for (int b0 = 0; b0 < S; b0 += Sb) {
		/* datt[q][k] = dy V^T: (k x q) = V^T dy, query block b0, keys up to its last query */
		CKR(heads_mm<T>(r, M, true, false, b0 + Sb, Sb, hs, M->v, hs, sh, dy + (size_t)b0 * hs, hs, sh,
				M->pre + (size_t)b0 * S, S, ss, 1.0f));
		/* dV[k][d] = att^T dy: (d x k) = dy (d x q) att^T, key block b0, queries from b0 on */
		CKR(heads_mm<T>(r, M, false, true, hs, Sb, S - b0, dy + (size_t)b0 * hs, hs, sh, att + (size_t)b0 * S + b0, S,
				ss, dv + (size_t)b0 * hs, hs, sh, 1.0f));
	}
	CKR(tr_softmax_bwd<T>(r, M->s, M->pre, M->pre, att, 1.0f / sqrtf((float)hs), B * NH * S, S, Sb));
	for (int b0 = 0; b0 < S; b0 += Sb) {
		/* dQ[q][d] = dpre K: (d x q) = K (d x k) dpre (k x q), query block b0 */
		CKR(heads_mm<T>(r, M, false, false, hs, Sb, b0 + Sb, M->k, hs, sh, M->pre + (size_t)b0 * S, S, ss,
				dq + (size_t)b0 * hs, hs, sh, 1.0f));
		/* dK[k][d] = dpre^T Q: (d x k) = Q (d x q) dpre^T, key block b0, queries from b0 on */
		CKR(heads_mm<T>(r, M, false, true, hs, Sb, S - b0, M->q + (size_t)b0 * hs, hs, sh, M->pre + (size_t)b0 * S + b0,
				S, ss, dk + (size_t)b0 * hs, hs, sh, 1.0f));
	}
	CKR(tr_permute<T>(r, M->s, dq, dqkv, B, S, NH, hs, 3 * C, 0, false));
	CKR(tr_permute<T>(r, M->s, dk, dqkv, B, S, NH, hs, 3 * C, C, false));
	return tr_permute<T>(r, M->s, dv, dqkv, B, S, NH, hs, 3 * C, 2 * C, false);
}

/*
 * Logits, cross-entropy and their gradient. Whole (cls_rows == N): logits [N][Vp] become
 * their gradient for backward's first GEMMs. Chunked (the default): cls_rows rows at a time,
 * the chunk's logits, their gradient, and at once the chunk's share of dlnf (into dsmall)
 * and of wte's gradient, so the [N][Vp] logits are never in memory at once.
 */
template <typename T> static int classifier(struct gk_result *r, tr_model<T> *M, const int *tgt, float *loss)
{
	int CH = M->cls_rows;
	float dloss = 1.0f / ((float)M->N * M->GA);
	for (int r0 = 0; r0 < M->N; r0 += CH) {
		int n = M->N - r0 < CH ? M->N - r0 : CH;
		const T *lnf = M->lnf + (size_t)r0 * M->C;
		prof(M, "logits_fwd");
		CKR(fwd_linear<T>(r, M, M->logits, lnf, wt(M, P_WTE), (const T *)NULL, (const T *)NULL, M->C, M->Vp, n));
		prof(M, "crossentropy");
		CKR(tr_crossentropy<T>(r, M->s, M->logits, loss, tgt + r0, n, M->m.vocab, M->Vp, dloss));
		if (CH == M->N) break; /* backward takes it from here */
		prof(M, "logits_bwd");
		CKR(bwd_linear<T>(r, M, M->dsmall + (size_t)r0 * M->C, gr(M, P_WTE), M->logits, lnf, wt(M, P_WTE), M->C, M->Vp, n));
	}
	return GK_OK;
}

template <typename T> static int forward(struct gk_result *r, tr_model<T> *M, int mb, float *loss)
{
	size_t N = M->N, C = M->C;
	const int *inp = M->inp + mb * N, *tgt = M->tgt + mb * N;
	prof(M, "encoder_fwd");
	CKR(tr_encoder_fwd<T>(r, M->s, M->res, inp, wt(M, P_WTE), wt(M, P_WPE), M->N, M->S, M->C));
	for (size_t l = 0; l < (size_t)M->L; l++) {
		T *res = M->res + l * N * C, *ln1 = M->ln1 + l * N * C, *qkv = M->qkv + l * N * 3 * C, *atty = M->atty + l * N * C;
		T *res2 = M->res2 + l * N * C, *ln2 = M->ln2 + l * N * C, *fch = M->fch + l * N * 4 * C, *gelu = M->gelu + l * N * 4 * C;
		T *att = M->att + l * (size_t)M->B * M->NH * M->S * M->S;
		prof(M, "ln1_fwd");
		CKR(tr_layernorm_fwd<T>(r, M->s, ln1, M->ln1_mean + l * N, M->ln1_rstd + l * N, res, wt(M, P_LN1W) + l * C,
					wt(M, P_LN1B) + l * C, M->N, M->C));
		prof(M, "qkv_fwd");
		CKR(fwd_linear<T>(r, M, qkv, ln1, wt(M, P_QKVW) + l * 3 * C * C, wt(M, P_QKVB) + l * 3 * C, NULL, M->C, 3 * M->C));
		prof(M, "attn_fwd");
		CKR(attention_fwd<T>(r, M, atty, att, qkv, l));
		prof(M, "attproj_fwd");
		CKR(fwd_linear<T>(r, M, res2, atty, wt(M, P_ATTPW) + l * C * C, wt(M, P_ATTPB) + l * C, res, M->C, M->C));
		prof(M, "ln2_fwd");
		CKR(tr_layernorm_fwd<T>(r, M->s, ln2, M->ln2_mean + l * N, M->ln2_rstd + l * N, res2, wt(M, P_LN2W) + l * C,
					wt(M, P_LN2B) + l * C, M->N, M->C));
		prof(M, "fc_fwd");
		if (M->epi) /* GELU in the GEMM's epilogue, its input kept for the backward */
			CKR(fwd_linear<T>(r, M, gelu, ln2, wt(M, P_FCW) + l * 4 * C * C, wt(M, P_FCB) + l * 4 * C, NULL, M->C, 4 * M->C, 0,
					  TR_EPI_GELU, fch));
		else
			CKR(fwd_linear<T>(r, M, fch, ln2, wt(M, P_FCW) + l * 4 * C * C, wt(M, P_FCB) + l * 4 * C, NULL, M->C, 4 * M->C));
		prof(M, "gelu_fwd");
		if (!M->epi) CKR(tr_gelu_fwd<T>(r, M->s, gelu, fch, N * 4 * C));
		prof(M, "fcproj_fwd");
		CKR(fwd_linear<T>(r, M, res + N * C, gelu, wt(M, P_FCPW) + l * C * 4 * C, wt(M, P_FCPB) + l * C, res2, 4 * M->C, M->C));
	}
	prof(M, "lnf_fwd");
	CKR(tr_layernorm_fwd<T>(r, M->s, M->lnf, M->lnf_mean, M->lnf_rstd, M->res + (size_t)M->L * N * C, wt(M, P_LNFW),
				wt(M, P_LNFB), M->N, M->C));
	return classifier<T>(r, M, tgt, loss);
}

#define CKNC(M, call) do { ncclResult_t n_ = (call); if (n_ != ncclSuccess) \
	return gk_fail(r, GK_ECUDA, "gk_train.cu:%d: NCCL: %s", __LINE__, (M)->nccl->errstr(n_)); } while (0)

/* Average the gradients of layer l (l == L: the embeddings and the final
 * LayerNorm) over the replicas, on comm_s once M->s has produced them. */
template <typename T> static int reduce_bucket(struct gk_result *r, tr_model<T> *M, int l)
{
	CK(cudaEventRecord(M->grads_ready, M->s));
	CK(cudaStreamWaitEvent(M->comm_s, M->grads_ready, 0));
	CKNC(M, M->nccl->group_start());
	for (int i = 0; i < GK_TRAIN_NTENSORS; i++) {
		bool per_layer = i >= P_LN1W && i <= P_FCPB;
		if (per_layer == (l == M->L)) continue;
		size_t n = per_layer ? M->sz[i] / M->L : M->sz[i];
		float *g = gr(M, i) + (per_layer ? (size_t)l * n : 0);
		ncclResult_t e = M->nccl->all_reduce(g, g, n, ncclFloat, ncclAvg, M->comm, M->comm_s);
		if (e != ncclSuccess) {
			M->nccl->group_end();
			return gk_fail(r, GK_ECUDA, "gk_train.cu:%d: ncclAllReduce: %s", __LINE__, M->nccl->errstr(e));
		}
	}
	CKNC(M, M->nccl->group_end());
	return GK_OK;
}

/* After forward: the logits hold their gradient (or dsmall holds dlnf: chunked). Adds to M->grad; with
 * reduce, averages it over the replicas bucket by bucket. */
template <typename T> static int backward(struct gk_result *r, tr_model<T> *M, int mb, bool reduce)
{
	size_t N = M->N, C = M->C;
	prof(M, "zero_dres");
	CK(cudaMemsetAsync(M->dres, 0, N * C * sizeof(T), M->s));
	if (M->cls_rows == M->N) { /* else the chunked classifier made dsmall and wte's share */
		prof(M, "logits_bwd");
		CKR(bwd_linear<T>(r, M, M->dsmall, gr(M, P_WTE), M->logits, M->lnf, wt(M, P_WTE), M->C, M->Vp));
	}
	prof(M, "lnf_bwd");
	CKR(tr_layernorm_bwd<T>(r, M->s, M->dres, gr(M, P_LNFW), gr(M, P_LNFB), M->dsmall, M->res + (size_t)M->L * N * C, wt(M, P_LNFW),
				M->lnf_mean, M->lnf_rstd, M->N, M->C));
	for (size_t l = M->L; l-- > 0;) {
		T *res = M->res + l * N * C, *ln1 = M->ln1 + l * N * C, *qkv = M->qkv + l * N * 3 * C, *atty = M->atty + l * N * C;
		T *res2 = M->res2 + l * N * C, *ln2 = M->ln2 + l * N * C, *fch = M->fch + l * N * 4 * C, *gelu = M->gelu + l * N * 4 * C;
		T *att = M->att + l * (size_t)M->B * M->NH * M->S * M->S;
		/* MLP: dres is d(res[l+1]) = d(fcproj out) = d(res2) so far */
		prof(M, "fcproj_bwd");
		CKR(bwd_linear<T>(r, M, M->dbig, gr(M, P_FCPW) + l * C * 4 * C, M->dres, gelu, wt(M, P_FCPW) + l * C * 4 * C, 4 * M->C, M->C,
				  0, M->epi ? TR_EPI_DGELU : TR_EPI_NONE, fch));
		prof(M, "bias_bwd");
		CKR(tr_bias_bwd<T>(r, M->s, gr(M, P_FCPB) + l * C, M->dres, M->N, M->C));
		prof(M, "gelu_bwd");
		if (!M->epi) CKR(tr_gelu_bwd<T>(r, M->s, M->dbig, fch, M->dbig, N * 4 * C));
		prof(M, "fc_bwd");
		CKR(bwd_linear<T>(r, M, M->dsmall, gr(M, P_FCW) + l * 4 * C * C, M->dbig, ln2, wt(M, P_FCW) + l * 4 * C * C, M->C, 4 * M->C));
		prof(M, "bias_bwd");
		CKR(tr_bias_bwd<T>(r, M->s, gr(M, P_FCB) + l * 4 * C, M->dbig, M->N, 4 * M->C));
		prof(M, "ln2_bwd");
		CKR(tr_layernorm_bwd<T>(r, M->s, M->dres, gr(M, P_LN2W) + l * C, gr(M, P_LN2B) + l * C, M->dsmall, res2,
					wt(M, P_LN2W) + l * C, M->ln2_mean + l * N, M->ln2_rstd + l * N, M->N, M->C));
		/* attention: dres is now d(res2) = d(attproj out) */
		prof(M, "attproj_bwd");
		CKR(bwd_linear<T>(r, M, M->dsmall, gr(M, P_ATTPW) + l * C * C, M->dres, atty, wt(M, P_ATTPW) + l * C * C, M->C, M->C));
		prof(M, "bias_bwd");
		CKR(tr_bias_bwd<T>(r, M->s, gr(M, P_ATTPB) + l * C, M->dres, M->N, M->C));
		prof(M, "attn_bwd");
		CKR(attention_bwd<T>(r, M, M->dqkv, M->dsmall, qkv, att, atty, l));
		prof(M, "qkv_bwd");
		CKR(bwd_linear<T>(r, M, M->dsmall, gr(M, P_QKVW) + l * 3 * C * C, M->dqkv, ln1, wt(M, P_QKVW) + l * 3 * C * C, M->C, 3 * M->C));
		prof(M, "bias_bwd");
		CKR(tr_bias_bwd<T>(r, M->s, gr(M, P_QKVB) + l * 3 * C, M->dqkv, M->N, 3 * M->C));
		prof(M, "ln1_bwd");
		CKR(tr_layernorm_bwd<T>(r, M->s, M->dres, gr(M, P_LN1W) + l * C, gr(M, P_LN1B) + l * C, M->dsmall, res,
					wt(M, P_LN1W) + l * C, M->ln1_mean + l * N, M->ln1_rstd + l * N, M->N, M->C));
		if (reduce) CKR(reduce_bucket<T>(r, M, (int)l));
	}
	prof(M, "encoder_bwd");
	CKR(tr_encoder_bwd<T>(r, M->s, gr(M, P_WTE), gr(M, P_WPE), M->dres, M->inp + mb * N, M->N, M->S, M->C));
	if (!reduce) return GK_OK;
	CKR(reduce_bucket<T>(r, M, M->L));
	CK(cudaEventRecord(M->reduced, M->comm_s));
	CK(cudaStreamWaitEvent(M->s, M->reduced, 0)); /* the optimizer (and the next zeroing) after the all-reduces */
	return GK_OK;
}

template <typename T> static int fwd_bwd(struct gk_result *r, tr_model<T> *M, float *loss)
{
	prof(M, "zero_grad");
	CK(cudaMemsetAsync(M->grad, 0, M->nalloc * sizeof(float), M->s));
	for (int mb = 0; mb < M->GA; mb++) {
		CKR(forward<T>(r, M, mb, loss));
		CKR(backward<T>(r, M, mb, M->comm != NULL && mb == M->GA - 1));
	}
	return GK_OK;
}

template <typename T> static int step(struct gk_result *r, tr_model<T> *M, const struct gk_train_args *a, int t)
{
	CKR(fwd_bwd<T>(r, M, M->loss + t));
	prof(M, "adamw");
	/* one launch over the 16 tensors (each with its padding to the next) */
	struct tr_adam_set set = { GK_TRAIN_NTENSORS, 0, {} };
	for (int i = 0; i < GK_TRAIN_NTENSORS; i++) {
		set.end[i] = i + 1 < GK_TRAIN_NTENSORS ? M->off[i + 1] : M->nalloc;
		set.decay |= (unsigned)decays[i] << i;
	}
	return tr_adamw<T>(r, M->s, M->master, is_bf16<T>() ? M->w : (T *)NULL, M->grad, M->adam_m, M->adam_v, &set, a->lr, a->beta1,
			   a->beta2, a->eps, a->weight_decay, t + 1);
}

/* One more step (loss slot `at`) with an event between every two ops, then
 * the table of the ops' times, each summed over the layers, on stderr. */
template <typename T> static int profile_step(struct gk_result *r, tr_model<T> *M, const struct gk_train_args *a, int at)
{
	static struct tr_prof p; /* large: not on the stack; one run at a time profiles */
	memset(&p, 0, sizeof p);
	int made = 0, rc = GK_OK;
	while (made < PROF_MAX && cudaEventCreate(&p.ev[made]) == cudaSuccess) made++; /* not tracked: freed below */
	if (made == PROF_MAX) {
		M->prof = &p;
		p.on = true;
		rc = step<T>(r, M, a, at);
		prof(M, "end");
		p.on = false;
		M->prof = NULL;
		if (rc == GK_OK) rc = gk_wait_stream(r, M->s, a->c.deadline_ns);
	}
	const char *names[64];
	double ms[64] = { 0 }, total = 0;
	int calls[64] = { 0 }, nn = 0;
	for (int i = 0; rc == GK_OK && i + 1 < p.n; i++) {
		float e = 0;
		cudaEventElapsedTime(&e, p.ev[i], p.ev[i + 1]);
		int j = 0;
		while (j < nn && strcmp(names[j], p.name[i]) != 0) j++;
		if (j == nn && nn < 64) names[nn++] = p.name[i];
		if (j < nn) { ms[j] += e; calls[j]++; }
		total += e;
	}
	fprintf(stderr, "profile (GK_TRAIN_PROFILE): one step, %d ops, %.3f ms\n%-14s %6s %10s %6s\n", p.n - 1, total, "op", "calls",
		"ms", "%");
	for (int j = 0; j < nn; j++)
		fprintf(stderr, "%-14s %6d %10.3f %6.1f\n", names[j], calls[j], ms[j], total > 0 ? 100.0 * ms[j] / total : 0.0);
	for (int i = 0; i < made; i++) cudaEventDestroy(p.ev[i]);
	if (made < PROF_MAX && rc == GK_OK) return gk_fail(r, GK_ECUDA, "train: cannot create the profile's %d events", PROF_MAX);
	return rc;
}

/* Parameters from the host (packed) or GPT-2's initialization. */
template <typename T> static int init_params(struct gk_result *r, tr_model<T> *M, const struct gk_train_args *a)
{
	CK(cudaMemsetAsync(M->master, 0, M->nalloc * sizeof(float), M->s));
	size_t at = 0;
	uint64_t seed = gk_seed(&a->c);
	float proj_std = 0.02f / sqrtf(2.0f * M->L);
	for (int i = 0; i < GK_TRAIN_NTENSORS; i++) {
		float *p = M->master + M->off[i];
		if (a->params_in) {
			CK(cudaMemcpyAsync(p, a->params_in + at, M->sz[i] * sizeof(float), cudaMemcpyHostToDevice, M->s));
		} else if (i == P_LN1W || i == P_LN2W || i == P_LNFW) {
			CKR(tr_init(r, M->s, p, M->sz[i], 0, 0, 1.0f));
		} else if (decays[i]) {
			size_t n = i == P_WTE ? (size_t)a->m.vocab * M->C : M->sz[i]; /* padding rows stay 0 */
			CKR(tr_init(r, M->s, p, n, seed + 1000 * i, i == P_ATTPW || i == P_FCPW ? proj_std : 0.02f, 0));
		} /* biases and LayerNorm shifts stay 0 */
		at += M->sz[i];
	}
	CK(cudaMemsetAsync(M->adam_m, 0, 2 * M->nalloc * sizeof(float), M->s)); /* m and v are adjacent */
	if (is_bf16<T>()) CKR(tr_cast<T>(r, M->s, M->w, M->master, M->nalloc));
	return GK_OK;
}

template <typename T> static int load_tokens(struct gk_result *r, tr_model<T> *M, const struct gk_train_args *a)
{
	size_t rows = (size_t)M->GA * M->B, S = M->S;
	if (!a->tokens_in) /* each replica its own batch */
		return tr_tokens(r, M->s, M->inp, M->tgt, (int)rows, M->S, a->m.vocab, gk_seed(&a->c) + 77 + 7919ull * M->rank);
	int *hi = (int *)malloc(rows * S * 2 * sizeof(int));
	if (!hi) return gk_fail(r, GK_ENOMEM, "cannot allocate host tokens");
	int bad = 0;
	for (size_t b = 0; b < rows; b++)
		for (size_t t = 0; t < S; t++) {
			int x = a->tokens_in[b * (S + 1) + t], y = a->tokens_in[b * (S + 1) + t + 1];
			bad += x < 0 || x >= a->m.vocab || y < 0 || y >= a->m.vocab;
			hi[b * S + t] = x;
			hi[rows * S + b * S + t] = y;
		}
	cudaError_t e = bad ? cudaSuccess : cudaMemcpy(M->inp, hi, rows * S * sizeof(int), cudaMemcpyHostToDevice);
	if (e == cudaSuccess && !bad) e = cudaMemcpy(M->tgt, hi + rows * S, rows * S * sizeof(int), cudaMemcpyHostToDevice);
	free(hi);
	if (bad) return gk_fail(r, GK_EARG, "train: %d token ids outside [0, %d)", bad, a->m.vocab);
	CK(e);
	return GK_OK;
}

static int check_args(struct gk_result *r, const struct gk_train_args *a)
{
	const struct gk_train_cfg *m = &a->m;
	if (m->vocab < 2 || m->vocab_pad < m->vocab || m->max_seq < 1 || m->layers < 1 || m->heads < 1 || m->channels < 1 ||
	    m->channels % m->heads || (m->channels / m->heads) % 8 || m->channels % 8 || m->vocab_pad % 8)
		return gk_fail(r, GK_EARG, "train: bad model (vocab %d/%d, seq %d, %d layers, %d heads, %d channels): channels must "
			       "split into heads of a multiple of 8", m->vocab, m->vocab_pad, m->max_seq, m->layers, m->heads, m->channels);
	if (a->batch < 1 || a->seq < 1 || a->seq > m->max_seq || a->seq % 8 || a->grad_accum < 0 || a->grad_accum > 1024)
		return gk_fail(r, GK_EARG, "train: batch %d, seq %d (<= %d, a multiple of 8), grad_accum %d", a->batch, a->seq,
			       m->max_seq, a->grad_accum);
	if (a->prec != GK_FP32 && a->prec != GK_TF32 && a->prec != GK_BF16)
		return gk_fail(r, GK_EARG, "train: precision must be fp32, tf32 or bf16");
	if (!(a->lr >= 0) || !(a->beta1 >= 0 && a->beta1 < 1) || !(a->beta2 >= 0 && a->beta2 < 1) || !(a->eps > 0) || !(a->weight_decay >= 0))
		return gk_fail(r, GK_EARG, "train: bad AdamW settings");
	return GK_OK;
}

/* The classifier's rows a chunk: whole (the plain path) by default, CLS_CHUNK with
 * GK_TRAIN_CLASSIFIER=chunked, or GK_TRAIN_CLASSIFIER=ROWS; whole when N is no larger.
 * Opt-in until a GPU run has checked it against the CPU reference (issue 33). */
#define CLS_CHUNK 2048
static int cls_rows(int N)
{
	const char *e = getenv("GK_TRAIN_CLASSIFIER");
	int ch = !e ? N : atoi(e) > 0 ? atoi(e) : strcmp(e, "chunked") == 0 ? CLS_CHUNK : N;
	return N <= ch ? N : ch;
}

/* Fused attention for bf16 on compute capability 8.0 and up with GK_TRAIN_ATTN=flash (opt-in
 * until a GPU run has checked it against the CPU reference and the plain path, issue 33). */
template <typename T> static bool use_flash(int hs)
{
	const char *e = getenv("GK_TRAIN_ATTN");
	int dev = 0, major = 0;
	if (!is_bf16<T>() || hs > TR_FLASH_MAX_HS || !e || strcmp(e, "flash") != 0) return false;
	if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess)
		return false;
	return major >= 8;
}

template <typename T> static int train_run(const struct gk_train_args *a, struct gk_result *r, struct gk_track *t, tr_model<T> *M)
{
	const struct gk_train_cfg *m = &a->m;
	M->m = *m; M->B = a->batch; M->S = a->seq; M->GA = a->grad_accum ? a->grad_accum : 1;
	M->N = M->B * M->S; M->C = m->channels; M->L = m->layers; M->NH = m->heads; M->hs = M->C / M->NH; M->Vp = m->vocab_pad;
	M->flash = use_flash<T>(M->hs);
	M->cls_rows = cls_rows(M->N);
	M->epi = getenv("GK_TRAIN_EPILOGUE") && strcmp(getenv("GK_TRAIN_EPILOGUE"), "1") == 0;
	size_t nparams = gk_train_param_sizes(m, M->sz);
	M->nalloc = 0;
	for (int i = 0; i < GK_TRAIN_NTENSORS; i++) {
		M->off[i] = M->nalloc;
		M->nalloc += align_up(M->sz[i], 64);
	}
	bool check = a->grads_out != NULL;
	int warm = check ? 0 : gk_warmups(&a->c, 3), iters = check ? 1 : gk_samples(&a->c), nsteps = warm + iters;
	size_t free0 = 0, total = 0, free1 = 0;
	CK(cudaMemGetInfo(&free0, &total));
	struct arena ar = { NULL, 0, 0 };
	carve<T>(M, &ar, nsteps + 1);
	M->model_bytes = ar.used;
	CKR(gk_dmalloc(t, r, (void **)&ar.base, ar.used));
	ar.used = 0;
	carve<T>(M, &ar, nsteps + 1);
	CKR(gk_stream(t, r, &M->s));
	if (M->comm) {
		CKR(gk_stream(t, r, &M->comm_s));
		CK(cudaEventCreateWithFlags(&M->grads_ready, cudaEventDisableTiming));
		CKR(gk_track_adopt(t, r, GK_T_EVENT, (void *)M->grads_ready));
		CK(cudaEventCreateWithFlags(&M->reduced, cudaEventDisableTiming));
		CKR(gk_track_adopt(t, r, GK_T_EVENT, (void *)M->reduced));
	}
	CKR(tr_blas_open(r, t, &M->blas, a->prec == GK_TF32));
	CKR(init_params<T>(r, M, a));
	CKR(load_tokens<T>(r, M, a));
	CK(cudaMemsetAsync(M->loss, 0, (nsteps + 1) * sizeof(float), M->s));
	double tokens = (double)M->N * M->GA * M->ndevs;
	if (check) {
		CKR(fwd_bwd<T>(r, M, M->loss));
		CKR(gk_wait_stream(r, M->s, a->c.deadline_ns));
		size_t at = 0;
		for (int i = 0; i < GK_TRAIN_NTENSORS; i++) {
			CK(cudaMemcpy(a->grads_out + at, gr(M, i), M->sz[i] * sizeof(float), cudaMemcpyDeviceToHost));
			at += M->sz[i];
		}
	} else {
		cudaEvent_t ev[GK_MAX_SAMPLES + 1];
		for (int i = 0; i <= iters; i++) CKR(gk_event(t, r, &ev[i]));
		for (int i = 0; i < nsteps; i++) {
			int k = i - warm; /* timed step k runs between ev[k] and ev[k + 1] */
			if (k == 0) CK(cudaEventRecord(ev[0], M->s));
			CKR(step<T>(r, M, a, i));
			if (k >= 0) CK(cudaEventRecord(ev[k + 1], M->s));
			if (i == 0) CK(cudaMemGetInfo(&free1, &total)); /* cuBLASLt has taken what it takes */
			/* at most two steps queued: the deadline stays checked */
			if (k >= 1) CKR(gk_wait_event(r, ev[k - 1], a->c.deadline_ns));
			else if (k < 0) CKR(gk_wait_stream(r, M->s, a->c.deadline_ns));
		}
		CKR(gk_wait_event(r, ev[iters], a->c.deadline_ns));
		for (int k = 0; k < iters; k++) {
			float ms = 0;
			CK(cudaEventElapsedTime(&ms, ev[k], ev[k + 1]));
			r->samples_ms[r->nsamples++] = ms;
		}
		if (getenv("GK_TRAIN_PROFILE") && M->rank == 0) CKR(profile_step<T>(r, M, a, nsteps)); /* its own loss slot */
	}
	float losses[GK_MAX_SAMPLES + 64];
	int nl = nsteps < (int)(sizeof losses / sizeof *losses) ? nsteps : (int)(sizeof losses / sizeof *losses);
	CK(cudaMemcpy(losses, M->loss, nl * sizeof(float), cudaMemcpyDeviceToHost));
	for (int i = 0; i < nl; i++) {
		if (!isfinite(losses[i])) r->verify.nans++;
		if (a->losses_out) a->losses_out[i] = losses[i];
	}
	r->verify.checked = nl;
	double counted = nparams - (double)(m->vocab_pad - m->vocab) * m->channels;
	r->flops = (6.0 * counted + 12.0 * m->layers * m->channels * (double)a->seq) * tokens;
	if (free1 == 0) CK(cudaMemGetInfo(&free1, &total));
	gk_aux(r, "mem_gib", ((double)free0 - (double)free1) / (1u << 30), "GiB");
	gk_aux(r, "model_gib", (double)M->model_bytes / (1u << 30), "GiB");
	gk_aux(r, "tokens", tokens, "count");
	gk_aux(r, "params", counted, "count");
	if (M->comm) {
		CKR(tr_checksum(r, M->s, M->master, M->nalloc, M->checksum));
		CK(cudaMemcpyAsync(&M->sum_out, M->checksum, sizeof M->sum_out, cudaMemcpyDeviceToHost, M->s));
		CKR(gk_wait_stream(r, M->s, a->c.deadline_ns));
	}
	return GK_OK;
}

/* One replica's run (rank 0 of 1 without data parallelism). */
struct tr_replica {
	const struct gk_train_args *a;
	int rank, ndevs, device;
	ncclComm_t comm;
	const struct gk_nccl_api *nccl;
	struct gk_result *r;
	struct gk_track *t;
	unsigned long long sum;
	int rc;
};

template <typename T> static int train_typed(struct tr_replica *p)
{
	struct gk_result *r = p->r;
	CKR(gk_set_device(r, p->device));
	tr_model<T> *M = (tr_model<T> *)calloc(1, sizeof(tr_model<T>));
	if (!M) return gk_fail(r, GK_ENOMEM, "cannot allocate the model's bookkeeping");
	M->rank = p->rank;
	M->ndevs = p->ndevs;
	M->comm = p->comm;
	M->nccl = p->nccl;
	int rc = train_run<T>(p->a, r, p->t, M);
	if (M->s) cudaStreamSynchronize(M->s); /* nothing in flight when the tracker frees */
	if (M->comm_s) cudaStreamSynchronize(M->comm_s);
	p->sum = M->sum_out;
	tr_blas_close(M->blas);
	free(M);
	return rc;
}

static void *replica_thread(void *arg)
{
	struct tr_replica *p = (struct tr_replica *)arg;
	p->rc = p->a->prec == GK_BF16 ? train_typed<bf16>(p) : train_typed<float>(p);
	return NULL;
}

/* One thread a GPU, NCCL communicators over them; rank 0's result is the
 * answer, any rank's failure fails it, and the replicas must end equal. */
static int train_parallel(const struct gk_train_args *a, struct gk_result *r)
{
	int n = a->ndevs;
	struct gk_nccl_api nc;
	CKR(gk_nccl_api_get(r, &nc));
	for (int i = 0; i < n; i++)
		for (int j = 0; j < i; j++)
			if (a->devs[i] == a->devs[j]) return gk_fail(r, GK_EARG, "train: GPU %d named twice", a->devs[i]);
	ncclComm_t comms[GK_MAX_DEVS];
	ncclResult_t e = nc.init_all(comms, n, a->devs);
	if (e != ncclSuccess) return gk_fail(r, GK_ECUDA, "ncclCommInitAll over %d GPUs: %s", n, nc.errstr(e));
	static struct gk_result rs[GK_MAX_DEVS]; /* large: not on the stack; calls are not concurrent */
	struct gk_track ts[GK_MAX_DEVS];
	struct tr_replica reps[GK_MAX_DEVS];
	pthread_t th[GK_MAX_DEVS];
	bool started[GK_MAX_DEVS] = {};
	memset(ts, 0, sizeof ts);
	for (int i = 0; i < n; i++) {
		gk_result_init(&rs[i]);
		reps[i] = (struct tr_replica){ a, i, n, a->devs[i], comms[i], &nc, &rs[i], &ts[i], 0, GK_OK };
		started[i] = pthread_create(&th[i], NULL, replica_thread, &reps[i]) == 0;
		if (!started[i]) reps[i].rc = gk_fail(&rs[i], GK_ENOMEM, "cannot start a thread for GPU %d", a->devs[i]);
	}
	int rc = GK_OK, bad = -1;
	for (int i = 0; i < n; i++) {
		if (started[i]) pthread_join(th[i], NULL);
		gk_track_free(&ts[i]);
		if (reps[i].rc != GK_OK && bad < 0) bad = i;
	}
	for (int i = 0; i < n; i++) nc.destroy(comms[i]);
	*r = rs[bad >= 0 ? bad : 0];
	if (bad >= 0) return r->rc = reps[bad].rc;
	uint64_t differ = 0;
	for (int i = 1; i < n; i++) differ += reps[i].sum != reps[0].sum;
	gk_aux(r, "replicas", n, "count");
	if (differ) {
		r->verify.mismatches += differ;
		rc = gk_fail(r, GK_EVERIFY, "train: %llu of %d replicas hold other weights than GPU %d's after the run",
			     (unsigned long long)differ, n - 1, a->devs[0]);
	}
	return rc;
}

static int train_entry(const struct gk_train_args *a, struct gk_result *r, struct gk_track *t)
{
	CKR(check_args(r, a));
	if (a->ndevs < 0 || a->ndevs > GK_MAX_DEVS) return gk_fail(r, GK_EARG, "train: %d GPUs (1..%d)", a->ndevs, GK_MAX_DEVS);
	if (a->ndevs >= 1) {
		if (a->grads_out || a->tokens_in) return gk_fail(r, GK_EARG, "train: the gradient check runs without data parallelism");
		return train_parallel(a, r);
	}
	struct tr_replica p = { a, 0, 1, a->c.device, NULL, NULL, r, t, 0, GK_OK };
	return a->prec == GK_BF16 ? train_typed<bf16>(&p) : train_typed<float>(&p);
}

int gk_train(const struct gk_train_args *a, struct gk_result *r) { GK_ENTRY(r, train_entry(a, r, GK_T)); }
