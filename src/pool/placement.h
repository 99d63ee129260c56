/* SPDX-License-Identifier: Apache-2.0 */
/*
 * placement.h - choosing GPUs for a job from the topology (pure).
 *
 * A set's score is the sum of its pairs' scores (device/topo_score.h).
 * The best-effort policy takes the highest-scoring eligible set and, among
 * equals, the one that leaves the best-connected GPUs free for later jobs.
 */
#ifndef GPUCTL_PLACEMENT_H
#define GPUCTL_PLACEMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "device/gpu.h"
#include "device/topo_score.h"

/* What the scheduler knows of each GPU at the moment of placing. */
struct place_gpu {
	bool busy;               /* held by another pool job */
	bool unhealthy;          /* health verdict FAIL */
	bool foreign;            /* runs a process the pool did not start */
	bool lost;               /* not answering */
	bool mig_mode;           /* in MIG mode: given out by slices only, never whole */
	uint64_t mem_free_bytes; /* 0 with mem_known false when not reported */
	bool mem_known;
	uint64_t mem_total_bytes; /* 0: not reported */
	/* who holds it, for the reasons: the pool job (for a Slurm job, the pool's
	 * record of it and its Slurm id), the first foreign process; 0 unknown */
	uint64_t held_by_job, held_by_slurm;
	unsigned foreign_pid;
};

struct place_request {
	unsigned count;          /* GPUs wanted (>= 1) */
	bool need_nvlink;        /* every pair of the set must be NVLink-connected */
	uint64_t mem_per_gpu;    /* bytes of free memory each GPU must have (0: any) */
	uint64_t allowed_mask;   /* bit i set: GPU i may be used (--gpu-ids); 0: all */
};

struct place_result {
	unsigned count;
	unsigned gpu[GPU_MAX_GPUS]; /* chosen indexes, ascending */
	unsigned score;          /* sum of pair scores of the set */
	char reason[200];        /* why nothing fits now (when place_choose returns false) */
};

/*
 * Chooses GPUs among n for the request. link is the n x n matrix (row stride
 * GPU_MAX_GPUS, as in struct snapshot). Returns true with the set in *out, or
 * false with out->reason: what it waits for and every allowed GPU that is
 * not free with why ("waiting for 2 free GPUs: GPUs 0-3 held by pool job 12;
 * GPU 5 runs process 4242, which the pool did not start"), or only the GPUs
 * when none is merely busy ("GPU 3 unhealthy"). Deterministic for the same input.
 */
bool place_choose(unsigned n, const struct gpu_link link[][GPU_MAX_GPUS], const struct place_gpu *gpus,
		  const struct place_request *req, struct place_result *out);

/* True when the request could ever be met on this server, idle and healthy;
 * else false with a reason (too many GPUs, no NVLink set of that size). */
bool place_feasible(unsigned n, const struct gpu_link link[][GPU_MAX_GPUS], const struct place_request *req,
		    char *reason, size_t reason_len);
/* place_feasible on the GPUs as they are built: also false when too few of
 * them are out of MIG mode or have the memory asked for in all (a job that
 * could never start is refused at submission, not left pending). */
bool place_possible(unsigned n, const struct gpu_link link[][GPU_MAX_GPUS], const struct place_gpu *gpus,
		    const struct place_request *req, char *reason, size_t reason_len);

#endif
