/* SPDX-License-Identifier: Apache-2.0 */
/* pool_internal.h - what the pool's files share (pool.c: the scheduler thread
 * and the jobs' lives; pool_life.c: start, recovery, stop; pool_ops.c:
 * requests; pool_server.c: the socket;
 * pool_json.c: job documents; pool_metrics.c: the exposition). Not for use
 * outside src/pool/. */
#ifndef GPUCTL_POOL_INTERNAL_H
#define GPUCTL_POOL_INTERNAL_H

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "health/health.h"
#include "pool/devcg.h"
#include "pool/job.h"
#include "pool/pool.h"
#include "pool/proto.h"
#include "pool/sched.h"
#include "pool/store.h"
#include "health/tick.h"

/* Who is asking (SO_PEERCRED). */
struct pool_caller {
	uid_t uid;
	gid_t gid;
	pid_t pid;
};

struct pool {
	struct pool_config cfg;
	struct gpu_backend *be;
	struct ticker *ticker;        /* the agent's: one (snapshot, health) per tick (health/tick.h) */
	bool simulated;
	uid_t euid;

	pthread_mutex_t mu;           /* everything below */
	pthread_cond_t cv;
	bool stopping, dirty;
	struct store *st;
	struct pool_job **jobs;       /* active jobs (pending, starting, running), by id */
	size_t njobs, cap;
	uint64_t max_id;              /* highest id ever given */

	struct tick *tick;            /* the latest tick the pool took in (a reference held) */
	const struct snapshot *snap;  /* its snapshot */
	bool have_snap;
	bool gpu_fail[GPU_MAX_GPUS];
	bool gpu_foreign[GPU_MAX_GPUS];
	unsigned gpu_foreign_pid[GPU_MAX_GPUS]; /* the first such process, for the reasons */

	struct sched_decision *dec;   /* last pass, by job order */
	size_t dec_cap;

	char cgroup_base[512];
	char cgroup_tag[12];          /* from the state directory: pools of two agents never share a cgroup */
	char cgroup_note[640];        /* as pool_status says */
	struct devcg devcg;           /* how jobs' devices are limited */
	char boot_id[40];
	char cleanup[64][300];        /* cgroups to remove once empty */
	unsigned ncleanup;
	unsigned recovered, settled;
	pid_t *reap;                  /* ended jobs' shims still to be waited for (our children) */
	size_t nreap, reap_cap;
	uint64_t passes, last_pass_ns;  /* scheduling passes run, and how long the last took */
	uint64_t last_pass_end_mono;
	uint64_t log_check_mono, sweep_mono; /* pool_logs.c's last check of output sizes, of ended directories */
	struct pool_job **unsaved;    /* ended jobs whose last row the store refused (disk full): retried */
	size_t nunsaved;

	int lock_fd;                  /* flock on pool_dir/lock: one agent per state directory */
	int listen_fd;
	pthread_t sched_thread, server_thread;
	bool sched_started, server_started;
	atomic_bool sched_in_pass;    /* the scheduler holds mu for a pass (not waiting on cv): pool_lock_holder */
};

/* pool.c */
uint64_t pool_now(const struct pool *p);
void pool_job_dir(const struct pool *p, uint64_t id, char *out, size_t outlen);
struct pool_job *pool_find_active(struct pool *p, uint64_t id);
int pool_add_active(struct pool *p, struct pool_job *j);
void pool_job_free(struct pool_job *j);
void pool_kick(struct pool *p);
/* pool_ops.c: stores a new job and makes it active. NULL, or an error
 * response: the store refused it (j is freed), or memory ran out (j is
 * recorded as failed with oom_reason). */
json_t *pool_admit(struct pool *p, struct pool_job *j, const char *oom_reason);
/* Active jobs by state: pending, and starting or running. */
void pool_count(const struct pool *p, unsigned *pending, unsigned *running);
/* Ends a job now (cancelled before it ran, or after its shim reported). */
void pool_settle(struct pool *p, struct pool_job *j, enum job_state state, const char *reason, uint64_t end_ns);
/* Writes every column of the job (the store keeps any error's message). */
void pool_save(struct pool *p, const struct pool_job *j);
/* Kills what is left in a job's cgroup and removes it (later, if still busy). */
void pool_cleanup_cgroup(struct pool *p, const char *dir);
/* pool_devices.c: limits the job's NVIDIA devices to its GPUs (devcg.h)
 * before its first process exists; v1_dir gets the v1 devices cgroup the job
 * must join ("" for none). msg has room for 300 bytes. 0, or -1 with why. */
int pool_limit_devices(struct pool *p, const struct pool_job *j, const unsigned *gpus, unsigned ng, char *msg,
		       char *v1_dir, size_t v1_len);
