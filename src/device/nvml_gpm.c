/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nvml_gpm.c - the profiling fields (GPU_GRP_GPM) from NVML's GPU performance
 * monitoring (GPM, Hopper and later): SM activity, SM occupancy, tensor,
 * DRAM and FP pipe activity, PCIe and NVLink throughput. GPM gives each
 * metric between two samples of the GPU's counters, so every call takes one
 * sample (nvmlGpmSampleGet) and computes the metrics (one nvmlGpmMetricsGet)
 * between it and the previous call's; the first call has none yet
 * (VAL_UNKNOWN, "n/a"). Two buffers per GPU, allocated on the first call
 * that finds GPM supported, used in turn. A driver without the entry points,
 * a GPU that GPM does not support: "not supported", never 0.
 * Private to src/device/nvml*.c; calls for one GPU come from one thread.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "nvml_priv.h"

/* The field each metric goes to, and the factor to its unit (MiB/s -> KiB/s). */
static const struct gpm_field {
	unsigned id;
	size_t off;
	double mul;
} gpm_fields[] = {
	{ NVML_GPM_METRIC_SM_UTIL, offsetof(struct gpu_sample, prof_sm_active_pct), 1 },
	{ NVML_GPM_METRIC_SM_OCCUPANCY, offsetof(struct gpu_sample, prof_sm_occupancy_pct), 1 },
	{ NVML_GPM_METRIC_ANY_TENSOR_UTIL, offsetof(struct gpu_sample, prof_tensor_active_pct), 1 },
	{ NVML_GPM_METRIC_DRAM_BW_UTIL, offsetof(struct gpu_sample, prof_dram_active_pct), 1 },
	{ NVML_GPM_METRIC_FP64_UTIL, offsetof(struct gpu_sample, prof_fp64_active_pct), 1 },
	{ NVML_GPM_METRIC_FP32_UTIL, offsetof(struct gpu_sample, prof_fp32_active_pct), 1 },
	{ NVML_GPM_METRIC_FP16_UTIL, offsetof(struct gpu_sample, prof_fp16_active_pct), 1 },
	{ NVML_GPM_METRIC_PCIE_TX_PER_SEC, offsetof(struct gpu_sample, prof_pcie_tx_kbps), 1024 },
	{ NVML_GPM_METRIC_PCIE_RX_PER_SEC, offsetof(struct gpu_sample, prof_pcie_rx_kbps), 1024 },
	{ NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC, offsetof(struct gpu_sample, prof_nvlink_tx_kbps), 1024 },
	{ NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC, offsetof(struct gpu_sample, prof_nvlink_rx_kbps), 1024 },
};
#define GPM_N (sizeof(gpm_fields) / sizeof(gpm_fields[0]))
_Static_assert(GPM_N <= NVML_GPM_METRICS_LEN, "the GPM metrics fit one call");

static u64v *field_of(struct gpu_sample *out, unsigned i)
{
	return (u64v *)((char *)out + gpm_fields[i].off);
}

static void mark_all(struct gpu_sample *out, enum val_status st)
{
	for (unsigned i = 0; i < GPM_N; i++)
		VAL_MARK(*field_of(out, i), st);
}

static enum val_status status_of(nvmlReturn_t r)
{
	return r == NVML_ERROR_NOT_SUPPORTED || r == NVML_ERROR_FUNCTION_NOT_FOUND ? VAL_UNSUPPORTED : VAL_ERROR;
}

void nvml_gpm_free(struct nvml_priv *p, unsigned gpu)
{
	struct nvml_gpu *g = &p->gpu[gpu];
	for (unsigned k = 0; k < 2; k++)
		if (g->gpm_buf[k])
			NVML_CALL(&p->api, GpmSampleFree, g->gpm_buf[k]);
	memset(g->gpm_buf, 0, sizeof(g->gpm_buf));
	g->gpm_have_prev = false;
}

/* Whether this GPU has GPM: the driver's entry points, the GPU's answer, two buffers. */
static bool gpm_start(struct nvml_priv *p, unsigned gpu, nvmlDevice_t h)
{
	struct nvml_api *api = &p->api;
	struct nvml_gpu *g = &p->gpu[gpu];
	if (!api->GpmQueryDeviceSupport || !api->GpmSampleAlloc || !api->GpmSampleFree || !api->GpmSampleGet ||
	    !api->GpmMetricsGet)
		return false;
	nvmlGpmSupport_t sup = { .version = NVML_GPM_SUPPORT_VERSION };
	if (NVML_CALL(api, GpmQueryDeviceSupport, h, &sup) != NVML_SUCCESS || !sup.isSupportedDevice)
		return false;
	for (unsigned k = 0; k < 2; k++)
		if (NVML_CALL(api, GpmSampleAlloc, &g->gpm_buf[k]) != NVML_SUCCESS) {
			g->gpm_buf[k] = NULL;
			nvml_gpm_free(p, gpu);
			return false;
		}
	return true;
}

void nvml_gpm_sample(struct nvml_priv *p, unsigned gpu, nvmlDevice_t h, struct gpu_sample *out)
{
	struct nvml_api *api = &p->api;
	struct nvml_gpu *g = &p->gpu[gpu];
	if (g->gpm_state == GPM_UNTRIED)
		g->gpm_state = gpm_start(p, gpu, h) ? GPM_ON : GPM_OFF;
	if (g->gpm_state != GPM_ON) {
		mark_all(out, VAL_UNSUPPORTED);
		return;
	}
	nvmlGpmSample_t cur = g->gpm_buf[g->gpm_cur];
	nvmlReturn_t r = NVML_CALL(api, GpmSampleGet, h, cur);
	if (r != NVML_SUCCESS) {
		g->gpm_have_prev = false; /* the next call starts over */
		mark_all(out, status_of(r));
		return;
	}
	if (!g->gpm_have_prev) {
		mark_all(out, VAL_UNKNOWN); /* one reading: nothing to measure between yet */
	} else {
		nvmlGpmMetricsGet_t mg;
		memset(&mg, 0, offsetof(nvmlGpmMetricsGet_t, metrics) + GPM_N * sizeof(mg.metrics[0]));
		mg.version = NVML_GPM_METRICS_GET_VERSION;
		mg.numMetrics = GPM_N;
		mg.sample1 = g->gpm_buf[g->gpm_cur ^ 1u];
		mg.sample2 = cur;
		for (unsigned i = 0; i < GPM_N; i++)
			mg.metrics[i].metricId = gpm_fields[i].id;
		r = NVML_CALL(api, GpmMetricsGet, &mg);
		for (unsigned i = 0; i < GPM_N; i++) {
			u64v *f = field_of(out, i);
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
	g->gpm_cur ^= 1u;
	g->gpm_have_prev = true;
}
