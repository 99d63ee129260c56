/* SPDX-License-Identifier: Apache-2.0 */
/* test_sim.c - the simulated-server backend on each shipped server: every
 * field of every op, metrics over a controlled clock, latency, options,
 * replication to 64 GPUs and sampling from many threads at once.
 * Faults: test_sim_faults.c; bad files: test_sim_parse.c. */
#include "test_sim_util.h"

#include <pthread.h>
#include <sys/stat.h>

struct server_expect {
	const char *name;
	unsigned gpus;
	const char *gpu_name, *model, *driver;
	uint64_t mem_mib;
	unsigned nvlinks;          /* per GPU; 0: NVLink not supported */
	bool fabric_manager;       /* supported (and running) */
	bool fan, hbm, ecc, geforce, mig_on, mig_capable;
	unsigned pcie_gen;
};

/* What each shipped server must show. Memory sizes and names are what the
 * driver reports (catalog); the rest is what the files describe. */
static const struct server_expect servers[] = {
	{ "h200x8", 8, "NVIDIA H200", "H200 SXM", "580.159.04", 143771, 18, true, false, true, true, false, false, true, 5 },
	{ "a100x8", 8, "NVIDIA A100-SXM4-80GB", "A100 SXM 80GB", "535.183.01", 81920, 12, true, false, true, true, false, false, true, 4 },
	{ "l40sx4", 4, "NVIDIA L40S", "L40S", "550.127.05", 46068, 0, false, false, false, true, false, false, false, 4 },
	{ "rtx4090x2", 2, "NVIDIA GeForce RTX 4090", "RTX 4090", "565.57.01", 24564, 0, false, true, false, false, true, false, false, 4 },
	{ "h100pcie-mig", 1, "NVIDIA H100 PCIe", "H100 PCIe", "570.124.06", 81559, 0, false, false, true, true, false, true, true, 5 },
};
#define NSERVERS (sizeof(servers) / sizeof(servers[0]))

static void test_system_info(void **state)
{
	(void)state;
	for (size_t i = 0; i < NSERVERS; i++) {
		const struct server_expect *x = &servers[i];
		struct gpu_backend be;
		struct test_clock clk;
		open_sim(&be, &clk, x->name);
		assert_int_equal(be.gpu_count, x->gpus);
		struct gpu_system sys;
		struct gpu_err err;
		assert_int_equal(be.ops->system_info(&be, &sys, &err), GPU_OK);
		assert_true(sys.simulated);
		assert_string_equal(sys.backend, "sim");
		assert_string_equal(sys.server_name, x->name);
		assert_int_equal(sys.gpu_count, x->gpus);
		assert_int_equal(sys.hostname.st, VAL_OK);
		assert_str(sys.driver_version, x->driver);
		assert_int_equal(sys.cuda_driver_version.st, VAL_OK);
		assert_int_equal(sys.nvml_version.st, VAL_OK);
		if (x->fabric_manager)
			assert_u64(sys.fabric_manager_running, 1);
		else
			assert_unsupported(sys.fabric_manager_running);
		gpu_backend_close(&be);
	}
}

static void test_h200_matches_real_machine(void **state)
{
	(void)state;
	struct gpu_backend be;
	struct test_clock clk;
	open_sim(&be, &clk, "h200x8");
	struct gpu_system sys;
	struct gpu_err err;
	assert_int_equal(be.ops->system_info(&be, &sys, &err), GPU_OK);
	assert_str(sys.cuda_driver_version, "13.0");
	struct gpu_static st;
	assert_int_equal(be.ops->static_info(&be, 0, &st, &err), GPU_OK);
	/* shared/docs/h200-readings.md: 132 SMs, 143771 MiB, 6016-bit bus, Gen5 x16, 18 links */
	assert_u64(st.sm_count, 132);
	assert_u64(st.mem_total_bytes, 143771 * MIB_B);
	assert_u64(st.mem_bus_width_bits, 6016);
	assert_u64(st.pcie_gen_max, 5);
	assert_u64(st.pcie_width_max, 16);
	assert_u64(st.nvlink_count, 18);
	assert_u64(st.persistence_mode, 1);
	assert_u64(st.ecc_mode, 1);
	assert_u64(st.mig_mode, 0);
	assert_u64(st.cc_major, 9);
	assert_u64(st.cc_minor, 0);
	assert_str(st.pci_bus_id, "00000000:18:00.0");
	assert_str(st.architecture, "Hopper");
	assert_str(st.cpu_affinity, "0-55,112-167");
	assert_int_equal(st.numa_node.v, 0);
	assert_int_equal(be.ops->static_info(&be, 7, &st, &err), GPU_OK);
	assert_str(st.cpu_affinity, "56-111,168-223");
	assert_int_equal(st.numa_node.v, 1);
	assert_int_equal(be.ops->static_info(&be, 8, &st, &err), GPU_ENODEV);
	gpu_backend_close(&be);
}

