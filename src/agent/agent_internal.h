/* SPDX-License-Identifier: Apache-2.0 */
/* agent_internal.h - what agent.c (threads, rendering) and http.c (the
 * libmicrohttpd server) share. Not for use outside src/agent/. */
#ifndef GPUCTL_AGENT_INTERNAL_H
#define GPUCTL_AGENT_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "agent.h"
#include "api.h"
#include "render_ahead.h"
#include "gz.h"
#include "evlog.h"
#include "core/clock.h"

/* The expositions: Prometheus text 0.0.4 and OpenMetrics 1.0. Each comes in
 * two variants: gzip (what Prometheus asks for) and plain text. */
enum { EXPO_TEXT = 0, EXPO_OM = 1, EXPO_N = 2 };
#define EXPO_VARIANTS (2 * EXPO_N)
static inline unsigned expo_variant(unsigned fmt, bool gzip)
{
	return gzip ? fmt : EXPO_N + fmt;
}
/* What the render thread renders at a tick or on request: the expositions'
 * variants, then /api/v1/gpus (the costliest document: 14 M instructions a
 * tick at 64 GPUs, most of the render thread's idle CPU when it was rendered
 * at every tick). /api/v1/health is rendered at every tick, from the health
 * report that is not kept after it. */
#define VAR_GPUS EXPO_VARIANTS
#define RENDER_VARIANTS (EXPO_VARIANTS + 1)
_Static_assert(RENDER_VARIANTS <= RENDER_AHEAD_VARIANTS, "a variant is a bit of render_ahead's set");

/* One tick's rendered responses. Scrapes hold a reference while MHD sends.
 * Each variant is rendered at the tick or on its first request
 * (agent_variant_ready): an exposition's gzip one compressed while it is
 * rendered (gz.h), its plain one inflated from it, once, for every client
 * that does not accept gzip; the /api/v1/gpus document into gpus. A variant
 * may be read once ready[v] is true and is not written again until the set
 * is reused. */
struct published {
	struct published *next;   /* the agent's pool */
	unsigned refs;            /* guarded by agent.pub_mu; the current one holds one too */
	struct gz_body expo[EXPO_N];
	struct abuf plain[EXPO_N]; /* freed at a tick that does not render it at once */
	atomic_bool ready[RENDER_VARIANTS], failed[RENDER_VARIANTS];
	atomic_uint asked[RENDER_VARIANTS]; /* requests: what the next tick renders at once */
	/* the set's first and last request of each variant (CLOCK_MONOTONIC, 0: none):
	 * when periodic scrapers will come next (render_ahead.h) */
	atomic_ullong first_ask_ns[RENDER_VARIANTS], last_ask_ns[RENDER_VARIANTS];
	struct api_doc gpus;      /* VAR_GPUS; freed at a tick that does not render it at once */
	struct api_doc health;    /* rendered at every tick */
	uint64_t mono_ns;         /* when it was rendered (CLOCK_MONOTONIC) */
};

/* What the ticker's hook (agent_tick.c) found at the last tick, for that
 * tick's rendering: written and read by the render thread only. */
struct leakwatch_leak;
struct tick_notes {
	struct leakwatch_leak *leaks; /* LEAKWATCH_MAX */
	unsigned nleaks;
	int fault_file_bad;           /* sim_fault_file_error's: > 0 the fault file is not applied */
	char fault_file[256];         /* why */
};

struct MHD_Daemon;
struct http_door;
struct render_scratch;
struct history;

struct pool_job;

#define AGENT_LOG_RING 64

struct agent {
	struct agent_config cfg;
	struct agent_env env;
	struct gpu_backend *be;
	struct sampler *sampler;
	struct health_rules *rules;   /* NULL when they could not be loaded */
	struct ticker *ticker;        /* one (snapshot, health) per tick, the render thread's to advance;
	                               * the pool takes its ticks (health/tick.h, agent_tick.c) */
	struct tick_notes notes;
	char health_error[256];

	pthread_mutex_t pub_mu;
	struct published *current, *pool;

