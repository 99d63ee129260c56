/* SPDX-License-Identifier: Apache-2.0 */
/*
 * slurm_req.h - the Slurm requests of the pool's control protocol (pure).
 *
 * The prolog/epilog (`gpuctl slurm job-start|job-end`) record a Slurm job's
 * GPUs with the agent, which accounts them like a pool job
 * (docs/slurm.md, "Protocol"):
 *   {"v": 1, "op": "slurm_start", "slurm_job": 42, "gpus": [0, 1], "uid": 1000, "user": "ann"}
 *   {"v": 1, "op": "slurm_end", "slurm_job": 42, "state": "done"}
 *   {"v": 1, "op": "slurm_show", "slurm_job": 42}
 * Every other op belongs to the pool's own parser (proto.h).
 */
#ifndef GPUCTL_SLURM_REQ_H
#define GPUCTL_SLURM_REQ_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum slurm_op { SLURM_OP_START = 1, SLURM_OP_END, SLURM_OP_SHOW };

#define SLURM_USER_LEN 32
#define SLURM_JOB_MAX 4294967294ull   /* Slurm job ids are 32-bit (NO_VAL excluded) */

struct slurm_req {
	enum slurm_op op;
	uint64_t job;                     /* Slurm job id, 1 .. SLURM_JOB_MAX */
	uint64_t gpu_mask;                /* start: the job's GPU indexes on this node */
	uint32_t uid;                     /* start: the job's user */
	char user[SLURM_USER_LEN + 1];    /* start: optional; "" = look the uid up */
	char state[16];                   /* end: "done" (default), "failed", "cancelled", "timeout" */
};

/* 1: a Slurm request, parsed into *out; 0: not a Slurm op (the pool's
 * parser takes it); -1: a Slurm op that is malformed, with a one-line message. */
int slurm_req_parse(const char *buf, size_t len, struct slurm_req *out, char *err, size_t errlen);
/* The request as JSON (what a client sends); NULL when out of memory. */
json_t *slurm_req_json(const struct slurm_req *r);

/* "0,1,3" or "0-3" or "" (no GPUs) -> bitmask, as Slurm's SLURM_JOB_GPUS lists them. 0 or -1. */
int slurm_gpu_list_parse(const char *s, uint64_t *mask, char *err, size_t errlen);

#endif
