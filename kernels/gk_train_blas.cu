/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gk_train_blas.cu - the training step's GEMMs through cuBLASLt (dlopen'ed as
 * gk_blas.cu does): one descriptor set and heuristic algorithm per distinct
 * shape, kept in a small cache so a step's ~200 calls pay the heuristic once.
 * FP32 runs use CUBLAS_COMPUTE_32F (TF32 off) or _FAST_TF32; bf16 operands
 * accumulate in FP32 and write bf16 or FP32 (the weight gradients).
 */
#include <cublasLt.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

#include "gk_blas.cuh"
#include "gk_train.cuh"

/* the entry points' types from cublasLt.h; their addresses come from dlsym */
#define LT_FN(name) decltype(&name)

static struct {
	pthread_once_t once;
	bool ok;
	char err[200];
	LT_FN(cublasLtCreate) create;
	LT_FN(cublasLtDestroy) destroy;
	LT_FN(cublasLtMatmulDescCreate) desc_create;
	LT_FN(cublasLtMatmulDescSetAttribute) desc_set;
	LT_FN(cublasLtMatmulDescDestroy) desc_destroy;
	LT_FN(cublasLtMatrixLayoutCreate) layout_create;
	LT_FN(cublasLtMatrixLayoutSetAttribute) layout_set;
	LT_FN(cublasLtMatrixLayoutDestroy) layout_destroy;
	LT_FN(cublasLtMatmulPreferenceCreate) pref_create;
	LT_FN(cublasLtMatmulPreferenceSetAttribute) pref_set;
	LT_FN(cublasLtMatmulPreferenceDestroy) pref_destroy;
	LT_FN(cublasLtMatmulAlgoGetHeuristic) heur;
	LT_FN(cublasLtMatmul) matmul;
} L = { PTHREAD_ONCE_INIT };

#define LSYM(h, dst, name) do { void *p_ = dlsym(h, name); if (!p_) L.ok = false; memcpy(&(dst), &p_, sizeof p_); } while (0)

static void load_lt(void)
{
	void *h = gk_blas_dlopen("libcublasLt", L.err, sizeof L.err);
	if (!h) return;
	L.ok = true;
	LSYM(h, L.create, "cublasLtCreate");
	LSYM(h, L.destroy, "cublasLtDestroy");
	LSYM(h, L.desc_create, "cublasLtMatmulDescCreate");
	LSYM(h, L.desc_set, "cublasLtMatmulDescSetAttribute");
	LSYM(h, L.desc_destroy, "cublasLtMatmulDescDestroy");
	LSYM(h, L.layout_create, "cublasLtMatrixLayoutCreate");
	LSYM(h, L.layout_set, "cublasLtMatrixLayoutSetAttribute");
	LSYM(h, L.layout_destroy, "cublasLtMatrixLayoutDestroy");
	LSYM(h, L.pref_create, "cublasLtMatmulPreferenceCreate");
	LSYM(h, L.pref_set, "cublasLtMatmulPreferenceSetAttribute");
	LSYM(h, L.pref_destroy, "cublasLtMatmulPreferenceDestroy");
	LSYM(h, L.heur, "cublasLtMatmulAlgoGetHeuristic");
	LSYM(h, L.matmul, "cublasLtMatmul");
	if (!L.ok) snprintf(L.err, sizeof L.err, "libcublasLt lacks a needed symbol (too old?)");
}

#define CKLT(call) do { cublasStatus_t s_ = (call); if (s_ != CUBLAS_STATUS_SUCCESS) \
	return gk_fail(r, s_ == CUBLAS_STATUS_NOT_SUPPORTED ? GK_EUNSUPPORTED : GK_ECUDA, \
		       "gk_train_blas.cu:%d: cuBLASLt status %d", __LINE__, (int)s_); } while (0)

/* What makes two calls share descriptors and an algorithm. */
struct mm_key {
	bool ta, tb, ab_bf16, d_bf16, beta, bias;
	int m, n, k, lda, ldb, ldd, batch, align, epi;
	long long sa, sb, sd;
	float alpha;
};

