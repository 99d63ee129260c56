/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gk_common.cuh - what every .cu file of the kernels module shares: the CK()
 * error macro, a resource tracker freed on every exit path, event timing with
 * deadline polling, random fills and result helpers. C-style CUDA.
 */
#ifndef GK_COMMON_CUH
#define GK_COMMON_CUH

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gpuctl_kernels.h"

/* ---- errors --------------------------------------------------------------- */
int gk_cuda_fail(struct gk_result *r, const char *file, int line, const char *what, cudaError_t e);
int gk_fail(struct gk_result *r, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void gk_result_init(struct gk_result *r);
void gk_aux(struct gk_result *r, const char *name, double value, const char *unit);

/* Check a CUDA call; on failure fill r->err with file:line and return from the
 * calling function (resources are in the tracker, freed by the entry wrapper). */
#define CK(call) do { cudaError_t e_ = (call); \
	if (e_ != cudaSuccess) return gk_cuda_fail(r, __FILE__, __LINE__, #call, e_); } while (0)
/* After a kernel launch. */
#define CKL() CK(cudaGetLastError())
/* Propagate a gk rc from a helper. */
#define CKR(expr) do { int rc_ = (expr); if (rc_ != GK_OK) return rc_; } while (0)

/* ---- resource tracker ------------------------------------------------------ */
#define GK_TRACK_MAX 64
struct gk_track {
	int n;
	struct { int kind; int dev; void *p; } it[GK_TRACK_MAX];
};
enum { GK_T_DEV = 1, GK_T_PINNED, GK_T_HOST, GK_T_STREAM, GK_T_EVENT };
void gk_track_free(struct gk_track *t);
/* Track something allocated elsewhere (on the current device). */
int gk_track_adopt(struct gk_track *t, struct gk_result *r, int kind, void *p);
int gk_dmalloc(struct gk_track *t, struct gk_result *r, void **p, size_t bytes);      /* current device */
int gk_pinned(struct gk_track *t, struct gk_result *r, void **p, size_t bytes, unsigned flags);
int gk_hmalloc(struct gk_track *t, struct gk_result *r, void **p, size_t bytes);      /* pageable */
int gk_stream(struct gk_track *t, struct gk_result *r, cudaStream_t *s);
int gk_event(struct gk_track *t, struct gk_result *r, cudaEvent_t *e);

/* ---- time and deadlines ---------------------------------------------------- */
uint64_t gk_now_ns(void);
bool gk_past(uint64_t deadline_ns);
/* Wait for an event (or a stream) by polling; GK_ETIMEOUT once the deadline passes. */
int gk_wait_event(struct gk_result *r, cudaEvent_t e, uint64_t deadline_ns);
int gk_wait_stream(struct gk_result *r, cudaStream_t s, uint64_t deadline_ns);
int gk_samples(const struct gk_common *c);   /* iters clamped */
int gk_warmups(const struct gk_common *c, int dflt);
double gk_median(const double *v, int n);

/* Time a body: warm-up runs, then samples, each between two events on s.
 * body(ctx, s, r) enqueues one run on s (it may use other streams if it joins s). */
typedef int (*gk_body_fn)(void *ctx, cudaStream_t s, struct gk_result *r);
int gk_time_body(struct gk_result *r, const struct gk_common *c, int dflt_warmup, cudaStream_t s,
		 cudaEvent_t e0, cudaEvent_t e1, gk_body_fn body, void *ctx);

/* Select the device (with a clear error for a bad index). */
int gk_set_device(struct gk_result *r, int dev);

/* ---- data ------------------------------------------------------------------ */
__host__ __device__ static inline uint32_t gk_hash32(uint64_t x)
{
	x ^= x >> 33; x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return (uint32_t)x;
}
/* Non-zero word pattern for index i. */
__host__ __device__ static inline uint32_t gk_word(uint64_t seed, uint64_t i)
{
	return gk_hash32(seed * 0x9e3779b97f4a7c15ULL + i) | 1u;
}
/* Uniform value in [-1, -1/16] U [1/16, 1]: random and never near zero. */
__host__ __device__ static inline float gk_unit(uint64_t seed, uint64_t i)
{
	uint32_t h = gk_hash32(seed * 0x9e3779b97f4a7c15ULL + i);
	float m = 0.0625f + 0.9375f * (float)(h >> 8) * (1.0f / 16777216.0f);
	return (h & 1u) ? -m : m;
}
uint64_t gk_seed(const struct gk_common *c);

/* Fill n 32-bit words with gk_word(seed, i) on stream s. */
int gk_fill_words(struct gk_result *r, uint32_t *p, size_t n, uint64_t seed, cudaStream_t s);
/* Count words != gk_word(seed, i) into *bad (device counter read back). */
int gk_check_words(struct gk_result *r, const uint32_t *p, size_t n, uint64_t seed, cudaStream_t s,
		   uint64_t *bad, uint64_t deadline_ns);
/* Fill n floats / doubles with gk_unit(seed, i). */
int gk_fill_f32(struct gk_result *r, float *p, size_t n, uint64_t seed, cudaStream_t s);
int gk_fill_f64(struct gk_result *r, double *p, size_t n, uint64_t seed, cudaStream_t s);

static inline int gk_grid(size_t n, int block, int max_blocks)
{
	size_t g = (n + block - 1) / block;
	if (g > (size_t)max_blocks) g = max_blocks;
	return g < 1 ? 1 : (int)g;
}

int gk_sm_count(int dev);

/* gk_mem.cu: the 16-byte copy kernel (dev: the launching GPU), and a pointer
 * chase over `bytes` of chain (on any GPU) timed from `dev` (l1: plain loads,
 * else ld.global.cg through L2 only). */
int gk_launch_copy16(struct gk_result *r, void *dst, const void *src, size_t bytes, int dev, cudaStream_t s);
int gk_chase_latency(struct gk_result *r, struct gk_track *t, const struct gk_common *c, int dev,
		     uint64_t *chain, size_t bytes, size_t stride, bool l1, double *ns);

#endif
