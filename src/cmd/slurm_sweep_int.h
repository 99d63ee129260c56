/* SPDX-License-Identifier: Apache-2.0 */
/* slurm_sweep_int.h - what the two files of `gpuctl slurm sweep` share:
 * slurm_sweep.c (options, submitting, waiting, the fleet's reports, drain,
 * compare) and slurm_sweep_node.c (running programs, files, --run-node). */
#ifndef GPUCTL_CMD_SLURM_SWEEP_INT_H
#define GPUCTL_CMD_SLURM_SWEEP_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "cmd.h"

#define CMD_NAME "slurm sweep"
#define SEC 1000000000LL
/* The cap of a program's output the sweep reads (the files': slurm/sweep_files.h). */
#define SWEEP_OUTPUT_MAX (64u << 20)

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


/* Runs argv (PATH searched), its stdout into *out (heap, NUL-terminated;
 * out NULL: thrown away; at most SWEEP_OUTPUT_MAX bytes), the first line of
 * its stderr into errline. Returns its exit status, or -1 (errline says why)
 * when it did not exit or wrote more than the cap. */
int sweep_spawn_read(char *const argv[], char **out, char *errline, size_t errlen);
/* Writes path atomically (path.tmp, then rename) with writer(arg, FILE*). 0, or -1 with errno. */
int sweep_write_file(const char *path, void (*writer)(const void *, FILE *), const void *arg);
/* A JSON document, indented (a writer for sweep_write_file). */
void sweep_write_json(const void *doc, FILE *f);
/* --run-node: this node's result into DIR/nodes/NODE.json; an exit code. */
int sweep_run_node(struct cmd_ctx *ctx, const struct sweep_args *a);

#endif
