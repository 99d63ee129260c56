/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pool_life.c - the pool's start and stop (see pool.h): default places, the
 * state directory and database, the cgroup base, settling the jobs a
 * previous run left (re-attach, re-queue, lost), the socket and the
 * scheduler thread (pool.c).
 */
#include "pool_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pool/joblog.h"
#include "pool/runner.h"

#define STARTING_GRACE_NS 200000000ull /* a shim forked just before a crash writes its pids */

void pool_config_default(struct pool_config *c)
{
	memset(c, 0, sizeof(*c));
	c->kill_grace_ns = 10000000000ull;
	c->log_limit = JOBLOG_DEFAULT_LIMIT;
	c->log_retention_ns = POOL_DEFAULT_RETENTION_NS;
	c->min_free_bytes = POOL_DEFAULT_MIN_FREE;
	c->max_jobs_per_user = POOL_DEFAULT_USER_JOB_LIMIT;
	c->idle.threshold_pct = IDLE_DEFAULT_THRESHOLD_PCT;
	c->idle.window_ns = IDLE_DEFAULT_WINDOW_NS;
}

void pool_default_paths(uid_t euid, const char *xdg_state, const char *xdg_runtime, const char *home,
			char *state_dir, size_t state_len, char *socket_path, size_t socket_len)
{
	if (!state_dir[0]) {
		if (euid == 0)
			snprintf(state_dir, state_len, "/var/lib/gpuctl/pool");
		else if (xdg_state && xdg_state[0] == '/')
			snprintf(state_dir, state_len, "%s/gpuctl/pool", xdg_state);
		else if (home && home[0] == '/')
			snprintf(state_dir, state_len, "%s/.local/state/gpuctl/pool", home);
		else
			snprintf(state_dir, state_len, "/tmp/gpuctl-%u/pool", (unsigned)euid);
	}
	if (!socket_path[0]) {
		if (euid == 0)
			snprintf(socket_path, socket_len, "/run/gpuctl/pool.sock");
		else if (xdg_runtime && xdg_runtime[0] == '/')
			snprintf(socket_path, socket_len, "%s/gpuctl-pool.sock", xdg_runtime);
		else
			snprintf(socket_path, socket_len, "/tmp/gpuctl-%u/gpuctl-pool.sock", (unsigned)euid);
	}
}

void pool_client_socket(const char *env_socket, bool root_socket_exists, const char *xdg_runtime, uid_t uid,
			char *out, size_t outlen)
{
	if (env_socket && env_socket[0]) {
		snprintf(out, outlen, "%s", env_socket);
		return;
	}
	if (root_socket_exists || uid == 0) {
		snprintf(out, outlen, "/run/gpuctl/pool.sock");
		return;
	}
	out[0] = '\0';
	char state[256] = "";
	pool_default_paths(uid, NULL, xdg_runtime, NULL, state, sizeof(state), out, outlen);
}


/* ---- start and recovery ---------------------------------------------------------------- */

static int mkdir_p(const char *path, mode_t mode, char *err, size_t errlen)
{
	char buf[512];
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *s = buf + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			if (mkdir(buf, mode) != 0 && errno != EEXIST) {
				snprintf(err, errlen, "cannot create '%s': %s", buf, strerror(errno));
				return -1;
			}
			*s = '/';
		}
	if (mkdir(buf, mode) != 0 && errno != EEXIST) {
		snprintf(err, errlen, "cannot create '%s': %s", buf, strerror(errno));
		return -1;
	}
	return 0;
}

static int load_cb(void *arg, struct pool_job *j)
{
	struct pool *p = arg;
	j->mig_gpu = j->mig_gpu < 0 ? -1 : j->mig_gpu;
	if (pool_add_active(p, j)) {
		pool_job_free(j);
		return 1;
	}
	return 0;
}

static void requeue(struct pool *p, struct pool_job *j, const char *why)
{
	j->state = JOB_PENDING;
	j->start_ns = 0;
	j->gpu_mask = 0;
	j->mig_gpu = j->mig_gi = -1;
	j->devices[0] = '\0';
	j->shim_pid = j->job_pid = 0;
	j->shim_start_ticks = 0;
	if (j->cgroup[0])
		pool_cleanup_cgroup(p, j->cgroup);
	pool_devices_cleanup(p, j);
	j->cgroup[0] = '\0';
	snprintf(j->reason, sizeof(j->reason), "%s", why);
	pool_save(p, j);
}

