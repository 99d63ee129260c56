/* SPDX-License-Identifier: Apache-2.0 */
/* test_plan_gpuctl.c - `plan train --framework gpuctl`: the memory of gpuctl's
 * own GPT-2 step against what the step held on one H200 (bench/RESULTS.md,
 * bench/runs/2026-12-01-train2/train.log: cudaMemGetInfo before allocating and
 * after the first step), and the architectures it refuses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "plan/plan.h"

static struct plan_model gpt2(unsigned layers, unsigned hidden, unsigned heads)
{
	struct plan_model m = { .has_arch = true, .layers = layers, .hidden = hidden, .heads = heads,
				.kv_heads = heads, .vocab = 50257, .ffn = 4 * hidden, .max_pos = 1024,
				.tied_embeddings = true, .bias = true, .layernorm = true };
	snprintf(m.name, sizeof(m.name), "gpt2-test");
	return m;
}

static void test_matches_the_measured_runs(void **state)
{
	(void)state;
	static const struct { unsigned layers, hidden, heads; enum plan_prec prec; double gib; } runs[] = {
		{ 12, 768, 12, PREC_BF16, 13.39 },  /* 124M */
		{ 12, 768, 12, PREC_FP32, 24.42 },
		{ 24, 1024, 16, PREC_BF16, 32.50 }, /* 350M */
		{ 36, 1280, 20, PREC_BF16, 60.77 }, /* 774M */
	};
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		struct plan_model m = gpt2(runs[i].layers, runs[i].hidden, runs[i].heads);
		struct plan_train t;
		plan_train_defaults(&t);
		t.fw = FW_GPUCTL;
		t.prec = runs[i].prec;
		t.micro_batch = 16;
		t.seq = 1024;
		struct plan_mem o;
		char err[256];
		assert_int_equal(plan_train_memory(&m, &t, &o, err, sizeof(err)), 0);
		double gib = o.peak / (1u << 30);
		/* the issue asks for 5 %; the allocation list gives far better */
		assert_true(fabs(gib - runs[i].gib) <= 0.01 * runs[i].gib);
		assert_true(o.total > o.peak);
		assert_true(o.fragmentation == 0);
	}
}

static void test_refuses_what_the_step_cannot_train(void **state)
{
	(void)state;
	struct plan_model llama = { .has_arch = true, .layers = 32, .hidden = 4096, .heads = 32, .kv_heads = 32,
				    .vocab = 32000, .ffn = 11008, .gated_mlp = true };
	struct plan_model g = gpt2(12, 768, 12);
	struct plan_train t;
	plan_train_defaults(&t);
	t.fw = FW_GPUCTL;
	struct plan_mem o;
	char err[256];
	assert_int_equal(plan_train_memory(&llama, &t, &o, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "gpuctl"));
	t.prec = PREC_FP16;
	assert_int_equal(plan_train_memory(&g, &t, &o, err, sizeof(err)), -1);
	t.prec = PREC_BF16;
	t.ckpt = CKPT_FULL;
	assert_int_equal(plan_train_memory(&g, &t, &o, err, sizeof(err)), -1);
	t.ckpt = CKPT_NONE;
	t.seq = 2048;
	assert_int_equal(plan_train_memory(&g, &t, &o, err, sizeof(err)), -1);
	enum plan_framework fw;
	assert_int_equal(plan_framework_parse("gpuctl", &fw), 0);
	assert_int_equal(fw, FW_GPUCTL);
	assert_string_equal(plan_framework_name(FW_GPUCTL), "gpuctl");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_matches_the_measured_runs),
		cmocka_unit_test(test_refuses_what_the_step_cannot_train),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
