/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gk_blas.cuh - one GEMM problem through cuBLAS or cuBLASLt (dlopen'ed in
 * gk_blas.cu), shared by the gemm, stress and load entries.
 */
#ifndef GK_BLAS_CUH
#define GK_BLAS_CUH

#include <cublasLt.h>
#include <cublas_v2.h>

#include "gk_common.cuh"

#define GK_GEMM_ALGOS 8

struct gk_gemm_prob {
	int lib, prec, m, n, k, dev;
	bool nn; /* A is m x k (lda = m) instead of k x m transposed */
	cudaStream_t s;
	void *A, *B, *C, *ws;
	size_t ws_size, esz_ab, esz_c;
	cudaDataType_t tab, tc, tscale;
	cublasComputeType_t ct;
	bool lt_made;
	cublasLtMatmulDesc_t op;
	cublasLtMatrixLayout_t la, lb, lc;
	cublasLtMatmulAlgo_t algos[GK_GEMM_ALGOS];
	int nalgos, algo;
};

/* Allocate and fill A, B (random, non-zero), poison C, make the descriptors. */
int gk_gemm_setup(struct gk_result *r, struct gk_track *t, struct gk_gemm_prob *p, int lib, int prec, int m, int n, int k,
		  bool nn, uint64_t seed, cudaStream_t s);
int gk_gemm_run(struct gk_result *r, struct gk_gemm_prob *p);                 /* enqueue one on p->s */
int gk_gemm_pick(struct gk_result *r, struct gk_gemm_prob *p, cudaEvent_t e0, cudaEvent_t e1, uint64_t deadline);
int gk_gemm_check(struct gk_result *r, struct gk_track *t, struct gk_gemm_prob *p, int nsamp, uint64_t seed);
void gk_gemm_teardown(struct gk_gemm_prob *p);
double gk_gemm_tolerance(int prec);
int gk_fill_typed(struct gk_result *r, void *p, size_t n, uint64_t seed, cudaDataType_t t, cudaStream_t s);
int gk_sgemm_rowmajor(struct gk_result *r, int m, int n, int k, const float *A, int lda, const float *B, int ldb, float *C,
		      int ldc, cudaStream_t s);
/* dlopen libcublas*.so.13 (else .so.12), also from /usr/local/cuda/lib64; NULL with err set. */
void *gk_blas_dlopen(const char *base, char *err, size_t errlen);

#endif
