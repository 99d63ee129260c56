/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent.h - the monitoring daemon's runtime: the sampler, a render thread
 * that turns each tick's snapshot into ready-made responses (Prometheus
 * text, OpenMetrics, JSON), the kernel-log XID reader, and the HTTP server
 * (http.c). A scrape takes a reference on the latest rendered buffer and
 * sends it: it never waits on the sampler or a backend call (only, for the
 * first scrape of an exposition nobody asked for lately, on its rendering).
 * Nothing here prints; src/cmd/agent.c reports what agent_status() says.
 */
#ifndef GPUCTL_AGENT_H
#define GPUCTL_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "device/gpu.h"
#include "core/abuf.h"
#include "agent_config.h"

struct agent;

struct agent_env {
	const char *version;       /* gpuctl's version */
	const char *data_dir_env;  /* $GPUCTL_DATA_DIR (health rules), may be NULL */
	const struct gpu_system *sys; /* the system facts already read (cmd_backend), or NULL */
	/* Tests: the render thread's clock (nanoseconds, CLOCK_MONOTONIC's kind):
	 * when ticks fall due and when scrapes came (render_ahead.h). After moving
	 * it the test calls agent_clock_moved(). NULL: CLOCK_MONOTONIC. */
	uint64_t (*mono_ns)(void *arg);
	void *clock_arg;
};

struct agent_status {
	unsigned port;             /* the bound port (useful with port 0) */
	int kernel_log;            /* -1 off, 0 unreadable, 1 reading */
	char kernel_log_error[256];
	bool health_rules;         /* the health rules loaded */
	char health_error[256];
	char sim_fault_file_error[256]; /* why the simulated server's run-time fault file is not applied, "" if it is */
	uint64_t renders, scrapes;
	uint64_t ticks;            /* ticks made (health/tick.h): one read of the sampler each */
	uint64_t sampler_reads;    /* the sampler's reads, all readers together */
	uint64_t expo_renders;     /* expositions rendered (at a tick or on request) */
	uint64_t doc_renders;      /* /api/v1/gpus documents rendered (at a tick or on request) */
	/* the expositions the response sets hold (gzip bodies and texts): how
	 * many and their bytes; only the current set's, and those of a set a
	 * scrape still reads, once the render thread has moved on */
	unsigned expo_buffers;
	size_t expo_bytes;
};

/* Starts sampling and serving. The backend must stay open until agent_stop(). */
int agent_start(struct agent **out, struct gpu_backend *be, const struct agent_config *cfg,
		const struct agent_env *env, char *err, size_t errlen);
void agent_get_status(struct agent *a, struct agent_status *st);
/* With an injected clock (agent_env.mono_ns): has the render thread make the
 * tick that has fallen due by the clock's time and returns once it waits for
 * the next one (or stops). Move the clock by at most an interval at a time:
 * like the real clock's, ticks missed by more are skipped. */
void agent_clock_moved(struct agent *a);
/* The agent's own log since the last call, oldest first: a GPU that stops
 * answering or comes back, an XID, a pool job that starts or ends (evlog.h).
 * print(arg, line) for each line (no newline); the number of lines. */
unsigned agent_take_log(struct agent *a, void (*print)(void *arg, const char *line), void *arg);
void agent_stop(struct agent *a);
/* agent_stop() within timeout_ns (the stop_timeout setting): the pool's
 * state first (its running jobs left running for the next start to
 * re-attach), then the HTTP server, the render thread, the kernel-log reader
 * and the samplers. 0 when every thread stopped (a is freed); -1 when one had
 * not by then, with the step it was in in stuck ("the pool's scheduler",
 * ...): then nothing may be freed or closed (the caller ends the process at
 * once; the pool's state is on disk). */
int agent_stop_within(struct agent *a, uint64_t timeout_ns, char *stuck, size_t stucklen);

/* One exposition without the HTTP server (gpuctl agent --once): samples every
 * GPU once through the sampler, renders, stops. */
int agent_render_once(struct gpu_backend *be, const struct agent_config *cfg, const struct agent_env *env,
		      bool openmetrics, struct abuf *out, char *err, size_t errlen);

#endif
