/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pool.c - the pool's scheduler thread and what happens to jobs (see pool.h;
 * starting and stopping the pool: pool_life.c).
 *
 * One mutex guards the jobs, the store and the last snapshot; the request
 * handlers (pool_ops.c) and the scheduler thread take it in turn. The
 * scheduler thread wakes on a submission or cancellation (pool_kick) and at
 * least every SCHED_TICK_MS: it settles jobs whose shim wrote an exit record,
 * escalates cancellations and time limits, folds new samples into the
 * running jobs' accounting and runs a scheduling pass.
 */
#include "pool_internal.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pool/runner.h"
#include "core/clock.h"
#include "core/test_hold.h"

#define SCHED_TICK_MS 50u

static uint64_t real_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t pool_now(const struct pool *p)
{
	return p->cfg.now_ns ? p->cfg.now_ns() : real_ns();
}

void pool_job_dir(const struct pool *p, uint64_t id, char *out, size_t outlen)
{
	snprintf(out, outlen, "%s/jobs/%llu", p->cfg.state_dir, (unsigned long long)id);
}

void pool_kick(struct pool *p)
{
	p->dirty = true;
	pthread_cond_signal(&p->cv);
}

void pool_count(const struct pool *p, unsigned *pending, unsigned *running)
{
	*pending = *running = 0;
	for (size_t i = 0; i < p->njobs; i++)
		if (p->jobs[i]->state == JOB_PENDING)
			(*pending)++;
		else
			(*running)++;
}

/* ---- the active list (sorted by id: ids only grow) ------------------------------ */

