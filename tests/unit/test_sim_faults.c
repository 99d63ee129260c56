/* SPDX-License-Identifier: Apache-2.0 */
/* test_sim_faults.c - every fault kind of the simulator and its effect, the
 * three ways in (server file, run-time fault file, sim_inject), XID events,
 * hung and lost GPUs, and injection while other threads sample. */
#include "test_sim_util.h"

#include <pthread.h>
#include <stdatomic.h>

#define F(...) ((struct sim_fault){ __VA_ARGS__ })

static void test_ecc(void **state)
{
	(void)state;
	struct gpu_backend be;
	struct test_clock clk;
	open_sim(&be, &clk, "h200x8");
	inject(&be, F(.kind = SIM_FAULT_ECC_UNCORRECTABLE, .gpu = 2, .count = 3, .location = SIM_LOC_DRAM));
	inject(&be, F(.kind = SIM_FAULT_ECC_UNCORRECTABLE, .gpu = 2, .count = 2, .location = SIM_LOC_SRAM));
	inject(&be, F(.kind = SIM_FAULT_ECC_CORRECTED, .gpu = 2, .count = 7));
	struct gpu_sample s = take(&be, 2, GPU_GRP_ECC);
	assert_u64(s.ecc_vol_uncorrected, 5);
	assert_u64(s.ecc_agg_uncorrected, 5);
	assert_u64(s.ecc_dram_uncorrected, 3);
	assert_u64(s.ecc_sram_uncorrected, 2);
	assert_u64(s.ecc_vol_corrected, 7);
	assert_u64(s.ecc_agg_corrected, 7);
	s = take(&be, 3, GPU_GRP_ECC); /* the neighbour is clean */
	assert_u64(s.ecc_vol_uncorrected, 0);
	/* counts stay after the fault is cleared: errors happened */
	sim_clear_all(&be);
	clk.now += SEC;
	assert_u64(take(&be, 2, GPU_GRP_ECC).ecc_agg_uncorrected, 5);
	gpu_backend_close(&be);
}

/* a count with rate_per_s keeps growing while active: its step, then the rate */
static void test_ecc_growing(void **state)
{
	(void)state;
	struct gpu_backend be;
	struct test_clock clk;
	open_sim(&be, &clk, "h200x8");
	inject(&be, F(.kind = SIM_FAULT_ECC_CORRECTED, .gpu = 1, .count = 5, .rate_per_s = 500, .duration_s = 10));
	inject(&be, F(.kind = SIM_FAULT_ECC_UNCORRECTABLE, .gpu = 1, .rate_per_s = 2, .location = SIM_LOC_SRAM));
	struct gpu_sample s = take(&be, 1, GPU_GRP_ECC);
	assert_u64(s.ecc_vol_corrected, 5);
	assert_u64(s.ecc_vol_uncorrected, 1);
	clk.now += 3 * SEC;
	s = take(&be, 1, GPU_GRP_ECC);
	assert_u64(s.ecc_vol_corrected, 5 + 1500);
	assert_u64(s.ecc_agg_corrected, 5 + 1500);
	assert_u64(s.ecc_vol_uncorrected, 1 + 6);
	assert_u64(s.ecc_sram_uncorrected, 1 + 6);
	assert_u64(s.ecc_dram_uncorrected, 0);
	/* it stops growing when the fault ends, and what happened stays */
	clk.now += 20 * SEC;
	assert_u64(take(&be, 1, GPU_GRP_ECC).ecc_vol_corrected, 5 + 5000);
	clk.now += 20 * SEC;
	assert_u64(take(&be, 1, GPU_GRP_ECC).ecc_vol_corrected, 5 + 5000);
	gpu_backend_close(&be);
}

