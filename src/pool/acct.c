/* SPDX-License-Identifier: Apache-2.0 */
/* acct.c - see acct.h. */
#include "acct.h"

#include <stdlib.h>
#include <string.h>

#include "device/snapshot.h"

/* Reasons that are not throttling: idle, application clocks, display clocks. */
#define NOT_THROTTLE (CLK_EVT_GPU_IDLE | CLK_EVT_APP_CLOCKS | CLK_EVT_DISPLAY_CLOCKS)

int acct_begin(struct acct_job *a, const unsigned *gpus, unsigned n, const struct snapshot *snap)
{
	acct_free(a);
	if (n == 0)
		return 0;
	a->g = calloc(n, sizeof(*a->g));
	if (!a->g)
		return -1;
	a->n = n;
	for (unsigned i = 0; i < n; i++) {
		struct acct_gpu *g = &a->g[i];
		g->gpu = gpus[i];
		if (!snap || gpus[i] >= snap->n)
			continue;
		const struct gpu_view *v = &snap->gpu[gpus[i]];
		if (v->up && VAL_HAS(v->s.energy_mj)) {
			g->energy_ok = true;
			g->energy_first_mj = g->energy_last_mj = v->s.energy_mj.v;
		}
		if (v->up && VAL_HAS(v->s.viol_power_ns) && VAL_HAS(v->s.viol_thermal_ns)) {
			g->viol_ok = true;
			g->viol_power_first = g->viol_power_last = v->s.viol_power_ns.v;
			g->viol_thermal_first = g->viol_thermal_last = v->s.viol_thermal_ns.v;
		}
		for (unsigned k = 0; k < v->nxid && k < 32; k++) {
			g->base[g->nbase].code = v->xid[k].code;
			g->base[g->nbase].count = v->xid[k].count;
			g->nbase++;
		}
		/* the baseline sample is not folded in: the job had not run yet */
		g->last_sample_ns = v->s.timestamp_ns;
	}
	return 0;
}

static uint64_t xid_base(const struct acct_gpu *g, uint64_t code)
{
	for (unsigned k = 0; k < g->nbase; k++)
		if (g->base[k].code == code)
			return g->base[k].count;
	return 0;
}

const char *acct_gpm_key(enum acct_gpm m)
{
	static const char *const keys[ACCT_GPM_COUNT] = { "sm_active_avg_pct", "tensor_active_avg_pct",
							   "dram_active_avg_pct" };
	return (unsigned)m < ACCT_GPM_COUNT ? keys[m] : "";
}

static void fold(const struct acct_job *a, struct acct_gpu *g, const struct gpu_view *v)
{
	const struct gpu_sample *s = &v->s;
	const struct gpu_mig *inst = a->mig ? gpu_view_mig(v, a->mig_gi) : NULL;
	g->samples++;
	g->last_sample_ns = s->timestamp_ns;
	if (VAL_HAS(s->util_gpu_pct)) {
		g->util_sum += s->util_gpu_pct.v;
		g->util_n++;
		if (s->util_gpu_pct.v > g->util_peak)
			g->util_peak = s->util_gpu_pct.v;
	}
	if (VAL_HAS(s->mem_used_bytes)) {
		g->mem_sum_mib += s->mem_used_bytes.v >> 20;
		g->mem_n++;
		if (s->mem_used_bytes.v > g->mem_peak_bytes)
			g->mem_peak_bytes = s->mem_used_bytes.v;
	}
	const u64v none = { 0, VAL_UNKNOWN };
	const u64v gpm[ACCT_GPM_COUNT] = {
		a->mig ? (inst ? inst->prof_sm_active_pct : none) : s->prof_sm_active_pct,
		a->mig ? (inst ? inst->prof_tensor_active_pct : none) : s->prof_tensor_active_pct,
		a->mig ? (inst ? inst->prof_dram_active_pct : none) : s->prof_dram_active_pct,
	};
	for (unsigned m = 0; m < ACCT_GPM_COUNT; m++)
		if (VAL_HAS(gpm[m])) {
			g->gpm_sum[m] += gpm[m].v;
			g->gpm_n[m]++;
		}
	if (VAL_HAS(s->clock_event_reasons))
		g->throttle_reasons |= s->clock_event_reasons.v & ~NOT_THROTTLE;
	if (g->energy_ok) {
		if (VAL_HAS(s->energy_mj) && s->energy_mj.v >= g->energy_last_mj)
			g->energy_last_mj = s->energy_mj.v;
		else if (VAL_HAS(s->energy_mj))
			g->energy_ok = false; /* counter went back: driver reloaded */
	}
	if (g->viol_ok && VAL_HAS(s->viol_power_ns) && VAL_HAS(s->viol_thermal_ns)) {
		if (s->viol_power_ns.v >= g->viol_power_last && s->viol_thermal_ns.v >= g->viol_thermal_last) {
			g->viol_power_last = s->viol_power_ns.v;
			g->viol_thermal_last = s->viol_thermal_ns.v;
		} else {
			g->viol_ok = false;
		}
	}
	g->nxid = 0;
	for (unsigned k = 0; k < v->nxid && k < 32; k++) {
		uint64_t base = xid_base(g, v->xid[k].code);
		if (v->xid[k].count > base && g->nxid < ACCT_MAX_XIDS) {
			g->xid[g->nxid].code = v->xid[k].code;
			g->xid[g->nxid].count = v->xid[k].count - base;
			g->nxid++;
		}
	}
}

