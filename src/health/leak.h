/* SPDX-License-Identifier: Apache-2.0 */
/*
 * leak.h - GPU memory-leak detection over a window of per-process memory
 * samples (pure; the agent feeds it from the sampler's process lists).
 *
 * A process leaks when, over a window of at least min_window_s, its GPU
 * memory keeps growing: the least-squares slope is at least min_rate bytes/s,
 * the total growth at least min_growth bytes, and most steps do not go down
 * (a process that allocates and frees in cycles is not a leak).
 */
#ifndef GPUCTL_LEAK_H
#define GPUCTL_LEAK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct leak_sample {
	uint64_t t_ns;        /* when (any monotonic origin) */
	uint64_t bytes;       /* the process's GPU memory then */
};

struct leak_params {
	double min_window_s;      /* default 300 s */
	double min_rate;          /* bytes/s, default 1 MiB/min */
	double min_growth;        /* bytes over the window, default 256 MiB */
	double min_rising_share;  /* share of steps that do not decrease, default 0.8 */
	unsigned min_samples;     /* default 5 */
};

struct leak_result {
	bool leaking;
	bool enough_data;     /* window and sample count were sufficient to judge */
	double rate;          /* bytes/s, least-squares slope */
	double growth;        /* last - first, bytes */
	double window_s;
	double rising_share;  /* steps that did not decrease / steps */
};

void leak_params_default(struct leak_params *p);

/* Judges samples s[0..n) (in time order). p NULL = defaults. Returns 0, or -1
 * when the samples are not in time order (out->enough_data false). */
int leak_detect(const struct leak_sample *s, size_t n, const struct leak_params *p, struct leak_result *out);

#endif