static void check_static(const struct server_expect *x, const struct gpu_static *st, unsigned i)
{
	assert_int_equal(st->index, i);
	ASSERT_DECIDED(st->name);
	assert_str(st->name, x->gpu_name);
	assert_str(st->catalog_model, x->model);
	assert_int_equal(st->uuid.st, VAL_OK);
	assert_memory_equal(st->uuid.s, "GPU-", 4);
	assert_int_equal(strlen(st->uuid.s), 40);
	assert_int_equal(st->pci_bus_id.st, VAL_OK);
	assert_int_equal(strlen(st->pci_bus_id.s), 16);
	assert_int_equal(st->vbios_version.st, VAL_OK);
	assert_int_equal(st->architecture.st, VAL_OK);
	if (x->geforce) {
		assert_int_equal(st->serial.st, VAL_UNSUPPORTED);
		assert_int_equal(st->board_part_number.st, VAL_UNSUPPORTED);
		assert_unsupported(st->ecc_mode);
		assert_unsupported(st->ecc_mode_pending);
		assert_u64(st->persistence_mode, 0);
	} else {
		assert_int_equal(st->serial.st, VAL_OK);
		assert_int_equal(strlen(st->serial.s), 13);
		assert_int_equal(st->board_part_number.st, VAL_OK);
		assert_u64(st->ecc_mode, x->ecc);
		assert_u64(st->ecc_mode_pending, x->ecc);
		assert_u64(st->persistence_mode, 1);
	}
	ASSERT_DECIDED(st->cc_major);
	ASSERT_DECIDED(st->cc_minor);
	assert_int_equal(st->sm_count.st, VAL_OK);
	assert_int_equal(st->cuda_cores.st, VAL_OK);
	assert_u64(st->mem_total_bytes, x->mem_mib * MIB_B);
	assert_int_equal(st->mem_bus_width_bits.st, VAL_OK);
	assert_int_equal(st->max_sm_clock_mhz.st, VAL_OK);
	assert_int_equal(st->max_mem_clock_mhz.st, VAL_OK);
	assert_int_equal(st->power_limit_mw.st, VAL_OK);
	assert_int_equal(st->power_default_limit_mw.st, VAL_OK);
	assert_int_equal(st->power_max_limit_mw.st, VAL_OK);
	assert_true(st->power_limit_mw.v <= st->power_max_limit_mw.v);
	assert_u64(st->compute_mode, COMPUTE_DEFAULT);
	if (x->mig_capable) {
		assert_u64(st->mig_mode, x->mig_on);
		assert_u64(st->mig_mode_pending, x->mig_on);
	} else {
		assert_unsupported(st->mig_mode);
		assert_unsupported(st->mig_mode_pending);
	}
	assert_u64(st->pcie_gen_max, x->pcie_gen);
	assert_u64(st->pcie_width_max, 16);
	if (x->nvlinks)
		assert_u64(st->nvlink_count, x->nvlinks);
	else
		assert_unsupported(st->nvlink_count);
	assert_int_equal(st->numa_node.st, VAL_OK);
	assert_int_equal(st->cpu_affinity.st, VAL_OK);
}

