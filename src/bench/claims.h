/* SPDX-License-Identifier: Apache-2.0 */
/*
 * claims.h - the guide's claims (data/claims.json, from
 * shared/docs/guide-claims.md) checked against a benchmark run: for each, the
 * guide's figure, ours, and the ratio ours / guide. Pure: parse and evaluate.
 */
#ifndef GPUCTL_BENCH_CLAIMS_H
#define GPUCTL_BENCH_CLAIMS_H

#include <stddef.h>

#include "model.h"

#define CLAIMS_MAX 32

/* train_precision: num / den of one model and batch (num's micro-batch, sequence,
 * accumulation and GPU), and num / alt beside it (C3: BF16 over FP32 and TF32).
 * train_scaling: the data-parallel rows of num ("<variant>-dpN", N >= 2): ours is
 * the speed-up over one GPU, N x aux scaling_pct, ratio the share of linear; none
 * (one GPU) says so, with proxy's figure labelled as a proxy (C5). */
enum claim_kind { CLAIM_RATIO = 0, CLAIM_TIME_SAVED, CLAIM_AUX, CLAIM_VALUE, CLAIM_NONE, CLAIM_TRAIN_PRECISION,
		  CLAIM_TRAIN_SCALING };

struct claim_sel { char suite[16], test[40], variant[16]; };

struct claim {
	char id[8];
	char source[16];
	char text[160];          /* the claim as the guide makes it */
	double guide;            /* the guide's figure in `unit`; NAN when it gives none */
	char guide_text[48];
	char unit[32];
	enum claim_kind kind;
	struct claim_sel num, den;
	struct claim_sel alt;    /* CLAIM_TRAIN_PRECISION: a second denominator ("" suite: none) */
	struct claim_sel proxy;  /* CLAIM_TRAIN_SCALING: shown, labelled, when nothing answers */
	char field[24];          /* CLAIM_VALUE: "gflops_per_watt" or "" (the median) */
	char aux[24];            /* CLAIM_AUX: the aux figure's name */
	double scale;            /* CLAIM_AUX: multiplier (1 when absent) */
	char how[160];
	char checked_by[48];     /* CLAIM_NONE: the command that checks it */
};

struct claims {
	unsigned n;
	struct claim c[CLAIMS_MAX];
};

/* What a run says about one claim. */
struct claim_eval {
	const struct claim *claim;
	double ours;             /* NAN when not measured */
	double ratio;            /* ours / guide; NAN when either is missing */
	char ours_text[64];      /* "2.31 x", "412 GFLOP/s/W", "not measured" */
	char note[400];          /* why not measured, or what the figure is made of */
};

int claims_parse(struct claims *out, const char *json, size_t len, char *err, size_t errlen);
int claims_load_default(struct claims *out, const char *env_data_dir, char *err, size_t errlen);

/* The best (highest median) measured result matching sel; NULL when none. */
const struct bench_result *claims_pick(const struct bench_run *run, const struct claim_sel *sel);

/* Evaluates every claim on run (NULL: nothing measured; why_none says why). */
void claims_evaluate(const struct claims *cl, const struct bench_run *run, const char *why_none,
		     struct claim_eval *out);

#endif
