/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gk_common.cu - error text, resource tracker, event timing with deadlines,
 * random fills and pattern checks shared by the module's entry points.
 */
#include "gk_common.cuh"

#include <stdarg.h>
#include <stdlib.h>
#include <time.h>

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

int gk_cuda_fail(struct gk_result *r, const char *file, int line, const char *what, cudaError_t e)
{
	int rc = (e == cudaErrorMemoryAllocation) ? GK_ENOMEM
		 : (e == cudaErrorNoDevice || e == cudaErrorInvalidDevice || e == cudaErrorInsufficientDriver)
			   ? GK_ENODEV
			   : GK_ECUDA;
	/* keep the call short: up to its first '(' plus the error */
	char call[64];
	size_t k = strcspn(what, "(");
	if (k >= sizeof call) k = sizeof call - 1;
	memcpy(call, what, k);
	call[k] = '\0';
	snprintf(r->err, sizeof r->err, "%s:%d: %s: %s", base_name(file), line, call, cudaGetErrorString(e));
	r->rc = rc;
	return rc;
}

int gk_fail(struct gk_result *r, int rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->err, sizeof r->err, fmt, ap);
	va_end(ap);
	r->rc = rc;
	return rc;
}

void gk_result_init(struct gk_result *r)
{
	memset(r, 0, sizeof *r);
}

void gk_aux(struct gk_result *r, const char *name, double value, const char *unit)
{
	if (r->naux >= GK_MAX_AUX) return;
	struct gk_aux *a = &r->aux[r->naux++];
	snprintf(a->name, sizeof a->name, "%s", name);
	snprintf(a->unit, sizeof a->unit, "%s", unit);
	a->value = value;
}

/* ---- tracker ---------------------------------------------------------------- */
int gk_track_adopt(struct gk_track *t, struct gk_result *r, int kind, void *p)
{
	if (t->n >= GK_TRACK_MAX) return gk_fail(r, GK_EARG, "internal: resource tracker full");
	int dev = 0;
	cudaGetDevice(&dev);
	t->it[t->n].kind = kind;
	t->it[t->n].dev = dev;
	t->it[t->n].p = p;
	t->n++;
	return GK_OK;
}

void gk_track_free(struct gk_track *t)
{
	int cur = 0;
	cudaGetDevice(&cur);
	for (int i = t->n - 1; i >= 0; i--) {
		cudaSetDevice(t->it[i].dev);
		switch (t->it[i].kind) {
		case GK_T_DEV: cudaFree(t->it[i].p); break;
		case GK_T_PINNED: cudaFreeHost(t->it[i].p); break;
		case GK_T_HOST: free(t->it[i].p); break;
		case GK_T_STREAM: cudaStreamDestroy((cudaStream_t)t->it[i].p); break;
		case GK_T_EVENT: cudaEventDestroy((cudaEvent_t)t->it[i].p); break;
		}
	}
	t->n = 0;
	cudaSetDevice(cur);
}

int gk_dmalloc(struct gk_track *t, struct gk_result *r, void **p, size_t bytes)
{
	*p = NULL;
	CK(cudaMalloc(p, bytes));
	return gk_track_adopt(t, r, GK_T_DEV, *p);
}

int gk_pinned(struct gk_track *t, struct gk_result *r, void **p, size_t bytes, unsigned flags)
{
	*p = NULL;
	CK(cudaHostAlloc(p, bytes, flags));
	return gk_track_adopt(t, r, GK_T_PINNED, *p);
}

int gk_hmalloc(struct gk_track *t, struct gk_result *r, void **p, size_t bytes)
{
	*p = malloc(bytes);
	if (!*p) return gk_fail(r, GK_ENOMEM, "cannot allocate %zu bytes of host memory", bytes);
	return gk_track_adopt(t, r, GK_T_HOST, *p);
}

int gk_stream(struct gk_track *t, struct gk_result *r, cudaStream_t *s)
{
	CK(cudaStreamCreateWithFlags(s, cudaStreamNonBlocking));
	return gk_track_adopt(t, r, GK_T_STREAM, (void *)*s);
}

int gk_event(struct gk_track *t, struct gk_result *r, cudaEvent_t *e)
{
	CK(cudaEventCreate(e));
	return gk_track_adopt(t, r, GK_T_EVENT, (void *)*e);
}

/* ---- time ------------------------------------------------------------------- */
uint64_t gk_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

bool gk_past(uint64_t deadline_ns) { return deadline_ns && gk_now_ns() > deadline_ns; }

static void nap(void)
{
	struct timespec ts = { 0, 20000 }; /* 20 us: polling cost stays off the device's timeline */
	nanosleep(&ts, NULL);
}

int gk_wait_event(struct gk_result *r, cudaEvent_t e, uint64_t deadline_ns)
{
	for (;;) {
		cudaError_t q = cudaEventQuery(e);
		if (q == cudaSuccess) return GK_OK;
		if (q != cudaErrorNotReady) CK(q);
		if (gk_past(deadline_ns))
			return gk_fail(r, GK_ETIMEOUT, "deadline passed while waiting for the GPU (it may be hung)");
		nap();
	}
}

