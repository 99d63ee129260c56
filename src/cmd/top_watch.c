/* SPDX-License-Identifier: Apache-2.0 */
/* top_watch.c - sampler start-up and GPU selection shared by top and dmon. */
#include "top_watch.h"
#include "core/clock.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WATCH_STOP_GRACE_NS 250000000ull

volatile sig_atomic_t watch_interrupted;

static void on_signal(int sig)
{
	(void)sig;
	watch_interrupted = 1;
}

void watch_catch_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

void watch_sleep_until(uint64_t mono_ns)
{
	struct timespec ts = { (time_t)(mono_ns / 1000000000ull), (long)(mono_ns % 1000000000ull) };
	while (!watch_interrupted && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

int watch_start(struct watch *w, struct cmd_ctx *ctx, const char *cmd, const char *id_spec,
		uint64_t interval_ns, unsigned groups, bool processes, unsigned slow_every)
{
	memset(w, 0, sizeof(*w));
	int rc = cmd_backend(ctx);
	if (rc != EXIT_OK)
		return rc;
	w->snap = snapshot_new(ctx->be->gpu_count); /* what the sampler will watch */
	if (!w->snap) {
		cmd_error(ctx, cmd, "out of memory");
		return EXIT_SOFTWARE;
	}
	struct sampler_config cfg;
	sampler_config_default(&cfg);
	cfg.interval_ns = interval_ns;
	cfg.groups = groups;
	cfg.processes = processes;
	cfg.slow_group_every = slow_every;
	cfg.events = false;
	cfg.sys = &ctx->sys; /* cmd_backend read it */
	struct gpu_err err = { "" };
	/* the sampler's threads start with SIGINT and SIGTERM blocked, so that
	 * Ctrl-C reaches this thread and ends its sleep at once */
	sigset_t stop_sigs, old;
	sigemptyset(&stop_sigs);
	sigaddset(&stop_sigs, SIGINT);
	sigaddset(&stop_sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &stop_sigs, &old);
	int started = sampler_start(&w->sampler, ctx->be, &cfg, &err);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (started != GPU_OK) {
		cmd_error(ctx, cmd, "cannot start sampling: %s", err.msg);
		free(w->snap);
		w->snap = NULL;
		return EXIT_UNAVAILABLE;
	}
	/* a lost GPU never answers; the others are shown anyway after the wait */
	sampler_wait_first(w->sampler, 5 * interval_ns + 2000000000ull);
	sampler_read(w->sampler, w->snap);
	w->n = w->snap->n;
	rc = cmd_select_gpus(ctx, cmd, w->snap, id_spec, &w->mask);
	if (rc != EXIT_OK)
		watch_stop(w);
	return rc;
}

void watch_stop(struct watch *w)
{
	/* a GPU call that hangs is left after WATCH_STOP_GRACE_NS: Ctrl-C
	 * returns the terminal within a second whatever the GPUs do */
	if (w->sampler)
		sampler_stop_within(w->sampler, WATCH_STOP_GRACE_NS);
	free(w->snap);
	memset(w, 0, sizeof(*w));
}