static void check_sample(const struct server_expect *x, const struct gpu_sample *s)
{
	assert_false(s->lost);
	assert_true(s->timestamp_ns >= T0);
	if (x->mig_on) { /* NVML has no utilization in MIG mode */
		assert_unsupported(s->util_gpu_pct);
		assert_unsupported(s->util_mem_pct);
	} else {
		assert_int_equal(s->util_gpu_pct.st, VAL_OK);
		assert_true(s->util_gpu_pct.v <= 100);
		assert_int_equal(s->util_mem_pct.st, VAL_OK);
	}
	assert_u64(s->mem_total_bytes, x->mem_mib * MIB_B);
	assert_int_equal(s->mem_used_bytes.st, VAL_OK);
	assert_u64(s->mem_free_bytes, s->mem_total_bytes.v - s->mem_used_bytes.v);
	assert_int_equal(s->temp_c.st, VAL_OK);
	assert_true(s->temp_c.v > 15 && s->temp_c.v < 95);
	if (x->hbm)
		assert_int_equal(s->temp_mem_c.st, VAL_OK);
	else
		assert_unsupported(s->temp_mem_c);
	assert_true(s->temp_slowdown_c.v < s->temp_shutdown_c.v);
	if (x->fan)
		assert_int_equal(s->fan_pct.st, VAL_OK);
	else
		assert_unsupported(s->fan_pct);
	assert_int_equal(s->power_mw.st, VAL_OK);
	assert_true(s->power_mw.v <= s->power_limit_mw.v);
	assert_int_equal(s->energy_mj.st, VAL_OK);
	assert_int_equal(s->sm_clock_mhz.st, VAL_OK);
	assert_int_equal(s->mem_clock_mhz.st, VAL_OK);
	assert_int_equal(s->pstate.st, VAL_OK);
	assert_int_equal(s->clock_event_reasons.st, VAL_OK);
	const u64v *viol[] = { &s->viol_power_ns, &s->viol_thermal_ns, &s->viol_sync_boost_ns,
			       &s->viol_board_limit_ns, &s->viol_low_util_ns, &s->viol_reliability_ns };
	for (size_t k = 0; k < 6; k++)
		assert_int_equal(viol[k]->st, x->geforce ? VAL_UNSUPPORTED : VAL_OK);
	const u64v *ecc[] = { &s->ecc_vol_corrected, &s->ecc_vol_uncorrected, &s->ecc_agg_corrected,
			      &s->ecc_agg_uncorrected, &s->ecc_sram_uncorrected, &s->ecc_dram_uncorrected };
	for (size_t k = 0; k < 6; k++)
		if (x->ecc)
			assert_u64(*ecc[k], 0);
		else
			assert_unsupported(*ecc[k]);
	/* every shipped GPU is Ampere or later: rows are remapped, pages not retired */
	assert_unsupported(s->retired_pages_sbe);
	assert_unsupported(s->retired_pages_dbe);
	assert_unsupported(s->retired_pages_pending);
	const u64v *remap[] = { &s->remap_corrected, &s->remap_uncorrected, &s->remap_pending, &s->remap_failure };
	for (size_t k = 0; k < 4; k++)
		if (x->geforce)
			assert_unsupported(*remap[k]);
		else
			assert_u64(*remap[k], 0);
	assert_u64(s->pcie_gen, x->pcie_gen);
	assert_u64(s->pcie_width, 16);
	assert_int_equal(s->pcie_tx_kbps.st, VAL_OK);
	assert_int_equal(s->pcie_rx_kbps.st, VAL_OK);
	assert_u64(s->pcie_replays, 0);
	assert_u64(s->pcie_l0_recoveries, 0);
	assert_int_equal(s->nvlink_n, x->nvlinks);
	for (unsigned k = 0; k < s->nvlink_n; k++) {
		const struct gpu_nvlink *l = &s->nvlink[k];
		assert_u64(l->active, 1);
		assert_int_equal(l->version.st, VAL_OK);
		assert_int_equal(l->remote_pci_bus_id.st, VAL_OK);
		assert_u64(l->crc_flit_errors, 0);
		assert_u64(l->crc_data_errors, 0);
		assert_u64(l->replay_errors, 0);
		assert_u64(l->recovery_errors, 0);
		assert_int_equal(l->tx_bytes.st, VAL_OK);
		assert_int_equal(l->rx_bytes.st, VAL_OK);
	}
}

static void test_every_field_every_server(void **state)
{
	(void)state;
	for (size_t i = 0; i < NSERVERS; i++) {
		const struct server_expect *x = &servers[i];
		struct gpu_backend be;
		struct test_clock clk;
		open_sim(&be, &clk, x->name);
		clk.now += 5 * SEC;
		for (unsigned g = 0; g < be.gpu_count; g++) {
			struct gpu_static st;
			struct gpu_err err;
			assert_int_equal(be.ops->static_info(&be, g, &st, &err), GPU_OK);
			check_static(x, &st, g);
			struct gpu_sample s = take(&be, g, GPU_GRP_ALL);
			check_sample(x, &s);
			/* only the groups asked for are read */
			s = take(&be, g, GPU_GRP_BASIC);
			assert_int_equal(s.temp_c.st, VAL_OK);
			assert_int_equal(s.ecc_vol_corrected.st, VAL_UNKNOWN);
			assert_int_equal(s.pcie_gen.st, VAL_UNKNOWN);
			assert_int_equal(s.viol_power_ns.st, VAL_UNKNOWN);
			assert_int_equal(s.nvlink_n, 0);
			for (unsigned b = 0; b < be.gpu_count; b++) {
				struct gpu_link l;
				assert_int_equal(be.ops->link(&be, g, b, &l, &err), GPU_OK);
				struct gpu_link r;
				assert_int_equal(be.ops->link(&be, b, g, &r, &err), GPU_OK);
				assert_int_equal(l.kind, r.kind);
				assert_int_equal(l.nvlinks, r.nvlinks);
				assert_int_equal(l.pcie, r.pcie);
				if (b == g)
					assert_int_equal(l.kind, LINK_SELF);
				else
					assert_int_equal(l.nvlinks, x->nvlinks);
			}
		}
		gpu_backend_close(&be);
	}
}

