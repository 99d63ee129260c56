/* SPDX-License-Identifier: Apache-2.0 */
/* test_claims_train.c - the report's training claims from bench's train rows
 * (data/claims.json): C3, mixed precision's speed-up over FP32 and TF32 of one
 * model and batch; C5, data-parallel scaling from a train row over 2+ GPUs, or
 * plainly not answered on one GPU (the all-reduce figure only as a labelled proxy). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/claims.h"

static struct claims claims;

static int setup(void **state)
{
	(void)state;
	char err[512];
	if (claims_load_default(&claims, getenv("GPUCTL_DATA_DIR"), err, sizeof(err)) != 0)
		fail_msg("%s", err);
	return 0;
}

static struct claim_eval eval(const struct bench_run *run, const char *id)
{
	struct claim_eval ev[CLAIMS_MAX];
	claims_evaluate(&claims, run, NULL, ev);
	for (unsigned i = 0; i < claims.n; i++)
		if (!strcmp(ev[i].claim->id, id))
			return ev[i];
	fail_msg("no claim %s", id);
	return ev[0];
}

/* A measured row of `tflops` (ten equal samples); m = micro-batch. */
static struct bench_result *add(struct bench_run *run, const char *suite, const char *test, const char *variant,
				double value, unsigned m, int ngpus)
{
	struct bench_result *r = bench_run_add(run, suite, test, variant);
	assert_non_null(r);
	r->gpu = ngpus > 1 ? -1 : 0;
	r->ngpus = ngpus;
	r->m = m;
	r->n = 1024;
	r->k = 1;
	r->verified = true;
	double ms[10];
	for (int j = 0; j < 10; j++)
		ms[j] = 1.0;
	assert_int_equal(bench_result_set_samples(r, BM_TFLOPS, ms, 10, 0, value * 1e9, NAN), 0);
	if (!strcmp(suite, "nccl"))
		snprintf(r->unit, sizeof(r->unit), "GB/s"); /* the figure is all the claim reads */
	return r;
}

static void test_c3_over_fp32_and_tf32_of_the_same_batch(void **state)
{
	(void)state;
	struct bench_run run;
	bench_run_init(&run);
	run.ngpus = 1;
	add(&run, "train", "124M", "bf16", 256.0, 16, 1);
	add(&run, "train", "124M", "fp32", 99.0, 8, 1); /* another batch: not compared */
	add(&run, "train", "124M", "fp32", 43.6, 16, 1);
	add(&run, "train", "124M", "tf32", 143.1, 16, 1);
	struct claim_eval e = eval(&run, "C3");
	assert_float_equal(e.ours, 256.0 / 43.6, 1e-9);
	assert_float_equal(e.ratio, 256.0 / 43.6 / 3.0, 1e-9); /* the guide: up to 3x */
	assert_string_equal(e.ours_text, "5.87x over fp32, 1.79x over tf32");
	assert_non_null(strstr(e.note, "tf32 143.1"));
	/* without the TF32 row: the FP32 ratio alone */
	run.r[3].status = BS_FAILED;
	e = eval(&run, "C3");
	assert_string_equal(e.ours_text, "5.87x over fp32");
	/* without an FP32 row of the same batch: not measured, and why */
	run.r[2].status = BS_SKIPPED;
	e = eval(&run, "C3");
	assert_true(isnan(e.ours));
	assert_string_equal(e.ours_text, "not measured");
	assert_non_null(strstr(e.note, "of the same model and batch"));
	bench_run_free(&run);
}