static void test_xid_events(void **state)
{
	(void)state;
	struct gpu_backend be;
	struct test_clock clk;
	struct gpu_event ev[8];
	unsigned n = 99;
	struct gpu_err err;
	open_sim(&be, &clk, "h200x8");
	assert_int_equal(be.ops->poll_events(&be, 20, ev, 8, &n, &err), GPU_OK);
	assert_int_equal(n, 0);
	inject(&be, F(.kind = SIM_FAULT_XID, .gpu = 5, .xid = 48));
	inject(&be, F(.kind = SIM_FAULT_XID, .gpu = 1, .xid = 94, .at_s = 30));
	assert_int_equal(be.ops->poll_events(&be, 1000, ev, 8, &n, &err), GPU_OK);
	assert_int_equal(n, 1);
	assert_int_equal(ev[0].kind, EVT_XID);
	assert_int_equal(ev[0].gpu, 5);
	assert_int_equal(ev[0].xid, 48);
	assert_int_equal(ev[0].timestamp_ns, T0);
	/* delivered once */
	assert_int_equal(be.ops->poll_events(&be, 20, ev, 8, &n, &err), GPU_OK);
	assert_int_equal(n, 0);
	assert_int_equal(sim_events_delivered(&be), 1);
	/* the delayed one comes when the clock gets there */
	clk.now = T0 + 31 * SEC;
	assert_int_equal(be.ops->poll_events(&be, 1000, ev, 8, &n, &err), GPU_OK);
	assert_int_equal(n, 1);
	assert_int_equal(ev[0].xid, 94);
	assert_int_equal(ev[0].gpu, 1);
	assert_int_equal(ev[0].timestamp_ns, T0 + 30 * SEC);
	assert_int_equal(sim_events_delivered(&be), 2);
	/* one cleared before its time never comes */
	int id = inject(&be, F(.kind = SIM_FAULT_XID, .gpu = 2, .xid = 45, .at_s = 10));
	assert_int_equal(sim_clear(&be, id), 0);
	clk.now += 20 * SEC;
	assert_int_equal(be.ops->poll_events(&be, 30, ev, 8, &n, &err), GPU_OK);
	assert_int_equal(n, 0);
	gpu_backend_close(&be);
}

struct poll_arg {
	struct gpu_backend *be;
	unsigned n;
	uint64_t xid;
};

static void *poll_thread(void *p)
{
	struct poll_arg *a = p;
	struct gpu_event ev[4];
	struct gpu_err err;
	a->be->ops->poll_events(a->be, 5000, ev, 4, &a->n, &err);
	a->xid = a->n ? ev[0].xid : 0;
	return NULL;
}

static void test_poll_wakes_on_inject(void **state)
{
	(void)state;
	struct gpu_backend be;
	struct test_clock clk;
	open_sim(&be, &clk, "a100x8");
	struct poll_arg a = { &be, 0, 0 };
	pthread_t th;
	uint64_t t = mono_now_ns();
	assert_int_equal(pthread_create(&th, NULL, poll_thread, &a), 0);
	usleep(50000);
	inject(&be, F(.kind = SIM_FAULT_XID, .gpu = 0, .xid = 31));
	pthread_join(th, NULL);
	assert_int_equal(a.n, 1);
	assert_int_equal(a.xid, 31);
	assert_true(mono_now_ns() - t < 4 * SEC);
	gpu_backend_close(&be);
}

static void test_thermal(void **state)
{
	(void)state;
	struct gpu_backend be;
	struct test_clock clk;
	open_sim(&be, &clk, "h200x8");
	clk.now = T0 + 10 * SEC;
	struct gpu_sample before = take(&be, 0, GPU_GRP_ALL);
	assert_int_equal(before.clock_event_reasons.v & (CLK_EVT_HW_THERMAL | CLK_EVT_SW_THERMAL), 0);
	assert_u64(before.viol_thermal_ns, 0);
	int id = inject(&be, F(.kind = SIM_FAULT_THERMAL, .gpu = 0));
	clk.now += 10 * SEC;
	struct gpu_sample s = take(&be, 0, GPU_GRP_ALL);
	assert_true(s.temp_c.v >= s.temp_slowdown_c.v);
	assert_true(s.clock_event_reasons.v & CLK_EVT_HW_THERMAL);
	assert_true(s.clock_event_reasons.v & CLK_EVT_SW_THERMAL);
	assert_u64(s.viol_thermal_ns, 10 * SEC);
	assert_true(s.sm_clock_mhz.v < before.sm_clock_mhz.v);
	assert_int_equal(sim_clear(&be, id), 0);
	clk.now += 10 * SEC;
	s = take(&be, 0, GPU_GRP_ALL);
	assert_int_equal(s.clock_event_reasons.v & CLK_EVT_HW_THERMAL, 0);
	assert_u64(s.viol_thermal_ns, 10 * SEC); /* stops growing, stays */
	assert_true(s.temp_c.v < s.temp_slowdown_c.v);
	/* an explicit temperature */
	inject(&be, F(.kind = SIM_FAULT_THERMAL, .gpu = 1, .temp_c = 99));
	assert_u64(take(&be, 1, GPU_GRP_BASIC).temp_c, 99);
	assert_int_equal(sim_clear(&be, 9999), GPU_EINVAL);
	gpu_backend_close(&be);
}

