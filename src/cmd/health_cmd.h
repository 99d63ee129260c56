/* SPDX-License-Identifier: Apache-2.0 */
/*
 * health_cmd.h - what `gpuctl health` shares with `gpuctl diag -r 1..4`:
 * collecting two snapshots with the XID events between them, evaluating the
 * rules, and printing the result as a table or JSON (docs/health.md).
 */
#ifndef GPUCTL_HEALTH_CMD_H
#define GPUCTL_HEALTH_CMD_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "cmd.h"
#include "health/health.h"

struct health_run {
	struct health_rules rules;
	struct snapshot prev, now;  /* their arrays: views and links below */
	bool have_prev;          /* false with --window 0: rate rules are not evaluated */
	bool xids_collected;     /* the backend delivered events during the window */
	double window_s;
	struct health_opts opts;
	struct health_report rep;
	uint64_t mask;           /* selected GPUs */
	/* prev's and now's arrays, room for every GPU (a one-shot command's, on the heap) */
	struct gpu_view views[2][GPU_MAX_GPUS];
	struct gpu_link links[2][GPU_MAX_GPUS][GPU_MAX_GPUS];
	struct snapshot_tables tables[2];
};

/* Loads the rules (rules_path NULL: the shipped ones), takes a snapshot,
 * watches XID events for window_s seconds, takes a second one and evaluates.
 * hr->opts must be filled before; hr->mask is set from id_spec (NULL: all).
 * Prints a one-line error and returns an exit code on failure, else EXIT_OK. */
int health_run_collect(struct cmd_ctx *ctx, const char *cmd, struct health_run *hr, double window_s,
		       const char *rules_path, const char *id_spec);

/* Worst verdict over the selected GPUs and the system entry. */
enum health_verdict health_run_verdict(const struct health_run *hr);
/* The exit code for a verdict: 0 PASS, 1 WARN, 2 FAIL, 69 nothing could be checked. */
int health_exit_code(enum health_verdict v);

/* The table: one row per selected GPU, a column per subsystem, then the findings. */
void health_print_table(const struct cmd_ctx *ctx, const struct health_run *hr, FILE *out);
/* {"verdict", "action", "window_s", "system": {...}, "gpus": [...]} for the selected GPUs. */
json_t *health_report_json(const struct health_run *hr);

#endif
