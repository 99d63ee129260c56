/* SPDX-License-Identifier: Apache-2.0 */
/* test_train_ref.c - the training step's CPU reference (its gradients against
 * finite differences of its own loss), presets and FLOP counting, and the
 * checks that decide whether a GPU training run verified. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels_host/train_ref.h"

static void test_presets_count_like_pytorch(void **state)
{
	(void)state;
	struct gk_train_cfg m;
	assert_int_equal(ktrain_preset("124M", &m), 0);
	assert_int_equal(m.layers, 12);
	/* transformers' GPT2LMHeadModel: 124,439,808 parameters */
	assert_true(ktrain_params(&m) == 124439808.0);
	/* issue 16's anchors: 203,900 tokens/s is 175.3 TFLOP/s */
	double tf = 203900.0 * ktrain_flops_per_token(&m, 1024) / 1e12;
	assert_true(fabs(tf - 175.3) < 0.1);
	assert_int_equal(ktrain_preset("350M", &m), 0);
	assert_true(fabs(ktrain_params(&m) - 354.8e6) < 0.1e6);
	assert_int_equal(ktrain_preset("774M", &m), 0);
	assert_true(fabs(ktrain_params(&m) - 774.0e6) < 0.1e6);
	assert_int_equal(ktrain_preset("13B", &m), -1);
	assert_int_equal(ktrain_preset(NULL, &m), -1);
}

/* Central differences of the reference's own loss for a few entries of every
 * tensor: the analytic gradient it gives the GPU is right. */
static void test_reference_gradients_match_finite_differences(void **state)
{
	(void)state;
	struct gk_train_cfg m = { 13, 16, 8, 2, 2, 8 };
	int nseq = 2, seq = 8;
	size_t sz[GK_TRAIN_NTENSORS], np = gk_train_param_sizes(&m, sz);
	float *p = malloc(np * sizeof(float)), *g = malloc(np * sizeof(float)), *scratch = malloc(np * sizeof(float));
	int tokens[2 * 9];
	if (!p || !g || !scratch)
		fail_msg("out of memory");
	ktrain_make_params(&m, p, 7);
	ktrain_make_tokens(tokens, nseq, seq, m.vocab, 8);
	double loss = ktrain_ref_grads(&m, nseq, seq, p, tokens, g);
	assert_true(loss > 0 && isfinite(loss));
	size_t at = 0;
	int checked = 0;
	for (int t = 0; t < GK_TRAIN_NTENSORS; t++) {
		for (int j = 0; j < 3; j++) {
			size_t i = at + (size_t)(j * 7919) % sz[t];
			if (t == 0)
				i = at + (size_t)(j * 7919) % ((size_t)m.vocab * m.channels); /* not a padding row */
			float orig = p[i];
			float up = orig + 1e-3f, down = orig - 1e-3f;
			p[i] = up;
			double lu = ktrain_ref_grads(&m, nseq, seq, p, tokens, scratch);
			p[i] = down;
			double ld = ktrain_ref_grads(&m, nseq, seq, p, tokens, scratch);
			p[i] = orig;
			double fd = (lu - ld) / ((double)up - (double)down);
			assert_true(fabs(fd - g[i]) <= 1e-3 * fabs(fd) + 1e-5);
			checked++;
		}
		at += sz[t];
	}
	assert_int_equal(checked, 3 * GK_TRAIN_NTENSORS);
	free(p);
	free(g);
	free(scratch);
}

static void test_compare_grads_names_the_worst_tensor(void **state)
{
	(void)state;
	struct gk_train_cfg m;
	ktrain_preset("tiny", &m);
	size_t sz[GK_TRAIN_NTENSORS], np = gk_train_param_sizes(&m, sz);
	float *ref = malloc(np * sizeof(float)), *got = malloc(np * sizeof(float));
	if (!ref || !got)
		fail_msg("out of memory");
	ktrain_make_params(&m, ref, 3);
	memcpy(got, ref, np * sizeof(float));
	struct gk_verify v;
	int worst;
	ktrain_compare_grads(&m, got, ref, 1e-3, &v, &worst);
	assert_true(v.verified);
	assert_int_equal(v.checked, np);
	assert_true(v.max_err == 0);
	/* qkvb (tensor 5) off by 10 % of its largest entry */
	size_t at = sz[0] + sz[1] + sz[2] + sz[3] + sz[4];
	double mx = 0;
	for (size_t j = 0; j < sz[5]; j++)
		mx = fmax(mx, fabs(ref[at + j]));
	got[at + 3] += (float)(0.1 * mx);
	ktrain_compare_grads(&m, got, ref, 1e-3, &v, &worst);
	assert_false(v.verified);
	assert_int_equal(v.mismatches, 1);
	assert_int_equal(worst, 5);
	assert_string_equal(ktrain_tensor_name(worst), "qkvb");
	assert_true(fabs(v.max_err - 0.1) < 1e-3);
	got[at + 3] = NAN;
	ktrain_compare_grads(&m, got, ref, 1e-3, &v, &worst);
	assert_int_equal(v.nans, 1);
	assert_false(v.verified);
	/* an all-zero reference gradient checks nothing: it fails */
	memcpy(got, ref, np * sizeof(float));
	memset(ref + sz[0], 0, sz[1] * sizeof(float));
	memset(got + sz[0], 0, sz[1] * sizeof(float));
	ktrain_compare_grads(&m, got, ref, 1e-3, &v, &worst);
	assert_false(v.verified);
	free(ref);
	free(got);
}

static void test_loss_falls(void **state)
{
	(void)state;
	float falling[10] = { 10.9f, 10.5f, 10.0f, 9.6f, 9.2f, 9.0f, 8.9f, 8.8f, 8.8f, 8.7f };
	assert_true(ktrain_loss_falls(falling, 10, 0.5));
	assert_false(ktrain_loss_falls(falling, 10, 5.0));
	float flat[10] = { 10.9f, 10.9f, 10.9f, 10.8f, 10.9f, 10.9f, 10.9f, 10.8f, 10.9f, 10.9f };
	assert_false(ktrain_loss_falls(flat, 10, 0.5));
	falling[4] = NAN;
	assert_false(ktrain_loss_falls(falling, 10, 0.5));
	assert_false(ktrain_loss_falls(falling, 3, 0.5)); /* too few steps to judge */
}

static void test_tolerances_loosen_with_precision(void **state)
{
	(void)state;
	struct ktrain_tol f = ktrain_tolerance(GK_FP32), t = ktrain_tolerance(GK_TF32), b = ktrain_tolerance(GK_BF16);
	assert_true(f.grad_tol < t.grad_tol && t.grad_tol < b.grad_tol);
	assert_true(f.loss_tol < t.loss_tol && t.loss_tol < b.loss_tol);
	assert_true(b.grad_tol <= 0.1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_presets_count_like_pytorch),
		cmocka_unit_test(test_reference_gradients_match_finite_differences),
		cmocka_unit_test(test_compare_grads_names_the_worst_tensor),
		cmocka_unit_test(test_loss_falls),
		cmocka_unit_test(test_tolerances_loosen_with_precision),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
