/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sweep.h - the state machine of `gpuctl slurm sweep` (pure: no clock, no
 * I/O; docs/slurm.md "Fleet sweep"): the nodes Slurm lists, one job per node,
 * and what each look at squeue and the result files makes of a job. The
 * command (cmd/slurm_sweep.c) runs sbatch, squeue and scancel and waits.
 */
#ifndef GPUCTL_SLURM_SWEEP_H
#define GPUCTL_SLURM_SWEEP_H

#include <stdbool.h>
#include <stddef.h>

#include "slurm/fleet.h"

enum sweep_job_state {
	SWEEP_JOB_PENDING,
	SWEEP_JOB_RUNNING,
	SWEEP_JOB_DONE,        /* its result file is there */
	SWEEP_JOB_FAILED,      /* sbatch failed, or it ended (or was cancelled running) without a result */
	SWEEP_JOB_NOT_STARTED, /* cancelled while still pending */
	SWEEP_JOB_NSTATES
};

struct sweep_job {
	char node[FLEET_NAME_LEN];
	char id[24];         /* Slurm's job id, "" if sbatch failed */
	enum sweep_job_state state;
	char note[200];      /* why it failed or did not start */
	char reason[64];     /* squeue's pending reason */
};

/* The nodes in text (`scontrol show hostnames` or `sinfo -h -N -o %N`: one a
 * line, its first word; a node sinfo lists once per partition is swept once),
 * as *n jobs (heap) in the listed order. Modifies text. Returns EXIT_OK, or
 * with err and no jobs EXIT_DATAERR (a name that is not one node's: "bad node
 * name 'x' from Slurm") or EXIT_SOFTWARE (out of memory). No node at all is
 * EXIT_OK with *n 0. */
int sweep_jobs_parse(char *text, struct sweep_job **jobs, size_t *n, char *err, size_t errlen);

/* sbatch --parsable's answer for j (rc its exit status, out its stdout,
 * err its stderr's first line): the job id ("ID" or "ID;cluster"), else
 * FAILED with the note "sbatch failed: ...". Returns true when it was submitted. */
bool sweep_job_submitted(struct sweep_job *j, int rc, const char *out, const char *err);

enum sweep_action {
	SWEEP_KEEP,   /* nothing to do */
	SWEEP_CANCEL, /* scancel it (pending past the start timeout: now NOT_STARTED) */
	SWEEP_ENDED,  /* gone from the queue without a result: FAILED; sweep_job_ended adds its log's last line */
};

/* One look at a job not yet DONE, FAILED or NOT_STARTED: squeue is `squeue -h
 * -n NAME -o "%i %T %r"`'s output, result whether its result file is there,
 * waited how long the sweep has waited. */
enum sweep_action sweep_job_step(struct sweep_job *j, const char *squeue, bool result, long long waited_ns,
				 long long start_timeout_ns);
/* The note of a job that ended without a result, with its log's last line (may be ""). */
void sweep_job_ended(struct sweep_job *j, const char *log_tail);
/* At the sweep's timeout: a job still pending becomes NOT_STARTED, one still
 * running FAILED, each with its note; returns true for such a job (cancel it). */
bool sweep_job_timeout(struct sweep_job *j, long long timeout_ns);

/* The sbatch command of one node's job (a job named name on node, its log
 * DIR/logs/NODE.out) running `GPUCTL slurm sweep --run-node` at level with
 * the health check's window; argv points into the struct. */
struct sweep_sbatch {
	char wrap[9000], outlog[4200];
	char *argv[20];
};
void sweep_sbatch_argv(struct sweep_sbatch *s, const char *gpuctl, const char *level, long long window_ns,
		       const char *dir, const char *partition, const char *name, const char *node);

/* How many jobs are in each state. */
void sweep_counts(const struct sweep_job *jobs, size_t n, size_t c[SWEEP_JOB_NSTATES]);

#endif
