/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kexp.cu - standalone kernel experiment for issue 4 (not part of the build):
 * times many candidate device-copy kernels and packed FP16x2/BF16x2 FMA
 * kernels in one run, next to cudaMemcpyAsync D2D and an FP32 FMA kernel.
 *
 * Every variant: warm-up, then >= KEXP_SAMPLES CUDA-event-timed samples,
 * median/min/max; its output is checked exactly (copy: every 32-bit word of
 * dst against src, dst poisoned with 0 first and src random non-zero; FMA: the
 * x -> 3 - x chains must return to their start values). One line a variant:
 *   name  median_ms  min_ms  max_ms  rate unit  verified
 * Copy rates count read+written bytes (2 x size), like bench/RESULTS.md.
 * FMA rates count 2 flops per lane per FMA (4 per HFMA2 instruction).
 * Usage: kexp [copy|fma|all] [copy_GiB] [copy_passes]   (default all 4 2;
 * each pass runs every copy variant once, so drift shows between passes)
 * Build: nvcc -arch=sm_90a -O3 -o kexp kexp.cu   (scripts/gpu/kexp.sh)
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEXP_SAMPLES 11
#define BLK 256

#define CK(call)                                                                                  \
	do {                                                                                          \
		cudaError_t e_ = (call);                                                                  \
		if (e_ != cudaSuccess) {                                                                  \
			fprintf(stderr, "kexp: %s failed at line %d: %s\n", #call, __LINE__, cudaGetErrorString(e_)); \
			exit(1);                                                                              \
		}                                                                                         \
	} while (0)
#define CKL() CK(cudaGetLastError())

static int g_sms, g_cc;
static cudaStream_t g_s;
static cudaEvent_t g_e0, g_e1;

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return x < y ? -1 : x > y;
}

/* ------------------------------------------------------------------ */
/* load / store flavours; mode is always a literal, so the switch folds */
/* ld: 0 plain, 1 .cs (evict-first), 2 .nc.L1::no_allocate.L2::256B,
 *     3 .L2::128B prefetch, 4 .nc.L1::no_allocate + L2 evict_first policy
 * st: 0 plain, 1 .cs, 2 L2 evict_first policy, 3 .L1::no_allocate      */
__device__ __forceinline__ uint64_t pol_evict_first(void)
{
	uint64_t p;
	asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
	return p;
}

__device__ __forceinline__ uint4 ld16(const uint4 *p, int mode, uint64_t pol)
{
	uint4 v;
	switch (mode) {
	case 1:
		asm volatile("ld.global.cs.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
		break;
	case 2:
		asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];"
			     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
		break;
	case 3:
		asm volatile("ld.global.L2::128B.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
		break;
	case 4:
		asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4], %5;"
			     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p), "l"(pol));
		break;
	default: v = *p; break;
	}
	return v;
}

__device__ __forceinline__ void st16(uint4 *p, uint4 v, int mode, uint64_t pol)
{
	switch (mode) {
	case 1: asm volatile("st.global.cs.v4.u32 [%0], {%1,%2,%3,%4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory"); break;
	case 2:
		asm volatile("st.global.L2::cache_hint.v4.u32 [%0], {%1,%2,%3,%4}, %5;" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w),
			     "l"(pol) : "memory");
		break;
	case 3:
		asm volatile("st.global.L1::no_allocate.v4.u32 [%0], {%1,%2,%3,%4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
		break;
	default: *p = v; break;
	}
}

/* Grid-stride: a thread's U accesses lie a whole grid apart (like k_copy_u*, layout 0). */
#define GS_KERNEL(U, LD, ST)                                                                        \
	__global__ void __launch_bounds__(BLK) k_gs_u##U##_l##LD##_s##ST(uint4 *__restrict__ dst, const uint4 *__restrict__ src, size_t n) \
	{                                                                                               \
		uint64_t pol = (LD == 4 || ST == 2) ? pol_evict_first() : 0;                                 \
		size_t S = (size_t)gridDim.x * BLK;                                                         \
		for (size_t b = (size_t)blockIdx.x * BLK + threadIdx.x; b < n; b += (U) * S) {              \
			uint4 v[U];                                                                             \
			_Pragma("unroll") for (int u = 0; u < (U); u++) if (b + u * S < n) v[u] = ld16(src + b + u * S, LD, pol); \
			_Pragma("unroll") for (int u = 0; u < (U); u++) if (b + u * S < n) st16(dst + b + u * S, v[u], ST, pol); \
		}                                                                                           \
	}

/* Span: block k copies spans k, k+G, ... of `span` vectors; inside a span the
 * block walks U*BLK contiguous vectors an iteration, so reads and writes come
 * in long runs per SM. span == 0: one slice of n/G per block (persistent). */
