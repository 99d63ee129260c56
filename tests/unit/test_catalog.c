/* SPDX-License-Identifier: Apache-2.0 */
/* test_catalog.c - the GPU catalog: the shipped file parses, its figures are
 * the datasheets', lookups and driver-name matching work, bad files fail with
 * a one-line message naming the entry and the field. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/catalog.h"

#define MIB (1024ull * 1024ull)

static struct catalog shipped;

static int load_shipped(void **state)
{
	(void)state;
	char err[512] = "";
	int rc = catalog_load_default(&shipped, err, sizeof(err));
	if (rc)
		fprintf(stderr, "catalog_load_default: %s\n", err);
	return rc;
}

static int free_shipped(void **state)
{
	(void)state;
	catalog_free(&shipped);
	return 0;
}

static void test_every_required_entry(void **state)
{
	(void)state;
	static const char *const keys[] = { "V100 SXM2", "A100 PCIe 40GB", "A100 SXM 40GB", "A100 PCIe 80GB",
		"A100 SXM 80GB", "A30", "A10", "T4", "L4", "L40S", "RTX 4090", "RTX A6000", "H100 PCIe",
		"H100 SXM", "H100 NVL", "H200 SXM", "H200 NVL", "B200" };
	assert_int_equal(shipped.n, sizeof(keys) / sizeof(keys[0]));
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const struct cat_gpu *g = catalog_find(&shipped, keys[i]);
		assert_non_null(g);
		assert_string_equal(g->key, keys[i]);
		assert_true(g->source[0] != '\0');
		assert_true(g->vendor_name[0] != '\0');
		assert_true(g->sm_count > 0 && g->cuda_cores >= g->sm_count * 64);
		assert_true(g->mem_bytes > 0 && g->mem_bw_gbs > 0 && g->tdp_w > 0);
		assert_false(isnan(g->tflops_fp32));
		/* the driver's total is below the marketed decimal size plus slack */
		assert_true((double)g->mem_bytes <= g->mem_gb * 1.1e9);
		/* MIG exactly on the MIG-capable families */
		bool mig_family = strstr(keys[i], "A100") || !strcmp(keys[i], "A30") || strstr(keys[i], "H100") ||
				  strstr(keys[i], "H200") || !strcmp(keys[i], "B200");
		assert_int_equal(g->mig_n > 0, mig_family);
	}
}

static void test_h200_datasheet(void **state)
{
	(void)state;
	const struct cat_gpu *g = catalog_find(&shipped, "h200 sxm"); /* case-insensitive */
	assert_non_null(g);
	assert_string_equal(g->vendor_name, "NVIDIA H200");
	assert_string_equal(g->architecture, "Hopper");
	assert_int_equal(g->cc_major, 9);
	assert_int_equal(g->cc_minor, 0);
	assert_int_equal(g->sm_count, 132);
	assert_true(g->mem_bw_gbs == 4800.0);
	assert_true(g->mem_gb == 141.0);
	assert_int_equal(g->mem_bytes, 143771 * MIB);
	assert_true(g->tflops_bf16 == 989.4);
	assert_true(g->tflops_fp32 == 67.0);
	assert_true(g->tflops_fp8 == 1978.9);
	assert_int_equal(g->nvlink_gen, 4);
	assert_int_equal(g->nvlink_links, 18);
	assert_true(g->nvlink_bw_gbs == 900.0);
	assert_int_equal(g->pcie_gen, 5);
	const struct cat_mig_profile *m = catalog_mig_profile(g, "1g.18gb");
	assert_non_null(m);
	assert_int_equal(m->max_instances, 7);
	assert_int_equal(m->sm_count, 16);
}

static void test_a100_sxm_80gb_datasheet(void **state)
{
	(void)state;
	const struct cat_gpu *g = catalog_find(&shipped, "A100 SXM 80GB");
	assert_non_null(g);
	assert_true(g->tflops_fp32 == 19.5);
	assert_true(g->tflops_bf16 == 312.0);
	assert_true(g->tflops_tf32 == 156.0);
	assert_int_equal(g->cuda_cores, 6912);
	/* the vendor's 2,039 GB/s, not the article's 1.6 TB/s; the note says so */
	assert_true(g->mem_bw_gbs > 2000.0);
	assert_non_null(strstr(g->notes, "1.6 TB/s"));
	assert_true(isnan(g->tflops_fp8)); /* Ampere has no FP8: n/a, not 0 */
	assert_int_equal(g->mig_mem_slices_total, 8);
	const struct cat_mig_profile *m = catalog_mig_profile(g, "MIG 1g.10gb");
	assert_non_null(m);
	assert_int_equal(m->max_instances, 7);
	assert_int_equal(m->slices, 1);
	assert_true(m->mem_gb == 10.0);
	assert_null(catalog_mig_profile(g, "1g.18gb"));
}

