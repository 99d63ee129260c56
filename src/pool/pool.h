/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pool.h - the GPU pool embedded in the agent (docs/pool.md).
 *
 * pool_start() opens the state (SQLite under state_dir), re-attaches or
 * settles the jobs of a previous run, listens on the control socket (a Unix
 * socket; the caller's identity comes from SO_PEERCRED) and runs the
 * scheduler thread: each pass takes the agent's latest tick (health/tick.h:
 * its snapshot and health report), gates GPUs on health and on processes the pool did not start,
 * runs sched_pass() and starts jobs under their shims (runner.h).
 * Nothing here prints; errors come back as a one-line message.
 */
#ifndef GPUCTL_POOL_H
#define GPUCTL_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "device/gpu.h"
#include "pool/idle.h"

struct pool_job;

struct pool;
struct sampler;
struct health_rules;
struct abuf;

/* pool_isolation: limiting each job's NVIDIA devices to its GPUs (devcg.h).
 * strict: a job whose limits cannot be set up fails to start; best-effort:
 * it starts, with the warning in its reason; off: never limited. Where the
 * machine has no method at all, jobs start unlimited and the agent says so. */
enum pool_isolation { POOL_ISOLATION_STRICT = 0, POOL_ISOLATION_BEST_EFFORT, POOL_ISOLATION_OFF };
/* "strict", "best-effort", "off" -> 0..2, -1 unknown (pure). */
int pool_isolation_parse(const char *s);

#define POOL_DEFAULT_RETENTION_NS (14ull * 86400ull * 1000000000ull) /* ended jobs' directories */
#define POOL_DEFAULT_MIN_FREE (64ull << 20) /* free bytes below which no job starts */
#define POOL_DEFAULT_USER_JOB_LIMIT 1000u   /* pool_user_job_limit */

struct pool_config {
	char state_dir[256];          /* jobs.db and jobs/<id>/ (stdout, stderr, exit records) */
	char socket_path[256];        /* the control socket */
	unsigned max_gpus_per_user;   /* 0: no limit */
	unsigned max_jobs_per_user;   /* jobs one uid may have pending or running (submit refuses more); 0: no limit */
	uint64_t kill_grace_ns;       /* cancel: SIGTERM, then SIGKILL after this (default 10 s) */
	char cgroup_parent[256];      /* "" = the agent's own cgroup; "off" = no cgroups */
	char dev_dir[256];            /* the GPUs' device nodes, as container jobs' CDI spec names them ("" = /dev) */
	uint64_t (*now_ns)(void);     /* wall clock (NULL: CLOCK_REALTIME) */
	enum pool_isolation isolation; /* device limiting (docs/pool.md); default strict */
	uint64_t log_limit;           /* bytes kept of each job's stdout and stderr (head and tail); 0: none */
	uint64_t log_retention_ns;    /* ended jobs' directories removed this long after they end; 0: kept */
	uint64_t min_free_bytes;      /* no job starts while the state directory's filesystem has less free */
	struct idle_params idle;      /* idle allocations (idle.h): threshold and window */
	bool idle_cancel;             /* end idle allocations (cancelled, with the reason) */
	/* called (with the pool's lock held: it must not call the pool) when a job
	 * starts running and when it ends; NULL: none (the agent logs them) */
	void (*on_job)(void *arg, const struct pool_job *j);
	void *on_job_arg;
};

void pool_config_default(struct pool_config *c);

/* Default places (pure): root: /var/lib/gpuctl/pool and /run/gpuctl/pool.sock;
 * another user: $XDG_STATE_HOME (or ~/.local/state)/gpuctl/pool and
 * $XDG_RUNTIME_DIR (or /tmp/gpuctl-UID)/gpuctl-pool.sock. Empty outputs are filled. */
void pool_default_paths(uid_t euid, const char *xdg_state, const char *xdg_runtime, const char *home,
			char *state_dir, size_t state_len, char *socket_path, size_t socket_len);
/* Where a client looks for the socket when not told (pure): $GPUCTL_POOL_SOCKET,
 * else /run/gpuctl/pool.sock when it exists (root_exists), else the user's. */
void pool_client_socket(const char *env_socket, bool root_socket_exists, const char *xdg_runtime, uid_t uid,
			char *out, size_t outlen);

struct pool_status {
	char cgroup_note[640];        /* "per-job cgroups under DIR" or why there are none;
				       * then "; devices limited ..." or "; devices not limited: why" */
	unsigned recovered;           /* jobs re-attached at start */
	unsigned settled;             /* jobs found ended, lost or re-queued at start */
	unsigned pending, running;
};

struct ticker;
/* The ticker must have made its first tick and outlive the pool. */
int pool_start(struct pool **out, struct gpu_backend *be, struct ticker *ticker, const struct pool_config *cfg,
	       char *err, size_t errlen);
void pool_get_status(struct pool *p, struct pool_status *st);
/* Stops serving and scheduling; running jobs go on under their shims. */
void pool_stop(struct pool *p);
/* The first step of the agent's stop: the control socket takes no more
 * requests and the scheduler ends its passes (both see it at once), and
 * what the store refused before (a full disk) is written now; every other
 * change was written as it happened. Running jobs are left running (the next
 * start re-attaches them). Takes the pool's lock: it waits while another
 * thread holds it (the agent bounds its whole stop, agent_stop_within). */
void pool_flush(struct pool *p);
/* pool_stop, calling note(arg, WHAT) before each step that waits for a
 * thread: "the pool's control server", "the pool's scheduler", "the pool's
 * store" (its last writes). */
void pool_stop_noted(struct pool *p, void (*note)(void *arg, const char *what), void *arg);
/* Who holds the pool's lock when pool_flush waits for it, as far as the pool
 * knows: "the pool's scheduler (in a pass)", else "a request (the control
 * socket or the agent's HTTP API)". Lock-free. */
const char *pool_lock_holder(struct pool *p);
/* The queue as the agent's /api/v1/pool serves it: the `queue` answer
 * (what `gpuctl queue --json` prints) with "pool":true first in place of
 * "ok":true. The caller frees it; NULL when out of memory. */
char *pool_queue_doc(struct pool *p);

/* Appends the pool's series (job and user labels) to an exposition the agent
 * rendered; with openmetrics they go before the final "# EOF". */
void pool_metrics_append(struct pool *p, struct abuf *out, bool openmetrics);
/* A label value as the exposition formats want it: valid UTF-8 (anything else
 * '?'), backslash, quote and newline escaped. */
void pool_metrics_label_value(struct abuf *b, const char *raw);
/* The name of the pool's i-th metric family, NULL past the last (docs check). */
const char *pool_metric_name(size_t i);

#endif
