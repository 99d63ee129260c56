/* SPDX-License-Identifier: Apache-2.0 */
/* test_health_diag.c - diag's thresholds, judgements, variation finding and
 * environment checks (src/health/diag_eval.h). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "health/diag_eval.h"

static struct cat_gpu h200 = {
	.key = "H200 SXM", .mem_bw_gbs = 4800, .tflops_fp32 = 67, .tflops_tf32 = 494.7, .tflops_bf16 = 989.4,
	.tflops_fp8 = 1978.9, .nvlink_gen = 4, .nvlink_links = 18, .nvlink_bw_gbs = 900, .pcie_gen = 5, .pcie_width = 16,
};
static struct cat_gpu l40s = {
	.key = "L40S", .mem_bw_gbs = 864, .tflops_fp32 = 91.6, .pcie_gen = 4, .pcie_width = 16,
	.tflops_fp8 = NAN, .tflops_tf32 = NAN, .tflops_bf16 = NAN,
};

static void test_thresholds_from_catalog(void **state)
{
	(void)state;
	struct diag_threshold th;
	assert_int_equal(diag_threshold_for(&h200, DT_PCIE_H2D, 0, &th), 0);
	assert_float_equal(th.min, 0.75 * 64, 1e-9);
	assert_string_equal(th.unit, "GB/s");
	assert_non_null(strstr(th.basis, "PCIe Gen5 x16"));
	assert_int_equal(diag_threshold_for(&h200, DT_MEM_BW, 0, &th), 0);
	assert_float_equal(th.min, 0.70 * 4800, 1e-9);
	/* NVSwitch: every pair gets all 18 links: 0.75 x 450 */
	assert_int_equal(diag_threshold_for(&h200, DT_P2P, 18, &th), 0);
	assert_float_equal(th.min, 337.5, 1e-9);
	/* 6 links of 18 directly between a pair: a third of it */
	assert_int_equal(diag_threshold_for(&h200, DT_P2P, 6, &th), 0);
	assert_float_equal(th.min, 0.75 * 150, 1e-9);
	assert_int_equal(diag_threshold_for(&h200, DT_NCCL_ALLREDUCE, 18, &th), 0);
	assert_float_equal(th.min, 0.65 * 450, 1e-9);
	assert_int_equal(diag_threshold_for(&h200, DT_GEMM_BF16, 0, &th), 0);
	assert_float_equal(th.min, 0.65 * 989.4, 1e-9);
	assert_string_equal(th.unit, "TFLOP/s");
	/* no NVLink: the PCIe path with its own (lower) share */
	assert_int_equal(diag_threshold_for(&l40s, DT_P2P, 0, &th), 0);
	assert_float_equal(th.min, 0.50 * 32, 1e-9);
	/* a figure the catalog lacks: no threshold, never a made-up one */
	assert_int_equal(diag_threshold_for(&l40s, DT_GEMM_FP8, 0, &th), -1);
	assert_false(th.defined);
	assert_int_equal(diag_threshold_for(NULL, DT_MEM_BW, 0, &th), -1);
	assert_int_equal(diag_threshold_for(&h200, DT_MEMTEST, 0, &th), -1);
}

static void test_judge_prints_value_and_threshold(void **state)
{
	(void)state;
	struct diag_threshold th;
	struct diag_judgement j;
	diag_threshold_for(&h200, DT_PCIE_H2D, 0, &th);
	diag_judge(27.1, &th, &j); /* a link trained down to Gen4 */
	assert_int_equal(j.verdict, HEALTH_FAIL);
	assert_non_null(strstr(j.detail, "measured 27.1 GB/s < threshold 48 GB/s"));
	assert_non_null(strstr(j.detail, "0.75 x 64 GB/s"));
	diag_judge(55.2, &th, &j);
	assert_int_equal(j.verdict, HEALTH_PASS);
	assert_non_null(strstr(j.detail, ">= threshold 48"));
	diag_judge(NAN, &th, &j);
	assert_int_equal(j.verdict, HEALTH_FAIL);
	struct diag_threshold none = { 0 };
	diag_judge(10, &none, &j);
	assert_int_equal(j.verdict, HEALTH_NA);
	diag_judge_errors(0, 1000, "wrong words", &j);
	assert_int_equal(j.verdict, HEALTH_PASS);
	diag_judge_errors(3, 1000, "wrong words", &j);
	assert_int_equal(j.verdict, HEALTH_FAIL);
	assert_non_null(strstr(j.detail, "3 wrong words in 1000 checked"));
	diag_judge_errors(0, 0, "wrong words", &j);
	assert_int_equal(j.verdict, HEALTH_FAIL);
}

static void test_variation(void **state)
{
	(void)state;
	double v[8] = { 700, 705, 698, 702, 560, 701, 699, 703 };
	bool valid[8] = { true, true, true, true, true, true, true, true }, slow[8];
	double below[8];
	assert_int_equal(diag_variation(v, valid, 8, 10, slow, below), 1);
	assert_true(slow[4]);
	assert_float_equal(below[4], 100.0 * (701 - 560) / 701, 1e-9);
	for (int i = 0; i < 8; i++)
		if (i != 4)
			assert_false(slow[i]);
	/* two GPUs: the slower one is judged against the other */
	double two[2] = { 400, 340 };
	bool v2[2] = { true, true }, s2[2];
	double b2[2];
	assert_int_equal(diag_variation(two, v2, 2, 10, s2, b2), 1);
	assert_false(s2[0]);
	assert_true(s2[1]);
	assert_float_equal(b2[1], 15, 1e-9);
	assert_float_equal(b2[0], -100.0 * 60 / 340, 1e-9);
	/* invalid values take no part; one valid value judges nothing */
	v2[0] = false;
	assert_int_equal(diag_variation(two, v2, 2, 10, s2, b2), 0);
	assert_false(s2[1]);
}