#define SPAN_KERNEL(U, LD, ST)                                                                      \
	__global__ void __launch_bounds__(BLK) k_sp_u##U##_l##LD##_s##ST(uint4 *__restrict__ dst, const uint4 *__restrict__ src, size_t n, size_t span) \
	{                                                                                               \
		uint64_t pol = (LD == 4 || ST == 2) ? pol_evict_first() : 0;                                 \
		if (span == 0) span = ((n + gridDim.x - 1) / gridDim.x + 255) & ~(size_t)255; /* 4 KiB-aligned slices */ \
		for (size_t s0 = (size_t)blockIdx.x * span; s0 < n; s0 += (size_t)gridDim.x * span) {       \
			size_t end = s0 + span < n ? s0 + span : n;                                             \
			for (size_t b = s0 + threadIdx.x; b < end; b += (U) * BLK) {                            \
				uint4 v[U];                                                                         \
				_Pragma("unroll") for (int u = 0; u < (U); u++) if (b + u * BLK < end) v[u] = ld16(src + b + u * BLK, LD, pol); \
				_Pragma("unroll") for (int u = 0; u < (U); u++) if (b + u * BLK < end) st16(dst + b + u * BLK, v[u], ST, pol); \
			}                                                                                       \
		}                                                                                           \
	}

/* Software-pipelined grid-stride: the next U loads are issued before the
 * current U stores, so a thread always has reads in flight while it writes. */
#define PIPE_KERNEL(U, LD, ST)                                                                      \
	__global__ void __launch_bounds__(BLK) k_pp_u##U##_l##LD##_s##ST(uint4 *__restrict__ dst, const uint4 *__restrict__ src, size_t n) \
	{                                                                                               \
		uint64_t pol = (LD == 4 || ST == 2) ? pol_evict_first() : 0;                                 \
		size_t S = (size_t)gridDim.x * BLK, b = (size_t)blockIdx.x * BLK + threadIdx.x;              \
		uint4 cur[U], nxt[U];                                                                       \
		_Pragma("unroll") for (int u = 0; u < (U); u++) if (b + u * S < n) cur[u] = ld16(src + b + u * S, LD, pol); \
		for (; b < n; b += (U) * S) {                                                               \
			size_t nb = b + (U) * S;                                                                \
			_Pragma("unroll") for (int u = 0; u < (U); u++) if (nb + u * S < n) nxt[u] = ld16(src + nb + u * S, LD, pol); \
			_Pragma("unroll") for (int u = 0; u < (U); u++) if (b + u * S < n) st16(dst + b + u * S, cur[u], ST, pol); \
			_Pragma("unroll") for (int u = 0; u < (U); u++) cur[u] = nxt[u];                         \
		}                                                                                           \
	}
PIPE_KERNEL(4, 0, 0) PIPE_KERNEL(4, 2, 1) PIPE_KERNEL(8, 0, 0) PIPE_KERNEL(8, 1, 1) PIPE_KERNEL(8, 2, 1) PIPE_KERNEL(16, 2, 1)

GS_KERNEL(4, 0, 0) GS_KERNEL(4, 1, 1) GS_KERNEL(8, 0, 0) GS_KERNEL(8, 1, 1) GS_KERNEL(8, 2, 0) GS_KERNEL(8, 2, 1)
GS_KERNEL(8, 3, 0) GS_KERNEL(8, 4, 2) GS_KERNEL(8, 0, 3) GS_KERNEL(16, 0, 0) GS_KERNEL(16, 1, 1) GS_KERNEL(16, 2, 0)
GS_KERNEL(16, 2, 1) GS_KERNEL(32, 0, 0) GS_KERNEL(32, 2, 1)
SPAN_KERNEL(4, 0, 0) SPAN_KERNEL(8, 0, 0) SPAN_KERNEL(8, 1, 1) SPAN_KERNEL(8, 2, 0) SPAN_KERNEL(8, 2, 1) SPAN_KERNEL(8, 4, 2)
SPAN_KERNEL(16, 0, 0) SPAN_KERNEL(16, 1, 1) SPAN_KERNEL(16, 2, 0) SPAN_KERNEL(16, 2, 1) SPAN_KERNEL(32, 0, 0)

/* 8-byte accesses, grid-stride, U = 8. */
__global__ void __launch_bounds__(BLK) k_gs8b_u8(uint2 *__restrict__ dst, const uint2 *__restrict__ src, size_t n)
{
	size_t S = (size_t)gridDim.x * BLK;
	for (size_t b = (size_t)blockIdx.x * BLK + threadIdx.x; b < n; b += 8 * S) {
		uint2 v[8];
#pragma unroll
		for (int u = 0; u < 8; u++) if (b + u * S < n) v[u] = __ldcs(src + b + u * S);
#pragma unroll
		for (int u = 0; u < 8; u++) if (b + u * S < n) __stcs(dst + b + u * S, v[u]);
	}
}

/* cp.async (LDGSTS) staging: each thread moves its own 16-byte vectors
 * global -> shared (STAGES deep, U vectors a stage) and shared -> global;
 * a thread reads back only what it staged itself, so no block barrier. */
