/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pool_ops.c - the answers to control requests (docs/pool.md, "Protocol").
 *
 * Every request is parsed and checked (proto.c) before anything is touched;
 * then the caller's rights: a user reads and cancels only their own jobs,
 * root any; an agent that is not root runs only its own user's jobs.
 */
#include "pool_internal.h"

#include "core/abuf.h"
#include "pool/joblog.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool may_access(const struct pool_caller *c, const struct pool_job *j)
{
	return c->uid == 0 || c->uid == j->uid;
}

static void user_name(uid_t uid, char *out, size_t outlen)
{
	struct passwd pw, *res = NULL;
	char buf[4096];
	if (getpwuid_r(uid, &pw, buf, sizeof(buf), &res) == 0 && res)
		snprintf(out, outlen, "%s", pw.pw_name);
	else
		snprintf(out, outlen, "%u", (unsigned)uid);
}

static json_t *strings_array(char **v, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < n; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

json_t *pool_admit(struct pool *p, struct pool_job *j, const char *oom_reason)
{
	if (store_insert(p->st, j)) {
		json_t *e = proto_errorf("%s", store_error(p->st));
		pool_job_free(j);
		return e;
	}
	if (pool_add_active(p, j)) {
		/* keep the store and memory in agreement: the job did not happen */
		pool_settle(p, j, JOB_FAILED, oom_reason, pool_now(p));
		return proto_error("out of memory");
	}
	return NULL;
}

static json_t *do_submit(struct pool *p, const struct pool_caller *c, const struct proto_submit *s)
{
	if (p->euid != 0 && c->uid != p->euid)
		return proto_errorf("this pool runs as uid %u and runs only that user's jobs", (unsigned)p->euid);
	if (p->have_snap) {
		unsigned n = p->snap->n;
		if (s->gpu_ids && (n >= 64 ? 0 : s->gpu_ids >> n))
			return proto_errorf("'gpu_ids' names a GPU this server does not have (it has %u)", n);
		if (s->mig[0]) {
			bool found = false;
			for (unsigned g = 0; g < n && !found; g++)
				for (unsigned k = 0; k < p->snap->gpu[g].nmig; k++)
					if (strcmp(p->snap->gpu[g].mig[k].profile, s->mig) == 0)
						found = true;
			if (!found)
				return proto_errorf("no MIG instance of profile '%s' on this server (the pool never changes "
						    "the MIG layout)", s->mig);
		} else {
			struct place_request req = { .count = s->gpus, .need_nvlink = s->nvlink, .allowed_mask = s->gpu_ids,
						     .mem_per_gpu = s->mem_per_gpu };
			struct place_gpu g[GPU_MAX_GPUS];
			char why[300];
			pool_place_view(p, g);
			if (!place_possible(n, (const struct gpu_link(*)[GPU_MAX_GPUS])p->snap->link, g, &req, why, sizeof(why)))
				return proto_errorf("%s", why);
		}
	}
	if (p->cfg.max_jobs_per_user) {
		unsigned mine = 0;
		for (size_t i = 0; i < p->njobs; i++)
			mine += p->jobs[i]->uid == c->uid;
		if (mine >= p->cfg.max_jobs_per_user)
			return proto_errorf("refused: you have %u jobs pending or running, the most one user may have here "
					    "(pool_user_job_limit)", mine);
	}
	char why[300];
	if (pool_container_check_mounts(p, s->mounts, s->nmounts, why, sizeof(why)))
		return proto_error(why);
	if (s->after && s->after > p->max_id)
		return proto_errorf("no job %llu to wait for", (unsigned long long)s->after);

	struct pool_job *j = calloc(1, sizeof(*j));
	if (!j)
		return proto_error("out of memory");
	j->uid = c->uid;
	j->gid = c->gid;
	user_name(c->uid, j->user, sizeof(j->user));
	snprintf(j->name, sizeof(j->name), "%s", s->name);
	j->state = JOB_PENDING;
	snprintf(j->reason, sizeof(j->reason), "queued");
	j->priority = s->priority;
	j->submit_ns = pool_now(p);
	j->time_limit_ns = s->time_limit_s * 1000000000ull;
	j->after = s->after;
	j->req_gpus = s->mig[0] ? 0 : s->gpus;
	j->req_mask = s->gpu_ids;
	j->req_nvlink = s->nvlink;
	j->req_mem = s->mem_per_gpu;
	snprintf(j->mig_profile, sizeof(j->mig_profile), "%s", s->mig);
	j->shell = s->shell;
	j->mig_gpu = j->mig_gi = -1;
	j->exit_code = -1;
	json_t *argv = s->shell ? json_pack("[s, s, s]", "/bin/sh", "-c", s->argv[0]) : strings_array(s->argv, s->argc);
	json_t *spec = json_pack("{s:o, s:o, s:s}", "argv", argv, "env", strings_array(s->env, s->envc), "cwd", s->cwd);
	if (spec && s->image[0] && /* a container job: pool_container.c reads these */
	    json_object_update_new(spec, json_pack("{s:s, s:s, s:o, s:o}", "image", s->image, "runtime", s->runtime,
						   "mounts", strings_array(s->mounts, s->nmounts), "container_env",
						   strings_array(s->cenv, s->ncenv)))) {
		json_decref(spec);
		spec = NULL;
	}
	j->spec_json = spec ? json_dumps(spec, JSON_COMPACT) : NULL;
	json_decref(spec);
	if (!j->spec_json) {
		pool_job_free(j);
		return proto_error("out of memory");
	}
	json_t *e = pool_admit(p, j, "out of memory queueing it");
	if (e)
		return e;
	pool_kick(p);
	return json_pack("{s:b, s:I, s:s}", "ok", 1, "job", (json_int_t)j->id, "state", "pending");
}

static int cmp_queue(const void *pa, const void *pb)
{
	const struct pool_job *a = *(const struct pool_job *const *)pa, *b = *(const struct pool_job *const *)pb;
	if ((a->state == JOB_PENDING) != (b->state == JOB_PENDING))
		return a->state == JOB_PENDING ? 1 : -1;
	if (a->state != JOB_PENDING)
		return a->id < b->id ? -1 : 1;
	struct sched_job x = { .id = a->id, .priority = a->priority, .submit_ns = a->submit_ns };
	struct sched_job y = { .id = b->id, .priority = b->priority, .submit_ns = b->submit_ns };
	return sched_job_order(&x, &y);
}

/* The queue as text, first its first member (see pool_queue_render). Under
 * p->mu. NULL when out of memory. */
static char *do_queue(struct pool *p, const char *first)
{
	struct pool_job **v = malloc((p->njobs ? p->njobs : 1) * sizeof(*v));
	if (!v)
		return NULL;
	if (p->njobs)
		memcpy(v, p->jobs, p->njobs * sizeof(*v));
	qsort(v, p->njobs, sizeof(*v), cmp_queue);
	struct abuf b;
	abuf_init(&b);
	pool_queue_render(&b, first, v, p->njobs, p->simulated, p->devcg.note);
	free(v);
	if (b.oom) {
		abuf_free(&b);
		return NULL;
	}
	return b.p;
}

char *pool_queue_doc(struct pool *p)
{
	pthread_mutex_lock(&p->mu);
	char *text = do_queue(p, "\"pool\":true");
	pthread_mutex_unlock(&p->mu);
	return text;
}

/* The job (active, else from the store) into *out; NULL on success, else the error response. */
static json_t *find_job(struct pool *p, const struct pool_caller *c, uint64_t id, struct pool_job **active,
			struct pool_job *stored)
{
	*active = pool_find_active(p, id);
	const struct pool_job *j = *active;
	if (!j) {
		int rc = id <= p->max_id ? store_get(p->st, id, stored) : 0;
		if (rc < 0)
			return proto_errorf("%s", store_error(p->st));
		if (rc == 0)
			return proto_errorf("no job %llu", (unsigned long long)id);
		j = stored;
	}
	if (!may_access(c, j)) {
		if (!*active)
			free(stored->spec_json);
		return proto_errorf("job %llu belongs to another user", (unsigned long long)id);
	}
	return NULL;
}

json_t *pool_job_with_acct(struct pool *p, const struct pool_job *j, bool active)
{
	json_t *o = pool_job_json(j, true, NULL);
	struct acct_summary a[GPU_MAX_GPUS];
	unsigned n = 0;
	if (active) {
		uint64_t now = pool_now(p);
		uint64_t wall = j->start_ns && now > j->start_ns ? now - j->start_ns : 0;
		for (unsigned i = 0; i < j->acct.n && n < GPU_MAX_GPUS; i++)
			acct_summarize(&j->acct, i, wall, &a[n++]);
	} else if (store_get_acct(p->st, j->id, a, GPU_MAX_GPUS, &n)) {
		n = 0;
	}
	if (o && (n || j->start_ns))
		json_object_set_new(o, "accounting", pool_acct_json(a, n));
	return o;
}

static json_t *do_show(struct pool *p, const struct pool_caller *c, uint64_t id)
{
	struct pool_job *active, stored;
	json_t *e = find_job(p, c, id, &active, &stored);
	if (e)
		return e;
	const struct pool_job *j = active ? active : &stored;
	json_t *o = pool_job_with_acct(p, j, active != NULL);
	if (!active)
		free(stored.spec_json);
	return json_pack("{s:b, s:o}", "ok", 1, "job", o);
}

static json_t *do_cancel(struct pool *p, const struct pool_caller *c, uint64_t id)
{
	struct pool_job *j, stored;
	json_t *e = find_job(p, c, id, &j, &stored);
	if (e)
		return e;
	if (!j) {
		json_t *r = proto_errorf("job %llu already ended (%s)", (unsigned long long)id, job_state_name(stored.state));
		free(stored.spec_json);
		return r;
	}
	if (j->shim_pid == POOL_SLURM_SHIM)
		return proto_errorf("job %llu is Slurm job %llu: cancel it with scancel", (unsigned long long)id,
				    (unsigned long long)pool_slurm_job_id(j));
	char who[40];
	user_name(c->uid, who, sizeof(who));
	if (j->state == JOB_PENDING) {
		char reason[120];
		snprintf(reason, sizeof(reason), "cancelled by %s before it started", who);
		pool_settle(p, j, JOB_CANCELLED, reason, pool_now(p));
		pool_kick(p);
		return json_pack("{s:b, s:I, s:s}", "ok", 1, "job", (json_int_t)id, "state", "cancelled");
	}
	pool_signal_stop(p, j, JOB_CANCELLED);
	pool_kick(p);
	return json_pack("{s:b, s:I, s:s, s:I}", "ok", 1, "job", (json_int_t)id, "state", "cancelling", "grace_s",
			 (json_int_t)(p->cfg.kill_grace_ns / 1000000000ull));
}

/* The job's output after offset: the data there, or with raw the range the
 * answer goes on with (*more); what the log limit dropped is skipped and
 * counted ("skipped"). */
static json_t *do_logs(struct pool *p, const struct pool_caller *c, const struct proto_request *r,
		       struct pool_stream *more)
{
	struct pool_job *j, stored;
	json_t *e = find_job(p, c, r->job, &j, &stored);
	if (e)
		return e;
	enum job_state state = j ? j->state : stored.state;
	uint64_t end_ns = j ? 0 : stored.end_ns;
	if (!j)
		free(stored.spec_json);
	char path[600];
	pool_job_dir(p, r->job, path, sizeof(path));
	size_t dirlen = strlen(path);
	strncat(path, r->stream == 2 ? "/stderr" : "/stdout", sizeof(path) - strlen(path) - 1);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 && errno != ENOENT)
		return proto_errorf("cannot read the job's output: %s", strerror(errno));
	path[dirlen] = '\0';
	struct stat sb;
	if (fd < 0 && job_state_ended(state) && p->cfg.log_retention_ns && end_ns &&
	    pool_now(p) - end_ns >= p->cfg.log_retention_ns && stat(path, &sb) != 0)
		return proto_errorf("job %llu's output was removed %llu s after it ended (pool_log_retention)",
				    (unsigned long long)r->job, (unsigned long long)(p->cfg.log_retention_ns / 1000000000ull));
	uint64_t size = 0, skip = 0, len = 0;
	if (fd >= 0 && fstat(fd, &sb) == 0)
		size = (uint64_t)sb.st_size;
	if (fd >= 0)
		joblog_segment(fd, r->offset, size, &skip, &len);
	uint64_t at = r->offset + skip;
	if (r->raw) {
		if (skip) /* first the gap alone, so that the reader can say so before the bytes after it */
			len = 0;
		json_t *o = json_pack("{s:b, s:I, s:I, s:I, s:I, s:I, s:s, s:b}", "ok", 1, "offset", (json_int_t)(at + len),
				      "length", (json_int_t)len, "skipped", (json_int_t)skip, "size", (json_int_t)size,
				      "log_limit", (json_int_t)p->cfg.log_limit, "state", job_state_name(state), "ended",
				      job_state_ended(state));
		if (o && fd >= 0 && len) {
			*more = (struct pool_stream){ .fd = fd, .offset = at, .length = len };
			fd = -1;
		}
		if (fd >= 0)
			close(fd);
		return o;
	}
	size_t want = len < r->max_bytes ? (size_t)len : (size_t)r->max_bytes, got = 0;
	unsigned char *data = malloc(want ? want : 1);
	char *b64 = malloc(4 * ((want + 2) / 3) + 1);
	if (!data || !b64) {
		free(data);
		free(b64);
		if (fd >= 0)
			close(fd);
		return proto_error("out of memory");
	}
	while (fd >= 0 && got < want) {
		ssize_t n = pread(fd, data + got, want - got, (off_t)(at + got));
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	if (fd >= 0)
		close(fd);
	proto_b64_encode(data, got, b64);
	json_t *o = json_pack("{s:b, s:s, s:I, s:I, s:I, s:s, s:b}", "ok", 1, "data_b64", b64, "offset",
			      (json_int_t)(at + got), "skipped", (json_int_t)skip, "size", (json_int_t)size, "state",
			      job_state_name(state), "ended", job_state_ended(state));
	free(data);
	free(b64);
	return o;
}

struct list_ctx {
	struct pool *p;
	json_t *arr;
};

static int list_cb(void *arg, struct pool_job *j)
{
	struct list_ctx *l = arg;
	struct pool_job *a = pool_find_active(l->p, j->id);
	json_array_append_new(l->arr, pool_job_with_acct(l->p, a ? a : j, a != NULL));
	pool_job_free(j);
	return 0;
}

static json_t *do_jobs(struct pool *p, const struct pool_caller *c, const struct proto_request *r)
{
	if (r->all_users && c->uid != 0)
		return proto_error("only root may list other users' jobs");
	uint32_t uid = r->all_users ? UINT32_MAX : c->uid;
	struct list_ctx l = { p, json_array() };
	if (!l.arr)
		return proto_error("out of memory");
	if (r->history) {
		if (store_walk(p->st, true, uid, r->limit ? r->limit : 100, list_cb, &l)) {
			json_decref(l.arr);
			return proto_errorf("%s", store_error(p->st));
		}
	} else {
		for (size_t i = 0; i < p->njobs; i++)
			if (uid == UINT32_MAX || p->jobs[i]->uid == uid)
				json_array_append_new(l.arr, pool_job_with_acct(p, p->jobs[i], true));
	}
	return json_pack("{s:b, s:o}", "ok", 1, "jobs", l.arr);
}

static json_t *do_ping(struct pool *p, const struct pool_caller *c)
{
	unsigned pending, running;
	pool_count(p, &pending, &running);
	return json_pack("{s:b, s:s, s:i, s:i, s:i, s:i, s:i, s:s, s:s, s:I, s:I}", "ok", 1, "version", GPUCTL_VERSION,
			 "agent_uid", (int)p->euid, "caller_uid", (int)c->uid, "gpus", p->have_snap ? (int)p->snap->n : 0,
			 "pending", pending, "running", running, "cgroups", p->cgroup_note, "devices",
			 p->devcg.note, "passes",
			 (json_int_t)p->passes, "last_pass_ns", (json_int_t)p->last_pass_ns);
}

char *pool_handle(struct pool *p, const struct pool_caller *c, const char *buf, size_t len, struct pool_stream *more)
{
	more->fd = -1;
	struct proto_request r;
	char err[300];
	json_t *resp = pool_slurm_handle(p, c, buf, len); /* slurm_* requests (pool_slurm.c) */
	bool slurm = resp != NULL;
	if (slurm) {
		/* answered as is */
	} else if (proto_parse_request(buf, len, &r, err, sizeof(err))) {
		resp = proto_error(err);
	} else {
		pthread_mutex_lock(&p->mu);
		switch (r.op) {
		case OP_PING: resp = do_ping(p, c); break;
		case OP_SUBMIT: resp = do_submit(p, c, &r.sub); break;
		case OP_QUEUE: {
			char *text = do_queue(p, "\"ok\":true");
			pthread_mutex_unlock(&p->mu);
			proto_request_free(&r);
			return text;
		}
		case OP_SHOW: resp = do_show(p, c, r.job); break;
		case OP_CANCEL: resp = do_cancel(p, c, r.job); break;
		case OP_LOGS: resp = do_logs(p, c, &r, more); break;
		case OP_JOBS: resp = do_jobs(p, c, &r); break;
		}
		pthread_mutex_unlock(&p->mu);
		proto_request_free(&r);
	}
	if (!resp)
		return NULL;
	if (p->simulated && !slurm)
		json_object_set_new(resp, "simulated", json_true());
	char *text = json_dumps(resp, JSON_COMPACT);
	json_decref(resp);
	if (!text)
		return NULL;
	size_t n = strlen(text);
	char *line = realloc(text, n + 2);
	if (!line) {
		free(text);
		return NULL;
	}
	line[n] = '\n';
	line[n + 1] = '\0';
	return line;
}