/* pool_isolation = best-effort: the warning, as the first line of the job's stderr. */
void pool_devices_warn(const char *job_dir, const char *why);
/* Appends "gpuctl: WHAT: WHY" to the job's stderr file before it starts. */
void pool_job_note(const char *job_dir, const char *what, const char *why);
/* Removes the job's v1 devices cgroup (later, if still busy). */
void pool_devices_cleanup(struct pool *p, const struct pool_job *j);
struct runner_exit;
/* Ends a job as its shim's exit record says. */
void pool_settle_from_record(struct pool *p, struct pool_job *j, const struct runner_exit *x);
/* Takes in the ticker's current tick when it is a new one: health's FAIL
 * verdicts and which GPUs run foreign processes. Without p->mu. */
void pool_refresh_view(struct pool *p);
void *pool_sched_thread(void *arg);
/* Ended jobs whose row the store refused (its disk was full) written, those
 * it takes now. Under mu. */
void pool_retry_unsaved(struct pool *p);

/* What placement knows of each GPU of the last snapshot (have_snap, p->mu held). */
void pool_place_view(const struct pool *p, struct place_gpu *out);
/* Sends SIGTERM to a running job's processes (and marks how it will end). */
void pool_signal_stop(struct pool *p, struct pool_job *j, enum job_state as);

/* A file range the answer goes on with (raw logs): fd (-1: none) is the
 * caller's to close. */
struct pool_stream {
	int fd;
	uint64_t offset, length;
};
/* pool_ops.c: a request from caller -> the response text (heap, NUL-terminated,
 * ending in a newline), NULL when out of memory; *more, the bytes that follow
 * it. Takes p->mu. */
char *pool_handle(struct pool *p, const struct pool_caller *c, const char *buf, size_t len, struct pool_stream *more);

/* pool_logs.c: keeps a job's stdout and stderr within pool_log_limit (p->mu held). */
void pool_logs_trim(struct pool *p, struct pool_job *j);
/* At each scheduler tick: running jobs' output (every 200 ms), ended jobs'
 * directories past the retention (every minute). p->mu held. */
void pool_logs_tick(struct pool *p);
/* True, with the pending reason, when the state directory's filesystem has
 * less free than pool_min_free: no job starts then. */
bool pool_disk_low(const struct pool *p, char *why, size_t len);

/* pool_container.c: container jobs (docs/containers.md). p->mu held. */
bool pool_job_is_container(const struct pool_job *j);
/* True when pid runs in (below) a job's cgroup v2: a container runtime's
 * processes there (podman --cgroups=split: conmon, the container) are not
 * the shim's descendants, yet they are the job's. */
bool pool_proc_in_job_cgroup(const struct pool *p, int pid);
/* Before the start: writes the pool's CDI spec, checks that the image is
 * there and that the driver's CUDA is what it needs; then *argv (the command
 * in the container, heap strings) becomes the podman command line. env: the
 * job's (podman runs as the user with it). 0, or -1 with why it cannot start. */
/* A container job's mounts against the pool's own state directory and
 * socket (as configured and resolved; container_check_host_path): 0, or -1
 * with msg. The rest of each mount was checked with the request. */
int pool_container_check_mounts(const struct pool *p, char *const *mounts, size_t n, char *msg, size_t len);
int pool_container_wrap(struct pool *p, const struct pool_job *j, char ***argv, char **env, const char *gpus,
			char *msg, size_t len);
/* After it ended other than done: `podman rm -f` of its container, as its
 * user, in the background; the pid to reap (-1: none). */
pid_t pool_container_remove(struct pool *p, const struct pool_job *j);

/* pool_server.c */
int pool_server_start(struct pool *p, char *err, size_t errlen);
void pool_server_stop(struct pool *p);

/* pool_slurm.c: Slurm jobs recorded by the prolog (docs/slurm.md). They have no shim. */
#define POOL_SLURM_SHIM (-1)
/* The Slurm job id of a job recorded from Slurm, 0 for the pool's own. */
uint64_t pool_slurm_job_id(const struct pool_job *j);
/* The answer to a slurm_* request, or NULL when buf is not one. Takes p->mu. */
json_t *pool_slurm_handle(struct pool *p, const struct pool_caller *c, const char *buf, size_t len);
/* pool_ops.c: a job's document with its accounting (so far, when active). p->mu held. */
json_t *pool_job_with_acct(struct pool *p, const struct pool_job *j, bool active);

/* pool_json.c */
json_t *pool_job_json(const struct pool_job *j, bool with_command, const struct sched_decision *d);
json_t *pool_acct_json(const struct acct_summary *a, unsigned n);
struct abuf;
/* The queue answer written straight as text (no JSON objects: it must stay
 * fast at 10 000 jobs): jobs in queue order, pending ones with a position.
 * first is the document's first member: "\"ok\":true" for the protocol's
 * answer, "\"pool\":true" for the agent's /api/v1/pool. */
void pool_queue_render(struct abuf *b, const char *first, struct pool_job *const *v, size_t n, bool simulated,
		       const char *devices);

#endif
