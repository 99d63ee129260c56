/* SPDX-License-Identifier: Apache-2.0 */
/* test_plan_serve.c - KV cache (published Llama-3-70B figure), GQA and TP, quantized
 * weights, concurrency and the bandwidth/compute bounds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "plan/plan.h"

static struct plan_model llama3_70b(void)
{
	struct plan_model m = { .has_arch = true, .layers = 80, .hidden = 8192, .heads = 64, .kv_heads = 8,
				.vocab = 128256, .ffn = 28672, .gated_mlp = true };
	return m;
}

static void test_llama3_70b_kv_cache_per_token(void **state)
{
	(void)state;
	struct plan_model m = llama3_70b();
	/* 2 x 80 layers x 8 KV heads x 128 x 2 bytes = 327,680 bytes per token in BF16 */
	assert_float_equal(plan_kv_bytes_per_token(&m, PREC_BF16), 327680, 0);
	assert_float_equal(plan_kv_bytes_per_token(&m, PREC_FP8), 163840, 0);
	/* without GQA (64 KV heads) it would be 8 times as much */
	m.kv_heads = 64;
	assert_float_equal(plan_kv_bytes_per_token(&m, PREC_BF16), 8 * 327680.0, 0);
}

static void test_tensor_parallel_splits_kv_heads_until_one_each(void **state)
{
	(void)state;
	struct plan_model m = llama3_70b();
	struct plan_serve s;
	struct plan_serve_result r;
	char err[160];
	plan_serve_defaults(&s);
	s.tp = 4;
	s.batch = 1;
	assert_int_equal(plan_serve_compute(&m, &s, NULL, 141e9, 0, &r, err, sizeof(err)), 0);
	assert_float_equal(r.kv_per_token_gpu, 327680 / 4.0, 0);
	s.tp = 16; /* 8 KV heads over 16 GPUs: each GPU keeps one (replicated) */
	assert_int_equal(plan_serve_compute(&m, &s, NULL, 141e9, 0, &r, err, sizeof(err)), 0);
	assert_float_equal(r.kv_per_token_gpu, 327680 / 8.0, 0);
}

static void test_weights_by_precision(void **state)
{
	(void)state;
	struct plan_model m = llama3_70b();
	struct plan_serve s;
	struct plan_serve_result r;
	char err[160];
	plan_serve_defaults(&s);
	s.batch = 1;
	double P = plan_model_params(&m);
	assert_int_equal(plan_serve_compute(&m, &s, NULL, 1e12, 0, &r, err, sizeof(err)), 0);
	assert_float_equal(r.weights, 2 * P, 0);
	s.wprec = PREC_INT8; /* the blocks' linear layers at 1 byte, the rest at 2 */
	assert_int_equal(plan_serve_compute(&m, &s, NULL, 1e12, 0, &r, err, sizeof(err)), 0);
	double lin = plan_model_matmul_params(&m) - 128256.0 * 8192;
	assert_float_equal(r.weights, lin + (P - lin) * 2, 1);
	s.wprec = PREC_INT4; /* half a byte plus an FP16 scale per 128 weights */
	assert_int_equal(plan_serve_compute(&m, &s, NULL, 1e12, 0, &r, err, sizeof(err)), 0);
	assert_float_equal(r.weights, lin * 0.5 + (P - lin) * 2 + lin * 2 / 128, 1);
	assert_true(r.weights < 40e9 && r.weights > 35e9);
}

static void test_concurrency_and_bounds(void **state)
{
	(void)state;
	struct plan_model m = llama3_70b();
	struct cat_gpu g;
	memset(&g, 0, sizeof(g));
	snprintf(g.key, sizeof(g.key), "H200 SXM");
	g.mem_bw_gbs = 4800;
	struct plan_serve s;
	struct plan_serve_result r;
	char err[160];
	plan_serve_defaults(&s);
	s.tp = 8;
	s.context = 8192;
	double mem = 141e9;
	assert_int_equal(plan_serve_compute(&m, &s, &g, mem, 989.4, &r, err, sizeof(err)), 0);
	/* KV budget = memory x utilization - context - weights - workspace */
	assert_float_equal(r.kv_budget, mem * 0.9 - s.cuda_context_bytes - r.weights - r.workspace, 1);
	assert_float_equal(r.max_tokens, floor(r.kv_budget / r.kv_per_token_gpu), 0);
	assert_int_equal(r.max_seqs, (unsigned)(r.max_tokens / 8192));
	assert_true(r.max_seqs > 10);
	/* with as many sequences as fit, one decode step reads weights + every cache */
	double bytes = r.weights + (double)r.max_seqs * 8192 * r.kv_per_token_gpu;
	assert_float_equal(r.decode_tok_s, r.max_seqs * 4800e9 / bytes, 1e-6);
	assert_float_equal(r.decode_tok_s_seq, 4800e9 / bytes, 1e-9);
	/* prefill: 8 GPUs x peak / (2 P + 2 L s h) */
	double flops = 2 * plan_model_params(&m) + 2.0 * 80 * 8192 * 8192;
	assert_float_equal(r.prefill_tok_s, 8 * 989.4e12 / flops, 1e-6);
	/* a model that does not fit leaves no KV budget */
	s.tp = 1;
	assert_int_equal(plan_serve_compute(&m, &s, &g, 80e9, 989.4, &r, err, sizeof(err)), 0);
	assert_true(r.kv_budget < 0);
	assert_int_equal(r.max_seqs, 0);
}

