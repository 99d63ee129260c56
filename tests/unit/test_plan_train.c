/* SPDX-License-Identifier: Apache-2.0 */
/* test_plan_train.c - training memory: published checks, the activation formulas of
 * Korthikanti et al., ZeRO stages, and every case measured by bench/plan_memory.py
 * (tests/data/plan-measured.json) predicted within 10%. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"
#include "plan_measured.h"

static struct plan_model gpt2(unsigned layers, unsigned hidden, unsigned heads, unsigned max_pos)
{
	struct plan_model m = { .has_arch = true, .layers = layers, .hidden = hidden, .heads = heads,
				.kv_heads = heads, .vocab = 50257, .ffn = 4 * hidden, .max_pos = max_pos,
				.tied_embeddings = true, .bias = true, .layernorm = true };
	snprintf(m.name, sizeof(m.name), "gpt2-test");
	return m;
}

static struct plan_model llama7b(void)
{
	struct plan_model m = { .has_arch = true, .layers = 32, .hidden = 4096, .heads = 32, .kv_heads = 32,
				.vocab = 32000, .ffn = 11008, .gated_mlp = true };
	return m;
}

static void test_deepspeed_published_model_states(void **state)
{
	(void)state;
	/* ZeRO paper / DeepSpeed: 7B with mixed-precision AdamW = 16 bytes/param = 112 GB */
	struct plan_model m = { .params_given = 7e9 };
	struct plan_train t;
	struct plan_mem o;
	char err[160];
	plan_train_defaults(&t);
	t.fw = FW_DEEPSPEED;
	assert_int_equal(plan_train_memory(&m, &t, &o, err, sizeof(err)), 0);
	assert_float_equal(o.weights + o.grads + o.optimizer, 112e9, 1);
	assert_false(o.activations_known);
	assert_true(isnan(o.activations));
	/* DeepSpeed's estimate_zero3_model_states_mem_needs: 18 x 7e9 / 8 = 15.75 GB per GPU */
	t.zero = 3;
	t.dp = 8;
	assert_int_equal(plan_train_memory(&m, &t, &o, err, sizeof(err)), 0);
	assert_float_equal(o.weights + o.grads + o.optimizer, 15.75e9, 1);
	/* ZeRO-1 (paper): 4P + 12P/N; ZeRO-2 (DeepSpeed estimator): 4P + 16P/N */
	t.zero = 1;
	assert_int_equal(plan_train_memory(&m, &t, &o, err, sizeof(err)), 0);
	assert_float_equal(o.weights + o.grads + o.optimizer, 4 * 7e9 + 12 * 7e9 / 8, 1);
	t.zero = 2;
	assert_int_equal(plan_train_memory(&m, &t, &o, err, sizeof(err)), 0);
	assert_float_equal(o.weights + o.grads + o.optimizer, 4 * 7e9 + 16 * 7e9 / 8, 1);
	/* ZeRO-2 with the optimizer offloaded: 2P on the GPU (estimator) */
	t.offload = OFFLOAD_OPTIMIZER;
	assert_int_equal(plan_train_memory(&m, &t, &o, err, sizeof(err)), 0);
	assert_float_equal(o.weights + o.grads + o.optimizer, 2 * 7e9, 1);
	assert_true(o.cpu_offload > 0);
	/* ZeRO-3, optimizer offloaded: 2P/N; params too: nothing but the gathered layer */
	t.zero = 3;
	assert_int_equal(plan_train_memory(&m, &t, &o, err, sizeof(err)), 0);
	assert_float_equal(o.weights + o.grads + o.optimizer, 2 * 7e9 / 8, 1);
	t.offload = OFFLOAD_PARAMS;
	assert_int_equal(plan_train_memory(&m, &t, &o, err, sizeof(err)), 0);
	assert_float_equal(o.weights + o.grads + o.optimizer, 0, 0);
}

static void test_zero3_gather_buffer_is_four_bytes_of_largest_layer(void **state)
{
	(void)state;
	struct plan_model m = llama7b();
	struct plan_train t;
	struct plan_mem o;
	char err[160];
	plan_train_defaults(&t);
	t.fw = FW_DEEPSPEED;
	t.zero = 3;
	t.dp = 8;
	assert_int_equal(plan_train_memory(&m, &t, &o, err, sizeof(err)), 0);
	assert_float_equal(o.comm, 4.0 * 32000 * 4096, 0);
	assert_float_equal(o.weights + o.grads + o.optimizer, 18 * 6738415616.0 / 8, 1);
}

/* Korthikanti et al. 2022, eq. 1-4: per-layer activations with r = c = 2 bytes, dropout. */
static double layer_act(struct plan_model *m, struct plan_train *t)
{
	struct plan_model m1 = *m, m2 = *m;
	m1.layers = 1;
	m2.layers = 2;
	return plan_activation_bytes(&m2, t) - plan_activation_bytes(&m1, t);
}

