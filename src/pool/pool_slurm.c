/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pool_slurm.c - Slurm jobs in the pool's accounting (docs/slurm.md).
 *
 * The prolog records a Slurm job's GPUs (slurm_start): the agent keeps it as
 * a pool job named "slurm-<id>" with no shim (shim_pid POOL_SLURM_SHIM). It
 * is running from then on: it holds its GPUs so the pool places nothing
 * there, it is accounted like any pool job (energy, GPU-seconds,
 * utilization, memory, XIDs, throttling), its series carry an hpc_job label,
 * and it ends when the epilog says so (slurm_end). slurm_show finds it by
 * its Slurm id, running or ended.
 */
#include "pool_internal.h"

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool/slurm_req.h"

uint64_t pool_slurm_job_id(const struct pool_job *j)
{
	if (j->shim_pid != POOL_SLURM_SHIM || strncmp(j->name, "slurm-", 6) != 0)
		return 0;
	return strtoull(j->name + 6, NULL, 10);
}

static struct pool_job *find_active(struct pool *p, uint64_t slurm_job)
{
	for (size_t i = 0; i < p->njobs; i++)
		if (pool_slurm_job_id(p->jobs[i]) == slurm_job)
			return p->jobs[i];
	return NULL;
}

struct find_ctx {
	uint64_t slurm_job;
	struct pool_job *found;
};

static int find_cb(void *arg, struct pool_job *j)
{
	struct find_ctx *f = arg;
	if (pool_slurm_job_id(j) == f->slurm_job) {
		f->found = j;
		return 1;
	}
	pool_job_free(j);
	return 0;
}

/* The newest stored job of that Slurm id (the caller frees it), or NULL. */
static struct pool_job *find_stored(struct pool *p, uint64_t slurm_job)
{
	struct find_ctx f = { slurm_job, NULL };
	(void)store_walk(p->st, true, UINT32_MAX, 0, find_cb, &f);
	return f.found;
}

static json_t *do_start(struct pool *p, const struct slurm_req *r)
{
	struct pool_job *old = find_active(p, r->job);
	if (old) /* a prolog run twice: the first record stands */
		return json_pack("{s:b, s:I, s:I, s:b}", "ok", 1, "job", (json_int_t)old->id, "slurm_job",
				 (json_int_t)r->job, "already", 1);
	unsigned n = p->have_snap ? p->snap->n : 0;
	if (p->have_snap && (n >= 64 ? 0 : r->gpu_mask >> n))
		return proto_errorf("'gpus' names a GPU this server does not have (it has %u)", n);
	struct pool_job *j = calloc(1, sizeof(*j));
	if (!j)
		return proto_error("out of memory");
	j->uid = r->uid;
	j->gid = r->uid;
	if (r->user[0]) {
		snprintf(j->user, sizeof(j->user), "%s", r->user);
	} else {
		struct passwd pw, *res = NULL;
		char buf[4096];
		if (getpwuid_r(r->uid, &pw, buf, sizeof(buf), &res) == 0 && res)
			snprintf(j->user, sizeof(j->user), "%s", pw.pw_name);
		else
			snprintf(j->user, sizeof(j->user), "%u", (unsigned)r->uid);
	}
	snprintf(j->name, sizeof(j->name), "slurm-%llu", (unsigned long long)r->job);
	snprintf(j->reason, sizeof(j->reason), "Slurm job %llu (recorded by its prolog)", (unsigned long long)r->job);
	j->state = JOB_RUNNING;
	j->submit_ns = j->start_ns = pool_now(p);
	j->gpu_mask = r->gpu_mask;
	j->req_gpus = (unsigned)__builtin_popcountll(r->gpu_mask);
	j->req_mask = r->gpu_mask;
	j->mig_gpu = j->mig_gi = -1;
	j->shim_pid = POOL_SLURM_SHIM;
	j->exit_code = -1;
	snprintf(j->boot_id, sizeof(j->boot_id), "%s", p->boot_id);
	char *devs = j->devices;
	for (unsigned g = 0; g < 64; g++)
		if (r->gpu_mask >> g & 1)
			devs += snprintf(devs, 8, "%s%u", devs == j->devices ? "" : ",", g);
	json_t *spec = json_pack("{s:[], s:[], s:s, s:I}", "argv", "env", "cwd", "", "slurm_job", (json_int_t)r->job);
	j->spec_json = spec ? json_dumps(spec, JSON_COMPACT) : NULL;
	json_decref(spec);
	unsigned gpus[GPU_MAX_GPUS], ng = 0;
	for (unsigned g = 0; g < GPU_MAX_GPUS; g++)
		if (r->gpu_mask >> g & 1)
			gpus[ng++] = g;
	if (!j->spec_json || acct_begin(&j->acct, gpus, ng, p->have_snap ? p->snap : NULL)) {
		pool_job_free(j);
		return proto_error("out of memory");
	}
	json_t *e = pool_admit(p, j, "out of memory recording it");
	if (e)
		return e;
	pool_kick(p);
	return json_pack("{s:b, s:I, s:I}", "ok", 1, "job", (json_int_t)j->id, "slurm_job", (json_int_t)r->job);
}