#define CPA_STAGES 4
#define CPA_U 2 /* 4 x 2 x 256 x 16 B = 32 KiB of static shared memory */
__global__ void __launch_bounds__(BLK) k_cpasync(uint4 *__restrict__ dst, const uint4 *__restrict__ src, size_t n)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
	__shared__ uint4 sb[CPA_STAGES][CPA_U][BLK];
	const size_t T = (size_t)CPA_U * BLK, G = gridDim.x;
	size_t ntiles = (n + T - 1) / T, mine = ntiles > blockIdx.x ? (ntiles - blockIdx.x + G - 1) / G : 0;
	for (size_t k = 0; k < mine + CPA_STAGES - 1; k++) {
		if (k < mine) { /* issue tile k into stage k % STAGES */
			size_t t0 = (blockIdx.x + k * G) * T;
#pragma unroll
			for (int u = 0; u < CPA_U; u++) {
				size_t j = t0 + u * BLK + threadIdx.x;
				if (j < n) {
					unsigned sa = (unsigned)__cvta_generic_to_shared(&sb[k % CPA_STAGES][u][threadIdx.x]);
					asm volatile("cp.async.cg.shared.global.L2::256B [%0], [%1], 16;" ::"r"(sa), "l"(src + j) : "memory");
				}
			}
		}
		asm volatile("cp.async.commit_group;" ::: "memory");
		if (k + 1 >= CPA_STAGES) { /* tile k - STAGES + 1 has landed */
			size_t c = k + 1 - CPA_STAGES, t0 = (blockIdx.x + c * G) * T;
			asm volatile("cp.async.wait_group %0;" ::"n"(CPA_STAGES - 1) : "memory");
#pragma unroll
			for (int u = 0; u < CPA_U; u++) {
				size_t j = t0 + u * BLK + threadIdx.x;
				if (j < n) __stcs(dst + j, sb[c % CPA_STAGES][u][threadIdx.x]);
			}
		}
	}
	asm volatile("cp.async.wait_all;" ::: "memory");
#endif
}

/* TMA bulk copy with `stages` shared buffers of `chunk` bytes, one thread a
 * block: chunks 0..stages-1 load up front; at step i the thread waits for
 * chunk i, bulk-stores it, then refills the buffer of chunk i-1 (its store
 * has been read out: wait_group.read 1) with chunk i-1+stages. */
#define TMA_MAX_STAGES 8
__global__ void __launch_bounds__(32) k_tma(char *dst, const char *src, size_t nbytes, unsigned chunk, int stages)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
	extern __shared__ __align__(128) unsigned char smem[];
	__shared__ __align__(8) unsigned long long bar[TMA_MAX_STAGES];
	if (threadIdx.x != 0) return;
	for (int k = 0; k < stages; k++) {
		unsigned b = (unsigned)__cvta_generic_to_shared(&bar[k]);
		asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b) : "memory");
	}
	asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
	asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
	unsigned sbase = (unsigned)__cvta_generic_to_shared(smem), phases = 0;
	size_t nchunks = (nbytes + chunk - 1) / chunk, G = gridDim.x;
	size_t mine = nchunks > blockIdx.x ? (nchunks - blockIdx.x + G - 1) / G : 0;
#define TMA_LOAD(i)                                                                                         \
	do {                                                                                                    \
		int buf_ = (int)((i) % stages);                                                                     \
		size_t off_ = (blockIdx.x + (i) * G) * (size_t)chunk;                                               \
		unsigned len_ = (unsigned)(nbytes - off_ < chunk ? nbytes - off_ : chunk);                          \
		unsigned b_ = (unsigned)__cvta_generic_to_shared(&bar[buf_]);                                       \
		asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b_), "r"(len_) : "memory"); \
		asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" \
			     ::"r"(sbase + buf_ * chunk), "l"(src + off_), "r"(len_), "r"(b_) : "memory");                \
	} while (0)
	for (size_t i = 0; i < mine && i < (size_t)stages; i++) TMA_LOAD(i);
	for (size_t i = 0; i < mine; i++) {
		int buf = (int)(i % stages);
		unsigned b = (unsigned)__cvta_generic_to_shared(&bar[buf]), ph = (phases >> buf) & 1, done = 0;
		do {
			asm volatile("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
				     "selp.u32 %0, 1, 0, p;\n\t}" : "=r"(done) : "r"(b), "r"(ph) : "memory");
		} while (!done);
		phases ^= 1u << buf;
		size_t off = (blockIdx.x + i * G) * (size_t)chunk;
		unsigned len = (unsigned)(nbytes - off < chunk ? nbytes - off : chunk);
		asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst + off), "r"(sbase + buf * chunk), "r"(len) : "memory");
		asm volatile("cp.async.bulk.commit_group;" ::: "memory");
		if (i >= 1 && i - 1 + stages < mine) {
			asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
			TMA_LOAD(i - 1 + stages);
		}
	}
	asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
#undef TMA_LOAD
#endif
}

__global__ void k_fill(uint32_t *p, size_t n, uint32_t seed)
{
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
		uint32_t h = (uint32_t)i * 2654435761u ^ seed;
		h ^= h >> 15; h *= 2246822519u; h ^= h >> 13; h *= 3266489917u; h ^= h >> 16;
		p[i] = h | 1u; /* never 0: the poison */
	}
}

__global__ void k_cmp(const uint32_t *a, const uint32_t *b, size_t n, unsigned long long *bad)
{
	unsigned long long k = 0;
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		k += a[i] != b[i];
	if (k) atomicAdd(bad, k);
}

