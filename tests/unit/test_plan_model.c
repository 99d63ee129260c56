/* SPDX-License-Identifier: Apache-2.0 */
/* test_plan_model.c - parameter counts against published totals, validation, presets file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/data_path.h"
#include "plan/plan.h"

static struct plan_presets presets;

static int load_presets(void **state)
{
	(void)state;
	char err[256];
	struct data_file f;
	if (data_file_read(getenv("GPUCTL_DATA_DIR"), "plan/models.json", 1 << 20, &f, err, sizeof(err)))
		return -1;
	int rc = plan_presets_parse(&presets, f.text, f.len, err, sizeof(err));
	data_file_free(&f);
	return rc;
}

static int free_presets(void **state)
{
	(void)state;
	plan_presets_free(&presets);
	return 0;
}

static const struct plan_model *preset(const char *name)
{
	const struct plan_model *m = plan_presets_find(&presets, name);
	assert_non_null(m);
	return m;
}

static void test_published_parameter_counts(void **state)
{
	(void)state;
	/* totals published with each model's config (HF model cards / papers) */
	assert_float_equal(plan_model_params(preset("gpt2-small")), 124439808.0, 0);
	assert_float_equal(plan_model_params(preset("llama-2-7b")), 6738415616.0, 0);
	assert_float_equal(plan_model_params(preset("llama-3-8b")), 8030261248.0, 0);
	assert_float_equal(plan_model_params(preset("llama-2-13b")), 13015864320.0, 0);
	assert_float_equal(plan_model_params(preset("llama-2-70b")), 68976648192.0, 0);
	assert_float_equal(plan_model_params(preset("llama-3-70b")), 70553706496.0, 0);
	/* GPT-2 XL: 1.5B class (1,557,611,200 with the tied head) */
	assert_float_equal(plan_model_params(preset("gpt2-xl")), 1557611200.0, 0);
	/* Mixtral: 46.7B total, 12.9B active (2 of 8 experts) */
	double total = plan_model_params(preset("mixtral-8x7b"));
	double active = plan_model_active_params(preset("mixtral-8x7b"));
	assert_true(fabs(total - 46.7e9) < 0.05e9);
	assert_true(fabs(active - 12.9e9) < 0.05e9);
	/* a dense model's active parameters are all of them */
	assert_float_equal(plan_model_active_params(preset("llama-2-7b")), 6738415616.0, 0);
}

static void test_head_dim_and_largest_module(void **state)
{
	(void)state;
	const struct plan_model *m = preset("llama-3-70b");
	assert_int_equal(plan_model_head_dim(m), 128);
	/* the embedding (128256 x 8192) is bigger than one MLP matrix (8192 x 28672) */
	assert_float_equal(plan_model_largest_module(m), 128256.0 * 8192, 0);
	/* matmul weights of GPT-2 small: 12 h^2 per block + the tied head */
	const struct plan_model *g = preset("gpt2-small");
	assert_float_equal(plan_model_matmul_params(g), 12 * 12.0 * 768 * 768 + 50257.0 * 768, 0);
}

static void test_model_known_by_size_only(void **state)
{
	(void)state;
	struct plan_model m = { .params_given = 7e9 };
	char err[160];
	assert_int_equal(plan_model_validate(&m, err, sizeof(err)), 0);
	assert_float_equal(plan_model_params(&m), 7e9, 0);
	assert_true(isnan(plan_model_layer_params(&m)));
	m.params_given = -1;
	assert_int_equal(plan_model_validate(&m, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "params"));
}

static void test_validation_names_the_field(void **state)
{
	(void)state;
	struct plan_model m = *preset("llama-2-7b");
	char err[160];
	m.heads = 7; /* does not divide 4096 */
	m.kv_heads = 7;
	assert_int_equal(plan_model_validate(&m, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "heads 7 do not divide hidden 4096"));
	m = *preset("llama-2-7b");
	m.kv_heads = 5;
	assert_int_equal(plan_model_validate(&m, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "kv-heads"));
	m = *preset("llama-2-7b");
	m.layers = 0;
	assert_int_equal(plan_model_validate(&m, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "layers"));
	m = *preset("mixtral-8x7b");
	m.experts_active = 9;
	assert_int_equal(plan_model_validate(&m, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "experts-active"));
}

static void test_presets_file_errors(void **state)
{
	(void)state;
	struct plan_presets p;
	char err[256];
	const char *missing = "{\"models\":[{\"name\":\"x\",\"source\":\"s\",\"layers\":2,\"hidden\":64,\"heads\":4,\"vocab\":10}]}";
	assert_int_equal(plan_presets_parse(&p, missing, strlen(missing), err, sizeof(err)), -1);
	assert_non_null(strstr(err, "'ffn'"));
	const char *nosrc = "{\"models\":[{\"name\":\"x\",\"layers\":2,\"hidden\":64,\"heads\":4,\"vocab\":10,\"ffn\":8}]}";
	assert_int_equal(plan_presets_parse(&p, nosrc, strlen(nosrc), err, sizeof(err)), -1);
	assert_non_null(strstr(err, "'source'"));
	const char *bad = "{\"models\":[{\"name\":\"x\",\"source\":\"s\",\"layers\":2,\"hidden\":64,\"heads\":5,\"vocab\":10,\"ffn\":8}]}";
	assert_int_equal(plan_presets_parse(&p, bad, strlen(bad), err, sizeof(err)), -1);
	assert_non_null(strstr(err, "heads 5"));
	const char *neg = "{\"models\":[{\"name\":\"x\",\"source\":\"s\",\"layers\":-2,\"hidden\":64,\"heads\":4,\"vocab\":10,\"ffn\":8}]}";
	assert_int_equal(plan_presets_parse(&p, neg, strlen(neg), err, sizeof(err)), -1);
	assert_non_null(strstr(err, "'layers'"));
	assert_int_equal(plan_presets_parse(&p, "{", 1, err, sizeof(err)), -1);
	const char *ok = "{\"models\":[{\"name\":\"tiny\",\"source\":\"s\",\"layers\":2,\"hidden\":64,\"heads\":4,\"vocab\":10,\"ffn\":256,\"norm\":\"layernorm\",\"bias\":true}]}";
	assert_int_equal(plan_presets_parse(&p, ok, strlen(ok), err, sizeof(err)), 0);
	assert_int_equal(p.n, 1);
	assert_true(p.m[0].layernorm && p.m[0].bias && !p.m[0].gated_mlp);
	assert_int_equal(p.m[0].kv_heads, 4);
	assert_non_null(plan_presets_find(&p, "TINY"));
	assert_null(plan_presets_find(&p, "huge"));
	plan_presets_free(&p);
}

static void test_precision_names(void **state)
{
	(void)state;
	enum plan_prec p;
	assert_int_equal(plan_prec_parse("INT4", &p), 0);
	assert_int_equal(p, PREC_INT4);
	assert_float_equal(plan_prec_bytes(p), 0.5, 0);
	assert_float_equal(plan_prec_bytes(PREC_FP8), 1, 0);
	assert_int_equal(plan_prec_parse("fp12", &p), -1);
	assert_string_equal(plan_prec_name(PREC_BF16), "bf16");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_published_parameter_counts),
		cmocka_unit_test(test_head_dim_and_largest_module),
		cmocka_unit_test(test_model_known_by_size_only),
		cmocka_unit_test(test_validation_names_the_field),
		cmocka_unit_test(test_presets_file_errors),
		cmocka_unit_test(test_precision_names),
	};
	return cmocka_run_group_tests(tests, load_presets, free_presets);
}