static void test_power(void **state)
{
	(void)state;
	struct gpu_backend be;
	struct test_clock clk;
	open_sim(&be, &clk, "h200x8");
	inject(&be, F(.kind = SIM_FAULT_POWER, .gpu = 3));
	clk.now += 4 * SEC;
	struct gpu_sample s = take(&be, 3, GPU_GRP_ALL);
	assert_true(s.clock_event_reasons.v & CLK_EVT_SW_POWER_CAP);
	assert_u64(s.power_mw, s.power_limit_mw.v);
	assert_u64(s.viol_power_ns, 4 * SEC);
	assert_u64(take(&be, 2, GPU_GRP_VIOL).viol_power_ns, 0);
	gpu_backend_close(&be);
}

static void test_pcie_degraded(void **state)
{
	(void)state;
	struct gpu_backend be;
	struct test_clock clk;
	struct gpu_err err;
	open_sim(&be, &clk, "h200x8");
	inject(&be, F(.kind = SIM_FAULT_PCIE_DEGRADED, .gpu = 6, .gen = 3, .width = 8));
	clk.now += 60 * SEC;
	struct gpu_sample s = take(&be, 6, GPU_GRP_PCIE);
	assert_u64(s.pcie_gen, 3);
	assert_u64(s.pcie_width, 8);
	assert_true(s.pcie_replays.v > 0);
	assert_u64(s.pcie_l0_recoveries, 1); /* retrained once into the degraded state */
	struct gpu_static st;
	assert_int_equal(be.ops->static_info(&be, 6, &st, &err), GPU_OK);
	assert_u64(st.pcie_gen_max, 5);
	assert_u64(st.pcie_width_max, 16);
	/* defaults: one generation down, full width */
	inject(&be, F(.kind = SIM_FAULT_PCIE_DEGRADED, .gpu = 7));
	s = take(&be, 7, GPU_GRP_PCIE);
	assert_u64(s.pcie_gen, 4);
	assert_u64(s.pcie_width, 16);
	gpu_backend_close(&be);
}

static void test_nvlink(void **state)
{
	(void)state;
	struct gpu_backend be;
	struct test_clock clk;
	struct gpu_err err;
	struct gpu_link l;
	open_sim(&be, &clk, "h200x8");
	inject(&be, F(.kind = SIM_FAULT_NVLINK_DOWN, .gpu = 0, .link = 3));
	inject(&be, F(.kind = SIM_FAULT_NVLINK_ERRORS, .gpu = 1, .link = 2, .rate_per_s = 50));
	clk.now += 10 * SEC;
	struct gpu_sample s = take(&be, 0, GPU_GRP_NVLINK | GPU_GRP_NVLINK_ERR);
	assert_int_equal(s.nvlink_n, 18);
	assert_u64(s.nvlink[3].active, 0);
	assert_u64(s.nvlink[2].active, 1);
	assert_int_equal(be.ops->link(&be, 0, 1, &l, &err), GPU_OK);
	assert_int_equal(l.nvlinks, 17);
	assert_int_equal(be.ops->link(&be, 2, 1, &l, &err), GPU_OK);
	assert_int_equal(l.nvlinks, 18);
	s = take(&be, 1, GPU_GRP_NVLINK | GPU_GRP_NVLINK_ERR);
	assert_u64(s.nvlink[2].crc_flit_errors, 500);
	assert_u64(s.nvlink[2].replay_errors, 50);
	assert_u64(s.nvlink[2].recovery_errors, 5);
	assert_true(s.nvlink[2].crc_data_errors.v > 0);
	assert_u64(s.nvlink[1].crc_flit_errors, 0);
	/* the link state alone (top): the error counters are not read */
	s = take(&be, 1, GPU_GRP_NVLINK);
	assert_u64(s.nvlink[2].active, 1);
	assert_int_equal(s.nvlink[2].crc_flit_errors.st, VAL_UNKNOWN);
	assert_int_equal(s.nvlink[2].recovery_errors.st, VAL_UNKNOWN);
	/* every link down: no NVLink left between the two */
	inject(&be, F(.kind = SIM_FAULT_NVLINK_DOWN, .gpu = 5, .link = -1));
	assert_int_equal(be.ops->link(&be, 4, 5, &l, &err), GPU_OK);
	assert_int_equal(l.nvlinks, 0);
	assert_int_equal(l.kind, LINK_NODE); /* both on NUMA node 1 */
	gpu_backend_close(&be);
}