/* ------------------------------------------------------------------ */
/* copy variants */
enum { F_GS, F_PIPE, F_SPAN, F_GS8B, F_CPA, F_TMA, F_MEMCPY };
typedef void (*gs_fn)(uint4 *, const uint4 *, size_t);
typedef void (*sp_fn)(uint4 *, const uint4 *, size_t, size_t);
struct cvar {
	const char *name;
	int fam;
	const void *fn;
	int per_sm;          /* blocks an SM (grid = per_sm * SMs) */
	size_t span_bytes;   /* F_SPAN: bytes a span, 0 = n / grid */
	unsigned chunk;      /* F_TMA */
	int stages;          /* F_TMA */
};

#define GS(U, L, S, B) { "gs_u" #U "_ld" #L "_st" #S "_b" #B, F_GS, (const void *)k_gs_u##U##_l##L##_s##S, B, 0, 0, 0 }
#define PP(U, L, S, B) { "pipe_u" #U "_ld" #L "_st" #S "_b" #B, F_PIPE, (const void *)k_pp_u##U##_l##L##_s##S, B, 0, 0, 0 }
#define SP(U, L, S, B, KB) { "span" #KB "k_u" #U "_ld" #L "_st" #S "_b" #B, F_SPAN, (const void *)k_sp_u##U##_l##L##_s##S, B, (size_t)(KB) << 10, 0, 0 }
#define SL(U, L, S, B) { "slice_u" #U "_ld" #L "_st" #S "_b" #B, F_SPAN, (const void *)k_sp_u##U##_l##L##_s##S, B, 0, 0, 0 }
#define TM(KB, ST, B) { "tma_" #KB "k_x" #ST "_b" #B, F_TMA, (const void *)k_tma, B, 0, (KB) << 10, ST }

static const struct cvar cvars[] = {
	{ "cudaMemcpyAsync_D2D", F_MEMCPY, NULL, 0, 0, 0, 0 },
	/* grid-stride baseline (today's k_copy_u4/u8 layout 0) and hints */
	GS(4, 0, 0, 8), GS(4, 1, 1, 8), GS(8, 0, 0, 4), GS(8, 1, 1, 4), GS(8, 1, 1, 8), GS(8, 1, 1, 2),
	GS(8, 2, 0, 4), GS(8, 2, 1, 4), GS(8, 2, 1, 8), GS(8, 3, 0, 4), GS(8, 4, 2, 4), GS(8, 0, 3, 4),
	GS(16, 0, 0, 1), GS(16, 0, 0, 2), GS(16, 0, 0, 4), GS(16, 1, 1, 2), GS(16, 1, 1, 4),
	GS(16, 2, 0, 2), GS(16, 2, 1, 1), GS(16, 2, 1, 2), GS(16, 2, 1, 4),
	GS(32, 0, 0, 1), GS(32, 0, 0, 2), GS(32, 2, 1, 1),
	/* software-pipelined grid-stride */
	PP(4, 0, 0, 8), PP(4, 2, 1, 8), PP(8, 0, 0, 4), PP(8, 0, 0, 2), PP(8, 1, 1, 4), PP(8, 2, 1, 2), PP(8, 2, 1, 4),
	PP(16, 2, 1, 1), PP(16, 2, 1, 2),
	/* contiguous spans a block */
	SP(4, 0, 0, 8, 64), SP(8, 0, 0, 4, 64), SP(8, 0, 0, 4, 256), SP(8, 0, 0, 4, 1024), SP(8, 0, 0, 8, 256),
	SP(8, 1, 1, 4, 64), SP(8, 1, 1, 4, 256), SP(8, 1, 1, 4, 1024),
	SP(8, 2, 0, 4, 256), SP(8, 2, 1, 4, 64), SP(8, 2, 1, 4, 256), SP(8, 2, 1, 4, 1024), SP(8, 4, 2, 4, 256),
	SP(16, 0, 0, 2, 64), SP(16, 0, 0, 2, 256), SP(16, 0, 0, 2, 1024), SP(16, 0, 0, 4, 256),
	SP(16, 1, 1, 2, 256), SP(16, 2, 0, 2, 256), SP(16, 2, 1, 2, 64), SP(16, 2, 1, 2, 256), SP(16, 2, 1, 2, 1024),
	SP(16, 2, 1, 4, 256), SP(32, 0, 0, 1, 256), SP(32, 0, 0, 1, 1024),
	/* persistent: one contiguous slice a block, exactly B blocks an SM */
	SL(8, 0, 0, 4), SL(8, 2, 1, 4), SL(8, 1, 1, 8), SL(16, 0, 0, 1), SL(16, 0, 0, 2), SL(16, 2, 1, 1),
	SL(16, 2, 1, 2), SL(16, 2, 1, 4), SL(32, 0, 0, 1),
	/* 8-byte accesses; cp.async staging */
	{ "gs8byte_u8_cs_b4", F_GS8B, (const void *)k_gs8b_u8, 4, 0, 0, 0 },
	{ "gs8byte_u8_cs_b8", F_GS8B, (const void *)k_gs8b_u8, 8, 0, 0, 0 },
	{ "cpasync_x4_u2_b2", F_CPA, (const void *)k_cpasync, 2, 0, 0, 0 },
	{ "cpasync_x4_u2_b4", F_CPA, (const void *)k_cpasync, 4, 0, 0, 0 },
	{ "cpasync_x4_u2_b6", F_CPA, (const void *)k_cpasync, 6, 0, 0, 0 },
	/* TMA bulk: chunk size, stages, blocks an SM (stages*chunk*blocks <= 227 KiB) */
	TM(16, 2, 6), TM(32, 2, 3), TM(48, 2, 2), TM(16, 4, 3), TM(16, 8, 1), TM(32, 3, 2), TM(32, 4, 1),
	TM(32, 6, 1), TM(48, 4, 1), TM(64, 2, 1), TM(64, 3, 1), TM(8, 8, 3), TM(16, 4, 2), TM(32, 3, 1),
	TM(96, 2, 1),
};
#define NCVARS ((int)(sizeof cvars / sizeof cvars[0]))

