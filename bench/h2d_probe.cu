/* SPDX-License-Identifier: Apache-2.0 */
/*
 * h2d_probe.cu - what a pinned host-to-device copy measures right after
 * something else (issue 31: `diag -r 2` measured pcie_h2d 29.6 GB/s on a
 * healthy H200 where `diag -r 3` and `bench -s copy` measured 55).
 *
 *   nvcc -O2 -arch=sm_90 -o h2d_probe bench/h2d_probe.cu
 *   ./h2d_probe fresh|bigfree|bigfree_wait|memtest|memtest_wait [fraction]
 *
 * Each mode, in a fresh process: makes a 256 MiB pinned (mapped, portable)
 * buffer with a non-zero pattern, then
 *   fresh          nothing more
 *   bigfree        cudaMalloc of `fraction` (0.85) of free memory, cudaFree
 *   bigfree_wait   the same, then waits until cudaMemGetInfo's free memory is
 *                  back where it was (the driver's scrub of freed pages)
 *   memtest        a memtest-like write+read pass over that buffer, cudaFree
 *   memtest_wait   the same, then the wait of bigfree_wait
 *   bigonly        the cudaMalloc and cudaFree alone, then exits (no copy):
 *                  run `fresh` right after it to see whether a slowdown
 *                  outlives the process that freed
 * then times 2 untimed + 40 timed H2D copies, printing every sample (ms,
 * GB/s) with the time since the free and cudaMemGetInfo's free bytes. The
 * copied data is checked on the device at the end. Every CUDA call checked.
 * With a third argument SECONDS: then one copy every 20 ms for that long,
 * printing when the rate first comes back within 5% of the fresh rate
 * (`recovered after N ms`) or that it did not.
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CK(x)                                                                                  \
	do {                                                                                   \
		cudaError_t e_ = (x);                                                          \
		if (e_ != cudaSuccess) {                                                       \
			fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
			exit(1);                                                               \
		}                                                                              \
	} while (0)

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

__global__ void k_write(uint4 *p, size_t n, uint32_t seed)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		p[i] = make_uint4((uint32_t)i ^ seed, (uint32_t)(i >> 32) + seed, ~(uint32_t)i, seed * 3u);
}

__global__ void k_read(const uint4 *p, size_t n, uint32_t seed, unsigned long long *bad)
{
	unsigned long long b = 0;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
		uint4 v = p[i];
		b += v.x != ((uint32_t)i ^ seed) || v.z != ~(uint32_t)i;
	}
	if (b) atomicAdd(bad, b);
}

__global__ void k_check_words(const uint32_t *p, size_t n, unsigned long long *bad)
{
	unsigned long long b = 0;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		b += p[i] != (uint32_t)(i * 2654435761u + 1u);
	if (b) atomicAdd(bad, b);
}

/* One timed copy of bytes from host to dev on s: its milliseconds. */
static float time_copy(void *dev, const void *host, size_t bytes, cudaStream_t s, cudaEvent_t e0, cudaEvent_t e1)
{
	CK(cudaEventRecord(e0, s));
	CK(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, s));
	CK(cudaEventRecord(e1, s));
	CK(cudaEventSynchronize(e1));
	float ms = 0;
	CK(cudaEventElapsedTime(&ms, e0, e1));
	return ms;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "fresh";
	double fraction = argc > 2 ? atof(argv[2]) : 0.85;
	const size_t bytes = 256u << 20, words = bytes / 4;
	CK(cudaSetDevice(0));
	CK(cudaFree(0));
	uint32_t *host, *dev;
	unsigned long long *bad;
	CK(cudaHostAlloc((void **)&host, bytes, cudaHostAllocMapped | cudaHostAllocPortable));
	for (size_t i = 0; i < words; i++) host[i] = (uint32_t)(i * 2654435761u + 1u);
	CK(cudaMalloc((void **)&dev, bytes));
	CK(cudaMalloc((void **)&bad, sizeof *bad));
	CK(cudaMemset(bad, 0, sizeof *bad));
	size_t free0 = 0, total = 0;
	CK(cudaMemGetInfo(&free0, &total));
	double t_free = now_s();
	double watch_s = argc > 3 ? atof(argv[3]) : 0;
	if (strncmp(mode, "bigfree", 7) == 0 || strncmp(mode, "memtest", 7) == 0 || strcmp(mode, "bigonly") == 0) {
		size_t big = (size_t)(free0 * fraction) & ~(size_t)((2u << 20) - 1);
		void *b = NULL;
		CK(cudaMalloc(&b, big));
		if (strncmp(mode, "memtest", 7) == 0) {
			size_t n16 = big / 16;
			k_write<<<132 * 8, 256>>>((uint4 *)b, n16, 12345u);
			CK(cudaGetLastError());
			k_read<<<132 * 8, 256>>>((const uint4 *)b, n16, 12345u, bad);
			CK(cudaGetLastError());
			CK(cudaDeviceSynchronize());
		}
		double t0 = now_s();
		CK(cudaFree(b));
		t_free = now_s();
		printf("# mode %s: %.1f GiB allocated, cudaFree took %.1f ms\n", mode, big / 1073741824.0,
		       (t_free - t0) * 1e3);
		if (strcmp(mode, "bigonly") == 0)
			return 0;
		if (strstr(mode, "_wait")) {
			size_t f = 0;
			int polls = 0;
			do {
				CK(cudaMemGetInfo(&f, &total));
				polls++;
			} while (f + (64u << 20) < free0 && now_s() - t_free < 30);
			printf("# free memory back after %.1f ms (%d polls)\n", (now_s() - t_free) * 1e3, polls);
		}
	}
	cudaStream_t s;
	cudaEvent_t e0, e1;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	for (int i = 0; i < 42; i++) {
		float ms = time_copy(dev, host, bytes, s, e0, e1);
		size_t f = 0;
		CK(cudaMemGetInfo(&f, &total));
		printf("%s sample %2d%s t=%8.1f ms  %7.3f ms  %6.2f GB/s  free %.2f GiB\n", mode, i, i < 2 ? " (warm-up)" : "",
		       (now_s() - t_free) * 1e3, ms, bytes / (ms * 1e6), f / 1073741824.0);
	}
	if (watch_s > 0) {
		double fresh_gbs = 55.0, t_rec = -1;
		int n = 0;
		while (now_s() - t_free < watch_s) {
			float ms = time_copy(dev, host, bytes, s, e0, e1);
			double gbs = bytes / (ms * 1e6), t = (now_s() - t_free) * 1e3;
			if (n++ % 25 == 0) printf("%s watch t=%8.1f ms  %6.2f GB/s\n", mode, t, gbs);
			if (t_rec < 0 && gbs > fresh_gbs * 0.95) {
				t_rec = t;
				printf("%s watch t=%8.1f ms  %6.2f GB/s  (first at full rate)\n", mode, t, gbs);
			}
			struct timespec nap = { 0, 20 * 1000 * 1000 };
			nanosleep(&nap, NULL);
		}
		if (t_rec >= 0) printf("# %s (fraction %.2f): recovered after %.0f ms\n", mode, fraction, t_rec);
		else printf("# %s (fraction %.2f): not recovered after %.0f ms\n", mode, fraction, watch_s * 1e3);
	}
	k_check_words<<<132 * 4, 256, 0, s>>>(dev, words, bad);
	CK(cudaGetLastError());
	unsigned long long hbad = 0;
	CK(cudaMemcpyAsync(&hbad, bad, sizeof hbad, cudaMemcpyDeviceToHost, s));
	CK(cudaStreamSynchronize(s));
	printf("# %s: %llu bad words (copy check and memtest together)\n", mode, hbad);
	return hbad != 0;
}
