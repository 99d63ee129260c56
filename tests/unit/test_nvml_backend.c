/* SPDX-License-Identifier: Apache-2.0 */
/* test_nvml_backend.c - the nvml backend's real code driven through a fake
 * NVML (fake_nvml.h: an entry-point table given to the backend with the
 * nvml_open_with_api test hook): every field of gpu.h filled,
 * "not supported" where NVML says so or lacks the function, a lost GPU,
 * topology and NVLink counting, processes, XID events, and snapshot_take. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "device/nvml_priv.h"
#include "sampler/sampler.h"

#include "fake_nvml.h"

/* ---- tests ---- */

static void test_system(void **state)
{
	struct gpu_backend *be = *state;
	struct gpu_system sys;
	struct gpu_err err = { "" };
	assert_int_equal(be->gpu_count, 2);
	assert_int_equal(be->ops->system_info(be, &sys, &err), GPU_OK);
	assert_false(sys.simulated);
	assert_string_equal(sys.backend, "nvml");
	assert_string_equal(sys.driver_version.s, "580.159.04");
	assert_string_equal(sys.cuda_driver_version.s, "13.0");
	assert_int_equal(sys.nvml_version.st, VAL_UNSUPPORTED); /* function absent */
	assert_int_equal(sys.fabric_manager_running.st, VAL_OK);
	assert_int_equal(sys.fabric_manager_running.v, 1);
	assert_int_equal(sys.hostname.st, VAL_OK);
}

static void test_static(void **state)
{
	struct gpu_backend *be = *state;
	struct gpu_static st;
	struct gpu_err err = { "" };
	assert_int_equal(be->ops->static_info(be, 0, &st, &err), GPU_OK);
	assert_string_equal(st.name.s, "NVIDIA H200");
	assert_string_equal(st.uuid.s, "GPU-00000000-1111-2222-3333-444444444444");
	assert_string_equal(st.pci_bus_id.s, "00000000:18:00.0");
	assert_string_equal(st.serial.s, "1654024075727");
	assert_string_equal(st.architecture.s, "Hopper");
	assert_int_equal(st.cc_major.v, 9);
	assert_int_equal(st.sm_count.v, 132);
	assert_int_equal(st.cuda_cores.v, 16896);
	assert_true(st.mem_total_bytes.v == 143771ULL << 20);
	assert_int_equal(st.mem_bus_width_bits.v, 6016);
	assert_int_equal(st.max_sm_clock_mhz.v, 1980);
	assert_int_equal(st.max_mem_clock_mhz.v, 3201);
	assert_int_equal(st.power_limit_mw.v, 700000);
	assert_int_equal(st.power_max_limit_mw.v, 700000);
	assert_int_equal(st.persistence_mode.v, 1);
	assert_int_equal(st.compute_mode.v, COMPUTE_EXCLUSIVE_PROCESS);
	assert_int_equal(st.ecc_mode.v, 1);
	assert_int_equal(st.ecc_mode_pending.v, 0);
	assert_int_equal(st.mig_mode.v, 0);
	assert_int_equal(st.pcie_gen_max.v, 5);
	assert_int_equal(st.pcie_width_max.v, 16);
	assert_int_equal(st.nvlink_count.v, 18);
	assert_int_equal(st.numa_node.v, 0);
	assert_string_equal(st.cpu_affinity.s, "0-31");
	/* every field was read: present, not supported or an error, never "not read" */
	strv *strs[] = { &st.name, &st.uuid, &st.pci_bus_id, &st.serial, &st.vbios_version, &st.board_part_number,
			 &st.architecture, &st.cpu_affinity, &st.catalog_model };
	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		assert_int_not_equal(strs[i]->st, VAL_UNKNOWN);
	u64v nums[] = { st.cc_major, st.cc_minor, st.sm_count, st.cuda_cores, st.mem_total_bytes, st.mem_bus_width_bits,
			st.max_sm_clock_mhz, st.max_mem_clock_mhz, st.power_limit_mw, st.power_default_limit_mw,
			st.power_max_limit_mw, st.persistence_mode, st.compute_mode, st.ecc_mode, st.ecc_mode_pending,
			st.mig_mode, st.mig_mode_pending, st.pcie_gen_max, st.pcie_width_max, st.nvlink_count };
	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++)
		assert_int_equal(nums[i].st, VAL_OK);
	assert_int_equal(st.numa_node.st, VAL_OK);

	/* GPU 1: the serial is not supported, and says so */
	assert_int_equal(be->ops->static_info(be, 1, &st, &err), GPU_OK);
	assert_int_equal(st.serial.st, VAL_UNSUPPORTED);
	assert_int_equal(st.numa_node.v, 1);
	assert_int_equal(be->ops->static_info(be, 2, &st, &err), GPU_ENODEV);
}