static void attach(struct pool *p, struct pool_job *j)
{
	unsigned gpus[GPU_MAX_GPUS], ng = 0;
	for (unsigned g = 0; g < GPU_MAX_GPUS; g++)
		if (j->gpu_mask >> g & 1)
			gpus[ng++] = g;
	if (j->mig_gpu >= 0)
		gpus[ng++] = (unsigned)j->mig_gpu;
	if (acct_begin(&j->acct, gpus, ng, p->have_snap ? p->snap : NULL) == 0) {
		acct_set_start(&j->acct, pool_now(p)); /* what ran while no agent watched is not known */
		acct_set_mig(&j->acct, j->mig_gpu >= 0 ? j->mig_gi : -1);
	}
	j->state = JOB_RUNNING;
	snprintf(j->reason, sizeof(j->reason), "re-attached after an agent restart (accounting from then)");
	pool_save(p, j);
	p->recovered++;
}

/* Settles the jobs a previous run left starting or running. */
static void recover(struct pool *p)
{
	bool waited = false;
	for (size_t i = 0; i < p->njobs;) {
		struct pool_job *j = p->jobs[i];
		if (j->state == JOB_PENDING) {
			i++;
			continue;
		}
		char dir[512];
		pool_job_dir(p, j->id, dir, sizeof(dir));
		struct runner_exit x;
		int shim = 0, jp = 0;
		if (j->state == JOB_STARTING && !waited) {
			struct timespec ts = { 0, (long)STARTING_GRACE_NS };
			nanosleep(&ts, NULL);
			waited = true;
		}
		if (runner_read_exit(dir, &x) == 1) {
			p->settled++;
			pool_settle_from_record(p, j, &x);
			continue;
		}
		if (j->state == JOB_RUNNING && (j->shim_pid == POOL_SLURM_SHIM ||
						proc_alive_as(j->shim_pid, j->shim_start_ticks))) {
			attach(p, j);
			i++;
			continue;
		}
		if (j->state == JOB_STARTING) {
			struct proc_stat ps;
			if (runner_read_pids(dir, &shim, &jp) == 1 && proc_stat_read(shim, &ps) == 0 &&
			    ps.session == shim && ps.state != 'Z') {
				j->shim_pid = shim;
				j->job_pid = jp;
				j->shim_start_ticks = ps.start_ticks;
				attach(p, j);
				i++;
				continue;
			}
			if (runner_read_pids(dir, &shim, &jp) == 0) {
				requeue(p, j, "re-queued: the agent stopped while starting it");
				p->settled++;
				i++;
				continue;
			}
		}
		p->settled++;
		bool rebooted = j->boot_id[0] && p->boot_id[0] && strcmp(j->boot_id, p->boot_id) != 0;
		pool_settle(p, j, JOB_LOST,
			    rebooted ? "the machine restarted while it ran (no exit record)"
				     : "its shim is gone without an exit record (killed?)",
			    pool_now(p));
	}
}

