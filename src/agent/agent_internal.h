/* agent_internal.h - what agent.c (threads, rendering) and http.c (the
 * libmicrohttpd server) share. Not for use outside src/agent/. */
#ifndef GPUCTL_AGENT_INTERNAL_H
#define GPUCTL_AGENT_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "agent.h"
#include "api.h"
#include "gz.h"

/* One tick's rendered responses. Scrapes hold a reference while MHD sends.
 * The expositions are kept gzip-compressed only (gz.h); a client that does
 * not accept gzip gets them inflated while they are sent. */
struct published {
	struct published *next;   /* the agent's pool */
	unsigned refs;            /* guarded by agent.pub_mu; the current one holds one too */
	struct gz_body prom, om;  /* Prometheus text 0.0.4; OpenMetrics (raw_len 0 while not rendered) */
	struct api_doc gpus, health;
	uint64_t mono_ns;         /* when it was rendered (CLOCK_MONOTONIC) */
};

struct MHD_Daemon;

struct agent {
	struct agent_config cfg;
	struct agent_env env;
	struct gpu_backend *be;
	struct sampler *sampler;
	struct health_rules *rules;   /* NULL when they could not be loaded */
	char health_error[256];

	pthread_mutex_t pub_mu;
	struct published *current, *pool;

	pthread_mutex_t mu;           /* stop signalling (CLOCK_MONOTONIC cv) */
	pthread_cond_t cv;
	bool stopping;
	pthread_t render_thread, klog_thread;
	bool render_started, klog_started;

	atomic_int kernel_log;        /* -1 off, 0 unreadable, 1 reading */
	char kernel_log_error[256];   /* written before kernel_log leaves -1 */
	atomic_ullong renders, scrapes, last_render_ns;
	atomic_ullong om_asked;       /* renders count at the last OpenMetrics request + 1; 0 = never */

	struct MHD_Daemon *httpd;
	unsigned port;
	struct pool *job_pool;        /* the job pool when enabled (src/pool/pool_agent.c) */
	struct leakwatch *leaks;      /* the memory-leak watch (render thread only); NULL without process lists */
};

/* Takes a reference on the latest rendered responses (NULL before the first). */
struct published *agent_acquire(struct agent *a);
/* Notes that a client asked for OpenMetrics (rendered from the next tick on). */
void agent_want_openmetrics(struct agent *a);
void agent_release(struct agent *a, struct published *p);
uint64_t agent_mono_ns(void);

/* http.c */
int agent_http_start(struct agent *a, char *err, size_t errlen);
void agent_http_stop(struct agent *a);

#endif