static void copy_launch(const struct cvar *v, void *dst, const void *src, size_t bytes)
{
	int grid = v->per_sm * g_sms;
	size_t n16 = bytes / 16;
	switch (v->fam) {
	case F_MEMCPY: CK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, g_s)); return;
	case F_GS:
	case F_PIPE: ((gs_fn)v->fn)<<<grid, BLK, 0, g_s>>>((uint4 *)dst, (const uint4 *)src, n16); break;
	case F_SPAN: ((sp_fn)v->fn)<<<grid, BLK, 0, g_s>>>((uint4 *)dst, (const uint4 *)src, n16, v->span_bytes / 16); break;
	case F_GS8B: k_gs8b_u8<<<grid, BLK, 0, g_s>>>((uint2 *)dst, (const uint2 *)src, bytes / 8); break;
	case F_CPA: k_cpasync<<<grid, BLK, 0, g_s>>>((uint4 *)dst, (const uint4 *)src, n16); break;
	case F_TMA:
		k_tma<<<grid, 32, (size_t)v->chunk * v->stages, g_s>>>((char *)dst, (const char *)src, bytes, v->chunk, v->stages);
		break;
	}
	CKL();
}

static void time_samples(float *ms, int n, void (*run)(const void *), const void *arg)
{
	for (int i = 0; i < n; i++) {
		CK(cudaEventRecord(g_e0, g_s));
		run(arg);
		CK(cudaEventRecord(g_e1, g_s));
		CK(cudaEventSynchronize(g_e1));
		CK(cudaEventElapsedTime(&ms[i], g_e0, g_e1));
	}
}

static void *g_dst, *g_src;
static size_t g_bytes;
static void run_copy(const void *arg) { copy_launch((const struct cvar *)arg, g_dst, g_src, g_bytes); }

static void print_line(const char *name, float *ms, int n, double work, const char *unit, double scale, int ok, const char *note)
{
	qsort(ms, n, sizeof *ms, cmp_float);
	float med = ms[n / 2];
	printf("%-28s median %8.4f ms  min %8.4f  max %8.4f  %8.3f %s  verified %s%s%s\n", name, med, ms[0], ms[n - 1],
	       work / (med * 1e-3) / scale, unit, ok ? "yes" : "NO", note ? "  " : "", note ? note : "");
	fflush(stdout);
}

static int run_copy_suite(double gib, int passes)
{
	g_bytes = (size_t)(gib * (double)(1ull << 30)) & ~(size_t)((1 << 20) - 1);
	size_t words = g_bytes / 4;
	unsigned long long *bad_d, bad;
	CK(cudaMalloc(&g_src, g_bytes));
	CK(cudaMalloc(&g_dst, g_bytes));
	CK(cudaMalloc((void **)&bad_d, sizeof *bad_d));
	k_fill<<<g_sms * 8, 256, 0, g_s>>>((uint32_t *)g_src, words, 0x9e3779b9u);
	CKL();
	size_t maxsm = 0;
	for (int i = 0; i < NCVARS; i++)
		if (cvars[i].fam == F_TMA && (size_t)cvars[i].chunk * cvars[i].stages > maxsm) maxsm = (size_t)cvars[i].chunk * cvars[i].stages;
	int tma_ok = g_cc >= 9;
	if (tma_ok) CK(cudaFuncSetAttribute(k_tma, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)maxsm));
	printf("# copy %zu bytes (read+written bytes counted: %zu), %d SMs, %d samples each\n", g_bytes, 2 * g_bytes, g_sms, KEXP_SAMPLES);
	int nbad = 0;
	for (int pass = 1; pass <= passes; pass++) {
		printf("# copy pass %d of %d\n", pass, passes);
		for (int i = 0; i < NCVARS; i++) {
			const struct cvar *v = &cvars[i];
			if (v->fam == F_TMA && !tma_ok) { printf("%-28s skipped (needs sm_90)\n", v->name); continue; }
			float ms[KEXP_SAMPLES];
			CK(cudaMemsetAsync(g_dst, 0, g_bytes, g_s)); /* poison: src words are never 0 */
			copy_launch(v, g_dst, g_src, g_bytes);       /* warm-up */
			copy_launch(v, g_dst, g_src, g_bytes);
			time_samples(ms, KEXP_SAMPLES, run_copy, v);
			CK(cudaMemsetAsync(bad_d, 0, sizeof *bad_d, g_s));
			k_cmp<<<g_sms * 8, 256, 0, g_s>>>((const uint32_t *)g_dst, (const uint32_t *)g_src, words, bad_d);
			CKL();
			CK(cudaMemcpyAsync(&bad, bad_d, sizeof bad, cudaMemcpyDeviceToHost, g_s));
			CK(cudaStreamSynchronize(g_s));
			char note[64] = "";
			if (bad) snprintf(note, sizeof note, "%llu wrong words", bad);
			nbad += bad != 0;
			print_line(v->name, ms, KEXP_SAMPLES, 2.0 * (double)g_bytes, "TB/s", 1e12, bad == 0, bad ? note : NULL);
		}
	}
	CK(cudaFree(g_src));
	CK(cudaFree(g_dst));
	CK(cudaFree(bad_d));
	return nbad != 0;
}