int pool_start(struct pool **out, struct gpu_backend *be, struct ticker *ticker, const struct pool_config *cfg,
	       char *err, size_t errlen)
{
	*out = NULL;
	struct pool *p = calloc(1, sizeof(*p));
	if (!p) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	p->cfg = *cfg;
	p->be = be;
	p->ticker = ticker;
	p->euid = geteuid();
	p->listen_fd = -1;
	p->lock_fd = -1;
	pthread_mutex_init(&p->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->cv, &ca);
	pthread_condattr_destroy(&ca);
	char path[600];
	snprintf(path, sizeof(path), "%s/jobs", cfg->state_dir);
	if (mkdir_p(path, 0755, err, errlen))
		goto fail;
	snprintf(path, sizeof(path), "%s/lock", cfg->state_dir);
	p->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (p->lock_fd < 0 || flock(p->lock_fd, LOCK_EX | LOCK_NB) != 0) {
		snprintf(err, errlen, "%s '%s' (%s)",
			 p->lock_fd < 0 ? "cannot open the lock" : "another agent runs the pool of state directory",
			 cfg->state_dir, strerror(errno));
		goto fail;
	}
	snprintf(path, sizeof(path), "%s/jobs.db", cfg->state_dir);
	if (store_open(&p->st, path, err, errlen))
		goto fail;
	runner_boot_id(p->boot_id, sizeof(p->boot_id));
	uint32_t h = 2166136261u; /* FNV-1a of the state directory */
	for (const char *c = cfg->state_dir; *c; c++)
		h = (h ^ (unsigned char)*c) * 16777619u;
	snprintf(p->cgroup_tag, sizeof(p->cgroup_tag), "%08x", h);
	if (strcmp(cfg->cgroup_parent, "off") == 0) {
		snprintf(p->cgroup_note, sizeof(p->cgroup_note), "no per-job cgroups (cgroup_parent = off)");
	} else {
		char why[256];
		if (runner_cgroup_base(cfg->cgroup_parent, p->cgroup_base, sizeof(p->cgroup_base), why, sizeof(why)) == 0)
			snprintf(p->cgroup_note, sizeof(p->cgroup_note), "per-job cgroups under %.250s", p->cgroup_base);
		else
			snprintf(p->cgroup_note, sizeof(p->cgroup_note), "no per-job cgroups: %.250s", why);
	}
	if (cfg->isolation == POOL_ISOLATION_OFF) {
		memset(&p->devcg, 0, sizeof(p->devcg));
		snprintf(p->devcg.note, sizeof(p->devcg.note), "devices not limited (pool_isolation = off)");
	} else {
		devcg_probe(&p->devcg, p->cgroup_base[0] != '\0');
	}
	size_t cn = strlen(p->cgroup_note);
	snprintf(p->cgroup_note + cn, sizeof(p->cgroup_note) - cn, "; %s", p->devcg.note);
	struct gpu_system sys;
	struct gpu_err gerr;
	p->simulated = be && be->ops->system_info(be, &sys, &gerr) == 0 && sys.simulated;
	pool_refresh_view(p);
	if (!p->have_snap) {
		snprintf(err, errlen, "no tick of the sampler yet");
		goto fail;
	}
	if (store_walk(p->st, false, UINT32_MAX, 0, load_cb, p)) {
		snprintf(err, errlen, "%s", store_error(p->st));
		goto fail;
	}
	/* ids of ended jobs count too (--after) */
	struct pool_job last;
	for (uint64_t probe = p->max_id + 1;; probe++) {
		int rc = store_get(p->st, probe, &last);
		if (rc != 1)
			break;
		free(last.spec_json);
		p->max_id = probe;
	}
	pthread_mutex_lock(&p->mu);
	recover(p);
	pthread_mutex_unlock(&p->mu);
	snprintf(path, sizeof(path), "%s", cfg->socket_path);
	char *slash = strrchr(path, '/');
	if (slash && slash != path) {
		*slash = '\0';
		if (mkdir_p(path, 0755, err, errlen))
			goto fail;
	}
	if (pool_server_start(p, err, errlen))
		goto fail;
	if (pthread_create(&p->sched_thread, NULL, pool_sched_thread, p) != 0) {
		snprintf(err, errlen, "cannot start the scheduler thread");
		goto fail;
	}
	p->sched_started = true;
	*out = p;
	return 0;
fail:
	pool_stop(p);
	return -1;
}

void pool_get_status(struct pool *p, struct pool_status *st)
{
	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&p->mu);
	snprintf(st->cgroup_note, sizeof(st->cgroup_note), "%s", p->cgroup_note);
	st->recovered = p->recovered;
	st->settled = p->settled;
	pool_count(p, &st->pending, &st->running);
	pthread_mutex_unlock(&p->mu);
}

void pool_flush(struct pool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->stopping = true; /* the control server takes no more requests, the scheduler ends */
	pthread_cond_broadcast(&p->cv);
	pool_retry_unsaved(p);
	pthread_mutex_unlock(&p->mu);
}

const char *pool_lock_holder(struct pool *p)
{
	return atomic_load(&p->sched_in_pass) ? "the pool's scheduler (in a pass, holding the pool's lock)"
					      : "a request holding the pool's lock (the control socket or the HTTP API)";
}

static void note_step(void (*note)(void *, const char *), void *arg, const char *what)
{
	if (note)
		note(arg, what);
}

void pool_stop_noted(struct pool *p, void (*note)(void *arg, const char *what), void *arg)
{
	if (!p)
		return;
	note_step(note, arg, "the pool's control server");
	pool_server_stop(p);
	note_step(note, arg, "the pool's scheduler");
	pthread_mutex_lock(&p->mu);
	p->stopping = true;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	if (p->sched_started)
		pthread_join(p->sched_thread, NULL);
	note_step(note, arg, "the pool's store");
	for (size_t i = 0; i < p->njobs; i++)
		pool_job_free(p->jobs[i]);
	free(p->jobs);
	for (size_t i = 0; i < p->nunsaved; i++) { /* a last try; else the exit record settles it at the next start */
		(void)store_update(p->st, p->unsaved[i]);
		pool_job_free(p->unsaved[i]);
	}
	free(p->unsaved);
	free(p->dec);
	free(p->reap);
	store_close(p->st);
	if (p->lock_fd >= 0)
		close(p->lock_fd);
	tick_put(p->tick);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
	free(p);
}

void pool_stop(struct pool *p)
{
	pool_stop_noted(p, NULL, NULL);
}