static void test_unique_identities(void **state)
{
	(void)state;
	struct gpu_backend be;
	struct test_clock clk;
	open_sim(&be, &clk, "h200x8");
	struct gpu_static st[8];
	struct gpu_err err;
	for (unsigned g = 0; g < 8; g++)
		assert_int_equal(be.ops->static_info(&be, g, &st[g], &err), GPU_OK);
	for (unsigned a = 0; a < 8; a++)
		for (unsigned b = 0; b < a; b++) {
			assert_string_not_equal(st[a].uuid.s, st[b].uuid.s);
			assert_string_not_equal(st[a].serial.s, st[b].serial.s);
			assert_string_not_equal(st[a].pci_bus_id.s, st[b].pci_bus_id.s);
		}
	/* links behind NVSwitch name the switches */
	struct gpu_sample s = take(&be, 0, GPU_GRP_NVLINK | GPU_GRP_NVLINK_ERR);
	assert_string_equal(s.nvlink[0].remote_pci_bus_id.s, "00000000:05:00.0");
	assert_string_equal(s.nvlink[1].remote_pci_bus_id.s, "00000000:06:00.0");
	gpu_backend_close(&be);
}

static void test_topology(void **state)
{
	(void)state;
	struct gpu_backend be;
	struct test_clock clk;
	struct gpu_link l;
	struct gpu_err err;
	open_sim(&be, &clk, "h200x8");
	assert_int_equal(be.ops->link(&be, 0, 3, &l, &err), GPU_OK);
	assert_int_equal(l.kind, LINK_NVLINK);
	assert_int_equal(l.nvlinks, 18);
	assert_int_equal(l.pcie, LINK_NODE);
	assert_true(l.p2p_supported);
	assert_int_equal(be.ops->link(&be, 0, 4, &l, &err), GPU_OK);
	assert_int_equal(l.pcie, LINK_SYS);
	assert_int_equal(l.nvlinks, 18);
	assert_int_equal(be.ops->link(&be, 0, 8, &l, &err), GPU_ENODEV);
	gpu_backend_close(&be);

	open_sim(&be, &clk, "a100x8");
	assert_int_equal(be.ops->link(&be, 0, 1, &l, &err), GPU_OK);
	assert_int_equal(l.nvlinks, 12);
	assert_int_equal(l.pcie, LINK_PXB);
	gpu_backend_close(&be);

	open_sim(&be, &clk, "l40sx4");
	static const enum gpu_link_kind l40s[4][4] = {
		{ LINK_SELF, LINK_PIX, LINK_SYS, LINK_SYS }, { LINK_PIX, LINK_SELF, LINK_SYS, LINK_SYS },
		{ LINK_SYS, LINK_SYS, LINK_SELF, LINK_NODE }, { LINK_SYS, LINK_SYS, LINK_NODE, LINK_SELF },
	};
	for (unsigned a = 0; a < 4; a++)
		for (unsigned b = 0; b < 4; b++) {
			assert_int_equal(be.ops->link(&be, a, b, &l, &err), GPU_OK);
			assert_int_equal(l.kind, l40s[a][b]);
			assert_int_equal(l.nvlinks, 0);
			assert_int_equal(l.p2p_supported, l40s[a][b] != LINK_SYS);
		}
	gpu_backend_close(&be);

	open_sim(&be, &clk, "rtx4090x2");
	assert_int_equal(be.ops->link(&be, 0, 1, &l, &err), GPU_OK);
	assert_int_equal(l.kind, LINK_PHB);
	assert_false(l.p2p_supported);
	gpu_backend_close(&be);
}

