/* SPDX-License-Identifier: Apache-2.0 */
/*
 * leakwatch.h - the agent's GPU memory-leak watch (pure: no clock, no I/O).
 *
 * Each tick the agent hands it the snapshot; for every GPU whose sample is
 * new it records each process's GPU memory at the sampler's timestamp
 * (gpu_view.last_ok_ns) and judges the process with leak_detect()
 * (src/health/leak.h) over the last window of samples.
 *
 * A process is identified by GPU, pid, uid, comm and, where the caller can
 * tell it (start_fn: /proc/PID/stat's start time on the host), its start
 * time. A process missing from a fresh process list of its GPU is forgotten
 * at once, so a pid that comes back (the same program restarted, or a reused
 * pid) starts a new history. The
 * table holds at most LEAKWATCH_MAX processes; one that does not fit is not
 * watched and is counted in `untracked`. Samples are kept at least
 * window / (LEAKWATCH_RING / 2) apart, so the ring spans up to two windows
 * whatever the sampling interval.
 */
#ifndef GPUCTL_LEAKWATCH_H
#define GPUCTL_LEAKWATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "health/health.h"
#include "health/leak.h"
#include "device/snapshot.h"

#define LEAKWATCH_MAX 256
#define LEAKWATCH_RING 64
#define LEAKWATCH_RULE_ID "process-memory-leak"

struct leakwatch_proc {
	bool used, seen;
	unsigned gpu;
	uint32_t pid, uid;
	uint64_t start;                /* start identity, 0 = unknown */
	char comm[64], user[32];
	uint64_t last_ns, last_bytes;  /* the newest sample (stored in the ring or not) */
	unsigned n, head;              /* ring: stored samples, next write position */
	struct leak_sample ring[LEAKWATCH_RING];
	struct leak_result res;        /* the last judgement */
};

struct leakwatch {
	struct leak_params params;
	uint64_t window_ns;
	uint64_t gpu_t_ns[GPU_MAX_GPUS]; /* sample time of each GPU's last process list fed */
	unsigned tracked;
	uint64_t untracked;            /* process sightings that found the table full */
	struct leakwatch_proc t[LEAKWATCH_MAX];
};

/* One process the watch flags. */
struct leakwatch_leak {
	unsigned gpu;
	uint32_t pid;
	char comm[64], user[32];
	double rate;                   /* bytes/s, least-squares slope */
	double window_s;               /* span of the samples judged */
	uint64_t bytes;                /* GPU memory now */
};

/* p NULL: leak_params_default(). The window is p->min_window_s. */
void leakwatch_init(struct leakwatch *w, const struct leak_params *p);
/* A new watch (leakwatch_init'ed; free() it), or NULL without memory. Its
 * 300 KB table stays untouched, so not resident, until processes fill it. */
struct leakwatch *leakwatch_new(const struct leak_params *p);
/* The start identity of a live pid (any value that changes when the pid is
 * reused), or 0 when it cannot be told. */
typedef uint64_t (*leakwatch_start_fn)(void *arg, uint32_t pid);
/* Feeds one snapshot (GPUs down, or whose sample is not newer than the last
 * fed, are skipped). start_fn may be NULL (identity without start time). */
void leakwatch_update(struct leakwatch *w, const struct snapshot *snap, leakwatch_start_fn start_fn, void *arg);
/* The processes flagged now, by GPU then pid; returns how many (at most max written). */
unsigned leakwatch_leaks(const struct leakwatch *w, struct leakwatch_leak *out, unsigned max);
/* Adds a WARN finding (subsystem processes, rule LEAKWATCH_RULE_ID, action none) per
 * leak to its GPU's entity in rep and raises the verdicts accordingly. */
void leakwatch_report(const struct leakwatch_leak *leaks, unsigned n, struct health_report *rep);

#endif