/* ------------------------------------------------------------------ */
/* FMA variants: x = fma(x, a, b), a = -1, b = 3 at run time: x -> 3 - x -> x,
 * exact for the start values below; after an even number of steps each chain
 * holds its start value again. */
#define INNER 16
__host__ __device__ static inline float start_value(unsigned tid, int c)
{
	return 1.0f + 0.25f * (float)((tid * 31u + (unsigned)c) % 64u);
}

__device__ __forceinline__ unsigned h2_from(float f) { __half2 h = __float2half2_rn(f); return *(unsigned *)&h; }
__device__ __forceinline__ unsigned b2_from(float f) { __nv_bfloat162 h = __float2bfloat162_rn(f); return *(unsigned *)&h; }
__device__ __forceinline__ unsigned short h1_from(float f) { __half h = __float2half_rn(f); return *(unsigned short *)&h; }
__device__ __forceinline__ void h2_out(float *p, unsigned v) { __half2 h = *(__half2 *)&v; p[0] = __low2float(h); p[1] = __high2float(h); }
__device__ __forceinline__ void b2_out(float *p, unsigned v) { __nv_bfloat162 h = *(__nv_bfloat162 *)&v; p[0] = __low2float(h); p[1] = __high2float(h); }
__device__ __forceinline__ void h1_out(float *p, unsigned short v) { __half h = *(__half *)&v; p[0] = __half2float(h); }
__device__ __forceinline__ void f_out(float *p, float v) { p[0] = v; }
/* packed FMA through inline PTX (a register operand for each input) */
#define PTX_FMA2(NAME, INSTR)                                                           \
	__device__ __forceinline__ unsigned NAME(unsigned x, unsigned a, unsigned b)       \
	{                                                                                  \
		unsigned d;                                                                    \
		asm(INSTR " %0, %1, %2, %3;" : "=r"(d) : "r"(x), "r"(a), "r"(b));              \
		return d;                                                                      \
	}
PTX_FMA2(ptx_h2, "fma.rn.f16x2")
PTX_FMA2(ptx_b2, "fma.rn.bf16x2")
__device__ __forceinline__ unsigned short ptx_h1(unsigned short x, unsigned short a, unsigned short b)
{
	unsigned short d;
	asm("fma.rn.f16 %0, %1, %2, %3;" : "=h"(d) : "h"(x), "h"(a), "h"(b));
	return d;
}
__device__ __forceinline__ __half2 mk_h2i(float f) { return __float2half2_rn(f); }
__device__ __forceinline__ void h2i_out(float *p, __half2 h) { p[0] = __low2float(h); p[1] = __high2float(h); }
__device__ __forceinline__ __nv_bfloat162 mk_b2i(float f) { return __float2bfloat162_rn(f); }
__device__ __forceinline__ void b2i_out(float *p, __nv_bfloat162 h) { p[0] = __low2float(h); p[1] = __high2float(h); }
__device__ __forceinline__ float mk_f(float f) { return f; }

/* out: per thread, CH chains of LANES floats each */
#define FMA_K(NAME, T, MK, FMA, OUT, CH, LANES)                                                     \
	__global__ void NAME(float *out, long iters, float af, float bf)                              \
	{                                                                                             \
		unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;                                     \
		T a = MK(af), b = MK(bf), x[CH];                                                          \
		_Pragma("unroll") for (int c = 0; c < (CH); c++) x[c] = MK(start_value(tid, c));          \
		for (long i = 0; i < iters; i += INNER) {                                                 \
			_Pragma("unroll") for (int k = 0; k < INNER; k++)                                     \
				_Pragma("unroll") for (int c = 0; c < (CH); c++) x[c] = FMA(x[c], a, b);          \
		}                                                                                         \
		_Pragma("unroll") for (int c = 0; c < (CH); c++) OUT(out + ((size_t)tid * (CH) + c) * (LANES), x[c]); \
	}

