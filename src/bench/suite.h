/* SPDX-License-Identifier: Apache-2.0 */
/*
 * suite.h - which benchmarks `gpuctl bench` runs and how: the plan (suites,
 * GPUs, sizes, samples, --quick / --full), and the runner that calls the
 * kernels module's entry points (kernels/gpuctl_kernels.h) and turns each
 * answer into a bench_result (model.h).
 *
 * The runner never prints and never reads the clock or the environment: the
 * command passes a clock, a telemetry recorder and a progress callback in
 * (struct bench_hooks). Method (issue 4): device-event timing by the module,
 * warm-up, at least GK_MIN_SAMPLES samples, every result verified before its
 * time counts (a failed check is a FAILED result, never a figure).
 */
#ifndef GPUCTL_BENCH_SUITE_H
#define GPUCTL_BENCH_SUITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels_host/kmod.h"
#include "model.h"

/*
 * The suites, one row each, in bit order (the order they run in, but for host,
 * which runs first): X(ID, name). ID gives enum bench_suite's BENCH_<ID>, name
 * the --suite word and the runner bench_suite_<name> (suite_int.h). Adding a
 * suite is a row here, its runner and its docs/bench.md section.
 */
#define BENCH_SUITE_TABLE(X) \
	X(COPY, copy)           /* host<->device */ \
	X(MEMORY, memory)       /* device memory bandwidth and latency */ \
	X(COMPUTE, compute)     /* FMA peak, cuBLAS/cuBLASLt GEMM per precision */ \
	X(GEMM, gemm)           /* naive / tiled / register-blocked FP32 GEMM vs cuBLAS */ \
	X(P2P, p2p)             /* GPU pairs: bandwidth and latency, NVLink vs host-staged */ \
	X(NCCL, nccl)           /* collectives over all selected GPUs */ \
	X(APPS, apps)           /* SpMV, Lennard-Jones, BVH ray traversal vs the CPU */ \
	X(SUSTAINED, sustained) /* minutes of GEMM load with telemetry each second */ \
	X(HOST, host)           /* host memory copy bandwidth (the CPU side of claim C6) */ \
	X(TRAIN, train)         /* GPT-2 training step per precision (claim C3) */

/* A suite's position in the table (its bit number). */
enum bench_suite_index {
#define BENCH_SUITE_INDEX(id, name) BENCH_INDEX_##id,
	BENCH_SUITE_TABLE(BENCH_SUITE_INDEX)
#undef BENCH_SUITE_INDEX
	BENCH_NSUITES
};

enum bench_suite {
#define BENCH_SUITE_BIT(id, name) BENCH_##id = 1u << BENCH_INDEX_##id,
	BENCH_SUITE_TABLE(BENCH_SUITE_BIT)
#undef BENCH_SUITE_BIT
	BENCH_ALL_SUITES = (1u << BENCH_NSUITES) - 1u
};

/* The suites run when none is named: everything but `sustained` (minutes). */
#define BENCH_DEFAULT_SUITES (BENCH_ALL_SUITES & ~BENCH_SUSTAINED)

const char *bench_suite_name(unsigned bit);            /* "copy" ... */
/* "copy,memory" or "all" into a mask. Returns 0, or -1 naming the bad name. */
int bench_suites_parse(const char *spec, unsigned *mask, char *err, size_t errlen);

/* Keeps the results of a saved run that `-s` and `-i` select (--results):
 * those of a suite in `suites` (a result of a suite this build does not know
 * is kept only with every suite), and, when by_gpu, those whose GPU or p2p
 * peer is in `gpus` (bit i = GPU i): results on all GPUs or the host (gpu -1)
 * go. In order; returns how many are left. */
size_t bench_run_keep(struct bench_run *run, unsigned suites, bool by_gpu, uint64_t gpus);

#define BENCH_MAX_SIZES 16

struct bench_plan {
	unsigned suites;             /* enum bench_suite bits */
	bool full;                   /* --full: size and shape sweeps; else --quick */
	unsigned ngpus;              /* GPUs selected, in order */
	int gpu[GK_MAX_DEVS];        /* their NVML indexes (what results and telemetry name) */
	int cuda[GK_MAX_DEVS];       /* the same GPUs' CUDA ordinals */
	int nvlinks[GK_MAX_DEVS][GK_MAX_DEVS]; /* links between selected GPUs i, j; -1 unknown */
	int iters;                   /* timed samples; 0 = 10 (quick) / 20 (full) */
	int warmup;                  /* 0 = the module's default */
	unsigned nsizes;             /* --size: overrides every size sweep; 0 = defaults */
	uint64_t sizes[BENCH_MAX_SIZES];
	double sustained_s;          /* per GPU; 0 = 60 s */
	double test_timeout_s;       /* per call; 0 = 120 s */
	int cpu_threads;             /* host threads for CPU references (>= 1) */
	char train_model[8];         /* train: GPT-2 preset; "" = 124M (and --full adds 350M, 774M) */
	int grad_accum;              /* train: micro-batches per optimizer step; 0 = 1 */
	uint64_t seed;
};

void bench_plan_default(struct bench_plan *p);
/* The largest transfer size a test takes. */
#define BENCH_MAX_SIZE (64ull << 30)
/* Parses "4K,1M,1.5G" into the plan: each a size as core/units.h reads it
 * (powers of 1024; bytes without suffix), 1 byte to BENCH_MAX_SIZE. */
int bench_sizes_parse(struct bench_plan *p, const char *spec, char *err, size_t errlen);

struct bench_hooks {
	void *arg;
	/* CLOCK_MONOTONIC in ns (deadlines, host timing). Required. */
	uint64_t (*now_ns)(void *arg);
	/* Telemetry around one test on GPUs gpus[0..n) (NVML indexes); end fills r->tel
	 * and r->gflops_per_watt. Either may be NULL (no telemetry). */
	void (*tel_begin)(void *arg, const int *gpus, unsigned n);
	void (*tel_end)(void *arg, struct bench_result *r);
	/* Sustained suite: a telemetry reading of one GPU now (clock MHz, power W,
	 * temperature C; NAN where unknown). May be NULL. */
	void (*tel_now)(void *arg, int gpu, double *sm_mhz, double *power_w, double *temp_c);
	/* Seconds on a monotonic clock, for the CPU references of the apps suite
	 * (kernels_host/cpu_ref.h). NULL: the CPU side is not timed (no speed-up). */
	double (*cpu_now_s)(void);
	/* Called after each result is complete (progress line). May be NULL. */
	void (*done)(void *arg, const struct bench_result *r);
};

/*
 * Runs the plan's suites with the module api, appending results to run.
 * Returns 0 when every suite ran (results may still be FAILED/SKIPPED), or -1
 * with a message when nothing could run (bad plan, out of memory).
 */
int bench_run_plan(const struct gk_api *api, const struct bench_plan *plan, const struct bench_hooks *hooks,
		   struct bench_run *run, char *err, size_t errlen);

#endif