static void test_processes(void **state)
{
	(void)state;
	struct gpu_backend be;
	struct test_clock clk;
	struct gpu_process p[GPU_MAX_PROCS];
	unsigned n = 99;
	struct gpu_err err;
	open_sim(&be, &clk, "h200x8");
	assert_int_equal(be.ops->processes(&be, 1, p, GPU_MAX_PROCS, &n, &err), GPU_OK);
	assert_int_equal(n, 1);
	assert_int_equal(p[0].pid, 48214);
	assert_int_equal(p[0].uid, 1001);
	assert_string_equal(p[0].user, "alice");
	assert_string_equal(p[0].name, "python3");
	assert_u64(p[0].used_mem_bytes, 118344 * MIB_B);
	assert_int_equal(p[0].type, 'C');
	assert_int_equal(p[0].mig_gi, -1);
	struct gpu_sample s = take(&be, 1, GPU_GRP_BASIC);
	assert_true(s.mem_used_bytes.v >= 118344 * MIB_B);
	assert_int_equal(be.ops->processes(&be, 7, p, GPU_MAX_PROCS, &n, &err), GPU_OK);
	assert_int_equal(n, 0);
	gpu_backend_close(&be);

	open_sim(&be, &clk, "l40sx4");
	assert_int_equal(be.ops->processes(&be, 0, p, GPU_MAX_PROCS, &n, &err), GPU_OK);
	assert_int_equal(n, 2);
	assert_int_equal(p[1].type, 'G');
	assert_int_equal(be.ops->processes(&be, 0, p, 1, &n, &err), GPU_OK);
	assert_int_equal(n, 1);
	gpu_backend_close(&be);

	/* a leaking process grows 1.5 MiB/s */
	open_sim(&be, &clk, "a100x8");
	assert_int_equal(be.ops->processes(&be, 6, p, GPU_MAX_PROCS, &n, &err), GPU_OK);
	assert_u64(p[0].used_mem_bytes, 2048 * MIB_B);
	clk.now += 100 * SEC;
	assert_int_equal(be.ops->processes(&be, 6, p, GPU_MAX_PROCS, &n, &err), GPU_OK);
	assert_u64(p[0].used_mem_bytes, 2198 * MIB_B);
	gpu_backend_close(&be);
}

static void test_mig(void **state)
{
	(void)state;
	struct gpu_backend be;
	struct test_clock clk;
	struct gpu_mig m[GPU_MAX_MIG];
	unsigned n = 99;
	struct gpu_err err;
	open_sim(&be, &clk, "h100pcie-mig");
	assert_int_equal(be.ops->mig_instances(&be, 0, m, GPU_MAX_MIG, &n, &err), GPU_OK);
	assert_int_equal(n, 4);
	assert_string_equal(m[0].profile, "3g.40gb");
	assert_int_equal(m[0].gi_id, 2);
	assert_memory_equal(m[0].uuid, "MIG-", 4);
	assert_u64(m[0].mem_used_bytes, 31000 * MIB_B);
	assert_int_equal(m[0].mem_total_bytes.st, VAL_OK);
	assert_true(m[0].mem_total_bytes.v > 35000 * MIB_B && m[0].mem_total_bytes.v < 40000 * MIB_B);
	assert_int_equal(m[0].sm_count.st, VAL_OK);
	assert_string_equal(m[2].profile, "1g.10gb");
	assert_u64(m[2].mem_used_bytes, 9000 * MIB_B);
	assert_u64(m[3].mem_used_bytes, 0);
	assert_true(m[2].sm_count.v < m[0].sm_count.v);
	struct gpu_process p[4];
	assert_int_equal(be.ops->processes(&be, 0, p, 4, &n, &err), GPU_OK);
	assert_int_equal(n, 2);
	assert_int_equal(p[0].mig_gi, 2);
	gpu_backend_close(&be);

	open_sim(&be, &clk, "h200x8"); /* MIG-capable, MIG off: no instances */
	assert_int_equal(be.ops->mig_instances(&be, 0, m, GPU_MAX_MIG, &n, &err), GPU_OK);
	assert_int_equal(n, 0);
	gpu_backend_close(&be);
	open_sim(&be, &clk, "l40sx4"); /* no MIG at all: no instances either, as NVML's backend says */
	n = 99;
	assert_int_equal(be.ops->mig_instances(&be, 0, m, GPU_MAX_MIG, &n, &err), GPU_OK);
	assert_int_equal(n, 0);
	gpu_backend_close(&be);
}

static double watts(const struct gpu_sample *s) { return (double)s->power_mw.v / 1000.0; }

