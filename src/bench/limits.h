/* SPDX-License-Identifier: Apache-2.0 */
/*
 * limits.h - the datasheet side of a benchmark figure (pure).
 *
 *  (nccl-tests' bus-bandwidth factors are kmod_busbw_factor in kmod.h.)
 *  - bench_datasheet_limit: which catalog figure bounds a result, in its unit.
 *  - thresholds: `--min-ratio 0.8` or `--min-ratio copy=0.86,memory=0.9`; a
 *    result whose measured/datasheet ratio falls under its threshold is LOW
 *    and makes `gpuctl bench` exit 1.
 */
#ifndef GPUCTL_BENCH_LIMITS_H
#define GPUCTL_BENCH_LIMITS_H

#include <stddef.h>

#include "core/catalog.h"
#include "model.h"

/* The datasheet limit for result r on GPU model g, in r->unit. Returns 0 and
 * fills *limit and what ("H200 SXM mem_bw 4800 GB/s"), or -1 when the catalog
 * has no figure that bounds this result (latency, speed-ups, unknown GPU). */
int bench_datasheet_limit(const struct cat_gpu *g, const struct bench_result *r, double *limit, char *what, size_t whatlen);

#define BENCH_MAX_THRESHOLDS 16
struct bench_thresholds {
	double all;                /* for suites without their own; NAN = none */
	unsigned n;
	struct { char suite[16]; double min; } per[BENCH_MAX_THRESHOLDS];
};

void bench_thresholds_init(struct bench_thresholds *t);
/* Adds "R" or "suite=R[,suite=R...]" (0 < R <= 2). Returns 0, or -1 with a
 * one-line message naming the bad part. */
int bench_thresholds_parse(struct bench_thresholds *t, const char *spec, char *err, size_t errlen);
/* The threshold for a suite, NAN when none applies. */
double bench_threshold_for(const struct bench_thresholds *t, const char *suite);

/*
 * Sets limit, ratio, min_ratio and status (OK / LOW) of every measured result.
 * cat_for_gpu[i] is the catalog entry of GPU i (NULL when unknown); results on
 * all GPUs (gpu -1) use GPU 0's. t NULL: each result keeps the min_ratio it
 * has (a saved run re-read). A train row also gets the planner's prediction
 * and its memory rule (train_plan_apply). Returns the number of LOW results.
 */
size_t bench_apply_limits(struct bench_run *run, const struct cat_gpu *const *cat_for_gpu, unsigned ncat,
			  const struct bench_thresholds *t);

/* For a saved run: for_gpu[i] (BENCH_MAX_GPUS entries) = the catalog entry of
 * the model the run names for GPU i, NULL when it names none or cat lacks it. */
void bench_saved_catalog(const struct bench_run *run, const struct catalog *cat, const struct cat_gpu **for_gpu);

#endif
