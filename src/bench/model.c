/* SPDX-License-Identifier: Apache-2.0 */
/* model.c - see model.h. */
#include "model.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const metric_names[BM_METRIC_COUNT] = {
	"bandwidth", "tflops", "gflops", "latency", "busbw", "rate", "time",
};
static const char *const metric_units[BM_METRIC_COUNT] = {
	"GB/s", "TFLOP/s", "GFLOP/s", "ns", "GB/s", "M/s", "us",
};
static const char *const status_names[BS_STATUS_COUNT] = { "ok", "low", "failed", "skipped" };

const char *bench_metric_name(enum bench_metric m)
{
	return (unsigned)m < BM_METRIC_COUNT ? metric_names[m] : "?";
}

const char *bench_metric_unit(enum bench_metric m)
{
	return (unsigned)m < BM_METRIC_COUNT ? metric_units[m] : "?";
}

int bench_metric_parse(const char *s, enum bench_metric *out)
{
	for (int i = 0; i < BM_METRIC_COUNT; i++)
		if (s && strcmp(s, metric_names[i]) == 0) {
			*out = (enum bench_metric)i;
			return 0;
		}
	return -1;
}

const char *bench_status_name(enum bench_status s)
{
	return (unsigned)s < BS_STATUS_COUNT ? status_names[s] : "?";
}

int bench_status_parse(const char *s, enum bench_status *out)
{
	for (int i = 0; i < BS_STATUS_COUNT; i++)
		if (s && strcmp(s, status_names[i]) == 0) {
			*out = (enum bench_status)i;
			return 0;
		}
	return -1;
}

void bench_result_clear(struct bench_result *r)
{
	memset(r, 0, sizeof(*r));
	r->gpu = -1;
	r->peer = -1;
	r->ngpus = 1;
	stats_clear(&r->time_ms);
	stats_clear(&r->value);
	r->scale = NAN;
	r->algbw_gbs = NAN;
	r->limit = NAN;
	r->ratio = NAN;
	r->min_ratio = NAN;
	r->max_err = NAN;
	r->gflops_per_watt = NAN;
	struct bench_telemetry *t = &r->tel;
	t->window_s = t->sm_clock_mhz_min = t->sm_clock_mhz_max = t->mem_clock_mhz_min = NAN;
	t->power_w_avg = t->power_w_max = t->temp_c_max = t->temp_mem_c_max = t->energy_j = NAN;
	t->test_s = NAN;
	for (unsigned k = 0; k < BENCH_TEL_NGPM; k++)
		t->gpm_pct[k] = NAN;
}

void bench_run_init(struct bench_run *run)
{
	memset(run, 0, sizeof(*run));
	run->schema_version = BENCH_SCHEMA_VERSION;
	run->duration_s = NAN;
}

void bench_run_free(struct bench_run *run)
{
	free(run->r);
	run->r = NULL;
	run->n = run->cap = 0;
}

struct bench_result *bench_run_add(struct bench_run *run, const char *suite, const char *test, const char *variant)
{
	if (run->n == run->cap) {
		size_t cap = run->cap ? run->cap * 2 : 32;
		struct bench_result *nr = realloc(run->r, cap * sizeof(*nr));
		if (!nr)
			return NULL;
		run->r = nr;
		run->cap = cap;
	}
	struct bench_result *r = &run->r[run->n++];
	bench_result_clear(r);
	snprintf(r->suite, sizeof(r->suite), "%s", suite ? suite : "");
	snprintf(r->test, sizeof(r->test), "%s", test ? test : "");
	snprintf(r->variant, sizeof(r->variant), "%s", variant ? variant : "");
	return r;
}

void bench_result_fail(struct bench_result *r, enum bench_status st, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->message, sizeof(r->message), fmt, ap);
	va_end(ap);
	r->status = st;
}

