/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sweep_files.h - the result directory of `gpuctl slurm sweep` (docs/slurm.md,
 * "Fleet sweep"): DIR/nodes/NODE.json (a node's result), DIR/logs/NODE.out
 * (its job's log); reading the results into the fleet, listing them for
 * --gather, loading a fleet.json for --compare, and --drain's decision for one
 * node (scontrol); and the sweep's calls to Slurm (sinfo, scontrol show
 * hostnames, sbatch, squeue, scancel). The command (cmd/slurm_sweep.c)
 * parses, calls, waits and prints.
 */
#ifndef GPUCTL_SLURM_SWEEP_FILES_H
#define GPUCTL_SLURM_SWEEP_FILES_H

#include <stdbool.h>
#include <stddef.h>

#include "slurm/fleet.h"
#include "slurm/node.h"
#include "slurm/sweep.h"

/* The caps of what the sweep reads whole (core/readfile.h): a node's result,
 * fleet.json (4096 nodes of 64 GPUs), a job's log. */
#define SWEEP_NODE_RESULT_MAX (16u << 20)
#define SWEEP_FLEET_MAX (512u << 20)
#define SWEEP_LOG_MAX (1u << 20)

/* The cap of a program's output the sweep reads. */
#define SWEEP_OUTPUT_MAX (64u << 20)

/* Runs argv (PATH searched), its stdout into *out (heap, NUL-terminated;
 * out NULL: thrown away; at most SWEEP_OUTPUT_MAX bytes), the first line of
 * its stderr into errline. Returns its exit status, or -1 (errline says why)
 * when it did not exit or wrote more than the cap. */
int sweep_spawn_read(char *const argv[], char **out, char *errline, size_t errlen);
/* The nodes to sweep: `scontrol show hostnames nodes` (nodes a host list),
 * else sinfo's (in partition, NULL: every node), as *n jobs (heap). EXIT_OK,
 * or with err EXIT_UNAVAILABLE (the program failed), EXIT_DATAERR (a bad
 * name), EXIT_SOFTWARE or EXIT_USAGE ("no node to sweep"). */
int sweep_list_nodes(const char *nodes, const char *partition, struct sweep_job **jobs, size_t *n, char *err,
		     size_t errlen);
/* scancel the job (its outcome is the next look's). */
void sweep_cancel(const struct sweep_job *j);
/* One look at the jobs of the sweep named name, results in dir: squeue,
 * then each job not yet over stepped (sweep_job_step), cancelled past the
 * start timeout, or ended with its log's last line. EXIT_OK, or
 * EXIT_UNAVAILABLE with err (squeue failed). */
int sweep_poll(const char *dir, const char *name, struct sweep_job *jobs, size_t n, long long waited_ns,
	       long long start_timeout_ns, char *err, size_t errlen);

/* Told one line (no newline) about a file that is skipped or a node that failed. */
typedef void (*sweep_warn_fn)(void *arg, const char *msg);

/* DIR, DIR/logs and DIR/nodes made (or there already). 0, or -1 with err
 * ("cannot create 'DIR/logs': why", or DIR/nodes). */
int sweep_dir_make(const char *dir, char *err, size_t errlen);
/* Removes the jobs' results left in DIR by an earlier sweep (not this one's). */
void sweep_results_forget(const char *dir, const struct sweep_job *jobs, size_t n);
/* Whether DIR/nodes/NODE.json is there. */
bool sweep_result_exists(const char *dir, const char *node);
/* The last line of DIR/logs/NODE.out ("" when there is none). */
void sweep_log_tail(const char *dir, const char *node, char *out, size_t len);
/* Adds every job's result (DIR/nodes/NODE.json of a DONE job) to f, set up
 * with fleet_init, and analyzes it: a job without one is added as not
 * started or failed, with its note; a result that cannot be read is that
 * node failed, told to warn ("node 'N': why"). EXIT_OK, or EXIT_SOFTWARE
 * with err (out of memory). */
int sweep_gather(struct fleet *f, const char *dir, const struct sweep_job *jobs, size_t n, sweep_warn_fn warn,
		 void *arg, char *err, size_t errlen);
/* --gather: one DONE job per DIR/nodes/NODE.json, sorted by node (heap, *n);
 * a file whose name is not one node's is skipped, told to warn. EXIT_OK, or
 * with err EXIT_NOINPUT (no such directory, no result in it) or EXIT_SOFTWARE. */
int sweep_jobs_from_dir(const char *dir, struct sweep_job **jobs, size_t *n, sweep_warn_fn warn, void *arg,
			char *err, size_t errlen);
/* --compare: a fleet.json into f. EXIT_OK, or with err EXIT_NOINPUT (cannot be
 * read) or EXIT_DATAERR (not a fleet.json: "'PATH': why"). */
int sweep_fleet_load(const char *path, struct fleet *f, char *err, size_t errlen);

enum sweep_drain_outcome {
	SWEEP_DRAIN_NONE,          /* its node does not call for a drain */
	SWEEP_DRAIN_OVER_CAP,      /* not drained: the cap is reached */
	SWEEP_DRAIN_LAST_OF_MODEL, /* not drained: the last node of its GPU model in service */
	SWEEP_DRAIN_BAD_NAME,      /* not drained: not one node's name */
	SWEEP_DRAIN_UNREADABLE,    /* not drained: scontrol show node failed (err) */
	SWEEP_DRAIN_FAILED,        /* scontrol update failed (err) */
	SWEEP_DRAIN_DRAINED,
	SWEEP_DRAIN_OTHERS,        /* left: drained by someone else (other) */
	SWEEP_DRAIN_ALREADY,       /* left: drained by a sweep for the same reason */
};

struct sweep_drain_result {
	enum sweep_drain_outcome outcome;
	char reason[SLURM_REASON_LEN]; /* the sweep's reason (all but NONE) */
	char other[SLURM_REASON_LEN];  /* OTHERS: the node's reason as Slurm has it (anyone's words) */
	char err[400];
};

/* --drain for f's node i, planned `plan` by fleet_drain_plan: reads the node
 * (scontrol show node) and drains it as the health-check hook does
 * (fleet_drain_decide, scontrol update). */
void sweep_drain_node(const struct fleet *f, size_t i, enum fleet_drain_plan plan, struct sweep_drain_result *r);

#endif
