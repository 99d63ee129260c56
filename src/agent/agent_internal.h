/* agent_internal.h - what agent.c (threads, rendering) and http.c (the
 * libmicrohttpd server) share. Not for use outside src/agent/. */
#ifndef GPUCTL_AGENT_INTERNAL_H
#define GPUCTL_AGENT_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "agent.h"
#include "api.h"
#include "gz.h"

/* The expositions: Prometheus text 0.0.4 and OpenMetrics 1.0. */
enum { EXPO_TEXT = 0, EXPO_OM = 1, EXPO_N = 2 };

/* One tick's rendered responses. Scrapes hold a reference while MHD sends.
 * The expositions are kept gzip-compressed only (gz.h); a client that does
 * not accept gzip gets them inflated while they are sent. Each is rendered
 * at the tick or on its first request (agent_expo_ready); expo[f] may be
 * read once ready[f] is true and is not written again until the set is reused. */
struct published {
	struct published *next;   /* the agent's pool */
	unsigned refs;            /* guarded by agent.pub_mu; the current one holds one too */
	struct gz_body expo[EXPO_N];
	atomic_bool ready[EXPO_N], failed[EXPO_N];
	atomic_uint asked[EXPO_N]; /* requests: what the next tick renders at once */
	struct api_doc gpus, health;
	uint64_t mono_ns;         /* when it was rendered (CLOCK_MONOTONIC) */
};

struct MHD_Daemon;
struct render_scratch;

struct agent {
	struct agent_config cfg;
	struct agent_env env;
	struct gpu_backend *be;
	struct sampler *sampler;
	struct health_rules *rules;   /* NULL when they could not be loaded */
	char health_error[256];

	pthread_mutex_t pub_mu;
	struct published *current, *pool;

	pthread_mutex_t mu;           /* stop and render-request signalling (CLOCK_MONOTONIC cv) */
	pthread_cond_t cv;
	bool stopping;
	unsigned render_req;          /* EXPO_* bits the current set's scrapers wait for */
	struct render_scratch *scratch; /* the render thread's (agent.c) */
	pthread_t render_thread, klog_thread;
	bool render_started, klog_started;

	atomic_int kernel_log;        /* -1 off, 0 unreadable, 1 reading */
	char kernel_log_error[256];   /* written before kernel_log leaves -1 */
	atomic_ullong renders, scrapes, last_render_ns;

	struct MHD_Daemon *httpd;
	unsigned port;
	struct pool *job_pool;        /* the job pool when enabled (src/pool/pool_agent.c) */
	struct leakwatch *leaks;      /* the memory-leak watch (render thread only); NULL without process lists */
};

/* Takes a reference on the latest rendered responses (NULL before the first). */
struct published *agent_acquire(struct agent *a);
/* Counts a request for p's exposition fmt (EXPO_*) and, when it has not been
 * rendered yet, has the render thread render it and waits (a few ms; at most
 * 5 s). False when it could not be: out of memory, stopping, or a tick
 * replaced p meanwhile (then the caller takes the current set again). */
bool agent_expo_ready(struct agent *a, struct published *p, unsigned fmt);
void agent_release(struct agent *a, struct published *p);
uint64_t agent_mono_ns(void);

/* http.c */
int agent_http_start(struct agent *a, char *err, size_t errlen);
void agent_http_stop(struct agent *a);

#endif