/* One sample's value in the metric's unit; NAN when it cannot be formed. */
static double sample_value(enum bench_metric m, double ms, double bytes, double flops, double scale)
{
	double s = ms * 1e-3;
	if (!(ms > 0.0))
		return NAN;
	switch (m) {
	case BM_BANDWIDTH: return bytes > 0 ? bytes / s / 1e9 : NAN;
	case BM_TFLOPS: return flops > 0 ? flops / s / 1e12 : NAN;
	case BM_GFLOPS: return flops > 0 ? flops / s / 1e9 : NAN;
	case BM_LATENCY_NS: return scale > 0 ? ms * scale : NAN;
	case BM_BUSBW: return bytes > 0 && scale > 0 ? bytes / s / 1e9 * scale : NAN;
	case BM_RATE: return scale > 0 ? scale / s / 1e6 : NAN;
	case BM_TIME_US: return ms * 1e3;
	default: return NAN;
	}
}

int bench_result_set_samples(struct bench_result *r, enum bench_metric metric, const double *samples_ms,
			     unsigned n, double bytes, double flops, double scale)
{
	r->metric = metric;
	if (!r->unit[0])
		snprintf(r->unit, sizeof(r->unit), "%s", bench_metric_unit(metric));
	r->bytes = bytes;
	r->flops = flops;
	r->scale = scale;
	if (n > BENCH_MAX_SAMPLES)
		n = BENCH_MAX_SAMPLES;
	r->nsamples = n;
	if (n)
		memcpy(r->samples_ms, samples_ms, n * sizeof(double));
	double vals[BENCH_MAX_SAMPLES];
	for (unsigned i = 0; i < n; i++) {
		vals[i] = sample_value(metric, samples_ms[i], bytes, flops, scale);
		if (isnan(vals[i])) {
			bench_result_fail(r, BS_FAILED, "sample %u unusable (time %.6g ms, %s not counted)", i,
					  samples_ms[i], metric == BM_TFLOPS || metric == BM_GFLOPS ? "flops" : "work");
			return -1;
		}
	}
	if (stats_compute(samples_ms, n, &r->time_ms) != 0 || stats_compute(vals, n, &r->value) != 0) {
		bench_result_fail(r, BS_FAILED, "no usable sample");
		return -1;
	}
	if (metric == BM_BUSBW)
		r->algbw_gbs = r->value.median / scale;
	return 0;
}

void bench_result_add_aux(struct bench_result *r, const char *name, double value, const char *unit)
{
	if (r->naux >= BENCH_MAX_AUX)
		return;
	struct bench_aux *a = &r->aux[r->naux++];
	snprintf(a->name, sizeof(a->name), "%s", name);
	a->value = value;
	snprintf(a->unit, sizeof(a->unit), "%s", unit ? unit : "");
}

double bench_result_aux(const struct bench_result *r, const char *name)
{
	for (unsigned i = 0; i < r->naux; i++)
		if (strcmp(r->aux[i].name, name) == 0)
			return r->aux[i].value;
	return NAN;
}

static bool str_match(const char *want, const char *have)
{
	return !want || !*want || strcmp(want, have) == 0;
}

const struct bench_result *bench_run_find(const struct bench_run *run, const char *suite, const char *test,
					  const char *variant, int gpu, uint64_t size_bytes)
{
	const struct bench_result *best = NULL;
	for (size_t i = 0; i < run->n; i++) {
		const struct bench_result *r = &run->r[i];
		if (!str_match(suite, r->suite) || !str_match(test, r->test) || !str_match(variant, r->variant))
			continue;
		if (gpu != -2 && r->gpu != gpu)
			continue;
		if (r->status != BS_OK && r->status != BS_LOW)
			continue;
		if (size_bytes == UINT64_MAX) {
			if (!best || r->size_bytes > best->size_bytes)
				best = r;
		} else if (r->size_bytes == size_bytes) {
			return r;
		}
	}
	return best;
}

void bench_count_status(const struct bench_run *run, size_t counts[BS_STATUS_COUNT])
{
	for (int s = 0; s < BS_STATUS_COUNT; s++)
		counts[s] = 0;
	for (size_t i = 0; i < run->n; i++)
		if ((unsigned)run->r[i].status < BS_STATUS_COUNT)
			counts[run->r[i].status]++;
}