static void test_sample_all(void **state)
{
	struct gpu_backend *be = *state;
	struct gpu_sample s;
	struct gpu_err err = { "" };
	assert_int_equal(be->ops->sample(be, 0, GPU_GRP_ALL, &s, &err), GPU_OK);
	assert_false(s.lost);
	assert_int_equal(s.util_gpu_pct.v, 12);
	assert_int_equal(s.util_mem_pct.v, 5);
	/* _v2: used without the driver's reservation, as nvidia-smi shows it */
	assert_int_equal(s.mem_used_bytes.v, 0);
	assert_true(s.mem_free_bytes.v == (143771ULL - 616) << 20);
	assert_int_equal(s.temp_c.v, 34);
	assert_int_equal(s.temp_mem_c.v, 36);
	assert_int_equal(s.temp_slowdown_c.v, 87);
	assert_int_equal(s.temp_shutdown_c.v, 92);
	assert_int_equal(s.fan_pct.st, VAL_UNSUPPORTED);
	assert_int_equal(s.power_mw.v, 75123);
	assert_int_equal(s.power_limit_mw.v, 650000);
	assert_int_equal(s.energy_mj.v, 123456789);
	assert_int_equal(s.sm_clock_mhz.v, 345);
	assert_int_equal(s.pstate.st, VAL_OK);
	assert_int_equal(s.pstate.v, 0);
	assert_true(s.clock_event_reasons.v == CLK_EVT_GPU_IDLE);
	assert_int_equal(s.viol_power_ns.v, 1000);
	assert_int_equal(s.viol_thermal_ns.v, 2000);
	assert_true(s.viol_low_util_ns.v == 5000000000ULL);
	assert_int_equal(s.viol_reliability_ns.v, 6000);
	assert_int_equal(s.ecc_vol_corrected.v, 1);
	assert_int_equal(s.ecc_agg_corrected.v, 10);
	assert_int_equal(s.ecc_dram_uncorrected.v, 2);
	assert_int_equal(s.retired_pages_sbe.st, VAL_UNSUPPORTED);
	assert_int_equal(s.remap_uncorrected.v, 2);
	assert_int_equal(s.remap_pending.v, 1);
	assert_int_equal(s.pcie_gen.v, 4);
	assert_int_equal(s.pcie_width.v, 8);
	assert_int_equal(s.pcie_tx_kbps.v, 1000);
	assert_int_equal(s.pcie_rx_kbps.v, 2000);
	assert_int_equal(s.pcie_replays.v, 3);
	assert_int_equal(s.nvlink_n, 18);
	assert_int_equal(s.nvlink[0].active.v, 1);
	assert_int_equal(s.nvlink[0].version.v, 4); /* NVML's 6 is NVLink 4.0 */
	assert_string_equal(s.nvlink[0].remote_pci_bus_id.s, "00000000:05:00.0");
	assert_int_equal(s.nvlink[17].remote_pci_bus_id.st, VAL_UNSUPPORTED); /* FFFFFFFF:FF:FF.0 */
	assert_int_equal(s.nvlink[7].crc_flit_errors.v, 7);
	assert_int_equal(s.nvlink[7].tx_bytes.st, VAL_UNSUPPORTED);
	/* every metric was read with all groups on */
	u64v all[] = { s.util_gpu_pct, s.util_mem_pct, s.mem_used_bytes, s.mem_free_bytes, s.mem_total_bytes, s.temp_c,
		       s.temp_mem_c, s.temp_slowdown_c, s.temp_shutdown_c, s.fan_pct, s.power_mw, s.power_limit_mw,
		       s.energy_mj, s.sm_clock_mhz, s.mem_clock_mhz, s.pstate, s.clock_event_reasons, s.viol_power_ns,
		       s.viol_thermal_ns, s.viol_sync_boost_ns, s.viol_board_limit_ns, s.viol_low_util_ns,
		       s.viol_reliability_ns, s.ecc_vol_corrected, s.ecc_vol_uncorrected, s.ecc_agg_corrected,
		       s.ecc_agg_uncorrected, s.ecc_sram_uncorrected, s.ecc_dram_uncorrected, s.retired_pages_sbe,
		       s.retired_pages_dbe, s.retired_pages_pending, s.remap_corrected, s.remap_uncorrected,
		       s.remap_pending, s.remap_failure, s.pcie_gen, s.pcie_width, s.pcie_tx_kbps, s.pcie_rx_kbps,
		       s.pcie_replays };
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		assert_int_not_equal(all[i].st, VAL_UNKNOWN);

	/* GPU 1: link 3 is down */
	assert_int_equal(be->ops->sample(be, 1, GPU_GRP_NVLINK | GPU_GRP_NVLINK_ERR, &s, &err), GPU_OK);
	assert_int_equal(s.nvlink[3].active.v, 0);
	assert_int_equal(s.nvlink[4].active.v, 1);
}