FMA_K(k_f32_c8, float, mk_f, fmaf, f_out, 8, 1)
FMA_K(k_f32_c16, float, mk_f, fmaf, f_out, 16, 1)
FMA_K(k_h2i_c4, __half2, mk_h2i, __hfma2, h2i_out, 4, 2)
FMA_K(k_h2i_c8, __half2, mk_h2i, __hfma2, h2i_out, 8, 2)
FMA_K(k_h2i_c16, __half2, mk_h2i, __hfma2, h2i_out, 16, 2)
FMA_K(k_h2i_c32, __half2, mk_h2i, __hfma2, h2i_out, 32, 2)
FMA_K(k_h2p_c8, unsigned, h2_from, ptx_h2, h2_out, 8, 2)
FMA_K(k_h2p_c16, unsigned, h2_from, ptx_h2, h2_out, 16, 2)
FMA_K(k_h2p_c24, unsigned, h2_from, ptx_h2, h2_out, 24, 2)
FMA_K(k_b2i_c8, __nv_bfloat162, mk_b2i, __hfma2, b2i_out, 8, 2)
FMA_K(k_b2p_c8, unsigned, b2_from, ptx_b2, b2_out, 8, 2)
FMA_K(k_b2p_c16, unsigned, b2_from, ptx_b2, b2_out, 16, 2)
FMA_K(k_h1p_c8, unsigned short, h1_from, ptx_h1, h1_out, 8, 1)

/* FFMA and HFMA2 chains interleaved in one thread: if they run on different
 * pipes the sum of both rates beats either alone. out: CF floats, then CH
 * half2 chains of 2 floats. */
#define MIX_K(NAME, CF, CH)                                                                       \
	__global__ void NAME(float *out, long iters, float af, float bf)                              \
	{                                                                                             \
		unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;                                     \
		float fa = af, fb = bf, y[CF];                                                            \
		unsigned ha = h2_from(af), hb = h2_from(bf), x[CH];                                       \
		_Pragma("unroll") for (int c = 0; c < (CF); c++) y[c] = start_value(tid, c);              \
		_Pragma("unroll") for (int c = 0; c < (CH); c++) x[c] = h2_from(start_value(tid, (CF) + c)); \
		for (long i = 0; i < iters; i += INNER) {                                                 \
			_Pragma("unroll") for (int k = 0; k < INNER; k++) {                                   \
				_Pragma("unroll") for (int c = 0; c < (CH); c++) x[c] = ptx_h2(x[c], ha, hb);     \
				_Pragma("unroll") for (int c = 0; c < (CF); c++) y[c] = fmaf(y[c], fa, fb);       \
			}                                                                                     \
		}                                                                                         \
		float *o = out + (size_t)tid * ((CF) + 2 * (CH));                                         \
		_Pragma("unroll") for (int c = 0; c < (CF); c++) o[c] = y[c];                             \
		_Pragma("unroll") for (int c = 0; c < (CH); c++) h2_out(o + (CF) + 2 * c, x[c]);          \
	}
MIX_K(k_mix_f4_h4, 4, 4)
MIX_K(k_mix_f8_h8, 8, 8)
MIX_K(k_mix_f4_h8, 4, 8)

typedef void (*fma_fn)(float *, long, float, float);
struct fvar {
	const char *name;
	fma_fn fn;
	int nf;      /* leading one-lane chains (FP32 or scalar FP16) */
	int np;      /* packed two-lane chains after them */
	int block, per_sm;
};
static const struct fvar fvars[] = {
	{ "fma_f32_c8_b256x8", k_f32_c8, 8, 0, 256, 8 },
	{ "fma_f32_c16_b256x4", k_f32_c16, 16, 0, 256, 4 },
	{ "fma_h2_intr_c8_b256x8", k_h2i_c8, 0, 8, 256, 8 },   /* today's gk_fma.cu kernel */
	{ "fma_h2_intr_c4_b256x8", k_h2i_c4, 0, 4, 256, 8 },
	{ "fma_h2_intr_c16_b256x4", k_h2i_c16, 0, 16, 256, 4 },
	{ "fma_h2_intr_c16_b256x8", k_h2i_c16, 0, 16, 256, 8 },
	{ "fma_h2_intr_c32_b256x2", k_h2i_c32, 0, 32, 256, 2 },
	{ "fma_h2_intr_c8_b128x16", k_h2i_c8, 0, 8, 128, 16 },
	{ "fma_h2_intr_c8_b1024x2", k_h2i_c8, 0, 8, 1024, 2 },
	{ "fma_h2_intr_c8_b256x4", k_h2i_c8, 0, 8, 256, 4 },
	{ "fma_h2_intr_c8_b256x2", k_h2i_c8, 0, 8, 256, 2 },
	{ "fma_h2_intr_c8_b128x4", k_h2i_c8, 0, 8, 128, 4 },
	{ "fma_h2_ptx_c8_b256x8", k_h2p_c8, 0, 8, 256, 8 },
	{ "fma_h2_ptx_c16_b256x4", k_h2p_c16, 0, 16, 256, 4 },
	{ "fma_h2_ptx_c16_b256x8", k_h2p_c16, 0, 16, 256, 8 },
	{ "fma_h2_ptx_c24_b256x4", k_h2p_c24, 0, 24, 256, 4 },
	{ "fma_b2_intr_c8_b256x8", k_b2i_c8, 0, 8, 256, 8 },   /* today's BF16x2 kernel */
	{ "fma_b2_ptx_c8_b256x8", k_b2p_c8, 0, 8, 256, 8 },
	{ "fma_b2_ptx_c16_b256x4", k_b2p_c16, 0, 16, 256, 4 },
	{ "fma_f16scalar_ptx_c8_b256x8", k_h1p_c8, 8, 0, 256, 8 },
	{ "fma_mix_f32x4_h2x4_b256x8", k_mix_f4_h4, 4, 4, 256, 8 },
	{ "fma_mix_f32x8_h2x8_b256x4", k_mix_f8_h8, 8, 8, 256, 4 },
	{ "fma_mix_f32x4_h2x8_b256x8", k_mix_f4_h8, 4, 8, 256, 8 },
};
#define NFVARS ((int)(sizeof fvars / sizeof fvars[0]))

