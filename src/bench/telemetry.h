/* SPDX-License-Identifier: Apache-2.0 */
/*
 * telemetry.h - clocks, power, temperature and clock-event reasons seen while
 * one benchmark test runs, kept with its result (struct bench_telemetry).
 *
 * The sampler (src/sampler) is the only telemetry reader; a recorder thread
 * here copies each new sample of the GPUs under test from it while a test
 * runs (bench_tel_begin .. bench_tel_end). Power over the test comes from the
 * energy counter (energy difference / time between the first and last sample)
 * where the GPU has one, else from the mean power reading. GFLOP/s per watt =
 * the result's median GFLOP/s / that power. The profiling figures (NVML GPM:
 * SM activity, occupancy, tensor and DRAM activity) are the mean of each
 * GPU's samples that have them, averaged over the GPUs that do: a GEMM row
 * shows its tensor activity; NAN on GPUs without GPM.
 */
#ifndef GPUCTL_BENCH_TELEMETRY_H
#define GPUCTL_BENCH_TELEMETRY_H

#include <stdbool.h>
#include <stdint.h>

#include "device/gpu.h"
#include "model.h"

/* What one GPU showed during a test (pure accumulation, unit-tested). */
struct bench_tel_acc {
	unsigned n;
	uint64_t first_ns, last_ns;          /* sample timestamps */
	bool energy_ok;
	uint64_t energy_first_mj, energy_last_mj;
	double power_sum_w;
	unsigned power_n;
	double power_max_w;
	double clock_min, clock_max, mem_clock_min, temp_max, temp_mem_max;
	uint64_t reasons;
	double gpm_sum[BENCH_TEL_NGPM];      /* the profiling figures (BENCH_TEL_GPM_TABLE) */
	unsigned gpm_n[BENCH_TEL_NGPM];
};

void bench_tel_acc_init(struct bench_tel_acc *a);
/* Adds a sample unless it is the same one as the last added (same timestamp). */
void bench_tel_acc_add(struct bench_tel_acc *a, const struct gpu_sample *s);
/* Combines the accumulators of the GPUs under test into out: clocks min/max
 * over GPUs, power summed, temperatures max, reasons OR-ed, the profiling
 * figures averaged over the GPUs that have them. test_s: how long
 * the test's call took (0 or less: unknown). Each GPU's power is its energy
 * counter's difference over the first to last sample when that spans a second
 * or more, else its readings' mean; energy = summed power x test_s, and
 * energy_from says which ("counter" when every GPU's came from its counter,
 * else "readings") or why there is none. */
void bench_tel_summarise(const struct bench_tel_acc *acc, unsigned n, double test_s, struct bench_telemetry *out);
/* GFLOP/s per watt of a result from its flops, median time and tel; NAN when unknown. */
double bench_gflops_per_watt(const struct bench_result *r);

/* The recorder (a thread polling the sampler). */
struct sampler;
struct bench_tel_rec;
/* poll_ms: how often to look for new samples (the sampler's interval or less). */
struct bench_tel_rec *bench_tel_rec_start(struct sampler *s, unsigned poll_ms);
void bench_tel_rec_begin(struct bench_tel_rec *t, const int *gpus, unsigned n);
/* Stops recording and fills r->tel and r->gflops_per_watt. */
void bench_tel_rec_end(struct bench_tel_rec *t, struct bench_result *r);
/* The latest sample of one GPU (clock MHz, power W, temperature C; NAN unknown). */
void bench_tel_rec_now(struct bench_tel_rec *t, int gpu, double *sm_mhz, double *power_w, double *temp_c);
void bench_tel_rec_stop(struct bench_tel_rec *t);

#endif
