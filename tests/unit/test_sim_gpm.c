/* SPDX-License-Identifier: Apache-2.0 */
/* test_sim_gpm.c - the simulator's profiling metrics (issue 32): each
 * workload's figures as shares of its utilization (device/sim_gpm.c), the
 * workload's own load when the file gives none, "not supported" (never 0)
 * before Hopper and, for the GPU, with MIG on, each MIG instance's own
 * figures, and the file's "workload" checked. */
#include "test_sim_util.h"

static void sample_gpm(struct gpu_backend *be, unsigned gpu, struct gpu_sample *s)
{
	struct gpu_err err = { "" };
	assert_int_equal(be->ops->sample(be, gpu, GPU_GRP_BASIC | GPU_GRP_GPM, s, &err), GPU_OK);
}

/* v within 1 of share% of util (the model's rounding) */
static void assert_share(u64v v, double share, uint64_t util)
{
	assert_int_equal(v.st, VAL_OK);
	double want = share * (double)util / 100.0;
	if ((double)v.v < want - 1 || (double)v.v > want + 1)
		fail_msg("%llu is not %.1f %% of %llu", (unsigned long long)v.v, share, (unsigned long long)util);
}

static void test_workloads(void **state)
{
	(void)state;
	struct gpu_backend be;
	struct test_clock clk;
	open_sim(&be, &clk, "h200-workloads");
	struct gpu_sample s;
	for (int tick = 0; tick < 5; tick++, clk.now += 7 * SEC) {
		/* 0: GEMM-bound, at its own 98 % */
		sample_gpm(&be, 0, &s);
		assert_in_range(s.util_gpu_pct.v, 94, 100);
		assert_share(s.prof_sm_active_pct, 95, s.util_gpu_pct.v);
		assert_share(s.prof_tensor_active_pct, 90, s.util_gpu_pct.v);
		assert_share(s.prof_sm_occupancy_pct, 15.5, s.util_gpu_pct.v);
		assert_share(s.prof_dram_active_pct, 17, s.util_gpu_pct.v);
		assert_int_equal(s.prof_fp64_active_pct.st, VAL_OK);
		assert_int_equal(s.prof_fp64_active_pct.v, 0);
		assert_int_equal(s.prof_nvlink_tx_kbps.st, VAL_OK); /* behind NVSwitches */
		assert_true(s.prof_nvlink_tx_kbps.v > 0);
		/* 1: memory-bound */
		sample_gpm(&be, 1, &s);
		assert_share(s.prof_dram_active_pct, 88, s.util_gpu_pct.v);
		assert_share(s.prof_sm_occupancy_pct, 55, s.util_gpu_pct.v);
		assert_int_equal(s.prof_tensor_active_pct.v, 0);
		/* 2: idle but allocated: 80 GB held, every figure a measured 0 */
		sample_gpm(&be, 2, &s);
		assert_true(s.mem_used_bytes.v >= 80000 * MIB_B);
		assert_int_equal(s.util_gpu_pct.v, 0);
		assert_int_equal(s.prof_sm_active_pct.st, VAL_OK);
		assert_int_equal(s.prof_sm_active_pct.v, 0);
		assert_int_equal(s.prof_tensor_active_pct.v, 0);
		assert_int_equal(s.prof_dram_active_pct.v, 0);
		assert_int_equal(s.prof_pcie_rx_kbps.v, 0);
		/* 3: dataloader-starved: 30 %, SMs mostly waiting, the input copies on PCIe */
		sample_gpm(&be, 3, &s);
		assert_in_range(s.util_gpu_pct.v, 26, 34);
		assert_share(s.prof_sm_active_pct, 60, s.util_gpu_pct.v);
		assert_true(s.prof_sm_active_pct.v < 25);
		assert_true(s.prof_pcie_rx_kbps.v > 1100000); /* over 30 % of a Gen5 x16 direction (3.9 GB/s x 16 / 16) */
	}
	gpu_backend_close(&be);
}

