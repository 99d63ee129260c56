/* SPDX-License-Identifier: Apache-2.0 */
/*
 * stats.h - summary statistics of timed samples (pure, no I/O).
 *
 * A benchmark figure is reported as its median with min, max and spread, so
 * a single slow or fast sample never becomes the result. Spread is
 * (max - min) / median in percent: how far apart the samples lie.
 */
#ifndef GPUCTL_STATS_H
#define GPUCTL_STATS_H

#include <stddef.h>

struct stats {
	size_t n;           /* samples summarised; 0 = nothing measured (all fields NAN) */
	double median, min, max, mean;
	double stddev;      /* sample standard deviation (n - 1); 0 for n == 1 */
	double p10, p90;    /* 10th and 90th percentiles */
	double spread_pct;  /* 100 * (max - min) / median; NAN when median is 0 */
};

/* Summarises x[0..n). x is not modified. Returns 0, or -1 when n == 0, x is
 * NULL, a sample is not finite, or memory runs out (out is then all NAN, n = 0). */
int stats_compute(const double *x, size_t n, struct stats *out);

/* Percentile p (0..100) of sorted[0..n) by linear interpolation between closest
 * ranks (the method of numpy's default); NAN when n == 0 or p is out of range. */
double stats_percentile_sorted(const double *sorted, size_t n, double p);

/* Sorts x[0..n) ascending in place. */
void stats_sort(double *x, size_t n);

/* Sets every field to NAN and n to 0. */
void stats_clear(struct stats *out);

#endif
