/* SPDX-License-Identifier: Apache-2.0 */
/* test_plan_lora.c - plan_lora_memory() against memory computed by hand
 * (the adapter count of Llama-3-8B at rank 16 is PEFT's well-known
 * "trainable params: 41,943,040" for target_modules="all-linear"). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "plan/plan.h"

static struct plan_model llama3_8b(void)
{
	struct plan_model m = { .has_arch = true, .layers = 32, .hidden = 4096, .heads = 32, .kv_heads = 8,
				.vocab = 128256, .ffn = 14336, .gated_mlp = true };
	return m;
}

static void test_lora_llama3_8b(void **state)
{
	(void)state;
	struct plan_model m = llama3_8b();
	struct plan_lora_mem l;
	assert_int_equal(plan_lora_memory(&m, 16, false, &l), 0);
	/* per block: q 16x(4096+4096) + k, v 16x(4096+1024) + o 16x(4096+4096) + 3 x 16x(4096+14336)
	 * = 131072 + 2 x 81920 + 131072 + 884736 = 1310720; x 32 blocks */
	assert_true(l.adapter_params == 41943040.0);
	/* base: all 8030261248 parameters in BF16 */
	assert_true(l.base_bytes == 8030261248.0 * 2);
	assert_true(l.adapter_bytes == 41943040.0 * 4);
	assert_true(l.grads == 41943040.0 * 4);
	assert_true(l.optimizer == 41943040.0 * 8);
	assert_true(l.total == 16060522496.0 + 41943040.0 * 16); /* 16.73 GB */
}

static void test_qlora_llama3_8b(void **state)
{
	(void)state;
	struct plan_model m = llama3_8b();
	struct plan_lora_mem l;
	assert_int_equal(plan_lora_memory(&m, 16, true, &l), 0);
	/* block linears: (2 x 4096^2 + 2 x 4096x1024 + 3 x 4096x14336) x 32 = 6979321856 weights
	 * in NF4: x (0.5 + 1/64 + 4/16384) B = 3600416768 B; the rest, 1050939392 parameters
	 * (embeddings, head, norms), BF16: 2101878784 B */
	assert_true(l.base_linear_params == 6979321856.0);
	assert_true(l.base_other_params == 1050939392.0);
	assert_true(l.base_bytes == 3600416768.0 + 2101878784.0);
	assert_true(l.total == 5702295552.0 + 41943040.0 * 16); /* 6.37 GB */
}

static void test_moe_and_refusals(void **state)
{
	(void)state;
	struct plan_model m = llama3_8b();
	m.vocab = 32000;
	m.experts = 8;
	m.experts_active = 2;
	struct plan_lora_mem l;
	assert_int_equal(plan_lora_memory(&m, 16, false, &l), 0);
	/* Mixtral-8x7B: every expert's three matrices: 16 x (26624 + 8 x 3 x 18432) x 32 */
	assert_true(l.adapter_params == 240123904.0);
	assert_int_equal(plan_lora_memory(&m, 0, false, &l), -1);
	struct plan_model size_only = { .params_given = 7e9 };
	assert_int_equal(plan_lora_memory(&size_only, 16, false, &l), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lora_llama3_8b),
		cmocka_unit_test(test_qlora_llama3_8b),
		cmocka_unit_test(test_moe_and_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
