/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rates.c - the earlier reading a rate of a view's counters runs from (its
 * rate base, or the previous snapshot's sample): pure functions of views,
 * for health and the expositions (sampler.h).
 */
#include "sampler.h"

#include <string.h>

void sampler_nvlink_counts(struct nvlink_err_counts *c, const struct gpu_nvlink *l)
{
	*c = (struct nvlink_err_counts){ l->crc_flit_errors, l->crc_data_errors, l->replay_errors, l->recovery_errors };
}

uint64_t sampler_slow_read_ns(const struct gpu_view *v)
{
	return v->slow_read_ns ? v->slow_read_ns : v->s.timestamp_ns;
}

const struct gpu_rate_base *sampler_rate_base(const struct gpu_view *v, const struct gpu_view *prev,
					      struct gpu_rate_base *room, double *dt_s)
{
	const struct gpu_rate_base *base = NULL;
	uint64_t t0 = 0, t1 = sampler_slow_read_ns(v);
	*dt_s = 0;
	if (v->rate_base.timestamp_ns) {
		base = &v->rate_base;
		t0 = base->timestamp_ns;
	} else if (prev && prev->up) {
		gpu_rate_base_set(room, &prev->s);
		base = room;
		t0 = sampler_slow_read_ns(prev);
	}
	if (!base || base->lost || t1 <= t0)
		return NULL;
	*dt_s = (double)(t1 - t0) / 1e9;
	return base;
}

/* When v's NVLink error counters were read: the view's record (a sampler's),
 * else the sample's own (a one-shot sweep: the backend's earlier reading, or
 * the sample itself). */
static uint64_t nvlink_err_read_of(const struct gpu_view *v)
{
	if (v->nvlink_err_read_ns)
		return v->nvlink_err_read_ns;
	return v->s.nvlink_err_read_ns ? v->s.nvlink_err_read_ns : sampler_slow_read_ns(v);
}

int sampler_nvlink_err_base(const struct gpu_view *v, const struct gpu_view *prev, struct nvlink_err_counts *base,
			    double *dt_s)
{
	uint64_t t0, t1 = nvlink_err_read_of(v);
	int n;
	*dt_s = 0;
	if (v->nvlink_err_base_ns) {
		t0 = v->nvlink_err_base_ns;
		n = (int)(v->nvlink_err_base_n < GPU_MAX_NVLINKS ? v->nvlink_err_base_n : GPU_MAX_NVLINKS);
		memcpy(base, v->nvlink_err_base, (size_t)n * sizeof(base[0]));
	} else if (prev && prev->up && !prev->s.lost) {
		t0 = nvlink_err_read_of(prev);
		n = (int)(prev->s.nvlink_n < GPU_MAX_NVLINKS ? prev->s.nvlink_n : GPU_MAX_NVLINKS);
		for (int l = 0; l < n; l++)
			sampler_nvlink_counts(&base[l], &prev->s.nvlink[l]);
	} else {
		return -1;
	}
	if (t1 <= t0)
		return -1;
	*dt_s = (double)(t1 - t0) / 1e9;
	return n;
}