static void test_korthikanti_activation_formulas(void **state)
{
	(void)state;
	struct plan_model m = { .has_arch = true, .layers = 8, .hidden = 4096, .heads = 32, .kv_heads = 32,
				.vocab = 51200, .ffn = 16384 };
	struct plan_train t;
	plan_train_defaults(&t);
	t.fw = FW_DEEPSPEED;
	t.dropout = true;
	t.attn = ATTN_EAGER;
	t.seq = 2048;
	t.micro_batch = 2;
	double s = 2048, b = 2, h = 4096, a = 32, sbh = s * b * h;
	/* no parallelism: sbh (34 + 5as/h) */
	assert_float_equal(layer_act(&m, &t), sbh * (34 + 5 * a * s / h), 1);
	/* tensor parallel t = 8: sbh (10 + 24/t + 5as/(ht)) */
	t.tp = 8;
	t.dp = 1;
	assert_float_equal(layer_act(&m, &t), sbh * (10 + 24.0 / 8 + 5 * a * s / (h * 8)), 1);
	/* with sequence parallelism: sbh/t (34 + 5as/h) */
	t.sp = true;
	assert_float_equal(layer_act(&m, &t), sbh / 8 * (34 + 5 * a * s / h), 1);
	/* selective recomputation: sbh/t x 34 */
	t.ckpt = CKPT_SELECTIVE;
	assert_float_equal(layer_act(&m, &t), sbh / 8 * 34, 1);
	/* full recomputation: the block input, 2sbh/t with SP */
	t.ckpt = CKPT_FULL;
	assert_float_equal(layer_act(&m, &t), 2 * sbh / 8, 1);
	/* pipeline parallel 1F1B: L/p blocks x p micro-batches in flight = L blocks' worth */
	t.ckpt = CKPT_NONE;
	t.tp = 1;
	t.sp = false;
	double full = plan_activation_bytes(&m, &t);
	t.pp = 4;
	t.grad_accum = 8;
	assert_float_equal(plan_activation_bytes(&m, &t), full, 1);
	t.grad_accum = 2; /* fewer micro-batches than stages: only 2 in flight */
	double outside = s * b * h * 4;
	assert_float_equal(plan_activation_bytes(&m, &t) - outside, (full - outside) / 2, 1);
}

static void test_gqa_and_gated_mlp_activation_terms(void **state)
{
	(void)state;
	struct plan_model m = llama7b();
	struct plan_train t;
	plan_train_defaults(&t);
	t.fw = FW_DEEPSPEED;
	t.seq = 1024;
	double base = layer_act(&m, &t);
	/* fewer KV heads store smaller K and V: 2c x kv/heads per token */
	m.kv_heads = 8;
	double gqa = layer_act(&m, &t);
	assert_float_equal(base - gqa, 1024.0 * 4096 * 2 * 2 * (1 - 8.0 / 32), 1);
	/* SwiGLU keeps 4 ffn-wide tensors, GELU 2 */
	m.gated_mlp = false;
	assert_float_equal(gqa - layer_act(&m, &t), 1024.0 * 11008 * 2 * 2, 1);
}

static void test_flops_and_recompute(void **state)
{
	(void)state;
	struct plan_model m = { .params_given = 7e9 };
	struct plan_train t;
	plan_train_defaults(&t);
	assert_float_equal(plan_train_flops(&m, &t, 1e12), 6 * 7e9 * 1e12, 1e9);
	t.ckpt = CKPT_FULL;
	assert_float_equal(plan_train_flops(&m, &t, 1e12), 8 * 7e9 * 1e12, 1e9);
	struct plan_model a = llama7b();
	t.ckpt = CKPT_NONE;
	t.seq = 4096;
	double per_tok = 6 * plan_model_params(&a) + 12.0 * 32 * 4096 * 4096;
	assert_float_equal(plan_train_flops(&a, &t, 1000), per_tok * 1000, 1);
}

static void test_max_micro_batch_is_the_largest_that_fits(void **state)
{
	(void)state;
	struct plan_model m = gpt2(24, 1024, 16, 1024);
	struct plan_train t;
	struct plan_mem o;
	char err[160];
	plan_train_defaults(&t);
	t.seq = 1024;
	double mem = 80e9;
	unsigned b = plan_max_micro_batch(&m, &t, mem);
	assert_true(b > 1);
	t.micro_batch = b;
	assert_int_equal(plan_train_memory(&m, &t, &o, err, sizeof(err)), 0);
	assert_true(o.total <= mem);
	t.micro_batch = b + 1;
	assert_int_equal(plan_train_memory(&m, &t, &o, err, sizeof(err)), 0);
	assert_true(o.total > mem);
	/* nothing fits in 1 GB */
	assert_int_equal(plan_max_micro_batch(&m, &t, 1e9), 0);
}