int gk_wait_stream(struct gk_result *r, cudaStream_t s, uint64_t deadline_ns)
{
	for (;;) {
		cudaError_t q = cudaStreamQuery(s);
		if (q == cudaSuccess) return GK_OK;
		if (q != cudaErrorNotReady) CK(q);
		if (gk_past(deadline_ns))
			return gk_fail(r, GK_ETIMEOUT, "deadline passed while waiting for the GPU (it may be hung)");
		nap();
	}
}

int gk_samples(const struct gk_common *c)
{
	int n = c->iters;
	if (n < GK_MIN_SAMPLES) n = GK_MIN_SAMPLES;
	if (n > GK_MAX_SAMPLES) n = GK_MAX_SAMPLES;
	return n;
}

int gk_warmups(const struct gk_common *c, int dflt)
{
	int w = c->warmup > 0 ? c->warmup : dflt;
	return w < 1 ? 1 : w;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double gk_median(const double *v, int n)
{
	if (n <= 0) return 0;
	double tmp[GK_MAX_SAMPLES];
	if (n > GK_MAX_SAMPLES) n = GK_MAX_SAMPLES;
	memcpy(tmp, v, n * sizeof *v);
	qsort(tmp, n, sizeof *tmp, cmp_d);
	return n % 2 ? tmp[n / 2] : 0.5 * (tmp[n / 2 - 1] + tmp[n / 2]);
}

int gk_time_body(struct gk_result *r, const struct gk_common *c, int dflt_warmup, cudaStream_t s,
		 cudaEvent_t e0, cudaEvent_t e1, gk_body_fn body, void *ctx)
{
	int w = gk_warmups(c, dflt_warmup);
	for (int i = 0; i < w; i++) {
		CKR(body(ctx, s, r));
		CK(cudaEventRecord(e1, s));
		CKR(gk_wait_event(r, e1, c->deadline_ns));
	}
	int n = gk_samples(c);
	r->nsamples = 0;
	for (int i = 0; i < n; i++) {
		CK(cudaEventRecord(e0, s));
		CKR(body(ctx, s, r));
		CK(cudaEventRecord(e1, s));
		CKR(gk_wait_event(r, e1, c->deadline_ns));
		float ms = 0;
		CK(cudaEventElapsedTime(&ms, e0, e1));
		r->samples_ms[r->nsamples++] = ms;
	}
	return GK_OK;
}

int gk_set_device(struct gk_result *r, int dev)
{
	int n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);
	if (e != cudaSuccess) return gk_cuda_fail(r, __FILE__, __LINE__, "cudaGetDeviceCount", e);
	if (dev < 0 || dev >= n) return gk_fail(r, GK_ENODEV, "no CUDA device %d (%d present)", dev, n);
	CK(cudaSetDevice(dev));
	return GK_OK;
}

uint64_t gk_seed(const struct gk_common *c) { return c->seed ? c->seed : 0x6770756374ull; }

int gk_sm_count(int dev)
{
	int n = 0;
	if (cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || n < 1) n = 1;
	return n;
}

/* ---- fills and checks ------------------------------------------------------------ */
__global__ void k_fill_words(uint32_t *p, size_t n, uint64_t seed)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		p[i] = gk_word(seed, i);
}

__global__ void k_check_words(const uint32_t *p, size_t n, uint64_t seed, unsigned long long *bad)
{
	unsigned long long b = 0;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		b += p[i] != gk_word(seed, i);
	if (b) atomicAdd(bad, b);
}

__global__ void k_fill_f32(float *p, size_t n, uint64_t seed)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		p[i] = gk_unit(seed, i);
}

__global__ void k_fill_f64(double *p, size_t n, uint64_t seed)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		p[i] = (double)gk_unit(seed, i);
}

int gk_fill_words(struct gk_result *r, uint32_t *p, size_t n, uint64_t seed, cudaStream_t s)
{
	k_fill_words<<<gk_grid(n, 256, 65536), 256, 0, s>>>(p, n, seed);
	CKL();
	return GK_OK;
}

int gk_check_words(struct gk_result *r, const uint32_t *p, size_t n, uint64_t seed, cudaStream_t s,
		   uint64_t *bad, uint64_t deadline_ns)
{
	unsigned long long *d = NULL, h = 0;
	CK(cudaMalloc((void **)&d, sizeof *d));
	cudaError_t e = cudaMemsetAsync(d, 0, sizeof *d, s);
	if (e == cudaSuccess) {
		k_check_words<<<gk_grid(n, 256, 65536), 256, 0, s>>>(p, n, seed, d);
		e = cudaGetLastError();
	}
	int rc = GK_OK;
	if (e == cudaSuccess) rc = gk_wait_stream(r, s, deadline_ns);
	if (e == cudaSuccess && rc == GK_OK) e = cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost);
	cudaFree(d);
	if (rc != GK_OK) return rc;
	CK(e);
	*bad = h;
	return GK_OK;
}

int gk_fill_f32(struct gk_result *r, float *p, size_t n, uint64_t seed, cudaStream_t s)
{
	k_fill_f32<<<gk_grid(n, 256, 65536), 256, 0, s>>>(p, n, seed);
	CKL();
	return GK_OK;
}

int gk_fill_f64(struct gk_result *r, double *p, size_t n, uint64_t seed, cudaStream_t s)
{
	k_fill_f64<<<gk_grid(n, 256, 65536), 256, 0, s>>>(p, n, seed);
	CKL();
	return GK_OK;
}
