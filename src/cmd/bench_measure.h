/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_measure.h - running the benchmark suites on the real GPUs, shared by
 * `gpuctl bench` and `gpuctl report` (its quick run): NVML for the
 * inventory and telemetry, the kernels module for the measurements, the
 * catalog for the datasheet limits.
 */
#ifndef GPUCTL_CMD_BENCH_MEASURE_H
#define GPUCTL_CMD_BENCH_MEASURE_H

#include <stdbool.h>

#include "cmd.h"
#include "bench/limits.h"
#include "bench/suite.h"
#include "core/catalog.h"

struct bench_measure_opts {
	const char *cmd;           /* "bench" or "report": names the command in messages */
	const char *gpus;          /* -i SPEC or NULL (all) */
	const char *kernels;       /* --kernels PATH or NULL */
	bool quiet;                /* no progress lines */
};

/*
 * Measures plan on the real GPUs (uses ctx->be when the command already has a
 * backend, else opens NVML and closes it before returning). Fills run (header,
 * GPUs, results with limits and thresholds applied; run initialised here) and
 * loads cat (the caller frees it; for_gpu[i] points into it). Returns EXIT_OK,
 * or an exit code after a one-line message: 69 no driver, GPU or module.
 */
int bench_measure(struct cmd_ctx *ctx, const struct bench_measure_opts *mo, struct bench_plan *plan,
		  const struct bench_thresholds *thr, struct bench_run *run, struct catalog *cat,
		  const struct cat_gpu **for_gpu);

#endif
