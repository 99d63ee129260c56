/* SPDX-License-Identifier: Apache-2.0 */
/*
 * idle.h - idle allocations: a running job whose GPUs' SM activity (NVML
 * GPM, gpu_sample's prof_sm_active_pct) stays under a threshold for a window
 * (docs/pool.md, "Idle allocations"). Pure: the caller gives the time, so the
 * state machine is tested with an injected clock.
 *
 * A job's observation is the highest SM activity of its GPUs: it is idle only
 * when every GPU it holds is; a job on a MIG slice is observed by its GPU
 * instance's own figure (gpu_mig's prof_sm_active_pct). An observation
 * without a figure (a GPU without GPM, a GPU that could not be read, an
 * instance that is gone) never counts as idle: it ends the idle stretch, so
 * an older GPU never flags.
 */
#ifndef GPUCTL_POOL_IDLE_H
#define GPUCTL_POOL_IDLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct snapshot;

struct idle_params {
	double threshold_pct;   /* idle: SM activity strictly below this (default 5) */
	uint64_t window_ns;     /* for at least this long (default 30 min); 0: never flags */
};

#define IDLE_DEFAULT_THRESHOLD_PCT 5.0
#define IDLE_DEFAULT_WINDOW_NS (30ull * 60 * 1000000000ull)

struct idle_watch {
	bool below;             /* the last observation was under the threshold */
	uint64_t since_ns;      /* the first observation of this stretch under it */
	bool flagged;           /* below for the window: an idle allocation */
};

/* One observation at now_ns: have = false when the figure is n/a. Returns
 * whether the job is an idle allocation now. Observations with a time before
 * the stretch began (a clock stepped back) restart it. */
bool idle_observe(struct idle_watch *w, const struct idle_params *p, uint64_t now_ns, bool have, double sm_pct);

/* The job's observation from a snapshot: its GPUs (n indexes) -> the highest
 * SM activity, true; false when any GPU has none (n/a, not up, not in the
 * snapshot), or the samples are older than not_before_ns (the job's start). */
bool idle_job_sample(const struct snapshot *snap, const unsigned *gpus, unsigned n, uint64_t not_before_ns,
		     double *sm_pct);

/* The same for a job on MIG GPU instance gi of GPU gpu: the instance's SM
 * activity, false when it has none (n/a, the GPU not up, no such instance,
 * samples older than not_before_ns). */
bool idle_mig_sample(const struct snapshot *snap, unsigned gpu, unsigned gi, uint64_t not_before_ns, double *sm_pct);

/* "idle allocation: SM activity < 5% for 30m": the warning, and the reason
 * recorded when the pool ends such a job. */
void idle_describe(const struct idle_params *p, char *out, size_t len);

#endif