struct mm_entry {
	struct mm_key key;
	cublasLtMatmulDesc_t op;
	cublasLtMatrixLayout_t la, lb, ld;
	cublasLtMatmulAlgo_t algo;
};

#define MM_CACHE 160 /* the attention's block GEMMs: 6 x 8 shapes (and their pointers' alignments) */
struct tr_blas {
	cublasLtHandle_t h;
	bool tf32;
	void *ws;
	size_t ws_size;
	int n;
	struct mm_entry e[MM_CACHE];
};

int tr_blas_open(struct gk_result *r, struct gk_track *t, struct tr_blas **out, bool tf32)
{
	*out = NULL;
	pthread_once(&L.once, load_lt);
	if (!L.ok) return gk_fail(r, GK_EUNSUPPORTED, "%s", L.err);
	struct tr_blas *b = (struct tr_blas *)calloc(1, sizeof *b);
	if (!b) return gk_fail(r, GK_ENOMEM, "cannot allocate the GEMM cache");
	b->tf32 = tf32;
	b->ws_size = 32u << 20;
	if (cudaMalloc(&b->ws, b->ws_size) != cudaSuccess) {
		free(b);
		return gk_fail(r, GK_ENOMEM, "cannot allocate the cuBLASLt workspace");
	}
	if (L.create(&b->h) != CUBLAS_STATUS_SUCCESS) {
		cudaFree(b->ws);
		free(b);
		return gk_fail(r, GK_ECUDA, "cublasLtCreate failed");
	}
	(void)t;
	*out = b;
	return GK_OK;
}

void tr_blas_close(struct tr_blas *b)
{
	if (!b) return;
	for (int i = 0; i < b->n; i++) {
		L.layout_destroy(b->e[i].la);
		L.layout_destroy(b->e[i].lb);
		L.layout_destroy(b->e[i].ld);
		L.desc_destroy(b->e[i].op);
	}
	L.destroy(b->h);
	cudaFree(b->ws);
	free(b);
}

static int ptr_align(const void *p)
{
	uintptr_t v = (uintptr_t)p;
	int a = 256;
	while (a > 4 && v % a) a /= 2;
	return a;
}

static int make_layout(struct gk_result *r, cublasLtMatrixLayout_t *l, cudaDataType_t t, int rows, int cols, int ld, int batch,
		       long long stride)
{
	CKLT(L.layout_create(l, t, rows, cols, ld));
	if (batch > 1) {
		int32_t bc = batch;
		int64_t st = stride;
		CKLT(L.layout_set(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &bc, sizeof bc));
		CKLT(L.layout_set(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &st, sizeof st));
	}
	return GK_OK;
}