static json_t *do_end(struct pool *p, const struct slurm_req *r)
{
	struct pool_job *j = find_active(p, r->job);
	if (!j) {
		struct pool_job *s = find_stored(p, r->job);
		if (!s)
			return proto_errorf("no Slurm job %llu recorded (did its prolog run?)", (unsigned long long)r->job);
		json_t *o = json_pack("{s:b, s:I, s:I, s:b}", "ok", 1, "job", (json_int_t)s->id, "slurm_job",
				      (json_int_t)r->job, "already", 1);
		pool_job_free(s);
		return o;
	}
	int st = job_state_parse(r->state);
	char reason[120];
	snprintf(reason, sizeof(reason), "Slurm job %llu ended (%s, reported by its epilog)", (unsigned long long)r->job,
		 r->state);
	uint64_t id = j->id;
	pool_settle(p, j, st < 0 ? JOB_DONE : (enum job_state)st, reason, pool_now(p));
	pool_kick(p);
	return json_pack("{s:b, s:I, s:I}", "ok", 1, "job", (json_int_t)id, "slurm_job", (json_int_t)r->job);
}

static json_t *do_show(struct pool *p, const struct pool_caller *c, const struct slurm_req *r)
{
	struct pool_job *j = find_active(p, r->job), *stored = NULL;
	if (!j)
		j = stored = find_stored(p, r->job);
	if (!j)
		return proto_errorf("no Slurm job %llu recorded by this agent", (unsigned long long)r->job);
	json_t *resp;
	if (c->uid != 0 && c->uid != j->uid) {
		resp = proto_errorf("Slurm job %llu belongs to another user", (unsigned long long)r->job);
	} else {
		json_t *o = pool_job_with_acct(p, j, stored == NULL);
		if (o)
			json_object_set_new(o, "slurm_job", json_integer((json_int_t)r->job));
		resp = json_pack("{s:b, s:o}", "ok", 1, "job", o);
	}
	if (stored)
		pool_job_free(stored);
	return resp;
}

json_t *pool_slurm_handle(struct pool *p, const struct pool_caller *c, const char *buf, size_t len)
{
	/* the pool's own requests (a submit can carry megabytes of environment) are not parsed twice */
	if (!memmem(buf, len, "slurm_", 6))
		return NULL;
	struct slurm_req r;
	char err[300];
	int rc = slurm_req_parse(buf, len, &r, err, sizeof(err));
	if (rc == 0)
		return NULL;
	json_t *resp = NULL;
	if (rc < 0) {
		resp = proto_error(err);
	} else if (r.op != SLURM_OP_SHOW && c->uid != 0 && c->uid != p->euid) {
		resp = proto_error("only root (the Slurm prolog and epilog) records Slurm jobs");
	} else {
		pthread_mutex_lock(&p->mu);
		switch (r.op) {
		case SLURM_OP_START: resp = do_start(p, &r); break;
		case SLURM_OP_END: resp = do_end(p, &r); break;
		case SLURM_OP_SHOW: resp = do_show(p, c, &r); break;
		}
		pthread_mutex_unlock(&p->mu);
	}
	if (!resp)
		resp = proto_error("out of memory");
	if (p->simulated)
		json_object_set_new(resp, "simulated", json_true());
	return resp;
}
