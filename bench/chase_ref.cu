/* SPDX-License-Identifier: Apache-2.0 */
/*
 * chase_ref.cu - a reference pointer chase, written apart from the kernels
 * module (kernels/gk_mem.cu), for the acceptance gate (scripts/gpu/accept.py)
 * to hold `gpuctl bench`'s memory latency against.
 *
 *   nvcc -O2 -arch=sm_90 -o chase_ref bench/chase_ref.cu
 *   ./chase_ref BYTES [STRIDE]      prints one JSON line {"bytes":..,"ns":..}
 *
 * One random cycle (Sattolo's shuffle, a splitmix64 generator) through every
 * STRIDE-th 8-byte word (default 128 bytes) of a BYTES buffer; one thread
 * follows it with L1-bypassing loads (ld.global.cg), 2^21 untimed hops first,
 * then a timed run of 2^20 hops between two CUDA events; ns per hop is the
 * median of 5 such runs. The hop count is
 * checked: the cycle must return to its start after exactly `slots` hops.
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CK(x)                                                                                          \
	do {                                                                                           \
		cudaError_t e_ = (x);                                                                  \
		if (e_ != cudaSuccess) {                                                               \
			fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
			exit(1);                                                                       \
		}                                                                                      \
	} while (0)

static uint64_t sm64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

__global__ void k_follow(const uint64_t *chain, uint64_t start, uint64_t hops, uint64_t *out)
{
	uint64_t p = start;
	for (uint64_t i = 0; i < hops; i++) p = __ldcg(chain + p);
	out[0] = p;
}

/* hops until the cycle returns to start: one thread, the same loads */
__global__ void k_cycle_len(const uint64_t *chain, uint64_t start, uint64_t limit, uint64_t *out)
{
	uint64_t p = __ldcg(chain + start), n = 1;
	while (p != start && n < limit) {
		p = __ldcg(chain + p);
		n++;
	}
	out[0] = n;
}

static int cmp(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: chase_ref BYTES [STRIDE]\n");
		return 64;
	}
	size_t bytes = strtoull(argv[1], NULL, 0), stride = argc > 2 ? strtoull(argv[2], NULL, 0) : 128;
	if (stride < 8 || stride % 8 || bytes < 2 * stride) {
		fprintf(stderr, "chase_ref: bad size or stride\n");
		return 64;
	}
	size_t slots = bytes / stride, step = stride / 8, words = bytes / 8;
	uint64_t *order = (uint64_t *)malloc(slots * 8), *chain = (uint64_t *)calloc(words, 8);
	if (!order || !chain) return 1;
	uint64_t seed = 0x5eed1234abcdull;
	for (size_t i = 0; i < slots; i++) order[i] = i;
	for (size_t i = slots - 1; i > 0; i--) { /* Sattolo: one cycle through every slot */
		size_t j = (size_t)(sm64(&seed) % i);
		uint64_t t = order[i]; order[i] = order[j]; order[j] = t;
	}
	for (size_t i = 0; i < slots; i++) chain[i * step] = order[i] * step;
	uint64_t *d_chain, *d_out;
	CK(cudaMalloc((void **)&d_chain, bytes));
	CK(cudaMalloc((void **)&d_out, 8));
	CK(cudaMemcpy(d_chain, chain, words * 8, cudaMemcpyHostToDevice));
	uint64_t len = 0;
	k_cycle_len<<<1, 1>>>(d_chain, 0, (uint64_t)slots + 1, d_out);
	CK(cudaGetLastError());
	CK(cudaMemcpy(&len, d_out, 8, cudaMemcpyDeviceToHost));
	if (len != slots) {
		fprintf(stderr, "chase_ref: the cycle has %llu hops, not %zu\n", (unsigned long long)len, slots);
		return 1;
	}
	uint64_t hops = 1u << 20;
	k_follow<<<1, 1>>>(d_chain, 0, 2 * hops, d_out); /* untimed */
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
	cudaEvent_t e0, e1;
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	float ms[5];
	for (int r = 0; r < 5; r++) {
		CK(cudaEventRecord(e0));
		k_follow<<<1, 1>>>(d_chain, 0, hops, d_out);
		CK(cudaGetLastError());
		CK(cudaEventRecord(e1));
		CK(cudaEventSynchronize(e1));
		CK(cudaEventElapsedTime(&ms[r], e0, e1));
	}
	qsort(ms, 5, sizeof ms[0], cmp);
	printf("{\"bytes\": %zu, \"stride\": %zu, \"hops\": %llu, \"ns\": %.3f}\n", bytes, stride,
	       (unsigned long long)hops, ms[2] * 1e6 / (double)hops);
	return 0;
}
