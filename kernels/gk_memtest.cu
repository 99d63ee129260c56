/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gk_memtest.cu - device memory test for diag: walking ones (32 rotations of
 * a one-hot word, shifted by the word's index), address in address (each
 * word holds its own address, then its complement), and random words from a
 * seed; each written and read back over a share of the free memory.
 * flip_bits (tests only) flips that many bits in distinct words after the
 * first write of a pass, so a failing GPU can be shown without one.
 */
#include "gk_common.cuh"
#include "gk_entries.cuh"

#define MT_BLOCK 256

__device__ __forceinline__ uint32_t mt_word(int pattern, int sub, uint64_t seed, size_t i, uint64_t base)
{
	switch (pattern) {
	case GK_MT_WALKING_ONES: return 1u << ((i + sub) & 31);
	case GK_MT_ADDRESS: { uint32_t w = (uint32_t)((base + 4 * i) >> 2) ^ (uint32_t)((base + 4 * i) >> 34);
		return sub ? ~w : w; }
	default: return gk_word(seed, i);
	}
}

__global__ void k_mt_write(uint4 *p, size_t n16, int pattern, int sub, uint64_t seed, uint64_t base)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n16; i += (size_t)gridDim.x * blockDim.x) {
		size_t w = 4 * i;
		p[i] = make_uint4(mt_word(pattern, sub, seed, w, base), mt_word(pattern, sub, seed, w + 1, base),
				  mt_word(pattern, sub, seed, w + 2, base), mt_word(pattern, sub, seed, w + 3, base));
	}
}

__global__ void k_mt_check(const uint4 *p, size_t n16, int pattern, int sub, uint64_t seed, uint64_t base,
			   unsigned long long *bad, unsigned long long *first)
{
	unsigned long long b = 0, f = ~0ull;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n16; i += (size_t)gridDim.x * blockDim.x) {
		uint4 v = p[i];
		size_t w = 4 * i;
		uint32_t got[4] = { v.x, v.y, v.z, v.w };
#pragma unroll
		for (int k = 0; k < 4; k++)
			if (got[k] != mt_word(pattern, sub, seed, w + k, base)) { b++; if (f == ~0ull) f = (w + k) * 4; }
	}
	if (b) { atomicAdd(bad, b); atomicMin(first, f); }
}

/* Flip one bit in each of nflip distinct words (one per equal region). */
__global__ void k_mt_flip(uint32_t *p, size_t words, uint64_t nflip, uint64_t seed)
{
	size_t region = words / nflip;
	for (uint64_t j = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; j < nflip; j += (uint64_t)gridDim.x * blockDim.x) {
		uint32_t h = gk_hash32(seed + j);
		p[j * region + h % region] ^= 1u << (h >> 27);
	}
}

static int memtest_inner(const struct gk_memtest_args *a, struct gk_result *r, struct gk_track *t)
{
	CKR(gk_set_device(r, a->c.device));
	if (a->pattern < GK_MT_WALKING_ONES || a->pattern > GK_MT_RANDOM) return gk_fail(r, GK_EARG, "unknown memtest pattern %d", a->pattern);
	if (!(a->fraction > 0 && a->fraction <= 0.95)) return gk_fail(r, GK_EARG, "memtest fraction %.3f is not in (0, 0.95]", a->fraction);
	size_t fr = 0, tot = 0;
	CK(cudaMemGetInfo(&fr, &tot));
	size_t bytes = (size_t)(fr * a->fraction) & ~(size_t)((2u << 20) - 1);
	void *buf = NULL;
	/* free memory moves under us (other processes, the context): step down until it fits */
	for (int tries = 0; tries < 16 && bytes >= (2u << 20); tries++) {
		if (cudaMalloc(&buf, bytes) == cudaSuccess) break;
		cudaGetLastError();
		buf = NULL;
		bytes -= bytes / 16 & ~(size_t)((2u << 20) - 1);
	}
	if (!buf) return gk_fail(r, GK_ENOMEM, "memtest: cannot allocate %.1f%% of %zu free bytes", a->fraction * 100, fr);
	CK(cudaSetDevice(a->c.device));
	CKR(gk_track_adopt(t, r, GK_T_DEV, buf));
	size_t words = bytes / 4, n16 = bytes / 16;
	uint64_t seed = gk_seed(&a->c), base = (uint64_t)(uintptr_t)buf;
	cudaStream_t s; cudaEvent_t e0, e1;
	unsigned long long *cnt;
	CKR(gk_stream(t, r, &s));
	CKR(gk_event(t, r, &e0)); CKR(gk_event(t, r, &e1));
	CKR(gk_dmalloc(t, r, (void **)&cnt, 2 * sizeof *cnt));
	unsigned long long init[2] = { 0, ~0ull };
	CK(cudaMemcpy(cnt, init, sizeof init, cudaMemcpyHostToDevice));
	int subs = a->pattern == GK_MT_WALKING_ONES ? 32 : a->pattern == GK_MT_ADDRESS ? 2 : 1;
	int passes = a->c.iters < 1 ? 1 : a->c.iters > GK_MAX_SAMPLES ? GK_MAX_SAMPLES : a->c.iters;
	int grid = gk_sm_count(a->c.device) * 8;
	for (int pass = 0; pass < passes; pass++) {
		uint64_t ps = seed + pass * 0x1000193ull;
		CK(cudaEventRecord(e0, s));
		for (int sub = 0; sub < subs; sub++) {
			k_mt_write<<<grid, MT_BLOCK, 0, s>>>((uint4 *)buf, n16, a->pattern, sub, ps, base);
			CKL();
			if (a->flip_bits && sub == 0) {
				uint64_t nf = a->flip_bits < words ? a->flip_bits : words;
				k_mt_flip<<<gk_grid(nf, 256, 1024), 256, 0, s>>>((uint32_t *)buf, words, nf, ps);
				CKL();
			}
			k_mt_check<<<grid, MT_BLOCK, 0, s>>>((const uint4 *)buf, n16, a->pattern, sub, ps, base, cnt, cnt + 1);
			CKL();
			CK(cudaEventRecord(e1, s));
			CKR(gk_wait_event(r, e1, a->c.deadline_ns)); /* a hang is caught within one sub-pass */
		}
		float ms;
		CK(cudaEventElapsedTime(&ms, e0, e1));
		r->samples_ms[r->nsamples++] = ms;
	}
	unsigned long long h[2];
	CK(cudaMemcpy(h, cnt, sizeof h, cudaMemcpyDeviceToHost));
	r->bytes = 2.0 * bytes * subs;
	r->verify.checked = (uint64_t)words * subs * passes;
	r->verify.mismatches = h[0];
	r->verify.verified = h[0] == 0;
	gk_aux(r, "tested_bytes", (double)bytes, "B");
	gk_aux(r, "free_bytes", (double)fr, "B");
	gk_aux(r, "first_bad_offset", h[0] ? (double)h[1] : -1.0, "B");
	if (h[0])
		return gk_fail(r, GK_EVERIFY, "memtest: %llu wrong words, first at byte offset %llu of %zu tested",
			       h[0], h[1], bytes);
	return GK_OK;
}

int gk_memtest(const struct gk_memtest_args *a, struct gk_result *r) { GK_ENTRY(r, memtest_inner(a, r, GK_T)); }
