/* SPDX-License-Identifier: Apache-2.0 */
/* test_bench_train.c - `bench -s train` against a scripted kernels module: a
 * result counts only when the tiny model's gradients match the CPU reference
 * and the real model's loss fell; its figure, aux and the plan's options. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/suite.h"
#include "kernels_host/train_ref.h"

static struct {
	int checks, runs;          /* calls in each mode */
	double grad_scale;         /* the scripted gradients are the reference times this */
	bool flat_loss;            /* the timed run's loss does not fall */
	int last_layers, last_accum, last_batch, last_ndevs, last_dev1;
} fake;

static int fake_train(const struct gk_train_args *a, struct gk_result *r)
{
	memset(r, 0, sizeof(*r));
	if (a->grads_out) {
		fake.checks++;
		double loss = ktrain_ref_grads(&a->m, a->batch, a->seq, a->params_in, a->tokens_in, a->grads_out);
		size_t sz[GK_TRAIN_NTENSORS], n = gk_train_param_sizes(&a->m, sz);
		for (size_t i = 0; i < n; i++)
			a->grads_out[i] = (float)(a->grads_out[i] * fake.grad_scale);
		a->losses_out[0] = (float)loss;
		return GK_OK;
	}
	fake.runs++;
	fake.last_layers = a->m.layers;
	fake.last_accum = a->grad_accum;
	fake.last_batch = a->batch;
	fake.last_ndevs = a->ndevs;
	fake.last_dev1 = a->devs[1];
	int steps = a->c.warmup + a->c.iters;
	for (int i = 0; i < steps; i++)
		a->losses_out[i] = fake.flat_loss ? 10.9f : 10.9f - 0.1f * (float)i;
	r->nsamples = a->c.iters;
	for (int i = 0; i < r->nsamples; i++)
		r->samples_ms[i] = 50.0;
	double tokens = (double)a->batch * a->seq * a->grad_accum * (a->ndevs > 0 ? a->ndevs : 1);
	r->flops = ktrain_flops_per_token(&a->m, a->seq) * tokens;
	r->naux = 2;
	snprintf(r->aux[0].name, sizeof(r->aux[0].name), "tokens");
	r->aux[0].value = tokens;
	snprintf(r->aux[1].name, sizeof(r->aux[1].name), "mem_gib");
	r->aux[1].value = 13.4;
	return GK_OK;
}

static uint64_t h_now(void *arg)
{
	(void)arg;
	return 1000000000ull;
}

static const struct gk_api with_train = {
	.abi_version = GK_ABI_VERSION, .struct_size = sizeof(struct gk_api), .build_info = "fake", .train = fake_train,
};
static const struct gk_api without_train = {
	.abi_version = GK_ABI_VERSION, .struct_size = sizeof(struct gk_api), .build_info = "fake",
};

static void run_plan_on(const struct gk_api *api, struct bench_plan *p, struct bench_run *run, unsigned ngpus)
{
	p->suites = BENCH_TRAIN;
	p->ngpus = ngpus;
	for (unsigned i = 0; i < ngpus; i++) {
		p->gpu[i] = (int)i;
		p->cuda[i] = (int)(ngpus - 1 - i); /* CUDA's order differs from NVML's */
	}
	struct bench_hooks h = { .now_ns = h_now };
	char err[256];
	bench_run_init(run);
	assert_int_equal(bench_run_plan(api, p, &h, run, err, sizeof(err)), 0);
}

static void run_plan(const struct gk_api *api, struct bench_plan *p, struct bench_run *run)
{
	run_plan_on(api, p, run, 1);
}

static int reset(void **state)
{
	(void)state;
	memset(&fake, 0, sizeof(fake));
	fake.grad_scale = 1.0;
	return 0;
}

static void test_suite_is_named_train(void **state)
{
	(void)state;
	unsigned mask;
	char err[256];
	assert_int_equal(bench_suites_parse("train", &mask, err, sizeof(err)), 0);
	assert_int_equal(mask, BENCH_TRAIN);
	assert_string_equal(bench_suite_name(BENCH_TRAIN), "train");
	assert_true(BENCH_DEFAULT_SUITES & BENCH_TRAIN); /* --quick includes a short run */
}