	pthread_mutex_t mu;           /* stop and render-request signalling (CLOCK_MONOTONIC cv) */
	pthread_cond_t cv;
	bool stopping;
	unsigned render_req;          /* variant bits the current set's scrapers wait for */
	uint64_t waiting_until;       /* the tick the render thread waits for (0: not waiting); injected clock only */
	uint64_t first_tick_ns;       /* agent_start's tick (agent_mono): the render thread's ticks follow it */
	struct render_expect expect[RENDER_VARIANTS]; /* the render thread's: periodic scrapers */
	struct render_scratch *scratch; /* the render thread's (agent.c) */
	pthread_t render_thread, klog_thread;
	bool render_started, klog_started;

	atomic_int kernel_log;        /* -1 off, 0 unreadable, 1 reading */
	char kernel_log_error[256];   /* written before kernel_log leaves -1 */
	char sim_fault_file_error[256]; /* under mu: why the simulated server's run-time fault file is not applied, "" */
	atomic_ullong renders, scrapes, last_render_ns, expo_renders, doc_renders;
	atomic_ullong expo_buffers, expo_bytes; /* what the sets hold of expositions (agent_status) */

	struct MHD_Daemon *httpd;
	struct http_door *door;       /* accepts, and checks each connection's first request head (door.c) */
	unsigned port;
	/* the names the Host header may give besides IP literals and localhost
	 * (http_host_allowed): the machine's, the hostname setting's, allowed_hosts */
	char host_names[sizeof(((struct agent_config *)0)->allowed_hosts) + 2 * 256];
	struct pool *job_pool;        /* the job pool when enabled (src/pool/pool_agent.c) */
	struct leakwatch *leaks;      /* the memory-leak watch (render thread only); NULL without process lists */
	struct history *history;      /* /api/v1/history (history.h); NULL when off (history = 0) */

	/* the agent's own log (agent_log.c): lines queued for the command to print */
	struct evlog evlog;           /* the render thread's: what it has seen of the GPUs */
	pthread_mutex_t log_mu;       /* guards the ring below (taken by the render thread and the pool's hook) */
	char log_ring[AGENT_LOG_RING][EVLOG_LINE];
	unsigned log_head, log_n, log_dropped;
};

/* agent_log.c: queues one line for agent_take_log (an evlog_emit; arg is the agent). */
void agent_log_push(void *arg, const char *line);
/* The pool's on_job hook: a job started or ended (arg is the agent). */
void agent_log_job(void *arg, const struct pool_job *j);

/* Takes a reference on the latest rendered responses (NULL before the first). */
struct published *agent_acquire(struct agent *a);
/* Counts a request for p's variant (expo_variant(), VAR_GPUS) and, when it
 * has not been rendered yet, has the render thread render it and waits (a
 * few ms; at most 5 s). False when it could not be: out of memory, stopping,
 * or a tick replaced p meanwhile (then the caller takes the current set again). */
bool agent_variant_ready(struct agent *a, struct published *p, unsigned variant);
void agent_release(struct agent *a, struct published *p);
bool agent_stopping(struct agent *a);

/* The stack of each of the agent's own threads (render, kernel log, the HTTP
 * door, libmicrohttpd's workers) instead of the 8 MiB default: the deepest
 * measured at 64 GPUs under 100 scrapers touched 24 KiB (bench/agent_bench.sh,
 * smaps). Only touched pages are resident: this bounds address space, not RSS
 * (core/thread.h). */
#define AGENT_THREAD_STACK_BYTES (512u * 1024u)

/* agent_tick.c: makes a->ticker, whose hook fills a->notes at each tick
 * (0, or -1 out of memory); frees them (every tick put back). */
int agent_ticker_start(struct agent *a);
void agent_ticker_free(struct agent *a);

/* agent_klog.c: starts the kernel-log XID reader when configured (sets kernel_log). */
void agent_start_klog(struct agent *a);

/* Frees what agent_new made (agent.c); every thread has stopped. */
void agent_free(struct agent *a);
/* agent_stop() with note(arg, WHAT) before each step that waits for a
 * thread (agent_stop.c bounds it) */
void agent_stop_noted(struct agent *a, void (*note)(void *arg, const char *what), void *arg);

/* http.c */
int agent_http_start(struct agent *a, char *err, size_t errlen);
void agent_http_stop(struct agent *a);

#endif