static void test_gpu_lost(void **state)
{
	(void)state;
	struct gpu_backend be;
	struct test_clock clk;
	struct gpu_err err;
	open_sim(&be, &clk, "h200x8");
	inject(&be, F(.kind = SIM_FAULT_GPU_LOST, .gpu = 4));
	struct gpu_sample s;
	assert_int_equal(be.ops->sample(&be, 4, GPU_GRP_ALL, &s, &err), GPU_ENODEV);
	assert_true(s.lost);
	assert_true(strstr(err.msg, "fallen off the bus") != NULL);
	struct gpu_static st;
	assert_int_equal(be.ops->static_info(&be, 4, &st, &err), GPU_ENODEV);
	struct gpu_process p[4];
	unsigned n;
	assert_int_equal(be.ops->processes(&be, 4, p, 4, &n, &err), GPU_ENODEV);
	struct gpu_link l;
	assert_int_equal(be.ops->link(&be, 4, 0, &l, &err), GPU_ENODEV);
	assert_int_equal(be.ops->link(&be, 0, 4, &l, &err), GPU_ENODEV);
	struct gpu_mig m[2];
	assert_int_equal(be.ops->mig_instances(&be, 4, m, 2, &n, &err), GPU_ENODEV);
	/* the others go on */
	s = take(&be, 3, GPU_GRP_ALL);
	assert_false(s.lost);
	/* the driver's XID 79 comes once */
	struct gpu_event ev[4];
	assert_int_equal(be.ops->poll_events(&be, 1000, ev, 4, &n, &err), GPU_OK);
	assert_int_equal(n, 1);
	assert_int_equal(ev[0].xid, 79);
	assert_int_equal(ev[0].gpu, 4);
	gpu_backend_close(&be);
}

