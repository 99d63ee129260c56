/* SPDX-License-Identifier: Apache-2.0 */
/* stats.c - see stats.h. */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

void stats_sort(double *x, size_t n)
{
	if (x && n > 1)
		qsort(x, n, sizeof(double), cmp_double);
}

void stats_clear(struct stats *out)
{
	out->n = 0;
	out->median = out->min = out->max = out->mean = NAN;
	out->stddev = out->p10 = out->p90 = out->spread_pct = NAN;
}

double stats_percentile_sorted(const double *sorted, size_t n, double p)
{
	if (!sorted || n == 0 || !(p >= 0.0 && p <= 100.0))
		return NAN;
	double rank = p / 100.0 * (double)(n - 1);
	size_t lo = (size_t)floor(rank);
	size_t hi = lo + 1 < n ? lo + 1 : lo;
	double frac = rank - (double)lo;
	return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

int stats_compute(const double *x, size_t n, struct stats *out)
{
	stats_clear(out);
	if (!x || n == 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return -1;
	double *s = malloc(n * sizeof(double));
	if (!s)
		return -1;
	memcpy(s, x, n * sizeof(double));
	stats_sort(s, n);

	double sum = 0.0;
	for (size_t i = 0; i < n; i++)
		sum += s[i];
	double mean = sum / (double)n;
	double ss = 0.0;
	for (size_t i = 0; i < n; i++)
		ss += (s[i] - mean) * (s[i] - mean);

	out->n = n;
	out->min = s[0];
	out->max = s[n - 1];
	out->median = stats_percentile_sorted(s, n, 50.0);
	out->p10 = stats_percentile_sorted(s, n, 10.0);
	out->p90 = stats_percentile_sorted(s, n, 90.0);
	out->mean = mean;
	out->stddev = n > 1 ? sqrt(ss / (double)(n - 1)) : 0.0;
	out->spread_pct = out->median != 0.0 ? 100.0 * (out->max - out->min) / fabs(out->median) : NAN;
	free(s);
	return 0;
}
