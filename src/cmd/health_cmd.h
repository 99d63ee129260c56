/* SPDX-License-Identifier: Apache-2.0 */
/*
 * health_cmd.h - what `gpuctl health` shares with `gpuctl diag -r 1..4` and
 * `slurm health-check`: a health run (src/health/run.h) with the command's
 * backend, printed as a table or JSON (docs/health.md).
 */
#ifndef GPUCTL_HEALTH_CMD_H
#define GPUCTL_HEALTH_CMD_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "cmd.h"
#include "health/run.h"

struct health_take { struct cmd_ctx *ctx; const char *cmd; }; /* health_run_collect's snapshots */

/* health_run_gather (src/health/run.h) with the command's backend and
 * snapshots; hr->opts must be filled before; hr->mask is set from id_spec (NULL: all).
 * Prints a one-line error and returns an exit code on failure, else EXIT_OK. */
int health_run_collect(struct cmd_ctx *ctx, const char *cmd, struct health_run *hr, double window_s,
		       const char *rules_path, const char *id_spec);

/* The table: one row per selected GPU, a column per subsystem, then the findings. */
void health_print_table(const struct cmd_ctx *ctx, const struct health_run *hr, FILE *out);
/* {"verdict", "action", "window_s", "system": {...}, "gpus": [...]} for the selected GPUs. */
json_t *health_report_json(const struct health_run *hr);

#endif
