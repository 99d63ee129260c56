/* SPDX-License-Identifier: Apache-2.0 */
/*
 * train_plan.h - a `bench -s train` row beside the planner (issue 16): the
 * same GPT-2, precision, micro-batch, sequence and accumulation planned by
 * `gpuctl plan train --framework gpuctl` (src/plan/gpuctl_step.c), its
 * memory and step time set beside the measured ones, and the rule on the
 * memory; the row's throughput in the planner's FLOP counting, which
 * `plan train --bench-results` turns into an MFU; the rows as table cells
 * for bench's text output and the report. Pure, but for bench_print_train.
 */
#ifndef GPUCTL_BENCH_TRAIN_PLAN_H
#define GPUCTL_BENCH_TRAIN_PLAN_H

#include <stdbool.h>
#include <stdio.h>

#include "plan/plan.h"
#include "model.h"

/* The planner's memory must agree with the measured memory within this (issue
 * 16); a row outside it is LOW (bench exits 1, a warning), its figure kept:
 * the GPU measured fine, the planner is what is off. */
#define TRAIN_PLAN_MEM_TOL_PCT 5.0

/* The suite's rows measure gpuctl's own step: the planner's framework they answer for. */
#define TRAIN_PLAN_FRAMEWORK FW_GPUCTL

/* The planner's model and configuration of a train row (test: the model preset,
 * variant: "bf16", "tf32", "fp32", or "bf16-dpN"; m, n, k: micro-batch, sequence,
 * accumulation). TF32 keeps FP32 storage: the planner's fp32. -1 when the row
 * is not a training step the planner models. */
int train_plan_config(const struct bench_result *r, struct plan_model *m, struct plan_train *t);

/* The row's measured tokens/s times the planner's FLOPs per token, in TFLOP/s
 * (what the planner's time estimate divides by); NAN when it cannot be told. */
double train_plan_step_tflops(const struct bench_result *r);

/* What a saved run (`plan train --bench-results FILE`) gives the planner's time
 * estimate for precision prec under framework fw. */
struct train_plan_rates {
	double gemm_tflops;      /* the GEMM of that precision the run measured (compute/cublas, else
	                          * sustained/gemm); NAN when absent */
	double step_tflops;      /* train_plan_step_tflops of the run's train row of that precision
	                          * (one GPU; the row of model m when there is one); NAN when none */
	char step_row[64];       /* that row, "train 124M bf16"; "" when none */
	char why_no_step[160];   /* when step_tflops is NAN: why */
};
void train_plan_rates(const struct bench_run *run, enum plan_framework fw, enum plan_prec prec,
		      const struct plan_model *m, struct train_plan_rates *o);

struct train_plan_pred {
	double mem_gib, mem_diff_pct;   /* planned peak (GiB, as the row's mem_gib); (planned - measured) / measured */
	double step_ms, step_diff_pct;  /* planned step at the calibrated share of peak_tflops (the
	                                 * datasheet of the row's precision: plan_train_rate); NAN without a peak */
};
/* What the planner predicts for row r given its precision's datasheet peak
 * (NAN: no step-time prediction). -1 when the row cannot be planned. */
int train_plan_predict(const struct bench_result *r, double peak_tflops, struct train_plan_pred *p);

/* On a measured (ok or low) train row: sets aux plan_mem_gib, plan_mem_diff_pct,
 * plan_step_ms and plan_step_diff_pct (the peak is the row's datasheet limit),
 * replacing those of an earlier call, and applies the memory rule. Returns true
 * when the rule made the row LOW. Call after the row's limit and threshold are set. */
bool train_plan_apply(struct bench_result *r);

/* The train rows of a run (failed and skipped ones too), in order; returns how many. */
unsigned train_plan_rows(const struct bench_run *run, const struct bench_result **out, unsigned max);

/* One train row as table cells (text output, report text and HTML). */
#define TRAIN_PLAN_COLS 8
#define TRAIN_PLAN_CELL 192
extern const char *const train_plan_headers[TRAIN_PLAN_COLS];
void train_plan_row(const struct bench_result *r, char cells[TRAIN_PLAN_COLS][TRAIN_PLAN_CELL]);
/* What the planner columns are, one line. */
void train_plan_legend(char *out, size_t len);

/* The table of train rows under bench's text output; nothing when there are none. */
void bench_print_train(const struct bench_run *run, FILE *out);

#endif
