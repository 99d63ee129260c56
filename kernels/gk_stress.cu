/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gk_stress.cu - verified GEMM stress (diag) and sustained GEMM load (bench).
 * The first product is checked against FP64 dot products of sampled entries
 * and kept as the reference; every later product is compared with it element
 * by element on the device (cuBLAS gives the same bits for the same algorithm
 * on the same GPU, so any difference over two units in the last place is a
 * miscompare), and NaN/Inf are counted apart. Unlike gpu-burn, a miscompare
 * makes the entry return GK_EVERIFY.
 */
#include "gk_blas.cuh"
#include "gk_entries.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdlib.h>

__global__ void k_cmp_typed(const void *c, const void *ref, size_t n, int t, double tol, unsigned long long *cnt)
{
	unsigned long long bad = 0, nans = 0;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
		double x, y;
		switch (t) {
		case CUDA_R_64F: x = ((const double *)c)[i]; y = ((const double *)ref)[i]; break;
		case CUDA_R_32F: x = ((const float *)c)[i]; y = ((const float *)ref)[i]; break;
		case CUDA_R_16F: x = __half2float(((const __half *)c)[i]); y = __half2float(((const __half *)ref)[i]); break;
		default: x = __bfloat162float(((const __nv_bfloat16 *)c)[i]); y = __bfloat162float(((const __nv_bfloat16 *)ref)[i]); break;
		}
		if (!isfinite(x)) nans++;
		else if (fabs(x - y) > tol * fabs(y)) bad++;
	}
	if (bad) atomicAdd(cnt, bad);
	if (nans) atomicAdd(cnt + 1, nans);
}

static double ulp2(cudaDataType_t t)
{
	switch (t) {
	case CUDA_R_64F: return 4.5e-16;
	case CUDA_R_32F: return 2.4e-7;
	case CUDA_R_16F: return 2e-3;
	default: return 1.6e-2;
	}
}

struct gk_load {
	struct gk_track t;
	struct gk_gemm_prob p;
	cudaStream_t s;
	cudaEvent_t e0, e1;
	void *ref;
	unsigned long long *cnt;
	int dev;
	uint64_t gemms;
};

static int load_setup(struct gk_load *l, const struct gk_common *c, int prec, int n, struct gk_result *r)
{
	struct gk_track *t = &l->t;
	if (prec == GK_FP16X2 || prec == GK_BF16X2 || prec < 0 || prec >= GK_PREC_COUNT)
		return gk_fail(r, GK_EARG, "stress precision %d is not a gemm precision", prec);
	if (n <= 0) n = 8192;
	n = (n + 15) / 16 * 16;
	CKR(gk_set_device(r, c->device));
	l->dev = c->device;
	CKR(gk_stream(t, r, &l->s));
	CKR(gk_event(t, r, &l->e0)); CKR(gk_event(t, r, &l->e1));
	CKR(gk_gemm_setup(r, t, &l->p, GK_CUBLASLT, prec, n, n, n, false, gk_seed(c), l->s));
	CKR(gk_gemm_pick(r, &l->p, l->e0, l->e1, c->deadline_ns));
	CKR(gk_gemm_run(r, &l->p));
	CKR(gk_wait_stream(r, l->s, c->deadline_ns));
	CKR(gk_gemm_check(r, t, &l->p, 32, gk_seed(c)));
	size_t cb = (size_t)n * n * l->p.esz_c;
	CKR(gk_dmalloc(t, r, &l->ref, cb));
	CKR(gk_dmalloc(t, r, (void **)&l->cnt, 2 * sizeof *l->cnt));
	CK(cudaMemcpyAsync(l->ref, l->p.C, cb, cudaMemcpyDeviceToDevice, l->s));
	CK(cudaMemsetAsync(l->cnt, 0, 2 * sizeof *l->cnt, l->s));
	CKR(gk_wait_stream(r, l->s, c->deadline_ns));
	return GK_OK;
}