/* Not asked for: not read. */
static void test_group_off(void **state)
{
	(void)state;
	struct gpu_backend be;
	struct test_clock clk;
	struct gpu_err err = { "" };
	open_sim(&be, &clk, "h200-workloads");
	struct gpu_sample s;
	assert_int_equal(be.ops->sample(&be, 0, GPU_GRP_BASIC, &s, &err), GPU_OK);
	assert_int_equal(s.prof_sm_active_pct.st, VAL_UNKNOWN);
	/* GPM alone still follows the load */
	assert_int_equal(be.ops->sample(&be, 0, GPU_GRP_GPM, &s, &err), GPU_OK);
	assert_true(s.prof_sm_active_pct.v >= 85);
	gpu_backend_close(&be);
}

/* Before Hopper (A100, L40S) and with MIG on: not supported, never 0. */
static void test_unsupported(void **state)
{
	(void)state;
	const char *servers[] = { "a100x8", "l40sx4", "rtx4090x2", "h100pcie-mig" };
	for (size_t i = 0; i < sizeof(servers) / sizeof(servers[0]); i++) {
		struct gpu_backend be;
		struct test_clock clk;
		open_sim(&be, &clk, servers[i]);
		struct gpu_sample s;
		sample_gpm(&be, 0, &s);
		u64v all[] = { s.prof_sm_active_pct, s.prof_sm_occupancy_pct, s.prof_tensor_active_pct,
			       s.prof_dram_active_pct, s.prof_fp64_active_pct, s.prof_fp32_active_pct,
			       s.prof_fp16_active_pct, s.prof_pcie_tx_kbps, s.prof_pcie_rx_kbps,
			       s.prof_nvlink_tx_kbps, s.prof_nvlink_rx_kbps };
		for (size_t k = 0; k < sizeof(all) / sizeof(all[0]); k++)
			if (all[k].st != VAL_UNSUPPORTED)
				fail_msg("%s: GPM field %zu has status %d, not \"not supported\"", servers[i], k, all[k].st);
		gpu_backend_close(&be);
	}
}

/* The file's "workload": a known name, or an error naming the field. */
static void test_parse(void **state)
{
	(void)state;
	assert_int_equal(sim_workload_parse("gemm"), SIM_WL_GEMM);
	assert_int_equal(sim_workload_parse("dataloader-starved"), SIM_WL_STARVED);
	assert_int_equal(sim_workload_parse("GEMM"), -1);
	assert_int_equal(sim_workload_parse(""), -1);
	assert_string_equal(sim_workload_name(SIM_WL_IDLE), "idle-allocated");
	const char *bad = "{\"name\": \"x\", \"gpus\": [{\"model\": \"H200 SXM\", \"workload\": \"training\"}]}";
	struct sim_server *srv = NULL;
	struct gpu_err err = { "" };
	assert_int_equal(sim_server_parse(bad, strlen(bad), "test.json", &srv, &err), GPU_EDATA);
	assert_non_null(strstr(err.msg, "gpus[0].workload"));
	assert_non_null(strstr(err.msg, "'training' is not gemm"));
	free(srv);
	const char *num = "{\"name\": \"x\", \"gpus\": [{\"model\": \"H200 SXM\", \"workload\": 3}]}";
	srv = NULL;
	assert_int_equal(sim_server_parse(num, strlen(num), "test.json", &srv, &err), GPU_EDATA);
	free(srv);
	/* a given load wins over the workload's own */
	char path[64];
	write_temp(path, ".json",
		   "{\"name\": \"x\", \"gpus\": [{\"model\": \"H200 SXM\", \"workload\": \"gemm\", \"load\": 50}]}");
	struct gpu_backend be;
	struct test_clock clk;
	open_sim(&be, &clk, path);
	struct gpu_sample s;
	sample_gpm(&be, 0, &s);
	assert_in_range(s.util_gpu_pct.v, 47, 53);
	assert_share(s.prof_tensor_active_pct, 90, s.util_gpu_pct.v);
	gpu_backend_close(&be);
	unlink(path);
}

static struct gpu_mig *mig_by_gi(struct gpu_mig *m, unsigned n, unsigned gi)
{
	for (unsigned k = 0; k < n; k++)
		if (m[k].gi_id == gi)
			return &m[k];
	fail_msg("no GPU instance %u", gi);
	return NULL;
}