static void test_verified_rows_per_precision(void **state)
{
	(void)state;
	struct bench_plan p;
	bench_plan_default(&p);
	struct bench_run run;
	run_plan(&with_train, &p, &run);
	assert_int_equal(run.n, 3);
	assert_int_equal(fake.checks, 3);
	assert_int_equal(fake.runs, 3);
	assert_int_equal(fake.last_layers, 12); /* 124M */
	assert_int_equal(fake.last_accum, 1);
	static const char *const precs[] = { "bf16", "tf32", "fp32" };
	for (int i = 0; i < 3; i++) {
		const struct bench_result *r = &run.r[i];
		assert_string_equal(r->suite, "train");
		assert_string_equal(r->test, "124M");
		assert_string_equal(r->variant, precs[i]);
		assert_int_equal(r->status, BS_OK);
		assert_true(r->verified);
		struct gk_train_cfg m;
		ktrain_preset("124M", &m);
		double tflops = ktrain_flops_per_token(&m, 1024) * 16384 / 50e-3 / 1e12;
		assert_true(fabs(r->value.median - tflops) < 1e-6 * tflops);
		assert_true(fabs(bench_result_aux(r, "tokens_per_s") - 16384 / 50e-3) < 1e-6);
		assert_true(fabs(bench_result_aux(r, "step_ms") - 50.0) < 1e-9);
		assert_true(bench_result_aux(r, "grad_err") < 1e-6);
		assert_true(bench_result_aux(r, "loss_last") < bench_result_aux(r, "loss_first"));
		assert_int_equal(r->m, 16);
		assert_int_equal(r->n, 1024);
	}
	bench_run_free(&run);
}

static void test_wrong_gradients_fail_before_timing(void **state)
{
	(void)state;
	fake.grad_scale = 1.5;
	struct bench_plan p;
	bench_plan_default(&p);
	struct bench_run run;
	run_plan(&with_train, &p, &run);
	assert_int_equal(run.n, 3);
	assert_int_equal(fake.runs, 0);
	for (size_t i = 0; i < run.n; i++) {
		assert_int_equal(run.r[i].status, BS_FAILED);
		assert_non_null(strstr(run.r[i].message, "gradient"));
	}
	bench_run_free(&run);
}

static void test_loss_that_does_not_fall_fails(void **state)
{
	(void)state;
	fake.flat_loss = true;
	struct bench_plan p;
	bench_plan_default(&p);
	struct bench_run run;
	run_plan(&with_train, &p, &run);
	for (size_t i = 0; i < run.n; i++) {
		assert_int_equal(run.r[i].status, BS_FAILED);
		assert_non_null(strstr(run.r[i].message, "did not fall"));
	}
	bench_run_free(&run);
}

static void test_module_without_training_is_skipped(void **state)
{
	(void)state;
	struct bench_plan p;
	bench_plan_default(&p);
	struct bench_run run;
	run_plan(&without_train, &p, &run);
	assert_int_equal(run.n, 3);
	for (size_t i = 0; i < run.n; i++)
		assert_int_equal(run.r[i].status, BS_SKIPPED);
	bench_run_free(&run);
}

static void test_model_and_accumulation_options(void **state)
{
	(void)state;
	struct bench_plan p;
	bench_plan_default(&p);
	p.full = true;
	struct bench_run run;
	run_plan(&with_train, &p, &run);
	assert_int_equal(run.n, 5); /* --full adds 350M and 774M in bf16 */
	assert_string_equal(run.r[3].test, "350M");
	assert_string_equal(run.r[4].test, "774M");
	assert_int_equal(fake.last_layers, 36);
	bench_run_free(&run);
	reset(NULL);
	bench_plan_default(&p);
	snprintf(p.train_model, sizeof(p.train_model), "350M");
	p.grad_accum = 4;
	run_plan(&with_train, &p, &run);
	assert_int_equal(run.n, 3);
	assert_int_equal(fake.last_layers, 24);
	assert_int_equal(fake.last_accum, 4);
	assert_int_equal(run.r[0].k, 4);
	assert_true(fabs(bench_result_aux(&run.r[0], "tokens_per_s") - 4 * 16384 / 50e-3) < 1e-6);
	bench_run_free(&run);
}

static void test_data_parallel_row_over_all_gpus(void **state)
{
	(void)state;
	struct bench_plan p;
	bench_plan_default(&p);
	struct bench_run run;
	run_plan_on(&with_train, &p, &run, 2);
	assert_int_equal(run.n, 4);
	const struct bench_result *dp = &run.r[3];
	assert_string_equal(dp->variant, "bf16-dp2");
	assert_int_equal(dp->ngpus, 2);
	assert_int_equal(dp->status, BS_OK);
	assert_int_equal(fake.last_ndevs, 2);
	assert_int_equal(fake.last_dev1, 0); /* the second selected GPU's CUDA ordinal */
	/* twice the tokens in the same step time: twice the one-GPU row, 100 % scaling */
	assert_true(fabs(dp->value.median - 2 * run.r[0].value.median) < 1e-6 * dp->value.median);
	assert_true(fabs(bench_result_aux(dp, "scaling_pct") - 100.0) < 1e-6);
	assert_true(isnan(bench_result_aux(&run.r[0], "scaling_pct")));
	bench_run_free(&run);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_suite_is_named_train, reset),
		cmocka_unit_test_setup(test_verified_rows_per_precision, reset),
		cmocka_unit_test_setup(test_wrong_gradients_fail_before_timing, reset),
		cmocka_unit_test_setup(test_loss_that_does_not_fall_fails, reset),
		cmocka_unit_test_setup(test_module_without_training_is_skipped, reset),
		cmocka_unit_test_setup(test_model_and_accumulation_options, reset),
		cmocka_unit_test_setup(test_data_parallel_row_over_all_gpus, reset),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
