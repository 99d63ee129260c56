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

/* A fixed-size tracker the agent keeps: per (gpu, pid), a ring of samples. */
#define LEAK_MAX_TRACKED 256
#define LEAK_RING 64

struct leak_track {
	bool used;
	unsigned gpu;
	uint32_t pid;
	uint64_t last_seen_ns;
	unsigned n, head;     /* samples in the ring; next write position */
	struct leak_sample ring[LEAK_RING];
};

struct leak_tracker {
	struct leak_track t[LEAK_MAX_TRACKED];
};

/* Records one sample; a process not seen for forget_after_ns is dropped
 * (pass its sample time as now). Returns 0, or -1 when the table is full. */
int leak_tracker_add(struct leak_tracker *tr, unsigned gpu, uint32_t pid, uint64_t t_ns, uint64_t bytes);
/* Drops processes whose last sample is older than now_ns - forget_after_ns. */
void leak_tracker_expire(struct leak_tracker *tr, uint64_t now_ns, uint64_t forget_after_ns);
/* Judges one tracked process (samples in time order). Returns 0, or -1 if unknown. */
int leak_tracker_check(const struct leak_tracker *tr, unsigned gpu, uint32_t pid, const struct leak_params *p,
		       struct leak_result *out);

#endif