static void test_remap_and_retired(void **state)
{
	(void)state;
	struct gpu_backend be;
	struct test_clock clk;
	struct gpu_err err;
	open_sim(&be, &clk, "a100x8");
	int id = inject(&be, F(.kind = SIM_FAULT_REMAP_PENDING, .gpu = 1, .count = 2));
	struct gpu_sample s = take(&be, 1, GPU_GRP_ECC);
	assert_u64(s.remap_pending, 1);
	assert_u64(s.remap_uncorrected, 2);
	assert_u64(s.remap_failure, 0);
	sim_clear(&be, id); /* as after a reset: no longer pending, rows stay remapped */
	s = take(&be, 1, GPU_GRP_ECC);
	assert_u64(s.remap_pending, 0);
	assert_u64(s.remap_uncorrected, 2);
	inject(&be, F(.kind = SIM_FAULT_REMAP_FAILURE, .gpu = 1));
	assert_u64(take(&be, 1, GPU_GRP_ECC).remap_failure, 1);
	/* an A100 remaps rows: it cannot show retired pages */
	struct sim_fault f = F(.kind = SIM_FAULT_RETIRED_PAGES, .gpu = 1, .dbe = 1);
	assert_int_equal(sim_inject(&be, &f, &err), GPU_EUNSUPPORTED);
	assert_true(strstr(err.msg, "remaps rows") != NULL);
	gpu_backend_close(&be);

	/* a V100 retires pages instead */
	char path[64];
	write_temp(path, ".json", "{\"name\": \"v100\", \"gpus\": [{\"model\": \"V100 SXM2\"}]}");
	open_sim(&be, &clk, path);
	s = take(&be, 0, GPU_GRP_ECC);
	assert_u64(s.retired_pages_dbe, 0);
	assert_unsupported(s.remap_pending);
	inject(&be, F(.kind = SIM_FAULT_RETIRED_PAGES, .gpu = 0, .sbe = 3, .dbe = 1));
	s = take(&be, 0, GPU_GRP_ECC);
	assert_u64(s.retired_pages_sbe, 3);
	assert_u64(s.retired_pages_dbe, 1);
	assert_u64(s.retired_pages_pending, 1);
	f = F(.kind = SIM_FAULT_REMAP_PENDING, .gpu = 0);
	assert_int_equal(sim_inject(&be, &f, &err), GPU_EUNSUPPORTED);
	gpu_backend_close(&be);
	unlink(path);
}

static void test_persistence_and_foreign_process(void **state)
{
	(void)state;
	struct gpu_backend be;
	struct test_clock clk;
	struct gpu_err err;
	struct gpu_static st;
	open_sim(&be, &clk, "h200x8");
	int id = inject(&be, F(.kind = SIM_FAULT_PERSISTENCE_OFF, .gpu = 2));
	assert_int_equal(be.ops->static_info(&be, 2, &st, &err), GPU_OK);
	assert_u64(st.persistence_mode, 0);
	sim_clear(&be, id);
	assert_int_equal(be.ops->static_info(&be, 2, &st, &err), GPU_OK);
	assert_u64(st.persistence_mode, 1);

	uint64_t used = take(&be, 7, GPU_GRP_BASIC).mem_used_bytes.v;
	struct sim_fault f = F(.kind = SIM_FAULT_FOREIGN_PROCESS, .gpu = 7, .pid = 66666, .mem_bytes = 5000 * MIB_B);
	snprintf(f.name, sizeof(f.name), "miner");
	snprintf(f.user, sizeof(f.user), "mallory");
	inject(&be, f);
	struct gpu_process p[4];
	unsigned n;
	assert_int_equal(be.ops->processes(&be, 7, p, 4, &n, &err), GPU_OK);
	assert_int_equal(n, 1);
	assert_int_equal(p[0].pid, 66666);
	assert_string_equal(p[0].name, "miner");
	assert_string_equal(p[0].user, "mallory");
	assert_u64(p[0].used_mem_bytes, 5000 * MIB_B);
	assert_u64(take(&be, 7, GPU_GRP_BASIC).mem_used_bytes, used + 5000 * MIB_B);
	gpu_backend_close(&be);
}

static void test_refused_faults(void **state)
{
	(void)state;
	struct gpu_backend be;
	struct test_clock clk;
	struct gpu_err err;
	open_sim(&be, &clk, "l40sx4");
	struct sim_fault f = F(.kind = SIM_FAULT_NVLINK_DOWN, .gpu = 0);
	assert_int_equal(sim_inject(&be, &f, &err), GPU_EUNSUPPORTED);
	assert_true(strstr(err.msg, "no NVLink") != NULL);
	f = F(.kind = SIM_FAULT_XID, .gpu = 4, .xid = 13);
	assert_int_equal(sim_inject(&be, &f, &err), GPU_EINVAL);
	f = F(.kind = SIM_FAULT_XID, .gpu = 0);
	assert_int_equal(sim_inject(&be, &f, &err), GPU_EUNSUPPORTED);
	f = F(.kind = (enum sim_fault_kind)99, .gpu = 0);
	assert_int_equal(sim_inject(&be, &f, &err), GPU_EINVAL);
	gpu_backend_close(&be);
	open_sim(&be, &clk, "rtx4090x2");
	f = F(.kind = SIM_FAULT_ECC_UNCORRECTABLE, .gpu = 0);
	assert_int_equal(sim_inject(&be, &f, &err), GPU_EUNSUPPORTED);
	assert_true(strstr(err.msg, "no ECC") != NULL);
	gpu_backend_close(&be);
}