static void test_dense_not_sparse(void **state)
{
	(void)state;
	/* datasheets print sparsity figures; the catalog keeps the dense half */
	assert_true(catalog_find(&shipped, "H100 SXM")->tflops_bf16 < 1000.0);
	assert_true(catalog_find(&shipped, "L40S")->tflops_fp8 == 733.0);
	assert_true(catalog_find(&shipped, "B200")->tflops_fp8 == 4500.0);
	/* nothing is faster at FP32 than at BF16 where both exist */
	for (size_t i = 0; i < shipped.n; i++) {
		const struct cat_gpu *g = &shipped.gpus[i];
		if (!isnan(g->tflops_bf16))
			assert_true(g->tflops_bf16 >= g->tflops_fp32);
		if (!isnan(g->tflops_fp8) && !isnan(g->tflops_bf16))
			assert_true(g->tflops_fp8 >= g->tflops_bf16);
	}
}

static void test_match_driver_names(void **state)
{
	(void)state;
	struct { const char *name; uint64_t mib; const char *key; } cases[] = {
		{ "NVIDIA H200", 143771, "H200 SXM" },
		{ "NVIDIA H200 NVL", 143771, "H200 NVL" },
		{ "NVIDIA A100-SXM4-80GB", 81920, "A100 SXM 80GB" },
		{ "NVIDIA A100-SXM4-40GB", 40960, "A100 SXM 40GB" },
		{ "NVIDIA A100-PCIE-40GB", 40960, "A100 PCIe 40GB" },
		{ "NVIDIA H100 PCIe", 81559, "H100 PCIe" },
		{ "NVIDIA H100 80GB HBM3", 81559, "H100 SXM" },
		{ "NVIDIA GeForce RTX 4090", 24564, "RTX 4090" },
		{ "NVIDIA L40S", 46068, "L40S" },
		{ "Tesla T4", 15360, "T4" },
		{ "NVIDIA B200", 183359, "B200" },
		/* not listed by name: family words plus memory size decide */
		{ "Tesla V100-SXM2-16GB", 16160, "V100 SXM2" },
		{ "NVIDIA A100-SXM4-80GB-XYZ", 0, NULL },
		{ "nvidia a100 sxm4 80gb", 81920, "A100 SXM 80GB" },
		{ "NVIDIA A100 SXM4 40GB", 40960, "A100 SXM 40GB" },
		{ "NVIDIA H300", 0, NULL },
		{ "", 0, NULL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct cat_gpu *g = catalog_match(&shipped, cases[i].name, cases[i].mib * MIB);
		if (!cases[i].key) {
			assert_null(g);
			continue;
		}
		if (!g)
			fail_msg("no match for '%s'", cases[i].name);
		assert_string_equal(g->key, cases[i].key);
	}
	assert_null(catalog_match(&shipped, NULL, 0));
	assert_null(catalog_find(&shipped, "H300"));
}

/* A minimal valid catalog; tests replace one piece of it to break it. */
static const char *const good_entry =
	"{\"key\":\"X1\",\"vendor_name\":\"NVIDIA X1\",\"architecture\":\"Hopper\",\"compute_capability\":\"9.0\","
	"\"form_factor\":\"SXM\",\"sm_count\":132,\"cuda_cores\":16896,"
	"\"memory\":{\"gb\":80,\"total_mib\":81559,\"type\":\"HBM3\",\"bus_width_bits\":5120,\"bandwidth_gbs\":3350},"
	"\"clocks\":{\"max_sm_mhz\":1980,\"max_mem_mhz\":2619},"
	"\"tflops\":{\"fp64\":34,\"fp64_tensor\":67,\"fp32\":67,\"tf32\":494.7,\"fp16\":989.4,\"bf16\":989.4,\"fp8\":null,\"int8\":null},"
	"\"nvlink\":{\"gen\":4,\"links\":18,\"bandwidth_gbs\":900},\"pcie\":{\"gen\":5,\"width\":16},"
	"\"tdp_w\":700,\"l2_mb\":50,\"mig_memory_slices\":8,"
	"\"mig\":[{\"name\":\"1g.10gb\",\"slices\":1,\"mem_slices\":1,\"mem_gb\":10,\"max_instances\":7,\"sms\":16}],"
	"\"source\":\"datasheet\",\"notes\":\"\"}";

static int parse_with(const char *from, const char *to, char *err, size_t errlen)
{
	char entry[4096];
	const char *at = strstr(good_entry, from);
	assert_non_null(at);
	snprintf(entry, sizeof(entry), "%.*s%s%s", (int)(at - good_entry), good_entry, to, at + strlen(from));
	char text[8192];
	snprintf(text, sizeof(text), "{\"schema\":1,\"gpus\":[%s]}", entry);
	struct catalog c;
	int rc = catalog_parse(&c, text, strlen(text), err, errlen);
	if (rc == 0) {
		assert_int_equal(c.n, 1);
		catalog_free(&c);
	} else {
		assert_null(c.gpus);
		assert_null(strchr(err, '\n'));
	}
	return rc;
}

static void test_bad_input(void **state)
{
	(void)state;
	char err[512];
	assert_int_equal(parse_with("\"X1\"", "\"X1\"", err, sizeof(err)), 0);
	struct { const char *from, *to, *msg; } cases[] = {
		{ "\"bandwidth_gbs\":3350", "\"bandwidth_gbs\":\"fast\"", "catalog entry 'X1': field 'memory.bandwidth_gbs' must be a number" },
		{ "\"bandwidth_gbs\":3350", "\"bandwidth_gbs\":-1", "catalog entry 'X1': field 'memory.bandwidth_gbs' must not be negative" },
		{ "\"fp32\":67,", "", "catalog entry 'X1': field 'tflops.fp32' is missing" },
		{ "\"fp32\":67", "\"fp32\":null", "catalog entry 'X1': field 'tflops.fp32' must be a number" },
		{ "\"bf16\":989.4", "\"bf16\":989.4,\"bf61\":1", "catalog entry 'X1': field 'tflops.bf61' is not a known field" },
		{ "\"compute_capability\":\"9.0\"", "\"compute_capability\":\"nine\"", "catalog entry 'X1': field 'compute_capability' must look like" },
		{ "\"sm_count\":132", "\"sm_count\":1.5", "catalog entry 'X1': field 'sm_count' must be a whole number" },
		{ "\"max_instances\":7", "\"max_instances\":0", "catalog entry 'X1': field 'mig[0]' must have" },
		{ "\"mem_slices\":1", "\"mem_slices\":9", "catalog entry 'X1': field 'mig[0]' uses 9 memory slices" },
		{ "\"sms\":16", "\"sms\":200", "catalog entry 'X1': field 'mig[0]' has more SMs" },
		{ "\"links\":18", "\"links\":0", "catalog entry 'X1': field 'nvlink' must have" },
		{ "\"key\":\"X1\",", "", "catalog entry '#0': field 'key' is missing" },
		{ "\"source\":\"datasheet\"", "\"source\":\"\"", "catalog entry 'X1': field 'source' must not be empty" },
		{ "\"mig_memory_slices\":8,", "", "catalog entry 'X1': field 'mig_memory_slices' is missing" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		assert_int_equal(parse_with(cases[i].from, cases[i].to, err, sizeof(err)), -1);
		if (strncmp(err, cases[i].msg, strlen(cases[i].msg)) != 0)
			fail_msg("case %zu: got '%s', want '%s...'", i, err, cases[i].msg);
	}
}

static void test_bad_documents(void **state)
{
	(void)state;
	struct { const char *text, *msg; } cases[] = {
		{ "", "catalog: invalid JSON" },
		{ "[1,2]", "catalog: missing array 'gpus'" },
		{ "{\"schema\":2,\"gpus\":[{}]}", "catalog: field 'schema' must be 1" },
		{ "{\"schema\":1,\"gpus\":[]}", "catalog: 'gpus' must hold 1 to" },
		{ "{\"schema\":1,\"gpus\":[3]}", "catalog entry '#0': field '(entry)' must be an object" },
		{ "{\"schema\":1,\"gpus\":[],\"gpus\":[]}", "catalog: invalid JSON" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char err[256] = "";
		struct catalog c;
		assert_int_equal(catalog_parse(&c, cases[i].text, strlen(cases[i].text), err, sizeof(err)), -1);
		if (strncmp(err, cases[i].msg, strlen(cases[i].msg)) != 0)
			fail_msg("case %zu: got '%s', want '%s...'", i, err, cases[i].msg);
	}
	/* two entries with one key */
	char text[8192], err[256];
	snprintf(text, sizeof(text), "{\"schema\":1,\"gpus\":[%s,%s]}", good_entry, good_entry);
	struct catalog c;
	assert_int_equal(catalog_parse(&c, text, strlen(text), err, sizeof(err)), -1);
	assert_string_equal(err, "catalog entry 'X1': field 'key' repeats an earlier entry");
	/* a missing file names the file */
	assert_int_equal(catalog_load(&c, "/nonexistent/gpus.json", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "'/nonexistent/gpus.json'"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_required_entry),
		cmocka_unit_test(test_h200_datasheet),
		cmocka_unit_test(test_a100_sxm_80gb_datasheet),
		cmocka_unit_test(test_dense_not_sparse),
		cmocka_unit_test(test_match_driver_names),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_bad_documents),
	};
	return cmocka_run_group_tests(tests, load_shipped, free_shipped);
}