static void test_bad_configurations_name_the_field(void **state)
{
	(void)state;
	struct plan_model m = llama7b();
	struct plan_train t;
	struct plan_mem o;
	char err[160];
	plan_train_defaults(&t);
	t.zero = 3;
	assert_int_equal(plan_train_memory(&m, &t, &o, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "zero"));
	plan_train_defaults(&t);
	t.fw = FW_DEEPSPEED;
	t.tp = 3;
	assert_int_equal(plan_train_memory(&m, &t, &o, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "tp 3"));
	t.tp = 1;
	t.pp = 5;
	assert_int_equal(plan_train_memory(&m, &t, &o, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "pp 5"));
	t.pp = 1;
	t.micro_batch = 0;
	assert_int_equal(plan_train_memory(&m, &t, &o, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "micro-batch"));
	t.micro_batch = 1;
	t.offload = OFFLOAD_PARAMS;
	t.zero = 2;
	assert_int_equal(plan_train_memory(&m, &t, &o, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "offload params"));
	t.offload = OFFLOAD_NONE;
	t.prec = PREC_INT4;
	assert_int_equal(plan_train_memory(&m, &t, &o, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "int4"));
}


static void test_communication_buffers_and_fp8(void **state)
{
	(void)state;
	struct plan_model m = llama7b();
	struct plan_train t;
	struct plan_mem o;
	char err[160];
	double P = plan_model_params(&m);
	plan_train_defaults(&t);
	/* DDP keeps bucket copies of the (FP32) gradients */
	t.dp = 2;
	assert_int_equal(plan_train_memory(&m, &t, &o, err, sizeof(err)), 0);
	assert_float_equal(o.comm, 4 * P, 1);
	t.dp = 1;
	assert_int_equal(plan_train_memory(&m, &t, &o, err, sizeof(err)), 0);
	assert_float_equal(o.comm, 0, 0);
	/* ZeRO-1/2: DeepSpeed's reduce and all-gather buckets, 5e8 16-bit elements each */
	t.fw = FW_DEEPSPEED;
	t.zero = 1;
	t.dp = 8;
	assert_int_equal(plan_train_memory(&m, &t, &o, err, sizeof(err)), 0);
	assert_float_equal(o.comm, 2 * 5e8 * 2, 1);
	/* FP8 adds a 1-byte copy of the weights */
	t.zero = 0;
	t.dp = 1;
	assert_int_equal(plan_train_memory(&m, &t, &o, err, sizeof(err)), 0);
	double w16 = o.weights;
	t.prec = PREC_FP8;
	assert_int_equal(plan_train_memory(&m, &t, &o, err, sizeof(err)), 0);
	assert_float_equal(o.weights - w16, P, 1);
	/* total = peak x (1 + fragmentation) + context */
	assert_float_equal(o.total, o.peak * 1.10 + t.cuda_context_bytes, 1);
	/* selective recomputation adds the attention core's forward FLOPs */
	t.ckpt = CKPT_SELECTIVE;
	t.seq = 2048;
	struct plan_train none = t;
	none.ckpt = CKPT_NONE;
	assert_float_equal(plan_train_flops(&m, &t, 1) - plan_train_flops(&m, &none, 1), 4.0 * 32 * 2048 * 4096, 1);
}

/* ---- measured on a real H200 (bench/plan_memory.py) --------------------- */

static json_t *measured;

static int load_measured(void **state)
{
	(void)state;
	char path[4096];
	const char *dir = getenv("GPUCTL_TEST_DIR");
	snprintf(path, sizeof(path), "%s/data/plan-measured.json", dir ? dir : "tests");
	json_error_t je;
	measured = json_load_file(path, 0, &je);
	return measured ? 0 : -1;
}

static int free_measured(void **state)
{
	(void)state;
	json_decref(measured);
	return 0;
}