static void test_c5_from_data_parallel_training(void **state)
{
	(void)state;
	struct bench_run run;
	bench_run_init(&run);
	run.ngpus = 2;
	add(&run, "train", "124M", "bf16", 256.0, 16, 1);
	add(&run, "nccl", "all_reduce", "", 342.4, 0, 2);
	/* two GPUs, no data-parallel row: not measured, the proxy labelled as one */
	struct claim_eval e = eval(&run, "C5");
	assert_true(isnan(e.ours));
	assert_true(isnan(e.ratio));
	assert_string_equal(e.ours_text, "not measured");
	assert_string_equal(e.note, "no data-parallel train row (bench -s train on 2+ GPUs). Proxy only: all_reduce "
				    "busbw 342.4 GB/s");
	/* the data-parallel step over 2 GPUs at 95% of twice one GPU: 1.9x, 0.95 of linear */
	struct bench_result *dp = add(&run, "train", "124M", "bf16-dp2", 486.4, 16, 2);
	bench_result_add_aux(dp, "scaling_pct", 95.0, "%");
	e = eval(&run, "C5");
	assert_float_equal(e.ours, 1.9, 1e-9);
	assert_float_equal(e.ratio, 0.95, 1e-9);
	assert_string_equal(e.ours_text, "1.90x on 2 GPUs");
	/* the row over the most GPUs answers */
	run.ngpus = 8;
	dp = add(&run, "train", "124M", "bf16-dp8", 1800.0, 16, 8);
	bench_result_add_aux(dp, "scaling_pct", 88.0, "%");
	e = eval(&run, "C5");
	assert_string_equal(e.ours_text, "7.04x on 8 GPUs");
	/* a failed data-parallel row answers nothing */
	run.r[2].status = run.r[3].status = BS_FAILED;
	e = eval(&run, "C5");
	assert_true(isnan(e.ours));
	bench_run_free(&run);
}

static void test_c5_on_one_gpu_says_it_cannot(void **state)
{
	(void)state;
	struct bench_run run;
	bench_run_init(&run);
	run.ngpus = 1;
	add(&run, "train", "124M", "bf16", 256.0, 16, 1);
	struct claim_eval e = eval(&run, "C5");
	assert_true(isnan(e.ours));
	assert_string_equal(e.note, "1 GPU cannot answer this: it needs training on 2+ GPUs");
	/* a one-rank all-reduce is still only a proxy */
	add(&run, "nccl", "all_reduce", "", 1500.0, 0, 1);
	e = eval(&run, "C5");
	assert_true(isnan(e.ours));
	assert_string_equal(e.note, "1 GPU cannot answer this: it needs training on 2+ GPUs. Proxy only: all_reduce "
				    "busbw 1500 GB/s");
	bench_run_free(&run);
}

static void test_kinds_parse(void **state)
{
	(void)state;
	struct claims c;
	char err[256];
	const char *ok = "{\"schema\":\"gpuctl-claims\",\"claims\":[{\"id\":\"X\",\"claim\":\"x\",\"kind\":\"train_scaling\","
			 "\"num\":{\"suite\":\"train\",\"test\":\"124M\",\"variant\":\"bf16\"}}]}";
	assert_int_equal(claims_parse(&c, ok, strlen(ok), err, sizeof(err)), 0);
	assert_int_equal(c.c[0].kind, CLAIM_TRAIN_SCALING);
	assert_string_equal(c.c[0].proxy.suite, "");
	const char *no_den = "{\"schema\":\"gpuctl-claims\",\"claims\":[{\"id\":\"X\",\"claim\":\"x\",\"kind\":\"train_precision\","
			     "\"num\":{\"suite\":\"train\",\"test\":\"124M\",\"variant\":\"bf16\"}}]}";
	assert_int_equal(claims_parse(&c, no_den, strlen(no_den), err, sizeof(err)), -1);
	assert_non_null(strstr(err, "'den' is missing"));
	const char *bad_alt = "{\"schema\":\"gpuctl-claims\",\"claims\":[{\"id\":\"X\",\"claim\":\"x\",\"kind\":\"train_precision\","
			      "\"num\":{\"suite\":\"t\",\"test\":\"a\"},\"den\":{\"suite\":\"t\",\"test\":\"b\"},\"alt\":3}]}";
	assert_int_equal(claims_parse(&c, bad_alt, strlen(bad_alt), err, sizeof(err)), -1);
	assert_non_null(strstr(err, "'alt' is not an object"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_c3_over_fp32_and_tf32_of_the_same_batch),
		cmocka_unit_test(test_c5_from_data_parallel_training),
		cmocka_unit_test(test_c5_on_one_gpu_says_it_cannot),
		cmocka_unit_test(test_kinds_parse),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