static void test_fault_timing(void **state)
{
	(void)state;
	struct gpu_backend be;
	struct test_clock clk;
	open_sim(&be, &clk, "h200x8");
	inject(&be, F(.kind = SIM_FAULT_POWER, .gpu = 0, .at_s = 30, .duration_s = 20));
	clk.now = T0 + 10 * SEC;
	assert_int_equal(take(&be, 0, GPU_GRP_BASIC).clock_event_reasons.v & CLK_EVT_SW_POWER_CAP, 0);
	clk.now = T0 + 35 * SEC;
	assert_true(take(&be, 0, GPU_GRP_BASIC).clock_event_reasons.v & CLK_EVT_SW_POWER_CAP);
	clk.now = T0 + 60 * SEC;
	struct gpu_sample s = take(&be, 0, GPU_GRP_BASIC | GPU_GRP_VIOL);
	assert_int_equal(s.clock_event_reasons.v & CLK_EVT_SW_POWER_CAP, 0);
	assert_u64(s.viol_power_ns, 20 * SEC);
	gpu_backend_close(&be);
}

static void test_server_file_faults(void **state)
{
	(void)state;
	char path[64];
	write_temp(path, ".json",
		   "{\"name\": \"faulty\", \"gpus\": [{\"model\": \"H100 SXM\"}, {\"model\": \"H100 SXM\"}],"
		   " \"nvswitches\": [\"00000000:05:00.0\"], \"topology\": {\"nvlink_all_pairs\": 18},"
		   " \"faults\": [{\"kind\": \"ecc_uncorrectable\", \"gpu\": 1, \"count\": 4, \"location\": \"sram\"},"
		   "  {\"kind\": \"nvlink_down\", \"gpu\": 0, \"comment\": \"every link\"},"
		   "  {\"kind\": \"xid\", \"gpu\": 1, \"xid\": 119, \"at_s\": 5}]}");
	struct gpu_backend be;
	struct test_clock clk;
	struct gpu_err err;
	open_sim(&be, &clk, path);
	assert_u64(take(&be, 1, GPU_GRP_ECC).ecc_sram_uncorrected, 4);
	struct gpu_sample s = take(&be, 0, GPU_GRP_NVLINK | GPU_GRP_NVLINK_ERR);
	for (unsigned k = 0; k < s.nvlink_n; k++)
		assert_u64(s.nvlink[k].active, 0);
	struct gpu_event ev[2];
	unsigned n;
	assert_int_equal(be.ops->poll_events(&be, 20, ev, 2, &n, &err), GPU_OK);
	assert_int_equal(n, 0);
	clk.now = T0 + 5 * SEC;
	assert_int_equal(be.ops->poll_events(&be, 1000, ev, 2, &n, &err), GPU_OK);
	assert_int_equal(n, 1);
	assert_int_equal(ev[0].xid, 119);
	gpu_backend_close(&be);
	unlink(path);
}

