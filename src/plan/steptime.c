/* SPDX-License-Identifier: Apache-2.0 */
/*
 * steptime.c - what one GPU delivers to a training step, per precision: the
 * rate the planner's time divides the FLOPs by (plan_train_seconds), for
 * `plan train --tokens` (and so its cost rows) and the planner's step beside
 * every `bench -s train` row (issue 40). One place, four bases, each named:
 *
 *   --mfu X                         X of the peak (the measured GEMM, else the datasheet)
 *   measured here (train row)       a measured train step of this precision and framework
 *   GEMM measured here              the measured GEMM x the calibrated share of GEMM
 *   catalog, calibrated on H200     the datasheet peak x the calibrated share of datasheet
 *
 * The calibration: measured training steps on one H200 SXM (989.4 BF16, 494.7
 * TF32, 67 FP32 dense TFLOP/s in the catalog), in the planner's FLOP counting.
 * Each share is the middle of the smallest and largest share its runs reached,
 * so the step time is off by at most worst_pct on every run it was read from.
 * The runs (bench/RESULTS.md, "Training step: GPT-2 in CUDA C vs PyTorch";
 * bench/runs/2026-12-01-train2, -train3, 2026-12-02-quickbench, -attn,
 * -s6-quickbench; /work/shared/docs/h200-readings.md; issue 40's report run),
 * GPT-2 at micro-batch 16 x sequence 1024, tokens/s:
 *
 *   gpuctl's step (bench -s train)
 *     bf16 124M: 297,584 298,272 297,458 300,976 298,941 300,348 (54.55 ms, issue 40);
 *          350M: 115,795; 774M: 58,041                       share 0.2585..0.3057 of datasheet
 *     tf32 124M: 166,457 167,185 168,217 172,204 169,153     share 0.2893..0.2993
 *     fp32 124M: 50,696 50,685 50,530 53,078 53,104 53,002 (309.12 ms, issue 40)
 *                                                            share 0.6485..0.6815
 *   transformers 5.17 GPT2LMHeadModel, PyTorch 2.11 eager, SDPA, fused AdamW
 *     AMP bf16: 152,083 152,061 151,367 203,900               share 0.1316..0.1772
 *     tf32: 113,663 129,600; fp32 (TF32 off): 49,954 50,600
 *
 * The shares of GEMM divide by the cuBLAS 8192^3 GEMM of the same call (776.4,
 * 811.0, 825.1, 786.9 BF16; 396.7, 406.9, 418.3, 394.0 TF32; 49.7, 49.75,
 * 51.07, 50.85 FP32; PyTorch's readings: 783, 368, 51.1); runs without one in
 * the same call are left out of them. tests/unit/test_plan_steptime.c holds
 * every run to its entry's worst_pct; docs/plan.md has the table of errors.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "plan.h"

static const struct plan_step_calib calib[] = {
	{ FW_GPUCTL, "bf16", 0.2821, 0.3498, 8, 8.36, 6, 11.37 },
	{ FW_GPUCTL, "tf32", 0.2943, 0.3575, 5, 1.70, 4, 3.27 },
	{ FW_GPUCTL, "fp32", 0.6650, 0.8744, 6, 2.48, 4, 2.70 },
	{ FW_HF, "bf16", 0.1544, 0.1912, 4, 14.79, 4, 17.12 },
	{ FW_HF, "tf32", 0.2114, 0.2746, 2, 6.55, 2, 10.28 },
	{ FW_HF, "fp32", 0.6453, 0.8579, 2, 0.64, 2, 0.75 },
};

const struct plan_step_calib *plan_step_calibration(enum plan_framework fw, const char *prec, char *note,
						    size_t notelen)
{
	/* gpuctl's rows calibrate gpuctl's step; transformers' runs every PyTorch-based framework */
	enum plan_framework cfw = fw == FW_GPUCTL ? FW_GPUCTL : FW_HF;
	const char *cprec = prec;
	note[0] = '\0';
	if (!strcmp(prec, "fp16") || !strcmp(prec, "fp8"))
		cprec = "bf16";
	if (cfw != fw && cprec != prec)
		snprintf(note, notelen, "%s not timed: transformers' %s share", fw == FW_PYTORCH ? "pytorch" : "deepspeed",
			 cprec);
	else if (cfw != fw)
		snprintf(note, notelen, "%s not timed: transformers' share", fw == FW_PYTORCH ? "pytorch" : "deepspeed");
	else if (cprec != prec)
		snprintf(note, notelen, "%s not timed: %s's share", prec, cprec);
	for (size_t i = 0; i < sizeof(calib) / sizeof(calib[0]); i++)
		if (calib[i].fw == cfw && !strcmp(calib[i].prec, cprec))
			return &calib[i];
	return NULL;
}

const struct plan_step_calib *plan_step_calibrations(size_t *n)
{
	*n = sizeof(calib) / sizeof(calib[0]);
	return calib;
}

int plan_train_rate(const struct plan_rate_in *in, struct plan_rate *o)
{
	char note[96], extra[100] = "";
	memset(o, 0, sizeof(*o));
	bool gemm = in->gemm_tflops > 0;
	o->peak_tflops = gemm ? in->gemm_tflops : in->datasheet_tflops;
	snprintf(o->peak_from, sizeof(o->peak_from), "%s", gemm ? "measured GEMM" : "datasheet");
	if (!(o->peak_tflops > 0))
		return -1;
	if (in->mfu > 0) {
		o->mfu = in->mfu;
		o->basis = PLAN_RATE_OPTION;
		snprintf(o->basis_text, sizeof(o->basis_text), "--mfu %.3g of the %s", in->mfu, o->peak_from);
		return 0;
	}
	if (in->step_tflops > 0) {
		o->mfu = in->step_tflops / o->peak_tflops;
		o->basis = PLAN_RATE_MEASURED;
		snprintf(o->basis_text, sizeof(o->basis_text), "measured here (%s)", in->step_row ? in->step_row : "train");
		return 0;
	}
	const struct plan_step_calib *c = plan_step_calibration(in->fw, in->prec, note, sizeof(note));
	if (!c)
		return -1;
	if (note[0])
		snprintf(extra, sizeof(extra), "; %s", note);
	o->mfu = gemm ? c->of_gemm : c->of_datasheet;
	o->basis = gemm ? PLAN_RATE_GEMM : PLAN_RATE_CATALOG;
	snprintf(o->basis_text, sizeof(o->basis_text), "%s, calibrated on H200 runs (%s %s: %.3g of %s, within %.1f%%%s)",
		 gemm ? "GEMM measured here" : "catalog", plan_framework_name(c->fw), c->prec, o->mfu,
		 gemm ? "the GEMM" : "the datasheet", gemm ? c->gemm_worst_pct : c->worst_pct, extra);
	return 0;
}

const char *plan_rate_basis_name(enum plan_rate_basis b)
{
	switch (b) {
	case PLAN_RATE_OPTION: return "option";
	case PLAN_RATE_MEASURED: return "measured here";
	case PLAN_RATE_GEMM: return "GEMM measured here, calibrated on H200 runs";
	default: return "catalog, calibrated on H200 runs";
	}
}
