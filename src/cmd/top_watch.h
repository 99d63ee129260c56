/* SPDX-License-Identifier: Apache-2.0 */
/*
 * top_watch.h - what `gpuctl top` and `gpuctl dmon` share: opening the
 * backend, starting the sampler on it, waiting for the first sample, and turning
 * -i/--id SPEC into the GPUs to show. Telemetry comes only through the
 * sampler (src/sampler/sampler.h).
 */
#ifndef GPUCTL_TOP_WATCH_H
#define GPUCTL_TOP_WATCH_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "cmd.h"
#include "core/clock.h"
#include "sampler/sampler.h"

struct watch {
	struct sampler *sampler;
	struct snapshot *snap;   /* the latest copy (heap: a snapshot is large) */
	uint64_t mask;           /* selected GPUs, bit i = GPU i */
	unsigned n;              /* GPUs the server has */
};

/* Opens the backend (cmd_backend: call it after the options are checked),
 * starts the sampler (interval, groups, with or without processes), waits
 * for a first sample and applies `id_spec` (NULL: every GPU). On failure
 * prints "gpuctl CMD: ..." and returns an exit code; 0 on success. */
int watch_start(struct watch *w, struct cmd_ctx *ctx, const char *cmd, const char *id_spec,
		uint64_t interval_ns, unsigned groups, bool processes, unsigned slow_every);
void watch_stop(struct watch *w);

/* Set by SIGINT/SIGTERM once watch_catch_signals() ran. */
extern volatile sig_atomic_t watch_interrupted;
void watch_catch_signals(void);

/* Sleeps until an absolute monotonic time, clock_mono_ns() (returns early
 * on a signal). */
void watch_sleep_until(uint64_t mono_ns);

#endif
