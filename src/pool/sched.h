/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sched.h - one scheduling pass of the GPU pool (pure: no clock, no I/O).
 *
 * Pending jobs are ordered by priority (higher first), then submission time.
 * The head of the queue gets the best set placement.h finds. When it cannot
 * start, it gets a reservation: the GPUs and the time at which running jobs'
 * time limits free enough of them. Later jobs may start ahead of it (first-
 * fit backfill) only on GPUs outside that reservation, or, with a time limit,
 * when they end before the reservation starts. A job without a time limit
 * never backfills onto reserved GPUs, so the head is never delayed past its
 * estimated start. Per-user limits cap the GPUs a user holds at once.
 */
#ifndef GPUCTL_SCHED_H
#define GPUCTL_SCHED_H

#include <stdbool.h>
#include <stdint.h>
#include "pool/placement.h"

#define SCHED_REASON_LEN 200

struct sched_job {
	uint64_t id;
	int priority;
	uint32_t uid;
	uint64_t submit_ns;
	uint64_t time_limit_ns;      /* 0: none */
	uint64_t after_job;          /* 0: none; else wait until that job has ended */
	struct place_request req;    /* count 0 with mig_profile set: a MIG slice */
	char mig_profile[MIG_PROFILE_LEN]; /* "1g.18gb", or "" */
};

struct sched_running {
	uint64_t id;
	uint32_t uid;
	uint64_t gpu_mask;           /* whole GPUs held */
	uint64_t end_ns;             /* start + time limit; UINT64_MAX when none */
	int mig_gpu, mig_gi;         /* MIG slice held, -1 when none */
	uint64_t slurm_job;          /* a Slurm job the pool recorded: its Slurm id (reasons name it); else 0 */
};

/* A MIG instance that exists on a GPU (the pool never changes the layout). */
struct sched_mig {
	unsigned gpu;
	unsigned gi_id;
	char profile[MIG_PROFILE_LEN];
	char uuid[96];
};

struct sched_input {
	uint64_t now_ns;
	unsigned n;                                  /* GPUs */
	const struct gpu_link (*link)[GPU_MAX_GPUS];
	struct place_gpu gpu[GPU_MAX_GPUS];          /* busy and held_by_* are derived from running[] */
	const struct sched_job *pending;             /* any order */
	unsigned npending;
	const struct sched_running *running;
	unsigned nrunning;
	const struct sched_mig *mig;
	unsigned nmig;
	/* the jobs whose dependency is met (ended); has_ended(id) */
	bool (*has_ended)(uint64_t job_id, void *arg);
	void *arg;
	unsigned max_gpus_per_user;                  /* 0: no limit */
};

struct sched_decision {
	uint64_t job_id;
	bool start;
	struct place_result place;                   /* GPUs to give (when start) */
	int mig_index;                               /* index into input mig[], or -1 */
	bool backfilled;                             /* started ahead of a blocked head */
	uint64_t est_start_ns;                       /* when blocked: estimate, 0 unknown */
	char reason[SCHED_REASON_LEN];               /* why it waits */
};

/* Decides, for every pending job, start now (with its GPUs) or wait (with a
 * reason). out must hold npending entries, in the queue's order. Returns the
 * number of jobs to start. */
unsigned sched_pass(const struct sched_input *in, struct sched_decision *out);

/* Queue order: negative when a goes before b. */
int sched_job_order(const struct sched_job *a, const struct sched_job *b);

#endif