struct pool_job *pool_find_active(struct pool *p, uint64_t id)
{
	size_t lo = 0, hi = p->njobs;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (p->jobs[mid]->id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < p->njobs && p->jobs[lo]->id == id ? p->jobs[lo] : NULL;
}

int pool_add_active(struct pool *p, struct pool_job *j)
{
	if (p->njobs == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 256;
		struct pool_job **n = realloc(p->jobs, cap * sizeof(*n));
		if (!n)
			return -1;
		p->jobs = n;
		p->cap = cap;
	}
	size_t at = p->njobs;
	while (at > 0 && p->jobs[at - 1]->id > j->id)
		at--;
	memmove(&p->jobs[at + 1], &p->jobs[at], (p->njobs - at) * sizeof(*p->jobs));
	p->jobs[at] = j;
	p->njobs++;
	if (j->id > p->max_id)
		p->max_id = j->id;
	return 0;
}

static void pool_remove_active(struct pool *p, struct pool_job *j)
{
	for (size_t i = 0; i < p->njobs; i++)
		if (p->jobs[i] == j) {
			memmove(&p->jobs[i], &p->jobs[i + 1], (p->njobs - i - 1) * sizeof(*p->jobs));
			p->njobs--;
			return;
		}
}

void pool_job_free(struct pool_job *j)
{
	if (!j)
		return;
	acct_free(&j->acct);
	free(j->spec_json);
	free(j);
}

/* ---- ending jobs ----------------------------------------------------------------- */

void pool_save(struct pool *p, const struct pool_job *j)
{
	/* the store keeps its message; the job goes on in memory either way */
	(void)store_update(p->st, j);
}

void pool_cleanup_cgroup(struct pool *p, const char *dir)
{
	if (!dir[0])
		return;
	runner_cgroup_kill(dir); /* what the job left behind ends with it */
	if (!runner_cgroup_remove(dir) && p->ncleanup < sizeof(p->cleanup) / sizeof(p->cleanup[0]))
		snprintf(p->cleanup[p->ncleanup++], sizeof(p->cleanup[0]), "%s", dir);
}

/* The shim writes its exit record and then exits: wait for it later so it
 * leaves no zombie (a re-attached shim is not our child: ECHILD drops it). */
static void reap_later(struct pool *p, pid_t pid)
{
	if (pid <= 0 || waitpid(pid, NULL, WNOHANG) != 0)
		return;
	if (p->nreap == p->reap_cap) {
		size_t cap = p->reap_cap ? p->reap_cap * 2 : 64;
		pid_t *n = realloc(p->reap, cap * sizeof(*n));
		if (!n)
			return;
		p->reap = n;
		p->reap_cap = cap;
	}
	p->reap[p->nreap++] = pid;
}

static void reap_shims(struct pool *p)
{
	for (size_t i = 0; i < p->nreap;)
		if (waitpid(p->reap[i], NULL, WNOHANG) != 0)
			p->reap[i] = p->reap[--p->nreap];
		else
			i++;
}

void pool_settle(struct pool *p, struct pool_job *j, enum job_state state, const char *reason, uint64_t end_ns)
{
	reap_later(p, j->shim_pid);
	j->state = state;
	snprintf(j->reason, sizeof(j->reason), "%s", reason);
	j->end_ns = end_ns;
	if (j->start_ns && j->acct.n) {
		if (p->have_snap)
			acct_update(&j->acct, p->snap);
		uint64_t wall = end_ns > j->start_ns ? end_ns - j->start_ns : 0;
		for (unsigned i = 0; i < j->acct.n; i++) {
			struct acct_summary s;
			acct_summarize(&j->acct, i, wall, &s);
			(void)store_put_acct(p->st, j->id, &s);
		}
	}
	if (j->start_ns)
		pool_logs_trim(p, j); /* what it wrote since the last check */
	bool saved = store_update(p->st, j) == 0;
	if (p->cfg.on_job)
		p->cfg.on_job(p->cfg.on_job_arg, j);
	if (j->shim_pid > 0 && state != JOB_DONE && pool_job_is_container(j))
		reap_later(p, pool_container_remove(p, j)); /* --rm did not run: cancelled, killed, lost */
	pool_cleanup_cgroup(p, j->cgroup);
	pool_devices_cleanup(p, j);
	pool_remove_active(p, j);
	struct pool_job **grown = saved ? NULL : realloc(p->unsaved, (p->nunsaved + 1) * sizeof(*grown));
	if (grown) { /* written once the store takes it again (pool_retry_unsaved) */
		p->unsaved = grown;
		p->unsaved[p->nunsaved++] = j;
	} else {
		pool_job_free(j);
	}
	p->dirty = true;
}

/* Ended jobs whose row the store refused (its disk was full): written as
 * soon as it takes them, so the record ends as the job did. */
void pool_retry_unsaved(struct pool *p)
{
	for (size_t i = 0; i < p->nunsaved;)
		if (store_update(p->st, p->unsaved[i]) == 0) {
			pool_job_free(p->unsaved[i]);
			p->unsaved[i] = p->unsaved[--p->nunsaved];
		} else {
			i++;
		}
}

/* The program of a job run without a shell when it is a path (holds a '/'):
 * true with it in out (shortened to fit), false for a name looked up in PATH. */
static bool job_program(const struct pool_job *j, char *out, size_t outlen)
{
	json_t *spec = j->shell || !j->spec_json ? NULL : json_loads(j->spec_json, 0, NULL);
	const char *prog = json_string_value(json_array_get(json_object_get(spec, "argv"), 0));
	bool path = prog && strchr(prog, '/');
	if (path)
		snprintf(out, outlen, "%s", prog);
	json_decref(spec); /* prog is not used past here */
	return path;
}

void pool_settle_from_record(struct pool *p, struct pool_job *j, const struct runner_exit *x)
{
	char reason[200];
	enum job_state st;
	int ws = x->wait_status;
	j->exit_code = -1;
	j->exit_signal = 0;
	char program[120];
	if (x->stage == RUNNER_STAGE_EXEC && x->error == ENOENT && job_program(j, program, sizeof(program))) {
		st = JOB_FAILED; /* a name with a '/' is not searched for in PATH */
		snprintf(reason, sizeof(reason), "could not start: '%s' does not exist (as its user%s)", program,
			 program[0] == '/' ? "" : ", from the job's directory");
		j->exit_code = 127;
	} else if (x->stage == RUNNER_STAGE_EXEC && x->error == ENOENT) {
		st = JOB_FAILED;
		snprintf(reason, sizeof(reason), "could not start: command not found (in the job's PATH, as its user)");
		j->exit_code = 127;
	} else if (x->stage != RUNNER_STAGE_RAN) {
		st = JOB_FAILED;
		snprintf(reason, sizeof(reason), "could not start: %s failed: %s", runner_stage_name(x->stage),
			 strerror(x->error));
		j->exit_code = 127;
	} else if (WIFEXITED(ws)) {
		j->exit_code = WEXITSTATUS(ws);
		st = j->exit_code == 0 ? JOB_DONE : JOB_FAILED;
		snprintf(reason, sizeof(reason), "exited with code %d", j->exit_code);
	} else {
		j->exit_signal = WIFSIGNALED(ws) ? WTERMSIG(ws) : 0;
		st = JOB_FAILED;
		snprintf(reason, sizeof(reason), "killed by signal %d (%s)", j->exit_signal, strsignal(j->exit_signal));
	}
	if (j->cancel_as == JOB_CANCELLED || j->cancel_as == JOB_TIMEOUT) {
		char r2[200];
		snprintf(r2, sizeof(r2), "%.96s; %.100s",
			 j->cancel_as == JOB_TIMEOUT ? "time limit reached" : j->stop_note[0] ? j->stop_note : "cancelled",
			 reason);
		st = j->cancel_as;
		snprintf(reason, sizeof(reason), "%s", r2);
	}
	pool_settle(p, j, st, reason, x->end_ns ? x->end_ns : pool_now(p));
}

void pool_signal_stop(struct pool *p, struct pool_job *j, enum job_state as)
{
	if (!j->cancel_as)
		j->cancel_as = as;
	if (!j->job_pid) {
		char dir[512];
		int shim;
		pool_job_dir(p, j->id, dir, sizeof(dir));
		if (runner_read_pids(dir, &shim, &j->job_pid) != 1)
			j->job_pid = 0;
	}
	if (j->job_pid > 1 && !j->term_delivered) {
		kill(-j->job_pid, SIGTERM);
		j->term_delivered = true;
	}
	if (!j->term_sent_ns)
		j->term_sent_ns = pool_now(p);
}

/* Exit records, lost shims, cancellation grace, time limits. */
static void watch_running(struct pool *p)
{
	uint64_t now = pool_now(p);
	for (size_t i = 0; i < p->njobs;) {
		struct pool_job *j = p->jobs[i];
		if (j->state != JOB_RUNNING || j->shim_pid == POOL_SLURM_SHIM) { /* Slurm's epilog ends those */
			i++;
			continue;
		}
		char dir[512];
		pool_job_dir(p, j->id, dir, sizeof(dir));
		if (j->shim_pid > 0)
			waitpid(j->shim_pid, NULL, WNOHANG); /* our child: reap; re-attached: ECHILD */
		bool alive = proc_alive_as(j->shim_pid, j->shim_start_ticks);
		struct runner_exit x;
		int rc = runner_read_exit(dir, &x);
		if (rc == 1) {
			pool_settle_from_record(p, j, &x);
			continue;
		}
		if (!alive) {
			pool_settle(p, j, JOB_LOST, rc < 0 ? "its exit record is unreadable"
							    : "its shim ended without an exit record (killed?)", now);
			continue;
		}
		if (!j->job_pid) {
			int shim;
			if (runner_read_pids(dir, &shim, &j->job_pid) != 1)
				j->job_pid = 0;
		}
		if (j->cancel_as && !j->term_delivered) /* asked before the job's pid was known */
			pool_signal_stop(p, j, j->cancel_as);
		if (j->time_limit_ns && !j->cancel_as && now >= j->start_ns + j->time_limit_ns)
			pool_signal_stop(p, j, JOB_TIMEOUT);
		if (j->cancel_as && j->term_sent_ns && now >= j->term_sent_ns + p->cfg.kill_grace_ns) {
			if (j->job_pid > 1)
				kill(-j->job_pid, SIGKILL);
			if (j->cgroup[0])
				runner_cgroup_kill(j->cgroup);
		}
		i++;
	}
	reap_shims(p);
	pool_retry_unsaved(p);
	pool_logs_tick(p);
	for (unsigned k = 0; k < p->ncleanup;)
		if (runner_cgroup_remove(p->cleanup[k]))
			memmove(p->cleanup[k], p->cleanup[--p->ncleanup], sizeof(p->cleanup[0]));
		else
			k++;
}

/* ---- the sampler's view ------------------------------------------------------------ */

#define MAX_SHIMS 512

/* The shim pids of the pool's jobs (the first MAX_SHIMS); returns how many. */
static unsigned collect_shims(const struct pool *p, int shims[MAX_SHIMS])
{
	unsigned n = 0;
	for (size_t i = 0; i < p->njobs && n < MAX_SHIMS; i++)
		if (p->jobs[i]->shim_pid > 0)
			shims[n++] = p->jobs[i]->shim_pid;
	return n;
}

/* Simulated processes are not host processes: always foreign. On real GPUs
 * a process is the pool's when it descends from a job's shim or runs in a
 * job's cgroup (a container's), and a pid gone since the sample was taken
 * no longer counts. */
static bool proc_foreign(const struct pool *p, int pid, const int *shims, unsigned nshim)
{
	if (p->simulated)
		return true;
	struct proc_stat ps;
	if (proc_stat_read(pid, &ps) != 0)
		return false;
	return !proc_in_jobs(pid, shims, nshim) && !pool_proc_in_job_cgroup(p, pid);
}

/* Idle allocations (idle.h): the job's GPUs in the new snapshot (a MIG
 * slice: its GPU instance's figures); with pool_idle_cancel, a flagged job
 * of the pool's own is stopped as cancelled with the reason. p->mu held. */
static void watch_idle(struct pool *p, struct pool_job *j)
{
	unsigned gpus[GPU_MAX_GPUS], n = 0;
	for (unsigned i = 0; i < j->acct.n && n < GPU_MAX_GPUS; i++)
		gpus[n++] = j->acct.g[i].gpu;
	double sm = 0;
	bool have = j->mig_gpu < 0 ? idle_job_sample(p->snap, gpus, n, j->start_ns, &sm)
				   : idle_mig_sample(p->snap, (unsigned)j->mig_gpu, (unsigned)j->mig_gi, j->start_ns, &sm);
	if (!idle_observe(&j->idle, &p->cfg.idle, pool_now(p), have, sm)) {
		j->idle_note[0] = '\0';
		return;
	}
	idle_describe(&p->cfg.idle, j->idle_note, sizeof(j->idle_note));
	if (p->cfg.idle_cancel && !j->cancel_as && j->shim_pid != POOL_SLURM_SHIM) {
		snprintf(j->stop_note, sizeof(j->stop_note), "%s", j->idle_note);
		pool_signal_stop(p, j, JOB_CANCELLED);
	}
}

/* Takes in the ticker's current tick when it is not the one the pool has:
 * health's verdicts and which GPUs run processes the pool did not start.
 * The tick's snapshot stays the pool's until the next (the reference).
 * Called without p->mu. */
void pool_refresh_view(struct pool *p)
{
	struct tick *t = ticker_get(p->ticker);
	pthread_mutex_lock(&p->mu);
	if (!t || t == p->tick) {
		pthread_mutex_unlock(&p->mu);
		tick_put(t);
		return;
	}
	struct tick *old = p->tick;
	p->tick = t;
	p->snap = t->snap;
	p->have_snap = true;
	int shims[MAX_SHIMS];
	unsigned nshim = collect_shims(p, shims);
	for (unsigned g = 0; g < p->snap->n && g < GPU_MAX_GPUS; g++) {
		const struct gpu_view *v = &p->snap->gpu[g];
		p->gpu_fail[g] = t->rep_ok && health_gpu_verdict(t->rep, g) == HEALTH_FAIL;
		p->gpu_foreign[g] = false;
		p->gpu_foreign_pid[g] = 0;
		for (unsigned k = 0; k < v->nproc && !p->gpu_foreign[g]; k++)
			if (v->procs[k].type != 'G' && v->procs[k].mig_gi < 0 &&
			    proc_foreign(p, (int)v->procs[k].pid, shims, nshim)) {
				p->gpu_foreign[g] = true;
				p->gpu_foreign_pid[g] = (unsigned)v->procs[k].pid;
			}
	}
	for (size_t i = 0; i < p->njobs; i++)
		if (p->jobs[i]->state == JOB_RUNNING) {
			acct_update(&p->jobs[i]->acct, p->snap);
			watch_idle(p, p->jobs[i]);
		}
	p->dirty = true;
	pthread_mutex_unlock(&p->mu);
	tick_put(old);
}

/* A MIG instance is free for the pool when no foreign process runs in it. */
static bool mig_foreign(const struct pool *p, const struct gpu_view *v, unsigned gi, const int *shims, unsigned n)
{
	for (unsigned k = 0; k < v->nproc; k++)
		if (v->procs[k].mig_gi == (int)gi && proc_foreign(p, (int)v->procs[k].pid, shims, n))
			return true;
	return false;
}

/* ---- scheduling ---------------------------------------------------------------------- */

static bool job_has_ended(uint64_t id, void *arg)
{
	struct pool *p = arg;
	return id <= p->max_id && pool_find_active(p, id) == NULL;
}

static int append_env(char ***env, size_t *n, const char *key, const char *value)
{
	size_t len = strlen(key) + strlen(value) + 2;
	char *e = malloc(len);
	char **grown = realloc(*env, (*n + 2) * sizeof(char *));
	if (!e || !grown) {
		free(e);
		if (grown)
			*env = grown;
		return -1;
	}
	*env = grown;
	snprintf(e, len, "%s=%s", key, value);
	(*env)[(*n)++] = e;
	(*env)[*n] = NULL;
	return 0;
}

static void free_strv(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/* argv, env and cwd of a job from its stored spec, with the pool's variables. */
static int job_exec_spec(const struct pool_job *j, char ***argv, char ***env, char *cwd, size_t cwdlen,
			 char *err, size_t errlen)
{
	*argv = *env = NULL;
	json_t *spec = json_loads(j->spec_json, 0, NULL);
	json_t *a = json_object_get(spec, "argv"), *e = json_object_get(spec, "env");
	const char *c = json_string_value(json_object_get(spec, "cwd"));
	if (!spec || !json_is_array(a) || !json_array_size(a) || !json_is_array(e) || !c) {
		json_decref(spec);
		snprintf(err, errlen, "the job's stored command is damaged");
		return -1;
	}
	snprintf(cwd, cwdlen, "%s", c);
	*argv = calloc(json_array_size(a) + 1, sizeof(char *));
	size_t n = 0;
	*env = calloc(1, sizeof(char *));
	int rc = *argv && *env ? 0 : -1;
	for (size_t i = 0; rc == 0 && i < json_array_size(a); i++)
		if (!((*argv)[i] = strdup(json_string_value(json_array_get(a, i)) ?: "")))
			rc = -1;
	static const char *const ours[] = { "CUDA_VISIBLE_DEVICES=", "GPUCTL_JOB_ID=", "GPUCTL_JOB_GPUS=" };
	for (size_t i = 0; rc == 0 && i < json_array_size(e); i++) {
		const char *kv = json_string_value(json_array_get(e, i));
		bool skip = !kv;
		for (size_t k = 0; !skip && k < 3; k++)
			skip = strncmp(kv, ours[k], strlen(ours[k])) == 0;
		if (skip)
			continue;
		char *dup = strchr(kv, '=') ? strdup(kv) : NULL;
		char **grown = dup ? realloc(*env, (n + 2) * sizeof(char *)) : NULL;
		if (!grown) {
			free(dup);
			rc = -1;
			break;
		}
		*env = grown;
		(*env)[n++] = dup;
		(*env)[n] = NULL;
	}
	char ids[GPU_MAX_GPUS * 3 + 4] = "", idbuf[24];
	for (unsigned g = 0; g < GPU_MAX_GPUS; g++)
		if (j->gpu_mask >> g & 1) {
			snprintf(idbuf, sizeof(idbuf), "%s%u", ids[0] ? "," : "", g);
			strncat(ids, idbuf, sizeof(ids) - strlen(ids) - 1);
		}
	if (j->mig_gpu >= 0)
		snprintf(ids, sizeof(ids), "%d", j->mig_gpu);
	char idstr[24];
	snprintf(idstr, sizeof(idstr), "%llu", (unsigned long long)j->id);
	if (rc == 0)
		rc = append_env(env, &n, "CUDA_VISIBLE_DEVICES", j->devices) |
		     append_env(env, &n, "GPUCTL_JOB_ID", idstr) | append_env(env, &n, "GPUCTL_JOB_GPUS", ids);
	json_decref(spec);
	if (rc) {
		free_strv(*argv);
		free_strv(*env);
		*argv = *env = NULL;
		snprintf(err, errlen, "out of memory");
	}
	return rc;
}

static const char *env_get(char **env, const char *key)
{
	size_t n = strlen(key);
	for (size_t i = 0; env && env[i]; i++)
		if (strncmp(env[i], key, n) == 0 && env[i][n] == '=')
			return env[i] + n + 1;
	return NULL;
}

static void start_job(struct pool *p, struct pool_job *j, const struct sched_decision *d,
		      const struct sched_mig *migs)
{
	char dir[512], msg[300];
	pool_job_dir(p, j->id, dir, sizeof(dir));
	j->gpu_mask = 0;
	j->mig_gpu = j->mig_gi = -1;
	j->devices[0] = '\0';
	unsigned gpus[GPU_MAX_GPUS], ng = 0;
	if (d->mig_index >= 0) {
		const struct sched_mig *m = &migs[d->mig_index];
		j->mig_gpu = (int)m->gpu;
		j->mig_gi = (int)m->gi_id;
		snprintf(j->devices, sizeof(j->devices), "%s", m->uuid);
		gpus[ng++] = m->gpu;
	} else {
		for (unsigned k = 0; k < d->place.count; k++) {
			unsigned g = d->place.gpu[k];
			j->gpu_mask |= 1ull << g;
			gpus[ng++] = g;
			const struct gpu_view *v = &p->snap->gpu[g];
			char one[112];
			if (VAL_HAS(v->st.uuid))
				snprintf(one, sizeof(one), "%s%s", k ? "," : "", v->st.uuid.s);
			else
				snprintf(one, sizeof(one), "%s%u", k ? "," : "", g);
			strncat(j->devices, one, sizeof(j->devices) - strlen(j->devices) - 1);
		}
	}
	j->start_ns = pool_now(p);
	snprintf(j->boot_id, sizeof(j->boot_id), "%s", p->boot_id);
	j->state = JOB_STARTING;
	snprintf(j->reason, sizeof(j->reason), "starting");
	j->cgroup[0] = '\0';
	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		snprintf(msg, sizeof(msg), "could not start: cannot create '%.200s': %s", dir, strerror(errno));
		pool_settle(p, j, JOB_FAILED, msg, j->start_ns);
		return;
	}
	if (p->cgroup_base[0] && runner_cgroup_create(p->cgroup_base, p->cgroup_tag, j->id, j->cgroup, sizeof(j->cgroup), msg,
						      sizeof(msg)))
		j->cgroup[0] = '\0';
	char v1_dir[512] = "", devices_warning[sizeof(j->reason)] = "";
	if (p->devcg.method != DEVCG_NONE && pool_limit_devices(p, j, gpus, ng, msg, v1_dir, sizeof(v1_dir))) {
		char r[300];
		snprintf(r, sizeof(r), "could not start: limiting its devices failed: %.220s", msg);
		if (p->cfg.isolation == POOL_ISOLATION_STRICT) {
			pool_settle(p, j, JOB_FAILED, r, pool_now(p));
			return;
		}
		snprintf(devices_warning, sizeof(devices_warning), "running; devices not limited: %.160s", msg);
		pool_devices_warn(dir, msg);
	}
	pool_save(p, j); /* "starting" is durable before the fork */
	char v1_procs[600];
	snprintf(v1_procs, sizeof(v1_procs), "%s/cgroup.procs", v1_dir);

	char **argv = NULL, **env = NULL, cwd[PROTO_MAX_PATH];
	gid_t groups[256];
	int ngroups = 0;
	if (job_exec_spec(j, &argv, &env, cwd, sizeof(cwd), msg, sizeof(msg)) ||
	    (pool_job_is_container(j) && /* then argv becomes podman's */
	     pool_container_wrap(p, j, &argv, env, env_get(env, "GPUCTL_JOB_GPUS"), msg, sizeof(msg)))) {
		char r[300];
		snprintf(r, sizeof(r), "could not start: %.250s", msg);
		free_strv(argv);
		free_strv(env);
		pool_settle(p, j, JOB_FAILED, r, pool_now(p));
		return;
	}
	bool change_user = p->euid == 0 && j->uid != 0;
	if (change_user) {
		ngroups = 256;
		if (getgrouplist(j->user, j->gid, groups, &ngroups) < 0 || ngroups < 0) {
			ngroups = 1;
			groups[0] = j->gid;
		}
	}
	struct runner_spec rs = {
		.job_dir = dir, .change_user = change_user, .uid = j->uid, .gid = j->gid, .groups = groups,
		.ngroups = ngroups, .cwd = cwd, .path = argv[0], .search_path = env_get(env, "PATH"),
		.argv = argv, .envp = env,
		.cgroup_dir = j->cgroup[0] ? j->cgroup : NULL,
		.devices_v1_procs = v1_dir[0] ? v1_procs : NULL,
		.log_limit = p->cfg.log_limit,
	};
	pid_t shim;
	int rc = runner_spawn(&rs, &shim, msg, sizeof(msg));
	free_strv(argv);
	free_strv(env);
	if (rc) {
		char r[300];
		snprintf(r, sizeof(r), "could not start: %.250s", msg);
		pool_settle(p, j, JOB_FAILED, r, pool_now(p));
		return;
	}
	struct proc_stat ps;
	j->shim_pid = shim;
	j->shim_start_ticks = proc_stat_read(shim, &ps) == 0 ? ps.start_ticks : 0;
	j->state = JOB_RUNNING;
	snprintf(j->reason, sizeof(j->reason), "%s", devices_warning[0] ? devices_warning : "running");
	pool_save(p, j);
	if (p->cfg.on_job)
		p->cfg.on_job(p->cfg.on_job_arg, j);
	if (acct_begin(&j->acct, gpus, ng, p->have_snap ? p->snap : NULL) == 0) {
		acct_set_start(&j->acct, j->start_ns);
		acct_set_mig(&j->acct, j->mig_gi);
	}
}

void pool_place_view(const struct pool *p, struct place_gpu *out)
{
	for (unsigned g = 0; g < p->snap->n && g < GPU_MAX_GPUS; g++) {
		const struct gpu_view *v = &p->snap->gpu[g];
		struct place_gpu *pg = &out[g];
		memset(pg, 0, sizeof(*pg));
		pg->lost = !v->up || v->s.lost;
		pg->unhealthy = p->gpu_fail[g];
		pg->foreign = p->gpu_foreign[g];
		pg->foreign_pid = p->gpu_foreign_pid[g];
		pg->mig_mode = VAL_HAS(v->st.mig_mode) && v->st.mig_mode.v == 1;
		pg->mem_known = VAL_HAS(v->s.mem_free_bytes);
		pg->mem_free_bytes = pg->mem_known ? v->s.mem_free_bytes.v : 0;
		pg->mem_total_bytes = VAL_HAS(v->st.mem_total_bytes) ? v->st.mem_total_bytes.v : 0;
	}
}

static int ensure_dec(struct pool *p, size_t n)
{
	if (n <= p->dec_cap)
		return 0;
	struct sched_decision *d = realloc(p->dec, n * sizeof(*d));
	if (!d)
		return -1;
	p->dec = d;
	p->dec_cap = n;
	return 0;
}

_Static_assert(sizeof(((struct pool_job *)0)->reason) >= SCHED_REASON_LEN, "reason too short");

/* One scheduling pass over the active jobs (p->mu held). */
static void schedule(struct pool *p)
{
	p->dirty = false;
	if (!p->have_snap) {
		for (size_t i = 0; i < p->njobs; i++)
			if (p->jobs[i]->state == JOB_PENDING)
				snprintf(p->jobs[i]->reason, sizeof(p->jobs[i]->reason), "waiting for the first GPU sample");
		return;
	}
	size_t np = 0, nr = 0;
	for (size_t i = 0; i < p->njobs; i++)
		if (p->jobs[i]->state == JOB_PENDING)
			np++;
		else
			nr++;
	if (np == 0)
		return;
	char full[SCHED_REASON_LEN];
	if (pool_disk_low(p, full, sizeof(full))) { /* they wait: starting would fail to record it */
		for (size_t i = 0; i < p->njobs; i++)
			if (p->jobs[i]->state == JOB_PENDING)
				snprintf(p->jobs[i]->reason, sizeof(p->jobs[i]->reason), "%s", full);
		return;
	}
	struct sched_job *pending = calloc(np, sizeof(*pending));
	struct sched_running *running = calloc(nr ? nr : 1, sizeof(*running));
	struct sched_mig *migs = calloc(GPU_MAX_GPUS * GPU_MAX_MIG, sizeof(*migs));
	if (!pending || !running || !migs || ensure_dec(p, np))
		goto out;
	struct sched_input in = { 0 };
	in.now_ns = pool_now(p);
	in.n = p->snap->n;
	in.link = (const struct gpu_link(*)[GPU_MAX_GPUS])p->snap->link;
	in.has_ended = job_has_ended;
	in.arg = p;
	in.max_gpus_per_user = p->cfg.max_gpus_per_user;
	int shims[MAX_SHIMS];
	unsigned nshim = collect_shims(p, shims);
	size_t ip = 0, ir = 0;
	for (size_t i = 0; i < p->njobs; i++) {
		const struct pool_job *j = p->jobs[i];
		if (j->state == JOB_PENDING) {
			struct sched_job *s = &pending[ip++];
			s->id = j->id;
			s->priority = j->priority;
			s->uid = j->uid;
			s->submit_ns = j->submit_ns;
			s->time_limit_ns = j->time_limit_ns;
			s->after_job = j->after;
			s->req.count = j->req_gpus;
			s->req.need_nvlink = j->req_nvlink;
			s->req.mem_per_gpu = j->req_mem;
			s->req.allowed_mask = j->req_mask;
			memcpy(s->mig_profile, j->mig_profile, sizeof(s->mig_profile));
		} else {
			struct sched_running *r = &running[ir++];
			r->id = j->id;
			r->uid = j->uid;
			r->gpu_mask = j->gpu_mask;
			r->end_ns = j->time_limit_ns ? j->start_ns + j->time_limit_ns : UINT64_MAX;
			r->mig_gpu = j->mig_gpu;
			r->mig_gi = j->mig_gi;
			r->slurm_job = pool_slurm_job_id(j);
		}
	}
	pool_place_view(p, in.gpu);
	for (unsigned g = 0; g < in.n; g++) {
		const struct gpu_view *v = &p->snap->gpu[g];
		for (unsigned k = 0; k < v->nmig && in.nmig < GPU_MAX_GPUS * GPU_MAX_MIG; k++) {
			if (mig_foreign(p, v, v->mig[k].gi_id, shims, nshim))
				continue;
			struct sched_mig *m = &migs[in.nmig++];
			m->gpu = g;
			m->gi_id = v->mig[k].gi_id;
			snprintf(m->profile, sizeof(m->profile), "%s", v->mig[k].profile);
			snprintf(m->uuid, sizeof(m->uuid), "%s", v->mig[k].uuid);
		}
	}
	in.mig = migs;
	in.pending = pending;
	in.npending = (unsigned)np;
	in.running = running;
	in.nrunning = (unsigned)nr;
	sched_pass(&in, p->dec);
	for (size_t k = 0; k < np; k++) {
		const struct sched_decision *d = &p->dec[k];
		struct pool_job *j = pool_find_active(p, d->job_id);
		if (!j)
			continue;
		if (d->start) {
			start_job(p, j, d, migs);
		} else {
			memcpy(j->reason, d->reason, sizeof(d->reason)); /* NUL-terminated within */
			j->est_start_ns = d->est_start_ns;
		}
	}
out:
	free(pending);
	free(running);
	free(migs);
}

void *pool_sched_thread(void *arg)
{
	struct pool *p = arg;
	for (;;) {
		pool_refresh_view(p);
		pthread_mutex_lock(&p->mu);
		atomic_store(&p->sched_in_pass, true);
		/* tests/cli/agent_stop.sh: the scheduler wedged holding the lock */
		test_hold("GPUCTL_TEST_HOLD_SCHEDULER");
		if (p->stopping) {
			atomic_store(&p->sched_in_pass, false);
			pthread_mutex_unlock(&p->mu);
			break;
		}
		watch_running(p);
		/* A pass may not follow the last one sooner than that one took: with
		 * 10 000 queued jobs a burst of submissions is scheduled in batches
		 * and keeps getting the lock, while a short queue is not delayed. */
		uint64_t wait_ns = (uint64_t)SCHED_TICK_MS * 1000000ull;
		if (p->dirty) {
			uint64_t t0 = clock_mono_ns(), ready = p->last_pass_end_mono + p->last_pass_ns;
			if (t0 >= ready) {
				schedule(p);
				p->last_pass_end_mono = clock_mono_ns();
				p->last_pass_ns = p->last_pass_end_mono - t0;
				p->passes++;
			} else {
				wait_ns = ready - t0;
			}
		}
		atomic_store(&p->sched_in_pass, false);
		if (!p->stopping && (!p->dirty || wait_ns < (uint64_t)SCHED_TICK_MS * 1000000ull)) {
			struct timespec ts;
			uint64_t until = clock_mono_ns() + wait_ns; /* the condition variable runs on CLOCK_MONOTONIC */
			ts.tv_sec = (time_t)(until / 1000000000ull);
			ts.tv_nsec = (long)(until % 1000000000ull);
			pthread_cond_timedwait(&p->cv, &p->mu, &ts);
		}
		pthread_mutex_unlock(&p->mu);
	}
	return NULL;
}