/* Issue 40: on one H200 (143,771 MiB) Llama-3-70B's BF16 weights (141.1 GB) fit in the
 * memory but not beside one 4096-token sequence at the 90% the planner keeps: that is
 * "does not fit", and two GPUs would. Over 8 GPUs it fits, with hundreds of sequences. */
static void test_fits_means_a_sequence_fits(void **state)
{
	(void)state;
	struct plan_model m = llama3_70b();
	struct plan_serve s;
	struct plan_serve_fit f;
	char err[160], text[256];
	const double h200 = 143771.0 * 1048576;
	plan_serve_defaults(&s);
	assert_int_equal(plan_serve_fit(&m, &s, NULL, h200, &f, err, sizeof(err)), 0);
	assert_false(f.fits);
	assert_int_equal(f.want, 1);
	assert_int_equal(f.max_seqs, 0);
	assert_int_equal(f.max_context, 0);     /* no context is short enough: the weights leave no room */
	assert_int_equal(f.kv_alt, PREC_COUNT); /* nor a smaller KV cache */
	assert_int_equal(f.tp_alt, 2);
	assert_true(f.tp_alt_seqs > 0);
	plan_serve_fit_text(&f, &s, text, sizeof(text));
	char want[160];
	snprintf(want, sizeof(want), "does not fit (0 x 4096-token sequences); would: tp 2 (%u sequences)", f.tp_alt_seqs);
	assert_string_equal(text, want);

	s.tp = 8;
	assert_int_equal(plan_serve_fit(&m, &s, NULL, h200, &f, err, sizeof(err)), 0);
	assert_true(f.fits);
	assert_true(f.max_seqs > 100);
	plan_serve_fit_text(&f, &s, text, sizeof(text));
	snprintf(want, sizeof(want), "fits (%u x 4096-token sequences)", f.max_seqs);
	assert_string_equal(text, want);

	/* a batch larger than fits: fewer sequences, a shorter context, an FP8 KV cache, more GPUs */
	s.tp = 2;
	s.batch = 120;
	assert_int_equal(plan_serve_fit(&m, &s, NULL, h200, &f, err, sizeof(err)), 0);
	assert_false(f.fits);
	assert_int_equal(f.want, 120);
	assert_true(f.max_seqs > 0 && f.max_seqs < 120);
	assert_true(f.max_context > 0 && f.max_context < 4096);
	struct plan_serve t = s;
	t.context = f.max_context; /* the longest context that holds 120 sequences, and one more does not */
	struct plan_serve_fit g;
	assert_int_equal(plan_serve_fit(&m, &t, NULL, h200, &g, err, sizeof(err)), 0);
	assert_true(g.fits);
	t.context = f.max_context + 1;
	assert_int_equal(plan_serve_fit(&m, &t, NULL, h200, &g, err, sizeof(err)), 0);
	assert_false(g.fits);
	assert_int_equal(f.kv_alt, PREC_FP8);
	assert_true(f.kv_alt_seqs >= 120);
	assert_int_equal(f.tp_alt, 4);
	plan_serve_fit_text(&f, &s, text, sizeof(text));
	assert_non_null(strstr(text, "does not fit ("));
	assert_non_null(strstr(text, " of 120 x 4096-token sequences); would: "));
	assert_non_null(strstr(text, "FP8/INT8 KV cache ("));
	assert_non_null(strstr(text, "tp 4 ("));

	/* nothing helps: a tiny GPU */
	s.batch = 0;
	s.tp = 1;
	assert_int_equal(plan_serve_fit(&m, &s, NULL, 1e9, &f, err, sizeof(err)), 0);
	assert_false(f.fits);
	assert_int_equal(f.tp_alt, 0);
	plan_serve_fit_text(&f, &s, text, sizeof(text));
	assert_string_equal(text, "does not fit (0 x 4096-token sequences); nor fewer sequences, shorter context, "
				  "FP8/INT8 KV cache or up to tp 64");
}

static void test_serve_errors(void **state)
{
	(void)state;
	struct plan_model m = llama3_70b();
	struct plan_serve s;
	struct plan_serve_result r;
	char err[160];
	plan_serve_defaults(&s);
	s.tp = 3;
	assert_int_equal(plan_serve_compute(&m, &s, NULL, 1e12, 0, &r, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "tp 3"));
	s.tp = 1;
	s.context = 0;
	assert_int_equal(plan_serve_compute(&m, &s, NULL, 1e12, 0, &r, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "context"));
	struct plan_model bysize = { .params_given = 7e9 };
	s.context = 10;
	assert_int_equal(plan_serve_compute(&bysize, &s, NULL, 1e12, 0, &r, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "architecture"));
	s.mem_util = 1.5;
	assert_int_equal(plan_serve_compute(&m, &s, NULL, 1e12, 0, &r, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "mem-util"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_llama3_70b_kv_cache_per_token),
		cmocka_unit_test(test_tensor_parallel_splits_kv_heads_until_one_each),
		cmocka_unit_test(test_weights_by_precision),
		cmocka_unit_test(test_concurrency_and_bounds),
		cmocka_unit_test(test_serve_errors),
		cmocka_unit_test(test_fits_means_a_sequence_fits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