static void test_time_evolution(void **state)
{
	(void)state;
	struct gpu_backend be;
	struct test_clock clk;
	open_sim(&be, &clk, "h200x8");
	/* GPU 4 is idle for 120 s, then at 62 % */
	clk.now = T0 + 60 * SEC;
	struct gpu_sample idle = take(&be, 4, GPU_GRP_ALL);
	assert_u64(idle.util_gpu_pct, 0);
	assert_true(idle.clock_event_reasons.v & CLK_EVT_GPU_IDLE);
	assert_true(watts(&idle) > 50 && watts(&idle) < 110);
	assert_true(idle.temp_c.v < 35);
	clk.now = T0 + 121 * SEC;
	struct gpu_sample early = take(&be, 4, GPU_GRP_ALL);
	assert_in_range(early.util_gpu_pct.v, 58, 66);
	assert_int_equal(early.clock_event_reasons.v & CLK_EVT_GPU_IDLE, 0);
	assert_u64(early.sm_clock_mhz, 1980);
	assert_true(idle.sm_clock_mhz.v < 1000);
	clk.now = T0 + 400 * SEC;
	struct gpu_sample late = take(&be, 4, GPU_GRP_ALL);
	/* temperature lags the load: higher after minutes than right after the step */
	assert_true(late.temp_c.v > early.temp_c.v + 5);
	assert_true(watts(&late) > 400 && watts(&late) < 700);
	/* energy is the integral of power: 10 s at ~62 % */
	clk.now = T0 + 410 * SEC;
	struct gpu_sample later = take(&be, 4, GPU_GRP_ALL);
	double joules = (double)(later.energy_mj.v - late.energy_mj.v) / 1000.0;
	double expect = 10 * (77 + (0.92 * 700 - 77) * 0.62);
	assert_true(joules > expect * 0.97 && joules < expect * 1.03);
	assert_true(later.nvlink[0].tx_bytes.v > late.nvlink[0].tx_bytes.v);
	assert_true(later.pcie_tx_kbps.v > idle.pcie_tx_kbps.v * 10);
	assert_true(idle.energy_mj.v < early.energy_mj.v);
	/* the busy GPUs repeat a 600 s pattern: 540 s of training, 60 s of evaluation */
	clk.now = T0 + 10 * SEC;
	struct gpu_sample train = take(&be, 0, GPU_GRP_BASIC);
	assert_in_range(train.util_gpu_pct.v, 94, 100);
	assert_true(watts(&train) > 600);
	clk.now = T0 + 560 * SEC;
	assert_in_range(take(&be, 0, GPU_GRP_BASIC).util_gpu_pct.v, 32, 38);
	clk.now = T0 + 610 * SEC;
	assert_in_range(take(&be, 0, GPU_GRP_BASIC).util_gpu_pct.v, 94, 100);
	/* idle time counts as low-utilization violation time */
	assert_u64(idle.viol_low_util_ns, 60 * SEC);
	gpu_backend_close(&be);
}

static void test_deterministic(void **state)
{
	(void)state;
	struct gpu_backend a, b, c;
	struct test_clock ca, cb, cc;
	open_sim(&a, &ca, "h200x8");
	open_sim(&b, &cb, "h200x8");
	open_sim(&c, &cc, "h200x8,seed=7");
	unsigned differ = 0;
	for (unsigned t = 0; t < 50; t++) {
		ca.now = cb.now = cc.now = T0 + t * 7 * SEC;
		struct gpu_sample sa = take(&a, 0, GPU_GRP_BASIC | GPU_GRP_ENERGY), sb = take(&b, 0, GPU_GRP_BASIC | GPU_GRP_ENERGY);
		struct gpu_sample sc = take(&c, 0, GPU_GRP_BASIC);
		assert_int_equal(sa.power_mw.v, sb.power_mw.v);
		assert_int_equal(sa.temp_c.v, sb.temp_c.v);
		assert_int_equal(sa.util_gpu_pct.v, sb.util_gpu_pct.v);
		assert_int_equal(sa.energy_mj.v, sb.energy_mj.v);
		differ += sa.power_mw.v != sc.power_mw.v;
	}
	assert_true(differ > 25);
	gpu_backend_close(&a);
	gpu_backend_close(&b);
	gpu_backend_close(&c);
}

/* time_s=N: the model is read at N s whatever the clock, and equals a live
 * simulator's reading at N s; without the energy group no energy is read. */
static void test_frozen_time(void **state)
{
	(void)state;
	struct gpu_backend live, frozen;
	struct test_clock cl, cf;
	open_sim(&live, &cl, "h200x8");
	open_sim(&frozen, &cf, "h200x8,time_s=130");
	cl.now = T0 + 130 * SEC;
	struct gpu_sample want = take(&live, 4, GPU_GRP_ALL);
	for (unsigned t = 0; t < 5; t++) {
		cf.now = T0 + t * 300 * SEC;
		struct gpu_sample got = take(&frozen, 4, GPU_GRP_ALL);
		assert_int_equal(got.util_gpu_pct.v, want.util_gpu_pct.v);
		assert_int_equal(got.power_mw.v, want.power_mw.v);
		assert_int_equal(got.temp_c.v, want.temp_c.v);
		assert_int_equal(got.energy_mj.v, want.energy_mj.v);
		assert_int_equal(got.mem_used_bytes.v, want.mem_used_bytes.v);
	}
	struct gpu_sample basic = take(&frozen, 4, GPU_GRP_BASIC);
	assert_int_equal(basic.energy_mj.st, VAL_UNKNOWN);
	assert_int_equal(basic.power_mw.v, want.power_mw.v);
	gpu_backend_close(&live);
	gpu_backend_close(&frozen);
}