/* GPM: n/a on the first sample, then the metrics between the last two, in
 * two NVML calls a tick; "not supported" on a GPU without GPM, for a metric
 * the GPU lacks, and with a driver that lacks the entry points. */
static void test_gpm(void **state)
{
	struct gpu_backend *be = *state;
	struct gpu_sample s;
	struct gpu_err err = { "" };
	assert_int_equal(be->ops->sample(be, 0, GPU_GRP_GPM, &s, &err), GPU_OK);
	assert_int_equal(s.prof_sm_active_pct.st, VAL_UNKNOWN); /* one reading: nothing between yet */
	assert_int_equal(gpm_metrics_calls, 0);
	assert_int_equal(gpm_live, 2);
	for (int tick = 0; tick < 3; tick++) {
		assert_int_equal(be->ops->sample(be, 0, GPU_GRP_GPM, &s, &err), GPU_OK);
		assert_int_equal(nvml_last_sample_calls(be, 0), 2); /* nvmlGpmSampleGet + nvmlGpmMetricsGet */
		assert_int_equal(s.prof_sm_active_pct.st, VAL_OK);
		assert_int_equal(s.prof_sm_active_pct.v, 93);
		assert_int_equal(s.prof_sm_occupancy_pct.v, 15);
		assert_int_equal(s.prof_tensor_active_pct.v, 89);
		assert_int_equal(s.prof_dram_active_pct.v, 17);
		assert_int_equal(s.prof_fp64_active_pct.st, VAL_OK); /* a real 0 */
		assert_int_equal(s.prof_fp64_active_pct.v, 0);
		assert_int_equal(s.prof_fp32_active_pct.v, 3);
		assert_int_equal(s.prof_fp16_active_pct.v, 1);
		assert_int_equal(s.prof_pcie_tx_kbps.v, 10240);
		assert_int_equal(s.prof_pcie_rx_kbps.v, 20992);
		assert_int_equal(s.prof_nvlink_tx_kbps.st, VAL_UNSUPPORTED);
		assert_int_equal(s.prof_nvlink_rx_kbps.st, VAL_UNSUPPORTED);
	}
	assert_int_equal(gpm_metrics_calls, 3); /* the fake refuses samples out of order */
	/* a failed reading: an error, and the next tick starts over */
	gpm_get_rc = NVML_ERROR_UNKNOWN;
	assert_int_equal(be->ops->sample(be, 0, GPU_GRP_GPM, &s, &err), GPU_OK);
	assert_int_equal(s.prof_sm_active_pct.st, VAL_ERROR);
	gpm_get_rc = NVML_SUCCESS;
	assert_int_equal(be->ops->sample(be, 0, GPU_GRP_GPM, &s, &err), GPU_OK);
	assert_int_equal(s.prof_sm_active_pct.st, VAL_UNKNOWN);
	/* not asked for: not read */
	assert_int_equal(be->ops->sample(be, 0, GPU_GRP_BASIC, &s, &err), GPU_OK);
	assert_int_equal(s.prof_sm_active_pct.st, VAL_UNKNOWN);
	/* GPU 1 has no GPM: not supported, never 0, and no buffers */
	for (int tick = 0; tick < 2; tick++) {
		assert_int_equal(be->ops->sample(be, 1, GPU_GRP_GPM, &s, &err), GPU_OK);
		assert_int_equal(s.prof_sm_active_pct.st, VAL_UNSUPPORTED);
		assert_int_equal(s.prof_dram_active_pct.st, VAL_UNSUPPORTED);
	}
	assert_int_equal(gpm_live, 2);
	gpu_backend_close(be); /* frees the buffers */
	assert_int_equal(gpm_live, 0);
	memset(be, 0, sizeof(*be));

	/* a driver without the GPM entry points */
	struct nvml_api api = fake();
	api.GpmQueryDeviceSupport = NULL;
	api.GpmMetricsGet = NULL;
	assert_int_equal(nvml_open_with_api(be, &api, &err), GPU_OK);
	for (int tick = 0; tick < 2; tick++) {
		assert_int_equal(be->ops->sample(be, 0, GPU_GRP_GPM, &s, &err), GPU_OK);
		assert_int_equal(s.prof_sm_active_pct.st, VAL_UNSUPPORTED);
		assert_int_equal(s.prof_pcie_rx_kbps.st, VAL_UNSUPPORTED);
	}
	assert_int_equal(gpm_live, 0);
}