static void snap_with(struct snapshot *s, unsigned n, const char *const *names)
{
	snapshot_clear(s);
	s->n = n;
	for (unsigned i = 0; i < n; i++) {
		snprintf(s->gpu[i].st.name.s, sizeof(s->gpu[i].st.name.s), "%s", names[i]);
		s->gpu[i].st.name.st = VAL_OK;
		snprintf(s->gpu[i].st.uuid.s, sizeof(s->gpu[i].st.uuid.s), "GPU-%08x-1111-2222-3333-444444444444", 0xabc0 + i);
		s->gpu[i].st.uuid.st = VAL_OK;
	}
}

static const struct diag_check *check_named(const struct diag_check *c, unsigned n, const char *name)
{
	for (unsigned i = 0; i < n; i++)
		if (strcmp(c[i].name, name) == 0)
			return &c[i];
	return NULL;
}

static void test_env_checks(void **state)
{
	(void)state;
	static struct snapshot *sp;
	if (!sp)
		sp = snapshot_new(GPU_MAX_GPUS);
	assert_non_null(sp);
	struct snapshot s = *sp; /* shares sp's arrays */
	const char *same[] = { "NVIDIA H200", "NVIDIA H200", "NVIDIA H200", "NVIDIA H200" };
	snap_with(&s, 4, same);
	s.link[0][1].kind = LINK_NVLINK;
	struct diag_check c[8];
	struct diag_env env = { 0 };
	unsigned n = diag_env_check(&env, &s, c, 8);
	assert_int_equal(check_named(c, n, "cuda_visible_devices")->verdict, HEALTH_PASS);
	assert_int_equal(check_named(c, n, "cuda_device_order")->verdict, HEALTH_PASS);
	assert_null(check_named(c, n, "cuda_launch_blocking"));

	env.cuda_visible_devices = "2,0";
	n = diag_env_check(&env, &s, c, 8);
	assert_non_null(strstr(check_named(c, n, "cuda_visible_devices")->detail, "sees 2 of 4"));
	env.cuda_visible_devices = "GPU-0000abc1,3";
	n = diag_env_check(&env, &s, c, 8);
	assert_int_equal(check_named(c, n, "cuda_visible_devices")->verdict, HEALTH_PASS);
	env.cuda_visible_devices = "0,7,1";
	n = diag_env_check(&env, &s, c, 8);
	assert_int_equal(check_named(c, n, "cuda_visible_devices")->verdict, HEALTH_WARN);
	assert_non_null(strstr(check_named(c, n, "cuda_visible_devices")->detail, "'7' names no GPU"));
	env.cuda_visible_devices = "1,1";
	n = diag_env_check(&env, &s, c, 8);
	assert_non_null(strstr(check_named(c, n, "cuda_visible_devices")->detail, "listed twice"));
	env.cuda_visible_devices = "";
	n = diag_env_check(&env, &s, c, 8);
	assert_int_equal(check_named(c, n, "cuda_visible_devices")->verdict, HEALTH_WARN);

	env.cuda_visible_devices = NULL;
	env.cuda_launch_blocking = "1";
	env.nccl_p2p_disable = "1";
	n = diag_env_check(&env, &s, c, 8);
	assert_int_equal(check_named(c, n, "cuda_launch_blocking")->verdict, HEALTH_WARN);
	assert_int_equal(check_named(c, n, "nccl_p2p_disable")->verdict, HEALTH_WARN);
	assert_non_null(strstr(check_named(c, n, "nccl_p2p_disable")->detail, "NVLink"));

	const char *mixed[] = { "NVIDIA H200", "NVIDIA L40S" };
	snap_with(&s, 2, mixed);
	struct diag_env e2 = { 0 };
	n = diag_env_check(&e2, &s, c, 8);
	assert_int_equal(check_named(c, n, "cuda_device_order")->verdict, HEALTH_WARN);
	e2.cuda_device_order = "PCI_BUS_ID";
	n = diag_env_check(&e2, &s, c, 8);
	assert_int_equal(check_named(c, n, "cuda_device_order")->verdict, HEALTH_PASS);
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(diag_test_name(DT_MEMTEST), "memtest");
	assert_string_equal(diag_test_name(DT_NCCL_ALLREDUCE), "nccl_all_reduce");
	assert_string_equal(diag_test_name(DT_SUSTAINED), "sustained");
	for (int t = 1; t < DT_COUNT; t++)
		assert_true(diag_factor((enum diag_test)t, true) > 0.3 && diag_factor((enum diag_test)t, true) < 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_thresholds_from_catalog),
		cmocka_unit_test(test_judge_prints_value_and_threshold),
		cmocka_unit_test(test_variation),
		cmocka_unit_test(test_env_checks),
		cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