static void test_measured_training_peaks_within_10_percent(void **state)
{
	(void)state;
	json_t *cases = json_object_get(measured, "cases"), *c;
	size_t i, n = 0;
	double worst = 0;
	json_array_foreach(cases, i, c) {
		if (strcmp(str(c, "kind"), "train") != 0)
			continue;
		struct plan_model m = gpt2((unsigned)num(c, "layers"), (unsigned)num(c, "hidden"),
					   (unsigned)num(c, "heads"), (unsigned)num(c, "seq"));
		/* the parameter count of the model PyTorch built */
		assert_float_equal(plan_model_params(&m), num(c, "params"), 0);
		struct plan_train t;
		plan_train_defaults(&t);
		t.fw = FW_PYTORCH;
		t.prec = strcmp(str(c, "precision"), "fp32") == 0 ? PREC_FP32 : PREC_BF16;
		t.ckpt = strcmp(str(c, "checkpointing"), "full") == 0 ? CKPT_FULL : CKPT_NONE;
		t.attn = strcmp(str(c, "attention"), "eager") == 0 ? ATTN_EAGER : ATTN_FLASH;
		t.seq = (unsigned)num(c, "seq");
		t.micro_batch = (unsigned)num(c, "micro_batch");
		struct plan_mem o;
		char err[160];
		assert_int_equal(plan_train_memory(&m, &t, &o, err, sizeof(err)), 0);
		double meas = num(c, "peak_bytes");
		double rel = (o.peak - meas) / meas;
		/* the activations after the forward pass (incl. the loss's log-probabilities and
		 * autocast's weight copies) are predicted too */
		double tok = (double)t.seq * t.micro_batch;
		double fwd = o.activations + 4 * tok * m.vocab + (o.weights - 4 * plan_model_params(&m));
		double rel_fwd = (fwd - num(c, "activations_after_forward_bytes")) / num(c, "activations_after_forward_bytes");
		if (fabs(rel) > 0.10 || fabs(rel_fwd) > 0.10)
			print_error("case %zu %s %s %s %s seq %u: predicted %.3f GB (forward %.3f), measured %.3f GB (%.3f)\n",
				    i, str(c, "model"), str(c, "precision"), str(c, "checkpointing"), str(c, "attention"),
				    t.seq, o.peak / 1e9, fwd / 1e9, meas / 1e9,
				    num(c, "activations_after_forward_bytes") / 1e9);
		assert_true(fabs(rel) <= 0.10);
		assert_true(fabs(rel_fwd) <= 0.10);
		if (fabs(rel) > worst)
			worst = fabs(rel);
		n++;
	}
	assert_true(n >= 24); /* 3 models x 2 precisions x 2 checkpointing x 2 lengths */
	print_message("%zu measured training cases, worst peak error %.1f%%\n", n, 100 * worst);
}

static void test_measured_serving_peaks_within_10_percent(void **state)
{
	(void)state;
	json_t *cases = json_object_get(measured, "cases"), *c;
	size_t i, n = 0;
	json_array_foreach(cases, i, c) {
		if (strcmp(str(c, "kind"), "serve") != 0)
			continue;
		struct plan_model m = gpt2((unsigned)num(c, "layers"), (unsigned)num(c, "hidden"),
					   (unsigned)num(c, "heads"), (unsigned)num(c, "context"));
		assert_float_equal(plan_model_params(&m), num(c, "params"), 0);
		struct plan_serve s;
		plan_serve_defaults(&s);
		s.context = (unsigned)num(c, "context");
		s.batch = (unsigned)num(c, "batch");
		s.prefill_chunk = (unsigned)(num(c, "batch") * num(c, "prompt"));
		struct plan_serve_result r;
		char err[160];
		assert_int_equal(plan_serve_compute(&m, &s, NULL, 141e9, 0, &r, err, sizeof(err)), 0);
		/* the KV cache PyTorch allocated is exactly batch x context x per-token bytes */
		assert_float_equal(r.kv_bytes, num(c, "kv_cache_bytes"), 0);
		double meas = num(c, "peak_bytes");
		assert_true(fabs(r.peak - meas) / meas <= 0.10);
		/* the bounds are upper bounds of what PyTorch reached on the H200 (4.8 TB/s, 989.4 TFLOP/s) */
		struct cat_gpu h200;
		memset(&h200, 0, sizeof(h200));
		h200.mem_bw_gbs = 4800;
		assert_int_equal(plan_serve_compute(&m, &s, &h200, 141e9, 989.4, &r, err, sizeof(err)), 0);
		assert_true(r.decode_tok_s >= num(c, "decode_tokens_per_s"));
		assert_true(r.prefill_tok_s >= num(c, "batch") * num(c, "prompt") / num(c, "prefill_s"));
		n++;
	}
	assert_true(n >= 6);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deepspeed_published_model_states),
		cmocka_unit_test(test_zero3_gather_buffer_is_four_bytes_of_largest_layer),
		cmocka_unit_test(test_korthikanti_activation_formulas),
		cmocka_unit_test(test_gqa_and_gated_mlp_activation_terms),
		cmocka_unit_test(test_flops_and_recompute),
		cmocka_unit_test(test_max_micro_batch_is_the_largest_that_fits),
		cmocka_unit_test(test_bad_configurations_name_the_field),
		cmocka_unit_test(test_communication_buffers_and_fp8),
		cmocka_unit_test(test_measured_training_peaks_within_10_percent),
		cmocka_unit_test(test_measured_serving_peaks_within_10_percent),
	};
	return cmocka_run_group_tests(tests, load_measured, free_measured);
}