/* GPM per MIG instance: each GPU instance's own samples (nvmlGpmMigSampleGet
 * with its id) and buffers, read with the instance list; n/a on an
 * instance's first reading, on a GPU without GPM and with a driver without
 * nvmlGpmMigSampleGet, never 0. */
static void test_gpm_mig(void **state)
{
	struct gpu_backend *be = *state;
	struct gpu_mig m[4];
	unsigned n = 0;
	struct gpu_err err = { "" };
	fake_mig_on = true;
	assert_int_equal(be->ops->mig_instances(be, 0, m, 4, &n, &err), GPU_OK);
	assert_int_equal(n, 2);
	assert_int_equal(m[0].gi_id, 3);
	assert_int_equal(m[1].gi_id, 5);
	assert_int_equal(gpm_mig_gets, 2);
	for (unsigned k = 0; k < 2; k++) { /* one reading each: nothing between yet */
		assert_int_equal(m[k].prof_sm_active_pct.st, VAL_UNKNOWN);
		assert_int_equal(m[k].prof_dram_active_pct.st, VAL_UNKNOWN);
	}
	assert_int_equal(gpm_live, 4); /* two buffers per instance */
	for (int tick = 0; tick < 2; tick++) {
		assert_int_equal(be->ops->mig_instances(be, 0, m, 4, &n, &err), GPU_OK);
		for (unsigned k = 0; k < 2; k++) {
			assert_int_equal(m[k].prof_sm_active_pct.st, VAL_OK);
			assert_int_equal(m[k].prof_sm_active_pct.v, 93);
			assert_int_equal(m[k].prof_sm_occupancy_pct.v, 15);
			assert_int_equal(m[k].prof_tensor_active_pct.v, 89);
			assert_int_equal(m[k].prof_dram_active_pct.v, 17);
			assert_int_equal(m[k].prof_fp64_active_pct.st, VAL_OK); /* a real 0 */
			assert_int_equal(m[k].prof_fp64_active_pct.v, 0);
			assert_int_equal(m[k].prof_nvlink_tx_kbps.st, VAL_UNSUPPORTED);
		}
	}
	/* the fake refuses samples of two instances or out of order */
	assert_int_equal(gpm_metrics_calls, 4);
	assert_int_equal(gpm_live, 4);
	/* a failed reading: an error for the instance, and it starts over */
	gpm_get_rc = NVML_ERROR_UNKNOWN;
	assert_int_equal(be->ops->mig_instances(be, 0, m, 4, &n, &err), GPU_OK);
	assert_int_equal(m[0].prof_sm_active_pct.st, VAL_ERROR);
	gpm_get_rc = NVML_SUCCESS;
	assert_int_equal(be->ops->mig_instances(be, 0, m, 4, &n, &err), GPU_OK);
	assert_int_equal(m[0].prof_sm_active_pct.st, VAL_UNKNOWN);
	/* GPU instance 5 destroyed: its buffers given back; created again, it starts over */
	fake_mig_n = 1;
	assert_int_equal(be->ops->mig_instances(be, 0, m, 4, &n, &err), GPU_OK);
	assert_int_equal(n, 1);
	assert_int_equal(gpm_live, 2);
	fake_mig_n = 2;
	assert_int_equal(be->ops->mig_instances(be, 0, m, 4, &n, &err), GPU_OK);
	assert_int_equal(m[0].prof_sm_active_pct.st, VAL_OK);
	assert_int_equal(m[1].prof_sm_active_pct.st, VAL_UNKNOWN);
	assert_int_equal(gpm_live, 4);
	/* two compute instances of GPU instance 3: one reading, the same figures */
	struct gpu_mig two[2] = { { .gi_id = 3, .ci_id = 0 }, { .gi_id = 3, .ci_id = 1 } };
	unsigned before = gpm_mig_gets;
	nvml_gpm_mig_sample(nvml_priv_of(be), 0, (nvmlDevice_t)(intptr_t)1, two, 0);
	nvml_gpm_mig_sample(nvml_priv_of(be), 0, (nvmlDevice_t)(intptr_t)1, two, 1);
	assert_int_equal(gpm_mig_gets, before + 1);
	assert_int_equal(two[0].prof_sm_active_pct.st, VAL_OK);
	assert_int_equal(two[1].prof_sm_active_pct.st, VAL_OK);
	assert_int_equal(two[1].prof_sm_active_pct.v, 93);
	/* a GPU without GPM: not supported, no buffers, no call */
	struct gpu_mig one = { .gi_id = 1 };
	unsigned gets = gpm_mig_gets;
	nvml_gpm_mig_sample(nvml_priv_of(be), 1, (nvmlDevice_t)(intptr_t)2, &one, 0);
	assert_int_equal(one.prof_sm_active_pct.st, VAL_UNSUPPORTED);
	assert_int_equal(one.prof_tensor_active_pct.st, VAL_UNSUPPORTED);
	assert_int_equal(gpm_mig_gets, gets);
	assert_int_equal(gpm_live, 4);
	gpu_backend_close(be); /* frees the instances' buffers */
	assert_int_equal(gpm_live, 0);
	memset(be, 0, sizeof(*be));

	/* a driver without nvmlGpmMigSampleGet */
	struct nvml_api api = fake();
	api.GpmMigSampleGet = NULL;
	assert_int_equal(nvml_open_with_api(be, &api, &err), GPU_OK);
	gets = gpm_mig_gets;
	for (int tick = 0; tick < 2; tick++) {
		assert_int_equal(be->ops->mig_instances(be, 0, m, 4, &n, &err), GPU_OK);
		assert_int_equal(n, 2);
		assert_int_equal(m[1].prof_sm_active_pct.st, VAL_UNSUPPORTED);
		assert_int_equal(m[1].prof_dram_active_pct.st, VAL_UNSUPPORTED);
	}
	assert_int_equal(gpm_mig_gets, gets);
	assert_int_equal(gpm_live, 0); /* no buffers for instances it cannot read */
}

