/* SPDX-License-Identifier: Apache-2.0 */
/* test_plan_hfconfig.c - a model's shape from a Hugging Face config.json (plan_hf_config_parse). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "plan/plan.h"

static int parse(const char *json, struct plan_model *m, char *err)
{
	return plan_hf_config_parse(json, strlen(json), m, err, 256);
}

static void test_families(void **state)
{
	(void)state;
	struct plan_model m;
	char err[256];
	/* the Llama family: GQA, SwiGLU, RMSNorm, untied, no biases */
	assert_int_equal(parse("{\"model_type\": \"llama\", \"num_hidden_layers\": 32, \"hidden_size\": 4096, "
			       "\"num_attention_heads\": 32, \"num_key_value_heads\": 8, \"intermediate_size\": 14336, "
			       "\"vocab_size\": 128256, \"tie_word_embeddings\": false}",
			       &m, err),
			 0);
	assert_true(m.has_arch && m.gated_mlp && !m.layernorm && !m.bias && !m.tied_embeddings);
	assert_int_equal(m.kv_heads, 8);
	assert_int_equal(m.ffn, 14336);
	assert_int_equal(m.max_pos, 0);
	assert_string_equal(m.name, "llama");
	/* GPT-2: its own key names, learned positions, LayerNorm, biases, tied; ffn 4 x hidden */
	assert_int_equal(parse("{\"model_type\": \"gpt2\", \"n_layer\": 12, \"n_embd\": 768, \"n_head\": 12, "
			       "\"n_positions\": 1024, \"vocab_size\": 50257}",
			       &m, err),
			 0);
	assert_true(m.layernorm && m.bias && m.tied_embeddings && !m.gated_mlp);
	assert_int_equal(m.ffn, 3072);
	assert_int_equal(m.max_pos, 1024);
	assert_int_equal((long long)plan_model_params(&m), 124439808LL);
	/* MoE */
	assert_int_equal(parse("{\"model_type\": \"mixtral\", \"num_hidden_layers\": 2, \"hidden_size\": 64, "
			       "\"num_attention_heads\": 4, \"vocab_size\": 100, \"num_local_experts\": 8, "
			       "\"num_experts_per_tok\": 2}",
			       &m, err),
			 0);
	assert_int_equal(m.experts, 8);
	assert_int_equal(m.experts_active, 2);
}

static void test_errors(void **state)
{
	(void)state;
	struct plan_model m;
	char err[256];
	assert_int_equal(parse("{\"hidden_size\": 64}", &m, err), -1);
	assert_string_equal(err, "config.json: no 'num_hidden_layers'");
	assert_int_equal(parse("{\"num_hidden_layers\": 2, \"hidden_size\": -64, \"num_attention_heads\": 4, "
			       "\"vocab_size\": 100}",
			       &m, err),
			 -1);
	assert_string_equal(err, "config.json: 'hidden_size' must be a whole number from 1 to 16777216");
	assert_int_equal(parse("{\"num_hidden_layers\": 2,\n", &m, err), -1);
	assert_null(strchr(err, '\n'));
	assert_int_equal(parse("[]", &m, err), -1);
	assert_string_equal(err, "config.json: not a JSON object");
	/* heads that do not divide hidden: the model's own check */
	assert_int_equal(parse("{\"num_hidden_layers\": 2, \"hidden_size\": 64, \"num_attention_heads\": 7, "
			       "\"vocab_size\": 100}",
			       &m, err),
			 -1);
	assert_int_equal(parse("{\"num_hidden_layers\": 2, \"hidden_size\": 64, \"num_attention_heads\": 4, "
			       "\"vocab_size\": 100, \"num_local_experts\": 8}",
			       &m, err),
			 -1);
	assert_non_null(strstr(err, "without 'num_experts_per_tok'"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_families),
		cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
