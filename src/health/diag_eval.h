/* SPDX-License-Identifier: Apache-2.0 */
/*
 * diag_eval.h - the pure side of `gpuctl diag`: thresholds per GPU model,
 * judging a measured value against its threshold, the cross-GPU variation
 * finding, and the software/environment checks of level 1. No I/O: the
 * command passes measured values, the catalog entry and the environment in.
 *
 * Thresholds are a share of a datasheet figure from the GPU catalog. Each
 * share ("factor") is the ratio measured on a healthy reference GPU (the
 * 2x H200 SXM of docs/h200-readings.md, then bench/RESULTS.md) times 0.9,
 * rounded down to a multiple of 0.05: a healthy GPU passes with margin, a GPU that
 * lost a sixth of its speed (an HBM stack, half its lanes, a throttled
 * clock) fails. docs/diag.md lists every factor and where it comes from.
 */
#ifndef GPUCTL_DIAG_EVAL_H
#define GPUCTL_DIAG_EVAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/catalog.h"
#include "device/snapshot.h"
#include "health.h"

enum diag_test {
	DT_MEMTEST = 0,     /* memory pattern test: wrong words (must be 0) */
	DT_PCIE_H2D,        /* pinned host-to-device copy, GB/s */
	DT_PCIE_D2H,        /* pinned device-to-host copy, GB/s */
	DT_P2P,             /* peer copy one direction, GB/s (NVLink or PCIe path) */
	DT_MEM_BW,          /* device copy, bytes read + written, GB/s */
	DT_GEMM_FP32,       /* verified GEMM stress, TFLOP/s */
	DT_GEMM_TF32,
	DT_GEMM_BF16,
	DT_GEMM_FP8,
	DT_NCCL_ALLREDUCE,  /* bus bandwidth, GB/s */
	DT_SUSTAINED,       /* throughput at the end over the start of a sustained load (ratio) */
	DT_COUNT
};

struct diag_threshold {
	bool defined;          /* false: the catalog lacks the figure (no check, said so) */
	double min;            /* a result below it FAILs */
	double datasheet;      /* the figure it derives from */
	double factor;         /* min = datasheet * factor */
	char unit[12];         /* "GB/s", "TFLOP/s", "" */
	char basis[160];       /* "0.80 x 4800 GB/s (H200 SXM memory bandwidth)" */
};

const char *diag_test_name(enum diag_test t);   /* "memtest", "pcie_h2d", ... (stable) */
double diag_factor(enum diag_test t, bool nvlink); /* the documented share */

/* Threshold of test t on model g. nvlinks: links between the two GPUs of a
 * pair (P2P, NCCL: the fewest over all pairs); 0 = the PCIe path. */
int diag_threshold_for(const struct cat_gpu *g, enum diag_test t, unsigned nvlinks, struct diag_threshold *out);

struct diag_judgement {
	enum health_verdict verdict;
	char detail[200];      /* "measured 3.1 GB/s < threshold 47.9 GB/s (0.75 x 64 GB/s PCIe Gen5 x16)" */
};

/* Judges a measured value (higher is better) against th: FAIL under min,
 * PASS otherwise; NA when the threshold is undefined (the value is still printed). */
void diag_judge(double measured, const struct diag_threshold *th, struct diag_judgement *out);
/* Judges an error count that must be 0 (memtest words, GEMM miscompares, NaNs). */
void diag_judge_errors(uint64_t errors, uint64_t checked, const char *what, struct diag_judgement *out);

/* Cross-GPU variation: a GPU slower than the median of the OTHER GPUs by more
 * than max_slower_pct is slow (for 2 GPUs: slower than the other one). values
 * with valid[i] false take no part. Returns how many are slow; slow[i] and
 * pct_below[i] (percent under the others' median, negative if faster) are set
 * for valid entries. Fewer than 2 valid values: 0, nothing judged. */
unsigned diag_variation(const double *values, const bool *valid, unsigned n, double max_slower_pct, bool *slow,
			double *pct_below);
#define DIAG_DEFAULT_VARIATION_PCT 10.0

/* ---- level 1: software and environment ---------------------------------- */

/* The environment variables that change what CUDA and NCCL see (the command
 * reads them; NULL = unset). */
struct diag_env {
	const char *cuda_visible_devices;
	const char *cuda_device_order;
	const char *cuda_launch_blocking;
	const char *nccl_p2p_disable;
	const char *nccl_shm_disable;
};

struct diag_check {
	char name[32];                 /* "cuda_visible_devices" */
	enum health_verdict verdict;
	char detail[200];
};

/* Checks the environment against the GPUs of s. Writes up to max checks;
 * returns how many. */
unsigned diag_env_check(const struct diag_env *env, const struct snapshot *s, struct diag_check *out, unsigned max);

#endif