static void test_memory_v1_fallback(void **state)
{
	struct gpu_backend *be = *state;
	struct gpu_sample s;
	struct gpu_err err = { "" };
	mem_v2_mismatch = true; /* a driver that does not know the v2 struct */
	assert_int_equal(be->ops->sample(be, 0, GPU_GRP_BASIC, &s, &err), GPU_OK);
	assert_true(s.mem_used_bytes.v == 615ULL << 20);
	assert_true(s.mem_total_bytes.v == 143771ULL << 20);
}

static void test_sample_groups(void **state)
{
	struct gpu_backend *be = *state;
	struct gpu_sample s;
	struct gpu_err err = { "" };
	assert_int_equal(be->ops->sample(be, 0, GPU_GRP_BASIC, &s, &err), GPU_OK);
	assert_int_equal(s.temp_c.st, VAL_OK);
	/* skipped groups are "not read", and the slow PCIe throughput call was not made */
	assert_int_equal(s.ecc_vol_corrected.st, VAL_UNKNOWN);
	assert_int_equal(s.pcie_tx_kbps.st, VAL_UNKNOWN);
	assert_int_equal(s.nvlink_n, 0);
	assert_int_equal(pcie_throughput_calls, 0);
	assert_int_equal(be->ops->sample(be, 0, GPU_GRP_PCIE, &s, &err), GPU_OK);
	assert_int_equal(pcie_throughput_calls, 2);
	assert_int_equal(s.temp_c.st, VAL_UNKNOWN);
}

