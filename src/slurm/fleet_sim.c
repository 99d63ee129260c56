/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fleet_sim.c - SIMULATED figures for a sweep at bench-quick on a simulated
 * server (fleet.h). The simulator invents no benchmark figure, so a fleet of
 * simulated servers gets these instead, and every report that shows them says
 * SIMULATED ("source": "simulated"): the GPU's catalog figure times the share
 * a healthy GPU reaches, times what the server's state takes away:
 *   memory bandwidth  catalog mem_bw x 0.87 (an H200's copy kernel: bench/RESULTS.md)
 *   GEMM BF16         catalog BF16 dense x 0.70, x 0.82 under a power cap (or
 *                     brake), x 0.55 under thermal or HW slowdown: the
 *                     simulator's own clock model, busy or idle
 *   PCIe H2D          the trained link: per-lane rate of the current gen x width x 0.85
 *   P2P               NVLink: catalog bandwidth per direction x 0.85 x active links / links
 *                     (no NVLink: as the PCIe H2D)
 *   all-reduce        0.9 x the slowest GPU's P2P
 * and a deterministic +-1% per node, GPU and figure (from their names), so the fleet
 * has a spread. A simulated fault that slows a GPU (power, thermal,
 * pcie_degraded, nvlink_down) moves its figures; nothing else does.
 */
#include "slurm/fleet.h"

#include <math.h>
#include <string.h>

#include "core/catalog.h"
#include "device/snapshot.h"

#define THERMAL (CLK_EVT_HW_SLOWDOWN | CLK_EVT_SW_THERMAL | CLK_EVT_HW_THERMAL)
#define POWER (CLK_EVT_SW_POWER_CAP | CLK_EVT_HW_POWER_BRAKE)

/* PCIe per-lane throughput per direction, GB/s, by generation (after encoding). */
static double pcie_lane_gbs(uint64_t gen)
{
	static const double lane[] = { 0, 0.25, 0.5, 0.985, 1.969, 3.938, 7.877 };
	return gen < sizeof(lane) / sizeof(lane[0]) ? lane[gen] : NAN;
}

/* +-1% from the node, the UUID and the figure (FNV-1a): the same every sweep. */
static double jitter(const char *node, const char *uuid, int fig)
{
	uint32_t h = 2166136261u ^ (uint32_t)fig;
	for (const char *p = node; *p; p++)
		h = (h ^ (uint8_t)*p) * 16777619u;
	for (const char *p = uuid; *p; p++)
		h = (h ^ (uint8_t)*p) * 16777619u;
	return 1.0 + ((double)(h % 2001) - 1000.0) / 100000.0;
}

static void put(json_t *o, int fig, double v, const char *node, const char *uuid)
{
	json_object_set_new(o, fleet_figs[fig].key, isfinite(v) && v >= 0 ? json_real(v * jitter(node, uuid, fig)) : json_null());
}

json_t *fleet_sim_figures(const struct snapshot *snap, const struct catalog *cat, const char *node)
{
	json_t *gpus = json_array();
	double slowest_p2p = NAN;
	for (unsigned i = 0; i < snap->n; i++) {
		const struct gpu_view *v = &snap->gpu[i];
		const struct cat_gpu *c = v->st.catalog_model.st == VAL_OK ? catalog_find(cat, v->st.catalog_model.s) : NULL;
		json_t *g = json_pack("{sI}", "index", (json_int_t)v->st.index);
		const char *uuid = v->st.uuid.st == VAL_OK ? v->st.uuid.s : "";
		if (!c || v->s.lost) {
			json_array_append_new(gpus, g);
			continue;
		}
		/* the simulator's throttle model (docs/simulator.md): the SM clock at 82% under a
		 * power cap, 55% under thermal slowdown, whether the GPU is busy or idle now */
		uint64_t why = v->s.clock_event_reasons.st == VAL_OK ? v->s.clock_event_reasons.v : 0;
		double clock = why & THERMAL ? 0.55 : why & POWER ? 0.82 : 1.0;
		double h2d = NAN;
		if (v->s.pcie_gen.st == VAL_OK && v->s.pcie_width.st == VAL_OK)
			h2d = pcie_lane_gbs(v->s.pcie_gen.v) * (double)v->s.pcie_width.v * 0.85;
		double p2p = h2d;
		if (c->nvlink_links && isfinite(c->nvlink_bw_gbs) && v->s.nvlink_n) {
			unsigned up = 0;
			for (unsigned l = 0; l < v->s.nvlink_n; l++)
				up += v->s.nvlink[l].active.st == VAL_OK && v->s.nvlink[l].active.v;
			p2p = c->nvlink_bw_gbs / 2 * 0.85 * up / c->nvlink_links;
		}
		put(g, FIG_MEM_BW, c->mem_bw_gbs * 0.87, node, uuid);
		put(g, FIG_GEMM_BF16, c->tflops_bf16 * 0.70 * clock, node, uuid);
		put(g, FIG_H2D, h2d, node, uuid);
		put(g, FIG_P2P, p2p, node, uuid);
		if (isfinite(p2p) && (!isfinite(slowest_p2p) || p2p < slowest_p2p))
			slowest_p2p = p2p;
		json_array_append_new(gpus, g);
	}
	json_t *figs = json_pack("{ss so}", "source", "simulated", "gpus", gpus);
	put(figs, FIG_ALLREDUCE, snap->n > 1 ? 0.9 * slowest_p2p : NAN, node, "");
	return figs;
}
