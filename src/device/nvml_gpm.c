/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nvml_gpm.c - the profiling fields (GPU_GRP_GPM) from NVML's GPU performance
 * monitoring (GPM, Hopper and later): SM activity, SM occupancy, tensor,
 * DRAM and FP pipe activity, PCIe and NVLink throughput. GPM gives each
 * metric between two samples of the GPU's counters, so every call takes one
 * sample (nvmlGpmSampleGet) and computes the metrics (one nvmlGpmMetricsGet)
 * between it and the previous call's; the first call has none yet
 * (VAL_UNKNOWN, "n/a"). Two buffers per GPU, allocated on the first call
 * that finds GPM supported, used in turn. With MIG on, each GPU instance
 * has its own two buffers and its own samples (nvmlGpmMigSampleGet), read
 * with the instance list. A driver without the entry points, a GPU that GPM
 * does not support: "not supported", never 0.
 * Private to src/device/nvml*.c; calls for one GPU come from one thread.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "nvml_priv.h"

/* The field each metric goes to, in a GPU's sample and in a MIG instance,
 * and the factor to its unit (MiB/s -> KiB/s). */
#define GPM_F(metric, member, mul) \
	{ NVML_GPM_METRIC_##metric, offsetof(struct gpu_sample, member), offsetof(struct gpu_mig, member), mul }
static const struct gpm_field {
	unsigned id;
	size_t off, mig_off;
	double mul;
} gpm_fields[] = {
	GPM_F(SM_UTIL, prof_sm_active_pct, 1),
	GPM_F(SM_OCCUPANCY, prof_sm_occupancy_pct, 1),
	GPM_F(ANY_TENSOR_UTIL, prof_tensor_active_pct, 1),
	GPM_F(DRAM_BW_UTIL, prof_dram_active_pct, 1),
	GPM_F(FP64_UTIL, prof_fp64_active_pct, 1),
	GPM_F(FP32_UTIL, prof_fp32_active_pct, 1),
	GPM_F(FP16_UTIL, prof_fp16_active_pct, 1),
	GPM_F(PCIE_TX_PER_SEC, prof_pcie_tx_kbps, 1024),
	GPM_F(PCIE_RX_PER_SEC, prof_pcie_rx_kbps, 1024),
	GPM_F(NVLINK_TOTAL_TX_PER_SEC, prof_nvlink_tx_kbps, 1024),
	GPM_F(NVLINK_TOTAL_RX_PER_SEC, prof_nvlink_rx_kbps, 1024),
};
#undef GPM_F
#define GPM_N (sizeof(gpm_fields) / sizeof(gpm_fields[0]))
_Static_assert(GPM_N <= NVML_GPM_METRICS_LEN, "the GPM metrics fit one call");

/* Where metric i goes: in a struct gpu_sample, or (mig) a struct gpu_mig. */
static u64v *field_of(void *out, bool mig, unsigned i)
{
	return (u64v *)((char *)out + (mig ? gpm_fields[i].mig_off : gpm_fields[i].off));
}

static void mark_all(void *out, bool mig, enum val_status st)
{
	for (unsigned i = 0; i < GPM_N; i++)
		VAL_MARK(*field_of(out, mig, i), st);
}

static enum val_status status_of(nvmlReturn_t r)
{
	return r == NVML_ERROR_NOT_SUPPORTED || r == NVML_ERROR_FUNCTION_NOT_FOUND ? VAL_UNSUPPORTED : VAL_ERROR;
}

static void pair_free(struct nvml_api *api, struct nvml_gpm_pair *g)
{
	for (unsigned k = 0; k < 2; k++)
		if (g->buf[k])
			NVML_CALL(api, GpmSampleFree, g->buf[k]);
	memset(g, 0, sizeof(*g));
}

static bool pair_alloc(struct nvml_api *api, struct nvml_gpm_pair *g)
{
	for (unsigned k = 0; k < 2; k++)
		if (NVML_CALL(api, GpmSampleAlloc, &g->buf[k]) != NVML_SUCCESS) {
			g->buf[k] = NULL;
			pair_free(api, g);
			return false;
		}
	return true;
}

void nvml_gpm_free(struct nvml_priv *p, unsigned gpu)
{
	struct nvml_gpu *g = &p->gpu[gpu];
	pair_free(&p->api, &g->gpm);
	for (unsigned k = 0; k < GPU_MAX_MIG; k++)
		pair_free(&p->api, &g->gpm_mig[k]);
}

/* Whether this GPU has GPM: the driver's entry points, the GPU's answer
 * (the buffers: with the first reading of the GPU or of an instance). */
static bool gpm_start(struct nvml_priv *p, nvmlDevice_t h)
{
	struct nvml_api *api = &p->api;
	if (!api->GpmQueryDeviceSupport || !api->GpmSampleAlloc || !api->GpmSampleFree || !api->GpmSampleGet ||
	    !api->GpmMetricsGet)
		return false;
	nvmlGpmSupport_t sup = { .version = NVML_GPM_SUPPORT_VERSION };
	return NVML_CALL(api, GpmQueryDeviceSupport, h, &sup) == NVML_SUCCESS && sup.isSupportedDevice;
}

/* Takes a reading into g's current buffer (r: how that went) and measures
 * between it and the previous one into out's fields. */
static void measure(struct nvml_api *api, struct nvml_gpm_pair *g, nvmlReturn_t r, void *out, bool mig)
{
	if (r != NVML_SUCCESS) {
		g->have_prev = false; /* the next call starts over */
		mark_all(out, mig, status_of(r));
		return;
	}
	if (!g->have_prev) {
		mark_all(out, mig, VAL_UNKNOWN); /* one reading: nothing to measure between yet */
	} else {
		nvmlGpmMetricsGet_t mg;
		memset(&mg, 0, offsetof(nvmlGpmMetricsGet_t, metrics) + GPM_N * sizeof(mg.metrics[0]));
		mg.version = NVML_GPM_METRICS_GET_VERSION;
		mg.numMetrics = GPM_N;
		mg.sample1 = g->buf[g->cur ^ 1u];
		mg.sample2 = g->buf[g->cur];
		for (unsigned i = 0; i < GPM_N; i++)
			mg.metrics[i].metricId = gpm_fields[i].id;
		r = NVML_CALL(api, GpmMetricsGet, &mg);
		for (unsigned i = 0; i < GPM_N; i++) {
			u64v *f = field_of(out, mig, i);
			nvmlReturn_t mr = r != NVML_SUCCESS ? r : mg.metrics[i].nvmlReturn;
			double v = mg.metrics[i].value * gpm_fields[i].mul;
			if (mr != NVML_SUCCESS)
				VAL_MARK(*f, status_of(mr));
			else if (!isfinite(v) || v < 0)
				VAL_MARK(*f, VAL_ERROR);
			else
				VAL_SET(*f, (uint64_t)llround(v));
		}
	}
	g->cur ^= 1u;
	g->have_prev = true;
}

void nvml_gpm_sample(struct nvml_priv *p, unsigned gpu, nvmlDevice_t h, struct gpu_sample *out)
{
	struct nvml_gpu *g = &p->gpu[gpu];
	if (g->gpm_state == GPM_UNTRIED)
		g->gpm_state = gpm_start(p, h) ? GPM_ON : GPM_OFF;
	if (g->gpm_state == GPM_ON && !g->gpm.buf[0] && !pair_alloc(&p->api, &g->gpm))
		g->gpm_state = GPM_OFF;
	if (g->gpm_state != GPM_ON) {
		mark_all(out, false, VAL_UNSUPPORTED);
		return;
	}
	measure(&p->api, &g->gpm, NVML_CALL(&p->api, GpmSampleGet, h, g->gpm.buf[g->gpm.cur]), out, false);
}

/* The buffers of GPU instance gi: its own, else a new pair (none free: NULL). */
static struct nvml_gpm_pair *mig_pair(struct nvml_api *api, struct nvml_gpu *g, unsigned gi)
{
	struct nvml_gpm_pair *free_slot = NULL;
	for (unsigned k = 0; k < GPU_MAX_MIG; k++) {
		if (g->gpm_mig[k].used && g->gpm_mig[k].gi_id == gi)
			return &g->gpm_mig[k];
		if (!g->gpm_mig[k].used && !free_slot)
			free_slot = &g->gpm_mig[k];
	}
	if (!free_slot || !pair_alloc(api, free_slot))
		return NULL;
	free_slot->used = true;
	free_slot->gi_id = gi;
	return free_slot;
}

void nvml_gpm_mig_sample(struct nvml_priv *p, unsigned gpu, nvmlDevice_t h, struct gpu_mig *list, unsigned i)
{
	struct nvml_api *api = &p->api;
	struct nvml_gpu *g = &p->gpu[gpu];
	struct gpu_mig *out = &list[i];
	for (unsigned k = 0; k < i; k++)
		if (list[k].gi_id == out->gi_id) { /* another compute instance of a GPU instance read now */
#define GPM_COPY(member) out->member = list[k].member;
			GPU_MIG_PROF_FIELDS(GPM_COPY)
#undef GPM_COPY
			return;
		}
	if (g->gpm_state == GPM_UNTRIED)
		g->gpm_state = gpm_start(p, h) ? GPM_ON : GPM_OFF;
	struct nvml_gpm_pair *pair = g->gpm_state == GPM_ON && api->GpmMigSampleGet ? mig_pair(api, g, out->gi_id) : NULL;
	if (!pair) {
		mark_all(out, true, VAL_UNSUPPORTED);
		return;
	}
	measure(api, pair, NVML_CALL(api, GpmMigSampleGet, h, out->gi_id, pair->buf[pair->cur]), out, true);
}

void nvml_gpm_mig_prune(struct nvml_priv *p, unsigned gpu, const struct gpu_mig *seen, unsigned n)
{
	struct nvml_gpu *g = &p->gpu[gpu];
	for (unsigned k = 0; k < GPU_MAX_MIG; k++) {
		bool listed = false;
		for (unsigned i = 0; i < n && !listed; i++)
			listed = seen[i].gi_id == g->gpm_mig[k].gi_id;
		if (g->gpm_mig[k].used && !listed)
			pair_free(&p->api, &g->gpm_mig[k]); /* a new instance of that id starts over */
	}
}
