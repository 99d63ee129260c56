/* SPDX-License-Identifier: Apache-2.0 */
/*
 * run.h - one health run, what `gpuctl health`, `diag -r 1..4` and
 * `slurm health-check` share: the rules loaded, a snapshot, the XID events
 * and the processes' GPU memory watched through a window, a second snapshot,
 * the rules evaluated (docs/health.md). The commands print it (cmd/health.c).
 */
#ifndef GPUCTL_HEALTH_RUN_H
#define GPUCTL_HEALTH_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "device/gpu.h"
#include "health/health.h"

struct health_run {
	struct health_rules rules;
	struct snapshot prev, now;  /* their arrays: views and links below */
	bool have_prev;          /* false with --window 0: rate rules are not evaluated */
	bool xids_collected;     /* the backend delivered events during the window */
	double window_s;
	struct health_opts opts;
	struct health_report rep;
	uint64_t mask;           /* selected GPUs (health_run_gather: all) */
	/* prev's and now's arrays, room for every GPU (a one-shot command's, on the heap) */
	struct gpu_view views[2][GPU_MAX_GPUS];
	struct gpu_link links[2][GPU_MAX_GPUS][GPU_MAX_GPUS];
	struct snapshot_tables tables[2];
};

/* Takes a snapshot of every GPU (a heap one the caller frees), or returns
 * NULL with *rc an exit code, having said why itself. */
typedef struct snapshot *(*health_snapshot_fn)(void *arg, int *rc);

/* Loads the shipped rules from data_dir and, with rules_path, that file's
 * too. Returns EXIT_OK, or EXIT_NOINPUT/EXIT_DATAERR with the reason in err. */
int health_run_rules(struct health_run *hr, const char *data_dir, const char *rules_path, char *err, size_t errlen);

/* With the rules loaded: takes a snapshot, watches be's XID events and
 * process lists for window_s seconds, takes a second one and evaluates;
 * hr->opts must be filled before, hr->mask is every GPU. Returns EXIT_OK,
 * or an exit code with the reason in err (empty when take said it). */
int health_run_gather(struct health_run *hr, struct gpu_backend *be, double window_s, health_snapshot_fn take,
		      void *arg, char *err, size_t errlen);

/* Worst verdict over the selected GPUs and the system entry. */
enum health_verdict health_run_verdict(const struct health_run *hr);
/* The exit code for a verdict: 0 PASS, 1 WARN, 2 FAIL, 69 nothing could be checked. */
int health_exit_code(enum health_verdict v);

#endif