static void test_links(void **state)
{
	struct gpu_backend *be = *state;
	struct gpu_link l;
	struct gpu_err err = { "" };
	assert_int_equal(be->ops->link(be, 0, 0, &l, &err), GPU_OK);
	assert_int_equal(l.kind, LINK_SELF);
	assert_int_equal(be->ops->link(be, 0, 1, &l, &err), GPU_OK);
	assert_int_equal(l.kind, LINK_NVLINK);
	assert_int_equal(l.nvlinks, 17); /* 18 switch links, the peer has 17 up */
	assert_int_equal(l.pcie, LINK_PHB);
	assert_true(l.p2p_supported);
	assert_int_equal(be->ops->link(be, 0, 5, &l, &err), GPU_ENODEV);
}

static void test_processes(void **state)
{
	struct gpu_backend *be = *state;
	struct gpu_process p[4];
	unsigned n = 99;
	struct gpu_err err = { "" };
	char comm[64] = "";
	FILE *f = fopen("/proc/self/comm", "r");
	assert_non_null(f);
	assert_non_null(fgets(comm, sizeof(comm), f));
	fclose(f);
	comm[strcspn(comm, "\n")] = '\0';
	assert_int_equal(be->ops->processes(be, 0, p, 4, &n, &err), GPU_OK);
	assert_int_equal(n, 1);
	assert_int_equal(p[0].pid, (unsigned)getpid());
	assert_int_equal(p[0].type, 'C');
	assert_string_equal(p[0].name, comm);
	assert_int_equal(p[0].uid, getuid());
	assert_int_equal(p[0].mig_gi, -1);
	assert_true(p[0].used_mem_bytes.v == 1ULL << 30);
	assert_int_equal(be->ops->processes(be, 1, p, 4, &n, &err), GPU_OK);
	assert_int_equal(n, 0);
	/* MIG disabled: no instances */
	struct gpu_mig m[2];
	assert_int_equal(be->ops->mig_instances(be, 0, m, 2, &n, &err), GPU_OK);
	assert_int_equal(n, 0);
}

