/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_clock.h - the wall clock and the sort the small timing programs in
 * bench/ share (jscan_bench.c, api_render_bench.c). Header only.
 */
#ifndef GPUCTL_BENCH_CLOCK_H
#define GPUCTL_BENCH_CLOCK_H

#include <time.h>

static inline double bench_now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* qsort's comparison for doubles, ascending. */
static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

#endif