static void test_latency(void **state)
{
	(void)state;
	struct gpu_backend be;
	struct test_clock clk;
	struct gpu_err err;
	open_sim(&be, &clk, "h200x8,latency_us=3000");
	uint64_t t = mono_now_ns();
	struct gpu_static st;
	assert_int_equal(be.ops->static_info(&be, 0, &st, &err), GPU_OK);
	assert_true(mono_now_ns() - t >= 3000000);
	t = mono_now_ns();
	struct gpu_sample s = take(&be, 0, GPU_GRP_BASIC);
	assert_true(mono_now_ns() - t >= 3000000);
	assert_true(s.duration_ns >= 3000000);
	/* one NVML-like call per metric group */
	t = mono_now_ns();
	s = take(&be, 0, GPU_GRP_ALL);
	assert_true(mono_now_ns() - t >= 5 * 3000000);
	assert_true(s.duration_ns >= 5 * 3000000);
	gpu_backend_close(&be);
}

struct sampler_arg {
	struct gpu_backend *be;
	unsigned gpu, rounds;
	int failures;
};

static void *sample_thread(void *p)
{
	struct sampler_arg *a = p;
	for (unsigned r = 0; r < a->rounds; r++) {
		struct gpu_sample s;
		struct gpu_err err;
		struct gpu_process procs[8];
		unsigned n;
		if (a->be->ops->sample(a->be, a->gpu, GPU_GRP_ALL, &s, &err) != GPU_OK || s.temp_c.st != VAL_OK)
			a->failures++;
		if (a->be->ops->processes(a->be, a->gpu, procs, 8, &n, &err) != GPU_OK)
			a->failures++;
	}
	return NULL;
}

/* Runs one thread per GPU; returns the wall time in ns. */
static uint64_t sample_all_parallel(struct gpu_backend *be, unsigned rounds)
{
	pthread_t th[GPU_MAX_GPUS];
	struct sampler_arg args[GPU_MAX_GPUS];
	uint64_t t = mono_now_ns();
	for (unsigned g = 0; g < be->gpu_count; g++) {
		args[g] = (struct sampler_arg){ be, g, rounds, 0 };
		assert_int_equal(pthread_create(&th[g], NULL, sample_thread, &args[g]), 0);
	}
	for (unsigned g = 0; g < be->gpu_count; g++) {
		pthread_join(th[g], NULL);
		assert_int_equal(args[g].failures, 0);
	}
	return mono_now_ns() - t;
}

static void test_latency_parallel(void **state)
{
	(void)state;
	/* the latency is slept outside the lock: 8 GPUs in parallel take about
	 * as long as one, not 8 times as long */
	struct gpu_backend be;
	struct test_clock clk;
	open_sim(&be, &clk, "h200x8,latency_us=20000");
	uint64_t ns = sample_all_parallel(&be, 1);
	/* one round: sample (5 groups) + processes = 6 x 20 ms = 120 ms per GPU; serial would be 960 ms */
	assert_true(ns >= 120000000);
	assert_true(ns < 600000000);
	gpu_backend_close(&be);
}

static void test_replicate_64(void **state)
{
	(void)state;
	struct gpu_backend be;
	struct test_clock clk;
	struct gpu_err err;
	open_sim(&be, &clk, "h200x8,gpus=64");
	assert_int_equal(be.gpu_count, 64);
	struct gpu_system sys;
	assert_int_equal(be.ops->system_info(&be, &sys, &err), GPU_OK);
	assert_int_equal(sys.gpu_count, 64);
	static struct gpu_static st[64];
	for (unsigned g = 0; g < 64; g++) {
		assert_int_equal(be.ops->static_info(&be, g, &st[g], &err), GPU_OK);
		assert_string_equal(st[g].name.s, "NVIDIA H200");
		for (unsigned h = 0; h < g; h++) {
			assert_string_not_equal(st[g].uuid.s, st[h].uuid.s);
			assert_string_not_equal(st[g].pci_bus_id.s, st[h].pci_bus_id.s);
		}
	}
	struct gpu_link l;
	assert_int_equal(be.ops->link(&be, 8, 9, &l, &err), GPU_OK);
	assert_int_equal(l.nvlinks, 18);
	assert_int_equal(be.ops->link(&be, 0, 8, &l, &err), GPU_OK);
	assert_int_equal(l.nvlinks, 0);
	assert_int_equal(l.kind, LINK_SYS);
	clk.now += 30 * SEC;
	sample_all_parallel(&be, 20);
	struct gpu_process p[4];
	unsigned n;
	assert_int_equal(be.ops->processes(&be, 9, p, 4, &n, &err), GPU_OK);
	assert_int_equal(n, 1);
	assert_int_equal(p[0].pid, 48214 + 1000);
	gpu_backend_close(&be);
	/* fewer GPUs than the file works too */
	open_sim(&be, &clk, "h200x8,gpus=2");
	assert_int_equal(be.gpu_count, 2);
	gpu_backend_close(&be);
}

