/* SPDX-License-Identifier: Apache-2.0 */
// ref_chase.cu - the peer for gpuctl's memory latency sweep (issue 22): the
// plain reference pointer chase the issue describes, kept apart from the
// kernels module so that the two are measured independently. One thread,
// ld.global.cg (L2 only, no L1), a random single cycle over
// 128-byte lines, 2^20 dependent loads from a random start, 5 runs per working
// set, median printed as "ws_bytes ns_per_load" lines.
//   nvcc -O2 -arch=sm_90 bench/ref_chase.cu -o ref_chase && ./ref_chase 16M 1G 4G
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <algorithm>
#include <random>
#include <vector>

#define LINE 128
#define LOADS (1u << 20)

__global__ void chase(const uint64_t *p, uint64_t at, uint64_t *end)
{
	for (unsigned i = 0; i < LOADS; i++) at = __ldcg(p + at);
	*end = at;
}

__global__ void place(uint64_t *p, const uint64_t *next, uint64_t lines)
{
	uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
	for (; i < lines; i += (uint64_t)gridDim.x * blockDim.x) p[i * (LINE / 8)] = next[i] * (LINE / 8);
}

static uint64_t parse(const char *s)
{
	char *e;
	double v = strtod(s, &e);
	switch (*e) { case 'K': v *= 1 << 10; break; case 'M': v *= 1 << 20; break; case 'G': v *= 1 << 30; break; }
	return (uint64_t)v;
}

#define OK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); return 1; } } while (0)

int main(int argc, char **argv)
{
	std::mt19937_64 rng(12345);
	for (int a = 1; a < argc; a++) {
		uint64_t ws = parse(argv[a]), lines = ws / LINE;
		std::vector<uint64_t> next(lines), order(lines);
		for (uint64_t i = 0; i < lines; i++) order[i] = i;
		std::shuffle(order.begin(), order.end(), rng); // next follows this order: one cycle
		for (uint64_t i = 0; i < lines; i++) next[order[i]] = order[(i + 1) % lines];
		uint64_t *p, *dn, *end;
		OK(cudaMalloc(&p, ws));
		OK(cudaMalloc(&dn, lines * 8));
		OK(cudaMalloc(&end, 8));
		OK(cudaMemcpy(dn, next.data(), lines * 8, cudaMemcpyHostToDevice));
		place<<<1024, 256>>>(p, dn, lines);
		OK(cudaDeviceSynchronize());
		cudaEvent_t e0, e1;
		OK(cudaEventCreate(&e0));
		OK(cudaEventCreate(&e1));
		std::vector<float> ms;
		for (int run = 0; run < 6; run++) { // the first run warms (TLB), not counted
			uint64_t start = rng() % lines, got;
			OK(cudaEventRecord(e0));
			chase<<<1, 1>>>(p, start * (LINE / 8), end);
			OK(cudaEventRecord(e1));
			OK(cudaEventSynchronize(e1));
			float t;
			OK(cudaEventElapsedTime(&t, e0, e1));
			OK(cudaMemcpy(&got, end, 8, cudaMemcpyDeviceToHost));
			uint64_t want = start;
			for (unsigned i = 0; i < LOADS; i++) want = next[want];
			if (got != want * (LINE / 8)) { fprintf(stderr, "chase at %s ended off its cycle\n", argv[a]); return 2; }
			if (run) ms.push_back(t);
		}
		std::sort(ms.begin(), ms.end());
		printf("%llu %.1f\n", (unsigned long long)ws, ms[ms.size() / 2] * 1e6 / LOADS);
		fflush(stdout);
		OK(cudaFree(p));
		OK(cudaFree(dn));
		OK(cudaFree(end));
	}
	return 0;
}