static void test_lost_gpu(void **state)
{
	struct gpu_backend *be = *state;
	struct gpu_sample s;
	struct gpu_static st;
	struct gpu_err err = { "" };
	gpu1_lost = true;
	assert_int_equal(be->ops->sample(be, 1, GPU_GRP_ALL, &s, &err), GPU_ENODEV);
	assert_true(s.lost);
	assert_int_equal(s.temp_c.st, VAL_UNKNOWN); /* nothing after the first failed call */
	assert_int_equal(s.mem_used_bytes.st, VAL_ERROR);
	assert_non_null(strstr(err.msg, "GPU 1 has fallen off the bus"));
	assert_int_equal(be->ops->static_info(be, 1, &st, &err), GPU_ENODEV);
	assert_int_equal(st.name.st, VAL_ERROR);
	/* the other GPU is unaffected */
	assert_int_equal(be->ops->sample(be, 0, GPU_GRP_BASIC, &s, &err), GPU_OK);
	assert_false(s.lost);

	struct snapshot *snap = snapshot_new(GPU_MAX_GPUS);
	assert_non_null(snap);
	assert_int_equal(snapshot_take(be, GPU_GRP_ALL, snap, &err), GPU_OK);
	assert_int_equal(snap->n, 2);
	assert_true(snap->gpu[0].up);
	assert_int_equal(snap->gpu[0].st.sm_count.v, 132);
	assert_int_equal(snap->gpu[0].nproc, 1);
	assert_false(snap->gpu[1].up);
	assert_non_null(strstr(snap->gpu[1].last_error, "fallen off the bus"));
	assert_int_equal(snap->link[0][0].kind, LINK_SELF);
	assert_int_equal(snap->link[0][1].kind, LINK_UNKNOWN); /* the peer is lost */
	free(snap);
}

static void test_snapshot(void **state)
{
	struct gpu_backend *be = *state;
	struct gpu_err err = { "" };
	struct snapshot *snap = snapshot_new(GPU_MAX_GPUS);
	assert_non_null(snap);
	assert_int_equal(snapshot_take(be, GPU_GRP_BASIC, snap, &err), GPU_OK);
	assert_string_equal(snap->sys.backend, "nvml");
	for (unsigned i = 0; i < 2; i++) {
		assert_true(snap->gpu[i].up);
		assert_int_equal(snap->gpu[i].st.index, i);
		assert_int_equal(snap->gpu[i].s.temp_c.v, 34);
		assert_int_equal(snap->link[i][1 - i].kind, LINK_NVLINK);
	}
	assert_string_equal(snap->gpu[1].st.pci_bus_id.s, "00000000:2A:00.0");
	free(snap);
}

static void test_events(void **state)
{
	struct gpu_backend *be = *state;
	struct gpu_event ev[4];
	unsigned n = 99;
	struct gpu_err err = { "" };
	assert_int_equal(be->ops->poll_events(be, 0, ev, 4, &n, &err), GPU_OK);
	assert_int_equal(n, 0);
	events_left = 2;
	assert_int_equal(be->ops->poll_events(be, 10, ev, 4, &n, &err), GPU_OK);
	assert_int_equal(n, 2);
	assert_int_equal(ev[0].kind, EVT_XID);
	assert_int_equal(ev[0].xid, 79);
	assert_int_equal(ev[0].gpu, 1);
	assert_string_equal(ev[0].detail, "XID 79");
}

static void test_init_failure(void **state)
{
	(void)state;
	struct gpu_backend be;
	struct gpu_err err = { "" };
	struct nvml_api api = fake();
	memset(&be, 0, sizeof(be));
	init_rc = NVML_ERROR_DRIVER_NOT_LOADED;
	assert_int_equal(nvml_open_with_api(&be, &api, &err), GPU_ENODRIVER);
	assert_string_equal(err.msg, "NVML initialisation failed: Driver Not Loaded");
	assert_null(be.ops);
	init_rc = NVML_SUCCESS;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_system, setup, teardown),
		cmocka_unit_test_setup_teardown(test_static, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sample_all, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gpm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gpm_mig, setup, teardown),
		cmocka_unit_test_setup_teardown(test_memory_v1_fallback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sample_groups, setup, teardown),
		cmocka_unit_test_setup_teardown(test_links, setup, teardown),
		cmocka_unit_test_setup_teardown(test_processes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lost_gpu, setup, teardown),
		cmocka_unit_test_setup_teardown(test_snapshot, setup, teardown),
		cmocka_unit_test_setup_teardown(test_events, setup, teardown),
		cmocka_unit_test(test_init_failure),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
