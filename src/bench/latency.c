/* SPDX-License-Identifier: Apache-2.0 */
/* latency.c - see latency.h. */
#include "latency.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static bool is_pow2(uint64_t x) { return x && !(x & (x - 1)); }

uint64_t bench_pow2_floor(uint64_t x)
{
	uint64_t p = 1;
	if (!x)
		return 0;
	while (p <= x / 2)
		p *= 2;
	return p;
}

unsigned bench_latency_sweep(uint64_t lo, uint64_t hi, uint64_t dense_from, uint64_t *out, unsigned max)
{
	if (!is_pow2(lo) || !is_pow2(hi) || lo > hi)
		return 0;
	unsigned n = 0, octave = 0;
	for (uint64_t ws = lo; n < max; ws *= 2, octave++) {
		if (octave % 2 == 0 || ws >= dense_from || ws == hi)
			out[n++] = ws;
		if (ws == hi)
			break;
	}
	return n;
}

enum bench_lat_level bench_latency_level(uint64_t ws, uint64_t l2_bytes)
{
	if (!l2_bytes)
		return BLAT_NONE;
	if (ws <= BENCH_LAT_L1_MAX_WS)
		return BLAT_L1;
	if (ws >= BENCH_LAT_L2_MIN_WS && ws <= l2_bytes / 4)
		return BLAT_L2;
	if (ws / BENCH_LAT_HBM_L2S >= l2_bytes)
		return BLAT_HBM;
	return BLAT_NONE;
}

const char *bench_lat_level_name(enum bench_lat_level l)
{
	switch (l) {
	case BLAT_L1: return "l1";
	case BLAT_L2: return "l2";
	case BLAT_HBM: return "hbm";
	default: return "";
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median_of(double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

unsigned bench_latency_steps(const uint64_t *ws, const double *ns, unsigned n, double rise,
			     struct bench_lat_step *out, unsigned max)
{
	double *vals = n ? malloc(n * sizeof(*vals)) : NULL;
	if (n && !vals)
		return 0;
	unsigned nsteps = 0, nv = 0;
	double base = NAN;
	for (unsigned i = 0; i <= n; i++) {
		bool ok = i < n && isfinite(ns[i]) && ns[i] > 0;
		if (i < n && !ok)
			continue;
		bool close_step = nv && (i == n || ns[i] > rise * base);
		if (close_step) {
			out[nsteps].ns = median_of(vals, nv);
			out[nsteps].npoints = nv;
			nsteps++;
			nv = 0;
		}
		if (i == n || nsteps == max)
			break;
		if (nv == 0) {
			base = ns[i];
			out[nsteps].first_ws = ws[i];
		}
		out[nsteps].last_ws = ws[i];
		vals[nv++] = ns[i];
	}
	free(vals);
	return nsteps;
}