struct frun { const struct fvar *v; float *out; long iters; int grid; };
static void run_fma(const void *arg)
{
	const struct frun *r = (const struct frun *)arg;
	r->v->fn<<<r->grid, r->v->block, 0, g_s>>>(r->out, r->iters, -1.0f, 3.0f);
	CKL();
}

static int run_fma_suite(void)
{
	int nbad = 0;
	printf("# fma: 2 flops per lane per FMA (HFMA2 = 4 flops), %d SMs, %d samples each\n", g_sms, KEXP_SAMPLES);
	for (int i = 0; i < NFVARS; i++) {
		const struct fvar *v = &fvars[i];
		struct frun r = { v, NULL, 0, v->per_sm * g_sms };
		size_t threads = (size_t)r.grid * v->block, per_thread = (size_t)v->nf + 2 * (size_t)v->np;
		size_t nout = threads * per_thread;
		/* about the same instructions an SM as 2048 threads x 8 chains x 131072 steps */
		long iters = (long)(131072.0 * 8 * 2048 / ((double)(v->nf + v->np) * v->per_sm * v->block));
		iters = iters / (2 * INNER) * (2 * INNER); /* even multiple of INNER: chains return home */
		if (iters < 2 * INNER) iters = 2 * INNER;
		r.iters = iters;
		float *h = (float *)malloc(nout * sizeof(float));
		if (!h) { fprintf(stderr, "kexp: out of host memory\n"); exit(1); }
		CK(cudaMalloc((void **)&r.out, nout * sizeof(float)));
		CK(cudaMemsetAsync(r.out, 0xff, nout * sizeof(float), g_s)); /* NaN poison */
		float ms[KEXP_SAMPLES];
		run_fma(&r); /* warm-up */
		time_samples(ms, KEXP_SAMPLES, run_fma, &r);
		CK(cudaMemcpy(h, r.out, nout * sizeof(float), cudaMemcpyDeviceToHost));
		size_t bad = 0;
		for (size_t k = 0; k < nout; k++) {
			unsigned tid = (unsigned)(k / per_thread);
			int j = (int)(k % per_thread), chain = j < v->nf ? j : v->nf + (j - v->nf) / 2;
			if (!(h[k] == start_value(tid, chain))) bad++;
		}
		double flops = 2.0 * (double)iters * (double)threads * (double)(v->nf + 2 * v->np);
		char note[96];
		snprintf(note, sizeof note, "%zu wrong; grid %d x %d, iters %ld", bad, r.grid, v->block, iters);
		nbad += bad != 0;
		print_line(v->name, ms, KEXP_SAMPLES, flops, "TFLOP/s", 1e12, bad == 0, note);
		CK(cudaFree(r.out));
		free(h);
	}
	return nbad != 0;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "all";
	double gib = argc > 2 ? atof(argv[2]) : 4.0;
	int passes = argc > 3 ? atoi(argv[3]) : 2;
	if (strcmp(what, "copy") && strcmp(what, "fma") && strcmp(what, "all")) {
		fprintf(stderr, "usage: kexp [copy|fma|all] [copy_GiB] [copy_passes]\n");
		return 2;
	}
	if (!(gib >= 0.0625 && gib <= 64)) {
		fprintf(stderr, "kexp: copy size '%s' GiB out of range (0.0625..64)\n", argv[2]);
		return 2;
	}
	if (passes < 1 || passes > 10) {
		fprintf(stderr, "kexp: copy passes '%s' out of range (1..10)\n", argv[3]);
		return 2;
	}
	int dev = 0;
	CK(cudaSetDevice(dev));
	cudaDeviceProp p;
	CK(cudaGetDeviceProperties(&p, dev));
	CK(cudaDeviceGetAttribute(&g_sms, cudaDevAttrMultiProcessorCount, dev));
	CK(cudaDeviceGetAttribute(&g_cc, cudaDevAttrComputeCapabilityMajor, dev));
	printf("# device 0: %s, cc %d.%d, %d SMs, %.1f GiB (clocks: gpus_before/after.txt)\n", p.name, p.major, p.minor, g_sms,
	       (double)p.totalGlobalMem / (1 << 30));
	CK(cudaStreamCreateWithFlags(&g_s, cudaStreamNonBlocking));
	CK(cudaEventCreate(&g_e0));
	CK(cudaEventCreate(&g_e1));
	int rc = 0;
	if (!strcmp(what, "copy") || !strcmp(what, "all")) rc |= run_copy_suite(gib, passes);
	if (!strcmp(what, "fma") || !strcmp(what, "all")) rc |= run_fma_suite();
	CK(cudaStreamSynchronize(g_s));
	printf("# done: %s\n", rc ? "SOME VARIANTS FAILED VERIFICATION" : "all verified");
	return rc;
}