static void test_fault_file(void **state)
{
	(void)state;
	char path[64];
	write_temp(path, ".json", "{\"faults\": [{\"kind\": \"thermal\", \"gpu\": 2}, {\"kind\": \"xid\", \"gpu\": 2, \"xid\": 63}]}");
	char arg[128];
	snprintf(arg, sizeof(arg), "h200x8,faults=%s", path);
	struct gpu_backend be;
	struct test_clock clk;
	struct gpu_err err;
	char msg[256];
	open_sim(&be, &clk, arg);
	assert_true(take(&be, 2, GPU_GRP_BASIC).clock_event_reasons.v & CLK_EVT_HW_THERMAL);
	assert_int_equal(sim_fault_file_error(&be, msg, sizeof(msg)), 0);
	struct gpu_event ev[4];
	unsigned n;
	assert_int_equal(be.ops->poll_events(&be, 1000, ev, 4, &n, &err), GPU_OK);
	assert_int_equal(n, 1);
	assert_int_equal(ev[0].xid, 63);
	/* a rewrite replaces the set: thermal ends, the new one starts */
	clk.now += 10 * SEC;
	rewrite_file(path, "[{\"kind\": \"power\", \"gpu\": 2}]");
	struct gpu_sample s = take(&be, 2, GPU_GRP_BASIC);
	assert_int_equal(s.clock_event_reasons.v & CLK_EVT_HW_THERMAL, 0);
	assert_true(s.clock_event_reasons.v & CLK_EVT_SW_POWER_CAP);
	/* a broken file keeps the last good faults and says why */
	rewrite_file(path, "[{\"kind\": \"meltdown\", \"gpu\": 2}]");
	assert_true(take(&be, 2, GPU_GRP_BASIC).clock_event_reasons.v & CLK_EVT_SW_POWER_CAP);
	assert_int_equal(sim_fault_file_error(&be, msg, sizeof(msg)), 1);
	assert_true(strstr(msg, "unknown fault kind 'meltdown'") != NULL);
	assert_true(strstr(msg, path) != NULL);
	rewrite_file(path, "[{\"kind\": \"nvlink_down\", \"gpu\": 9}]");
	assert_int_equal(sim_fault_file_error(&be, msg, sizeof(msg)), 1);
	assert_true(strstr(msg, "GPU 9 does not exist") != NULL);
	/* an empty list clears */
	rewrite_file(path, "[]");
	assert_int_equal(take(&be, 2, GPU_GRP_BASIC).clock_event_reasons.v & CLK_EVT_SW_POWER_CAP, 0);
	assert_int_equal(sim_fault_file_error(&be, msg, sizeof(msg)), 0);
	/* so does removing the file; a lost GPU comes back */
	rewrite_file(path, "[{\"kind\": \"gpu_lost\", \"gpu\": 0}]");
	struct gpu_sample lost;
	assert_int_equal(be.ops->sample(&be, 0, GPU_GRP_BASIC, &lost, &err), GPU_ENODEV);
	unlink(path);
	take(&be, 0, GPU_GRP_BASIC);
	gpu_backend_close(&be);
}

struct call_arg {
	struct gpu_backend *be;
	unsigned gpu;
	int rc;
	uint64_t ns;
	atomic_int started;
};

/* Waits until the thread is about to call, then lets the call block a while. */
static void wait_started(struct call_arg *a, unsigned block_us)
{
	while (!atomic_load(&a->started))
		usleep(1000);
	usleep(block_us);
}

static void *call_thread(void *p)
{
	struct call_arg *a = p;
	struct gpu_sample s;
	struct gpu_err err;
	uint64_t t = mono_now_ns();
	atomic_store(&a->started, 1);
	a->rc = a->be->ops->sample(a->be, a->gpu, GPU_GRP_BASIC, &s, &err);
	a->ns = mono_now_ns() - t;
	return NULL;
}

static void test_hang_option(void **state)
{
	(void)state;
	struct gpu_backend be;
	struct test_clock clk;
	struct gpu_err err;
	open_sim(&be, &clk, "h200x8,hang_gpu=1,hang_ms=150");
	uint64_t t = mono_now_ns();
	struct gpu_sample s;
	assert_int_equal(be.ops->sample(&be, 1, GPU_GRP_BASIC, &s, &err), GPU_ETIMEOUT);
	assert_true(mono_now_ns() - t >= 150000000ull);
	assert_true(strstr(err.msg, "GPU 1") != NULL);
	take(&be, 0, GPU_GRP_BASIC);
	gpu_backend_close(&be);

	/* a call hung for an hour returns when the backend closes */
	open_sim(&be, &clk, "h200x8,hang_gpu=3");
	struct call_arg a = { &be, 3, 0, 0, 0 };
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, call_thread, &a), 0);
	wait_started(&a, 100000);
	take(&be, 2, GPU_GRP_BASIC); /* the other GPUs answer meanwhile */
	gpu_backend_close(&be);
	pthread_join(th, NULL);
	assert_int_not_equal(a.rc, GPU_OK);
	if (a.ns < 100000000ull || a.ns >= 10 * SEC)
		fail_msg("hung call took %llu ns (rc %d)", (unsigned long long)a.ns, a.rc);
}

