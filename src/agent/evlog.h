/* SPDX-License-Identifier: Apache-2.0 */
/*
 * evlog.h - what the agent's own log says as it happens (docs/agent.md,
 * "The log"): a GPU that stops answering (fell off the bus, hung) or comes
 * back, an XID, a pool job that starts or ends. Pure: each tick's snapshot
 * (and the pool's job list) is compared with what was seen before, and the
 * new lines are handed to a callback; the pool reports a job's start and end
 * through its on_job hook. The agent queues the lines for its command to
 * print (agent_take_log), since no layer below cmd prints.
 */
#ifndef GPUCTL_AGENT_EVLOG_H
#define GPUCTL_AGENT_EVLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "device/snapshot.h"
#include "health/health.h"

#define EVLOG_LINE 512

typedef void (*evlog_emit)(void *arg, const char *line);

struct evlog_gpu {
	bool seen, up;
	unsigned nxid;
	struct { uint64_t code, count; } xid[32];
};

struct evlog {
	struct evlog_gpu gpu[GPU_MAX_GPUS];
};

/* Compares a snapshot with what was seen; emits one line per GPU that went
 * down ("GPU 3 (00000000:18:00.0) stopped answering: REASON") or came back,
 * and per XID code whose count grew ("GPU 3: XID 79 (GPU_HAS_FALLEN_OFF_THE_BUS:
 * meaning), 1 new, 2 in all"); rules (NULL: none) names the XID. The first call
 * only records (a GPU down at start is said once, as such). Returns the lines emitted. */
unsigned evlog_gpus(struct evlog *st, const struct snapshot *s, const struct health_rules *rules, evlog_emit emit,
		    void *arg);

/* A pool job that started or ended, as the pool's on_job hook reports it. */
struct evlog_job {
	uint64_t id;
	const char *user, *name;
	const char *state;  /* "running" when it starts; "done", "failed", "cancelled", "timeout", "lost" */
	uint64_t gpus;      /* whole GPUs held (bit i = GPU i) */
	int mig_gpu, mig_gi; /* the MIG slice held, -1 when none */
	int exit_code, exit_signal; /* -1 / 0 when none */
	const char *reason; /* how it ended ("" none) */
};
/* "job 12 (alice: train) started on GPUs 0,1" or "job 12 (alice: train)
 * ended: failed, exit 3 (REASON)"; the line's length. */
int evlog_job_line(const struct evlog_job *j, char *line, size_t len);

#endif