void acct_set_start(struct acct_job *a, uint64_t start_ns)
{
	a->not_before_ns = start_ns;
}

void acct_update(struct acct_job *a, const struct snapshot *snap)
{
	for (unsigned i = 0; i < a->n; i++) {
		struct acct_gpu *g = &a->g[i];
		if (g->gpu >= snap->n)
			continue;
		const struct gpu_view *v = &snap->gpu[g->gpu];
		if (!v->up || v->s.lost || v->s.timestamp_ns <= g->last_sample_ns ||
		    v->s.timestamp_ns < a->not_before_ns)
			continue;
		fold(a, g, v);
	}
}

void acct_summarize(const struct acct_job *a, unsigned i, uint64_t wall_ns, struct acct_summary *out)
{
	memset(out, 0, sizeof(*out));
	if (i >= a->n)
		return;
	const struct acct_gpu *g = &a->g[i];
	out->gpu = g->gpu;
	out->gpu_seconds = (double)wall_ns / 1e9;
	out->samples = g->samples;
	out->energy_ok = g->energy_ok && g->samples > 0;
	out->energy_j = (double)(g->energy_last_mj - g->energy_first_mj) / 1e3;
	out->util_ok = g->util_n > 0;
	out->util_avg_pct = g->util_n ? (double)g->util_sum / (double)g->util_n : 0;
	out->util_peak_pct = (double)g->util_peak;
	out->mem_ok = g->mem_n > 0;
	out->mem_avg_bytes = g->mem_n ? (double)g->mem_sum_mib / (double)g->mem_n * 1048576.0 : 0;
	out->mem_peak_bytes = (double)g->mem_peak_bytes;
	for (unsigned m = 0; m < ACCT_GPM_COUNT; m++) {
		out->gpm_ok[m] = g->gpm_n[m] > 0;
		out->gpm_avg_pct[m] = g->gpm_n[m] ? (double)g->gpm_sum[m] / (double)g->gpm_n[m] : 0;
	}
	out->throttle_reasons = g->throttle_reasons;
	out->viol_ok = g->viol_ok && g->samples > 0;
	out->throttle_power_s = (double)(g->viol_power_last - g->viol_power_first) / 1e9;
	out->throttle_thermal_s = (double)(g->viol_thermal_last - g->viol_thermal_first) / 1e9;
	out->nxid = g->nxid;
	memcpy(out->xid, g->xid, sizeof(out->xid));
}

void acct_set_mig(struct acct_job *a, int gi)
{
	a->mig = gi >= 0;
	a->mig_gi = gi >= 0 ? (unsigned)gi : 0;
}

void acct_free(struct acct_job *a)
{
	free(a->g);
	a->g = NULL;
	a->n = 0;
	a->not_before_ns = 0;
	acct_set_mig(a, -1);
}