static void test_hang_fault(void **state)
{
	(void)state;
	struct gpu_backend be;
	struct test_clock clk;
	open_sim(&be, &clk, "a100x8");
	int id = inject(&be, F(.kind = SIM_FAULT_HANG, .gpu = 5));
	struct call_arg a = { &be, 5, -1, 0, 0 };
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, call_thread, &a), 0);
	wait_started(&a, 150000);
	sim_clear(&be, id); /* the hung call then completes */
	pthread_join(th, NULL);
	assert_int_equal(a.rc, GPU_OK);
	assert_true(a.ns >= 150000000ull);
	gpu_backend_close(&be);
}

struct stress_arg {
	struct gpu_backend *be;
	unsigned gpu;
	atomic_int *stop;
	int bad;
};

static void *stress_thread(void *p)
{
	struct stress_arg *a = p;
	while (!atomic_load(a->stop)) {
		struct gpu_sample s;
		struct gpu_err err;
		int rc = a->be->ops->sample(a->be, a->gpu, GPU_GRP_ALL, &s, &err);
		if (rc != GPU_OK && rc != GPU_ENODEV)
			a->bad++;
		struct gpu_link l;
		rc = a->be->ops->link(a->be, a->gpu, (a->gpu + 1) % 8, &l, &err);
		if (rc != GPU_OK && rc != GPU_ENODEV)
			a->bad++;
	}
	return NULL;
}

static void test_inject_while_sampling(void **state)
{
	(void)state;
	struct gpu_backend be;
	struct test_clock clk;
	open_sim(&be, &clk, "h200x8");
	atomic_int stop = 0;
	pthread_t th[8];
	struct stress_arg args[8];
	for (unsigned g = 0; g < 8; g++) {
		args[g] = (struct stress_arg){ &be, g, &stop, 0 };
		assert_int_equal(pthread_create(&th[g], NULL, stress_thread, &args[g]), 0);
	}
	for (unsigned i = 0; i < 200; i++) {
		/* every kind but hang; the H200 refuses retired pages */
		struct sim_fault f = F(.kind = (enum sim_fault_kind)(1 + i % (SIM_FAULT_KIND_COUNT - 2)),
				       .gpu = i % 8, .xid = 13, .link = 1);
		struct gpu_err err;
		int id = sim_inject(&be, &f, &err);
		assert_true(id > 0 || (id == GPU_EUNSUPPORTED && f.kind == SIM_FAULT_RETIRED_PAGES));
		if (i % 3 == 0 && id > 0)
			assert_int_equal(sim_clear(&be, id), 0);
	}
	sim_clear_all(&be);
	atomic_store(&stop, 1);
	for (unsigned g = 0; g < 8; g++) {
		pthread_join(th[g], NULL);
		assert_int_equal(args[g].bad, 0);
	}
	/* everything cleared: every GPU answers again */
	for (unsigned g = 0; g < 8; g++)
		take(&be, g, GPU_GRP_ALL);
	gpu_backend_close(&be);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ecc),
		cmocka_unit_test(test_ecc_growing),
		cmocka_unit_test(test_xid_events),
		cmocka_unit_test(test_poll_wakes_on_inject),
		cmocka_unit_test(test_thermal),
		cmocka_unit_test(test_power),
		cmocka_unit_test(test_pcie_degraded),
		cmocka_unit_test(test_nvlink),
		cmocka_unit_test(test_gpu_lost),
		cmocka_unit_test(test_remap_and_retired),
		cmocka_unit_test(test_persistence_and_foreign_process),
		cmocka_unit_test(test_refused_faults),
		cmocka_unit_test(test_fault_timing),
		cmocka_unit_test(test_server_file_faults),
		cmocka_unit_test(test_fault_file),
		cmocka_unit_test(test_hang_option),
		cmocka_unit_test(test_hang_fault),
		cmocka_unit_test(test_inject_while_sampling),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
