/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sim_gpm.c - the simulator's profiling metrics (what NVML GPM answers on a
 * Hopper or later GPU): SM activity, SM occupancy, tensor, DRAM and FP pipe
 * activity, PCIe and NVLink throughput, as shares of the utilization that
 * the load model gives (docs/simulator.md, "Profiling metrics"). Each
 * workload is one row: what a GEMM-bound, a memory-bound, an idle-but-
 * allocated and a dataloader-starved job look like. Pure.
 */
#include <math.h>
#include <string.h>

#include "sim_internal.h"

/* A workload's figures at 100 % utilization, in percent of the most each can
 * be (the byte rates: of the link's bandwidth in one direction), and the
 * part of the PCIe receive rate that does not follow utilization (a starved
 * job copies its input all the time). */
struct wl_profile {
	const char *name;
	double default_load; /* percent, when the file gives no load */
	double pct[SIM_GPM_COUNT];
	double pcie_rx_floor;
};

/* SM active, occupancy, tensor, DRAM, FP64, FP32, FP16, PCIe tx, rx, NVLink tx, rx.
 * The GEMM row is a BF16 8192^3 matmul loop on an H200 as nvidia-smi dmon
 * --gpm-metrics shows it at 98 % utilization: SM active 92-94, occupancy 15,
 * tensor 87-89, DRAM 16-17 (issue 32). */
static const struct wl_profile profiles[SIM_WL_COUNT] = {
	[SIM_WL_NONE] = { "", 0, { 90, 30, 40, 35, 1, 20, 5, 2, 3, 10, 10 }, 0 },
	[SIM_WL_GEMM] = { "gemm", 98, { 95, 15.5, 90, 17, 0, 3, 1, 1, 1, 5, 5 }, 0 },
	[SIM_WL_MEMORY] = { "memory-bound", 97, { 85, 55, 0, 88, 0, 25, 0, 2, 2, 5, 5 }, 0 },
	[SIM_WL_IDLE] = { "idle-allocated", 0, { 0 }, 0 },
	[SIM_WL_STARVED] = { "dataloader-starved", 30, { 60, 10, 45, 12, 0, 10, 2, 3, 5, 1, 1 }, 30 },
};

int sim_workload_parse(const char *name)
{
	for (int w = 1; w < SIM_WL_COUNT; w++)
		if (name && !strcmp(name, profiles[w].name))
			return w;
	return -1;
}

const char *sim_workload_name(enum sim_workload w)
{
	return (unsigned)w < SIM_WL_COUNT ? profiles[w].name : "";
}

double sim_workload_default_load(enum sim_workload w)
{
	return (unsigned)w < SIM_WL_COUNT ? profiles[w].default_load : 0;
}

/* One direction's bandwidth of the GPU's PCIe link as the catalog gives it, KiB/s. */
static double pcie_dir_kbps(const struct cat_gpu *c)
{
	unsigned gen = c->pcie_gen;
	double lane_kbps = (gen >= 5 ? 3.9e6 : gen == 4 ? 1.95e6 : gen == 3 ? 0.98e6 : 0.49e6) / 16.0;
	return lane_kbps * c->pcie_width;
}

/* Metric m of workload wl at util percent on GPU g. */
static u64v gpm_of(const struct sim_gpu *g, enum sim_workload wl, double util, enum sim_gpm_metric m)
{
	const struct wl_profile *p = &profiles[(unsigned)wl < SIM_WL_COUNT ? wl : 0];
	double share = p->pct[m] * util / 100.0; /* percent */
	double v;
	switch (m) {
	case SIM_GPM_PCIE_TX:
		v = pcie_dir_kbps(g->cat) * share / 100.0;
		break;
	case SIM_GPM_PCIE_RX:
		v = pcie_dir_kbps(g->cat) * (share + p->pcie_rx_floor) / 100.0;
		break;
	case SIM_GPM_NVLINK_TX:
	case SIM_GPM_NVLINK_RX: /* all the links the GPU uses; none: not supported */
		if (!g->caps.nvlinks)
			return (u64v){ 0, VAL_UNSUPPORTED };
		v = g->cat->nvlink_bw_gbs * 1e9 / 2.0 / 1024.0 * share / 100.0;
		break;
	default:
		v = fmin(100, share);
		break;
	}
	return (u64v){ (uint64_t)lround(v), VAL_OK };
}

u64v sim_gpm_value(const struct sim_gpu *g, double util, enum sim_gpm_metric m)
{
	if (!g->caps.gpm || (unsigned)m >= SIM_GPM_COUNT)
		return (u64v){ 0, VAL_UNSUPPORTED };
	return gpm_of(g, g->d->workload, util, m);
}

void sim_gpm_mig(const struct sim_gpu *g, const struct sim_mig_desc *md, double gpu_util, bool busy, struct gpu_mig *o)
{
	u64v *dst[SIM_GPM_COUNT] = { &o->prof_sm_active_pct, &o->prof_sm_occupancy_pct, &o->prof_tensor_active_pct,
				     &o->prof_dram_active_pct, &o->prof_fp64_active_pct, &o->prof_fp32_active_pct,
				     &o->prof_fp16_active_pct, &o->prof_pcie_tx_kbps, &o->prof_pcie_rx_kbps,
				     &o->prof_nvlink_tx_kbps, &o->prof_nvlink_rx_kbps };
	/* an instance's own workload sets its load; none: the GPU's while a process runs on it */
	double util = md->workload != SIM_WL_NONE ? profiles[md->workload].default_load : busy ? gpu_util : 0;
	for (unsigned m = 0; m < SIM_GPM_COUNT; m++) {
		bool link = m >= SIM_GPM_PCIE_TX; /* the links are the GPU's, not the instance's */
		*dst[m] = g->caps.gpm_mig && !link ? gpm_of(g, md->workload, util, (enum sim_gpm_metric)m)
						     : (u64v){ 0, VAL_UNSUPPORTED };
	}
}
