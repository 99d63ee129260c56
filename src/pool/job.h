/* SPDX-License-Identifier: Apache-2.0 */
/*
 * job.h - one job of the pool as the agent keeps it (in memory and, row for
 * row, in SQLite: store.h), its states and its accounting.
 *
 * States: pending -> starting -> running -> done | failed | cancelled |
 * timeout | lost; pending -> cancelled. "starting" is written before the
 * shim is forked and "running" after, so that a crash between the two is
 * recognised on restart (pool_recover).
 */
#ifndef GPUCTL_POOL_JOB_H
#define GPUCTL_POOL_JOB_H

#include <stdbool.h>
#include <stdint.h>

#include "device/gpu.h"
#include "pool/acct.h"
#include "pool/idle.h"
#include "pool/proto.h"

enum job_state {
	JOB_PENDING = 0,
	JOB_STARTING,
	JOB_RUNNING,
	JOB_DONE,       /* exited 0 */
	JOB_FAILED,     /* exited non-zero, killed by a signal, or could not start */
	JOB_CANCELLED,
	JOB_TIMEOUT,    /* killed at its time limit */
	JOB_LOST,       /* its shim vanished without an exit record (reboot, shim killed) */
	JOB_STATE_COUNT
};

const char *job_state_name(enum job_state s);
/* -1 when unknown */
int job_state_parse(const char *name);
static inline bool job_state_ended(enum job_state s) { return s >= JOB_DONE; }

struct pool_job {
	uint64_t id;
	char name[PROTO_NAME_LEN + 1];
	uint32_t uid, gid;
	char user[33];
	enum job_state state;
	char reason[200];            /* why it waits, or how it ended */
	int priority;
	uint64_t submit_ns, start_ns, end_ns;
	uint64_t time_limit_ns;      /* 0: none */
	uint64_t after;              /* job id or 0 */
	/* request */
	unsigned req_gpus;
	uint64_t req_mask;
	bool req_nvlink;
	uint64_t req_mem;
	char mig_profile[MIG_PROFILE_LEN];
	bool shell;
	char *spec_json;             /* {"argv": [...], "env": [...], "cwd": "..."} (heap) */
	/* placement */
	uint64_t gpu_mask;           /* whole GPUs held */
	int mig_gpu, mig_gi;         /* slice held, -1 when none */
	char devices[GPU_MAX_GPUS * 41 + 8]; /* CUDA_VISIBLE_DEVICES as given */
	/* processes */
	int shim_pid;
	uint64_t shim_start_ticks;   /* /proc/PID/stat starttime: pid reuse check */
	int job_pid;                 /* leader of the job's process group */
	char cgroup[256];            /* the job's cgroup directory, "" when none */
	char boot_id[40];            /* boot the job started in */
	/* end */
	int exit_code;               /* -1 when none */
	int exit_signal;             /* 0 when none */
	/* run time bookkeeping (not stored) */
	uint64_t term_sent_ns;       /* cancel: when it was asked (SIGKILL follows after the grace) */
	bool term_delivered;         /* SIGTERM sent to the job's process group */
	enum job_state cancel_as;    /* JOB_CANCELLED or JOB_TIMEOUT once asked to stop */
	uint64_t est_start_ns;       /* pending: the scheduler's estimate, 0 unknown */
	uint64_t log_punched[2];     /* stdout, stderr: dropped up to here (joblog_trim) */
	struct idle_watch idle;      /* idle allocation (idle.h) */
	char idle_note[96];          /* its warning while flagged ("idle allocation: ..."), else "" */
	char stop_note[96];          /* why the pool itself stopped it (cancel_as CANCELLED), else "" */
	struct acct_job acct;
};

#endif