/* Run GEMMs for `seconds`, each followed by a compare with the reference. */
static int load_run(struct gk_load *l, double seconds, uint64_t deadline_ns, struct gk_result *r)
{
	struct gk_gemm_prob *p = &l->p;
	size_t nel = (size_t)p->m * p->n;
	int cap = 4096, n = 0;
	CK(cudaSetDevice(l->dev));
	CK(cudaMemsetAsync(l->cnt, 0, 2 * sizeof *l->cnt, l->s));
	float *times = (float *)malloc(sizeof(float) * cap);
	if (!times) return gk_fail(r, GK_ENOMEM, "out of host memory");
	uint64_t end = gk_now_ns() + (uint64_t)(seconds * 1e9);
	int rc = GK_OK;
	while (rc == GK_OK && (n == 0 || gk_now_ns() < end)) {
		cudaError_t e = cudaEventRecord(l->e0, l->s);
		if (e == cudaSuccess) rc = gk_gemm_run(r, p);
		if (rc == GK_OK && e == cudaSuccess) e = cudaEventRecord(l->e1, l->s);
		if (rc == GK_OK && e == cudaSuccess) {
			k_cmp_typed<<<gk_sm_count(l->dev) * 4, 256, 0, l->s>>>(p->C, l->ref, nel, (int)p->tc, ulp2(p->tc), l->cnt);
			e = cudaGetLastError();
		}
		if (rc == GK_OK && e == cudaSuccess) rc = gk_wait_stream(r, l->s, deadline_ns);
		float ms = 0;
		if (rc == GK_OK && e == cudaSuccess) e = cudaEventElapsedTime(&ms, l->e0, l->e1);
		if (e != cudaSuccess && rc == GK_OK) rc = gk_cuda_fail(r, __FILE__, __LINE__, "gemm loop", e);
		if (rc == GK_OK) {
			if (n == cap) { /* keep every other time: the spread over the run stays even */
				for (int i = 0; i < cap / 2; i++) times[i] = times[2 * i];
				n = cap / 2;
			}
			times[n++] = ms;
			l->gemms++;
		}
	}
	/* pick GK_MAX_SAMPLES evenly spread times */
	int ns = n < GK_MAX_SAMPLES ? n : GK_MAX_SAMPLES;
	for (int i = 0; i < ns; i++) r->samples_ms[i] = times[(size_t)i * n / ns];
	r->nsamples = ns;
	free(times);
	CKR(rc);
	unsigned long long h[2];
	CK(cudaMemcpy(h, l->cnt, sizeof h, cudaMemcpyDeviceToHost));
	r->flops = 2.0 * p->m * (double)p->n * p->k;
	r->verify.checked = (uint64_t)nel * l->gemms;
	r->verify.mismatches = h[0];
	r->verify.nans = h[1];
	r->verify.verified = h[0] == 0 && h[1] == 0;
	gk_aux(r, "gemms", (double)l->gemms, "count");
	if (!r->verify.verified)
		return gk_fail(r, GK_EVERIFY, "gemm stress: %llu miscompares and %llu NaN/Inf against the first result", h[0], h[1]);
	return GK_OK;
}

static void load_free(struct gk_load *l)
{
	gk_gemm_teardown(&l->p);
	gk_track_free(&l->t);
	free(l);
}

int gk_load_open(const struct gk_load_args *a, struct gk_load **out, char *err, size_t errlen)
{
	*out = NULL;
	struct gk_result r;
	gk_result_init(&r);
	struct gk_load *l = (struct gk_load *)calloc(1, sizeof *l);
	if (!l) { snprintf(err, errlen, "out of host memory"); return GK_ENOMEM; }
	int rc = load_setup(l, &a->c, a->prec, a->n, &r);
	if (rc != GK_OK) {
		snprintf(err, errlen, "%s", r.err);
		load_free(l);
		return rc;
	}
	if (errlen) err[0] = '\0';
	*out = l;
	return GK_OK;
}

int gk_load_step(struct gk_load *l, double seconds, uint64_t deadline_ns, struct gk_result *r)
{
	gk_result_init(r);
	l->gemms = 0;
	int rc = load_run(l, seconds, deadline_ns, r);
	r->rc = rc;
	return rc;
}

void gk_load_close(struct gk_load *l)
{
	if (l) load_free(l);
}

static int stress_inner(const struct gk_stress_args *a, struct gk_result *r)
{
	struct gk_load *l = (struct gk_load *)calloc(1, sizeof *l);
	if (!l) return gk_fail(r, GK_ENOMEM, "out of host memory");
	int rc = load_setup(l, &a->c, a->prec, a->n, r);
	if (rc == GK_OK) {
		struct gk_verify first = r->verify;
		rc = load_run(l, a->seconds > 0 ? a->seconds : 1, a->c.deadline_ns, r);
		gk_aux(r, "first_max_err", first.max_err, "ratio");
	}
	load_free(l);
	return rc;
}

int gk_stress(const struct gk_stress_args *a, struct gk_result *r)
{
	gk_result_init(r);
	int rc = stress_inner(a, r);
	r->rc = rc;
	return rc;
}