static void test_options(void **state)
{
	(void)state;
	struct gpu_backend be = { 0 };
	struct gpu_err err = { "" };
	static const struct { const char *arg; int rc; const char *msg; } bad[] = {
		{ "h200x8,gpus=65", GPU_EINVAL, "gpus" },
		{ "h200x8,gpus=0", GPU_EINVAL, "gpus" },
		{ "h200x8,latency_us=-1", GPU_EINVAL, "latency_us" },
		{ "h200x8,latency_us=abc", GPU_EINVAL, "latency_us" },
		{ "h200x8,speed=9", GPU_EINVAL, "unknown sim option 'speed'" },
		{ "h200x8,latency_us", GPU_EINVAL, "key=value" },
		{ "h200x8,hang_gpu=8", GPU_EINVAL, "hang_gpu" },
		{ "", GPU_EINVAL, "no simulated server" },
		{ "h900x8", GPU_EIO, "unknown simulated server 'h900x8'" },
		{ "/nonexistent/server.json", GPU_EIO, "/nonexistent/server.json" },
		{ "tiny,data_dir=/nonexistent", GPU_EIO, "unknown simulated server 'tiny'" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err.msg[0] = '\0';
		int rc = gpu_backend_open(&be, "sim", bad[i].arg, &err);
		if (rc != bad[i].rc || !strstr(err.msg, bad[i].msg))
			fail_msg("'%s': rc %d, message '%s'", bad[i].arg, rc, err.msg);
		assert_null(be.ops);
	}
	/* a path, and the data directory as main passes it */
	const char *dd = getenv("GPUCTL_DATA_DIR");
	char arg[1024];
	struct test_clock clk;
	if (dd) {
		snprintf(arg, sizeof(arg), "%s/sim/l40sx4.json,latency_us=0", dd);
		open_sim(&be, &clk, arg);
		assert_int_equal(be.gpu_count, 4);
		gpu_backend_close(&be);
		snprintf(arg, sizeof(arg), "rtx4090x2,seed=3,data_dir=%s", dd);
		open_sim(&be, &clk, arg);
		assert_int_equal(be.gpu_count, 2);
		gpu_backend_close(&be);
	}
	/* data_dir= is searched first (and may hold commas) */
	char dir[] = "/tmp/gpuctl-sim-dd,XXXXXX";
	assert_non_null(mkdtemp(dir));
	char sub[96], file[128];
	snprintf(sub, sizeof(sub), "%s/sim", dir);
	assert_int_equal(mkdir(sub, 0700), 0);
	snprintf(file, sizeof(file), "%s/tiny.json", sub);
	FILE *f = fopen(file, "w");
	assert_non_null(f);
	fputs("{\"name\": \"tiny\", \"gpus\": [{\"model\": \"T4\"}]}", f);
	fclose(f);
	snprintf(arg, sizeof(arg), "tiny,latency_us=0,data_dir=%s", dir);
	open_sim(&be, &clk, arg);
	assert_int_equal(be.gpu_count, 1);
	struct gpu_static st;
	assert_int_equal(be.ops->static_info(&be, 0, &st, &err), GPU_OK);
	assert_str(st.name, "Tesla T4");
	gpu_backend_close(&be);
	unlink(file);
	rmdir(sub);
	rmdir(dir);
	/* the sim API refuses a backend that is not the simulator */
	struct gpu_backend other = { 0 };
	struct sim_fault xid = { .kind = SIM_FAULT_XID, .xid = 79 };
	assert_int_equal(sim_inject(&other, &xid, &err), GPU_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_system_info),
		cmocka_unit_test(test_h200_matches_real_machine),
		cmocka_unit_test(test_every_field_every_server),
		cmocka_unit_test(test_unique_identities),
		cmocka_unit_test(test_topology),
		cmocka_unit_test(test_processes),
		cmocka_unit_test(test_mig),
		cmocka_unit_test(test_time_evolution),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_frozen_time),
		cmocka_unit_test(test_latency),
		cmocka_unit_test(test_latency_parallel),
		cmocka_unit_test(test_replicate_64),
		cmocka_unit_test(test_options),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
