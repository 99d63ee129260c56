/* SPDX-License-Identifier: Apache-2.0 */
/* slurm_sweep_int.h - what the two files of `gpuctl slurm sweep` share:
 * slurm_sweep.c (options, submitting, waiting, the fleet's reports, drain,
 * compare) and slurm_sweep_node.c (writing files, --run-node).  Running programs,
 * the result directory and the Slurm calls: slurm/sweep_files.h. */
#ifndef GPUCTL_CMD_SLURM_SWEEP_INT_H
#define GPUCTL_CMD_SLURM_SWEEP_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "cmd.h"
#include "slurm/sweep_files.h" /* sweep_spawn_read */

#define CMD_NAME "slurm sweep"
#define SEC 1000000000LL

extern const char *const sweep_levels[]; /* --level's values, NULL-terminated */
enum { LEVEL_HEALTH, LEVEL_DIAG1, LEVEL_DIAG2, LEVEL_DIAG3, LEVEL_BENCH_QUICK };

struct sweep_args {
	const char *partition, *nodes, *out, *gpuctl, *node, *operand[2];
	int level;
	bool drain, json, compare, run_node, gather;
	double threshold;
	long long start_timeout_ns, timeout_ns, window_ns;
	unsigned noperands;
	size_t max_drain; /* --max-drain; 0: fleet_drain_cap_default */
};


/* Writes path atomically (path.tmp, then rename) with writer(arg, FILE*). 0, or -1 with errno. */
int sweep_write_file(const char *path, void (*writer)(const void *, FILE *), const void *arg);
/* A JSON document, indented (a writer for sweep_write_file). */
void sweep_write_json(const void *doc, FILE *f);
/* --run-node: this node's result into DIR/nodes/NODE.json; an exit code. */
int sweep_run_node(struct cmd_ctx *ctx, const struct sweep_args *a);

#endif