/* With MIG on, each instance has its own figures (its "workload", or the
 * GPU's load while a process runs on it); the GPU's are "not supported",
 * and so are the instances' link rates and every figure before Hopper. */
static void test_mig(void **state)
{
	(void)state;
	struct gpu_backend be;
	struct test_clock clk;
	struct gpu_err err = { "" };
	open_sim(&be, &clk, "h100pcie-mig");
	struct gpu_sample s;
	sample_gpm(&be, 0, &s);
	assert_int_equal(s.prof_sm_active_pct.st, VAL_UNSUPPORTED);
	struct gpu_mig m[GPU_MAX_MIG];
	unsigned n = 0;
	for (int tick = 0; tick < 3; tick++, clk.now += 7 * SEC) {
		assert_int_equal(be.ops->mig_instances(&be, 0, m, GPU_MAX_MIG, &n, &err), GPU_OK);
		assert_int_equal(n, 4);
		const struct gpu_mig *gemm = mig_by_gi(m, n, 2), *idle = mig_by_gi(m, n, 3);
		const struct gpu_mig *starved = mig_by_gi(m, n, 9), *unused = mig_by_gi(m, n, 10);
		assert_share(gemm->prof_sm_active_pct, 95, 98); /* gemm at its own 98 % */
		assert_share(gemm->prof_tensor_active_pct, 90, 98);
		assert_share(gemm->prof_sm_occupancy_pct, 15.5, 98);
		assert_share(gemm->prof_dram_active_pct, 17, 98);
		assert_int_equal(gemm->prof_pcie_tx_kbps.st, VAL_UNSUPPORTED);
		assert_int_equal(gemm->prof_nvlink_rx_kbps.st, VAL_UNSUPPORTED);
		assert_int_equal(idle->prof_sm_active_pct.st, VAL_OK); /* a measured 0 */
		assert_int_equal(idle->prof_sm_active_pct.v, 0);
		assert_int_equal(idle->prof_tensor_active_pct.v, 0);
		assert_share(starved->prof_sm_active_pct, 60, 30);
		assert_share(starved->prof_tensor_active_pct, 45, 30);
		assert_int_equal(unused->prof_sm_active_pct.st, VAL_OK); /* no process: 0 */
		assert_int_equal(unused->prof_sm_active_pct.v, 0);
	}
	gpu_backend_close(&be);

	/* an A100 with MIG on: every instance figure "not supported"; an
	 * instance without a workload follows the GPU's load: checked above */
	char path[64];
	write_temp(path, ".json",
		   "{\"name\": \"x\", \"gpus\": [{\"model\": \"A100 PCIe 40GB\", \"mig\": true, \"load\": 50,"
		   " \"mig_instances\": [{\"profile\": \"3g.20gb\", \"gi_id\": 1, \"workload\": \"gemm\"}]}]}");
	open_sim(&be, &clk, path);
	assert_int_equal(be.ops->mig_instances(&be, 0, m, GPU_MAX_MIG, &n, &err), GPU_OK);
	assert_int_equal(n, 1);
	assert_int_equal(m[0].prof_sm_active_pct.st, VAL_UNSUPPORTED);
	assert_int_equal(m[0].prof_dram_active_pct.st, VAL_UNSUPPORTED);
	gpu_backend_close(&be);
	unlink(path);

	/* an instance's workload is checked as the GPU's */
	const char *bad = "{\"name\": \"x\", \"gpus\": [{\"model\": \"H100 PCIe\", \"mig\": true,"
			  " \"mig_instances\": [{\"profile\": \"1g.10gb\", \"gi_id\": 9, \"workload\": \"x\"}]}]}";
	struct sim_server *srv = NULL;
	assert_int_equal(sim_server_parse(bad, strlen(bad), "test.json", &srv, &err), GPU_EDATA);
	assert_non_null(strstr(err.msg, "mig_instances[0].workload"));
	free(srv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_workloads),
		cmocka_unit_test(test_group_off),
		cmocka_unit_test(test_unsupported),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_mig),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