static int make_entry(struct gk_result *r, struct tr_blas *b, struct mm_entry *e)
{
	const struct mm_key *k = &e->key;
	cudaDataType_t tab = k->ab_bf16 ? CUDA_R_16BF : CUDA_R_32F, td = k->d_bf16 ? CUDA_R_16BF : CUDA_R_32F;
	cublasComputeType_t ct = !k->ab_bf16 && b->tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
	CKLT(L.desc_create(&e->op, ct, CUDA_R_32F));
	cublasOperation_t ta = k->ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb = k->tb ? CUBLAS_OP_T : CUBLAS_OP_N;
	CKLT(L.desc_set(e->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
	CKLT(L.desc_set(e->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
	if (k->bias || k->epi != TR_EPI_NONE) {
		cublasLtEpilogue_t epi = k->epi == TR_EPI_GELU ? (k->bias ? CUBLASLT_EPILOGUE_GELU_AUX_BIAS : CUBLASLT_EPILOGUE_GELU_AUX)
					 : k->epi == TR_EPI_DGELU ? CUBLASLT_EPILOGUE_DGELU : CUBLASLT_EPILOGUE_BIAS;
		CKLT(L.desc_set(e->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
	}
	if (k->epi != TR_EPI_NONE) {
		int64_t ld = k->ldd;
		CKLT(L.desc_set(e->op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &ld, sizeof ld));
	}
	int batch = k->batch > 1 ? k->batch : 1;
	CKR(make_layout(r, &e->la, tab, k->ta ? k->k : k->m, k->ta ? k->m : k->k, k->lda, batch, k->sa));
	CKR(make_layout(r, &e->lb, tab, k->tb ? k->n : k->k, k->tb ? k->k : k->n, k->ldb, batch, k->sb));
	CKR(make_layout(r, &e->ld, td, k->m, k->n, k->ldd, batch, k->sd));
	cublasLtMatmulPreference_t pref;
	CKLT(L.pref_create(&pref));
	uint32_t al = (uint32_t)k->align;
	cublasStatus_t st = L.pref_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &b->ws_size, sizeof b->ws_size);
	const cublasLtMatmulPreferenceAttributes_t aligns[] = { CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
		CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
		CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES };
	for (int i = 0; i < 4 && st == CUBLAS_STATUS_SUCCESS; i++) st = L.pref_set(pref, aligns[i], &al, sizeof al);
	cublasLtMatmulHeuristicResult_t h;
	int got = 0;
	if (st == CUBLAS_STATUS_SUCCESS) st = L.heur(b->h, e->op, e->la, e->lb, e->ld, e->ld, pref, 1, &h, &got);
	L.pref_destroy(pref);
	CKLT(st);
	if (got < 1)
		return gk_fail(r, GK_EUNSUPPORTED, "cuBLASLt has no algorithm for a %dx%dx%d GEMM (batch %d)", k->m, k->n, k->k, batch);
	e->algo = h.algo;
	return GK_OK;
}

int tr_matmul(struct gk_result *r, struct tr_blas *b, cudaStream_t s, const struct tr_mm *p)
{
	struct mm_key k;
	memset(&k, 0, sizeof k);
	k.ta = p->ta; k.tb = p->tb; k.ab_bf16 = p->ab_bf16; k.d_bf16 = p->d_bf16; k.beta = p->C != NULL; k.bias = p->bias != NULL;
	k.m = p->m; k.n = p->n; k.k = p->k; k.lda = p->lda; k.ldb = p->ldb; k.ldd = p->ldd;
	k.batch = p->batch > 1 ? p->batch : 1;
	k.sa = k.batch > 1 ? p->sa : 0; k.sb = k.batch > 1 ? p->sb : 0; k.sd = k.batch > 1 ? p->sd : 0;
	k.alpha = p->alpha != 0 ? p->alpha : 1.0f;
	k.epi = p->epi;
	int al = ptr_align(p->A);
	if (ptr_align(p->B) < al) al = ptr_align(p->B);
	if (ptr_align(p->D) < al) al = ptr_align(p->D);
	if (p->C && ptr_align(p->C) < al) al = ptr_align(p->C);
	if (p->aux && ptr_align(p->aux) < al) al = ptr_align(p->aux);
	k.align = al;
	struct mm_entry *e = NULL;
	for (int i = 0; i < b->n && !e; i++)
		if (memcmp(&b->e[i].key, &k, sizeof k) == 0) e = &b->e[i];
	if (!e) {
		if (b->n >= MM_CACHE) return gk_fail(r, GK_EARG, "internal: more than %d GEMM shapes", MM_CACHE);
		e = &b->e[b->n];
		memset(e, 0, sizeof *e);
		memcpy(&e->key, &k, sizeof k);
		int rc = make_entry(r, b, e);
		if (rc != GK_OK) {
			if (e->la) L.layout_destroy(e->la);
			if (e->lb) L.layout_destroy(e->lb);
			if (e->ld) L.layout_destroy(e->ld);
			if (e->op) L.desc_destroy(e->op);
			return rc;
		}
		b->n++;
	}
	if (p->bias) CKLT(L.desc_set(e->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &p->bias, sizeof p->bias));
	if (p->epi != TR_EPI_NONE) CKLT(L.desc_set(e->op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &p->aux, sizeof p->aux));
	float beta = p->C ? 1.0f : 0.0f;
	const void *C = p->C ? p->C : p->D;
	CKLT(L.matmul(b->h, e->op, &k.alpha, p->A, e->la, p->B, e->lb, &beta, C, e->ld, p->D, e->ld, &e->algo, b->ws, b->ws_size, s));
	return GK_OK;
}
