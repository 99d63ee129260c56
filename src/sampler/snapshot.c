/* SPDX-License-Identifier: Apache-2.0 */
/*
 * snapshot.c - snapshot_take: one synchronous sweep of every GPU (static
 * facts, a sample of the asked groups, processes, MIG instances and its row
 * of the link matrix) for one-shot commands such as info, topo and health.
 *
 * The GPUs are read in parallel, one thread each: NVML is thread-safe, and
 * 8 GPUs x ~40 calls x 1-3 ms (plus 17 ms per topology pair) would take
 * seconds serially. A GPU that fails is recorded in its view (up = false,
 * last_error) and the others go on.
 *
 * A GPU whose calls hang must not hang the command (health runs as Slurm's
 * HealthCheckProgram): each thread fills its own heap buffer, and when the
 * deadline passes the sweep marks that GPU down and leaves the thread
 * behind; the thread frees its buffer if it ever returns.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sampler.h"

#define SNAPSHOT_DEFAULT_TIMEOUT_NS (20ull * 1000000000ull)

/* Shared by the sweep and one GPU's thread; whoever finishes last frees it. */
struct sweep {
	struct gpu_backend *be;
	unsigned groups;
	unsigned gpu, n;
	struct gpu_view view;    /* its tables: procs, mig */
	struct gpu_process procs[GPU_MAX_PROCS];
	struct gpu_mig mig[GPU_MAX_MIG];
	struct gpu_link row[GPU_MAX_GPUS];
	pthread_mutex_t *lock;   /* the sweep's, outlives every thread: static */
	pthread_cond_t *cond;
	bool done, abandoned;
};

static pthread_mutex_t sweep_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t sweep_cond = PTHREAD_COND_INITIALIZER;

static void record_error(struct gpu_view *v, const struct gpu_err *e)
{
	v->errors++;
	if (!v->last_error[0])
		snprintf(v->last_error, sizeof(v->last_error), "%.127s", e->msg);
}

/* True once the sweep has given up on this GPU: make no further backend call
 * (the caller may be closing the backend). */
static bool abandoned(struct sweep *sw)
{
	pthread_mutex_lock(sw->lock);
	bool a = sw->abandoned;
	pthread_mutex_unlock(sw->lock);
	return a;
}

static void *read_gpu(void *arg)
{
	struct sweep *sw = arg;
	struct gpu_backend *be = sw->be;
	const struct gpu_backend_ops *ops = be->ops;
	unsigned i = sw->gpu;
	struct gpu_view *v = &sw->view;
	struct gpu_err e = { "" };

	if (ops->static_info(be, i, &v->st, &e) != GPU_OK)
		record_error(v, &e);
	v->st.index = i;
	if (abandoned(sw))
		goto out;
	e.msg[0] = '\0';
	int rc = ops->sample(be, i, sw->groups, &v->s, &e);
	v->samples = 1;
	if (rc == GPU_OK && !v->s.lost) {
		v->up = true;
		v->last_ok_ns = v->s.timestamp_ns;
	} else {
		record_error(v, &e);
	}
	/* a GPU that cannot list processes or has no MIG has none of them: no error */
	if (abandoned(sw))
		goto out;
	if (ops->processes) {
		e.msg[0] = '\0';
		rc = ops->processes(be, i, v->procs, GPU_MAX_PROCS, &v->nproc, &e);
		if (rc != GPU_OK) {
			v->nproc = 0;
			if (rc != GPU_EUNSUPPORTED)
				record_error(v, &e);
		}
	}
	if (abandoned(sw))
		goto out;
	if (ops->mig_instances) {
		e.msg[0] = '\0';
		rc = ops->mig_instances(be, i, v->mig, GPU_MAX_MIG, &v->nmig, &e);
		if (rc != GPU_OK) {
			v->nmig = 0;
			if (rc != GPU_EUNSUPPORTED)
				record_error(v, &e);
		}
	}
	/* this GPU's row of the matrix; cells that fail stay LINK_UNKNOWN */
	for (unsigned j = 0; j < sw->n; j++) {
		struct gpu_link *l = &sw->row[j];
		e.msg[0] = '\0';
		if (abandoned(sw))
			goto out;
		if (!ops->link || ops->link(be, i, j, l, &e) != GPU_OK) {
			memset(l, 0, sizeof(*l));
			l->kind = l->pcie = i == j ? LINK_SELF : LINK_UNKNOWN;
		}
	}
out:
	pthread_mutex_lock(sw->lock);
	bool gone = sw->abandoned;
	sw->done = true;
	pthread_cond_broadcast(sw->cond);
	pthread_mutex_unlock(sw->lock);
	if (gone)
		free(sw);
	return NULL;
}

int snapshot_take_with_sys(struct gpu_backend *be, const struct gpu_system *sys, unsigned groups,
			   uint64_t timeout_ns, struct snapshot *out, struct gpu_err *err)
{
	snapshot_reset(out); /* the header zeroed, the arrays kept */
	if (!be || !be->ops) {
		gpu_err_set(err, "no backend is open");
		return GPU_EINVAL;
	}
	if (sys) {
		out->sys = *sys;
	} else {
		int rc = be->ops->system_info(be, &out->sys, err);
		if (rc != GPU_OK)
			return rc;
	}
	out->n = be->gpu_count < GPU_MAX_GPUS ? be->gpu_count : GPU_MAX_GPUS;
	if (out->n > out->cap) {
		gpu_err_set(err, "internal error: a snapshot with room for %u GPUs, %u to read", out->cap, out->n);
		out->n = 0;
		return GPU_EINVAL;
	}
	out->taken_ns = gpu_backend_now_ns(be);

	struct sweep *sw[GPU_MAX_GPUS] = { NULL };
	bool threaded[GPU_MAX_GPUS] = { false };
	for (unsigned i = 0; i < out->n; i++) {
		sw[i] = calloc(1, sizeof(*sw[i]));
		if (!sw[i]) {
			out->gpu[i].st.index = i;
			snprintf(out->gpu[i].last_error, sizeof(out->gpu[i].last_error), "out of memory");
			continue;
		}
		*sw[i] = (struct sweep){ .be = be, .groups = groups, .gpu = i, .n = out->n,
					 .lock = &sweep_lock, .cond = &sweep_cond };
		sw[i]->view.procs = sw[i]->procs;
		sw[i]->view.mig = sw[i]->mig;
		pthread_t tid;
		if (pthread_create(&tid, NULL, read_gpu, sw[i]) == 0) {
			pthread_detach(tid);
			threaded[i] = true;
		} else {
			read_gpu(sw[i]); /* no thread to be had: read it here */
		}
	}

	/* wait for every thread, up to the deadline (CLOCK_REALTIME: condvar default) */
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	uint64_t t = (uint64_t)dl.tv_nsec + (timeout_ns ? timeout_ns : SNAPSHOT_DEFAULT_TIMEOUT_NS);
	dl.tv_sec += (time_t)(t / 1000000000ull);
	dl.tv_nsec = (long)(t % 1000000000ull);
	pthread_mutex_lock(&sweep_lock);
	for (;;) {
		bool all = true;
		for (unsigned i = 0; i < out->n; i++)
			if (sw[i] && threaded[i] && !sw[i]->done)
				all = false;
		if (all || pthread_cond_timedwait(&sweep_cond, &sweep_lock, &dl) == ETIMEDOUT)
			break;
	}
	for (unsigned i = 0; i < out->n; i++) {
		/* in order: each view's tables packed after the one before */
		snapshot_place_tables(out, i);
		if (!sw[i]) {
			out->gpu[i].nproc = out->gpu[i].nmig = 0;
			continue;
		}
		if (!sw[i]->done) {
			/* hung: the thread owns its buffer from now on */
			sw[i]->abandoned = true;
			struct gpu_view *v = &out->gpu[i];
			v->st.index = i;
			v->up = false;
			v->errors = 1;
			v->nproc = v->nmig = 0;
			snprintf(v->last_error, sizeof(v->last_error), "no answer within %.1f s (hung driver call?)",
				 (double)(timeout_ns ? timeout_ns : SNAPSHOT_DEFAULT_TIMEOUT_NS) / 1e9);
			for (unsigned j = 0; j < out->n; j++)
				out->link[i][j].kind = out->link[i][j].pcie = i == j ? LINK_SELF : LINK_UNKNOWN;
			sw[i] = NULL;
			continue;
		}
		snapshot_copy_view(&out->gpu[i], &sw[i]->view);
		memcpy(out->link[i], sw[i]->row, out->n * sizeof(struct gpu_link));
	}
	pthread_mutex_unlock(&sweep_lock);
	for (unsigned i = 0; i < out->n; i++)
		free(sw[i]);
	return GPU_OK;
}

int snapshot_take_timeout(struct gpu_backend *be, unsigned groups, uint64_t timeout_ns, struct snapshot *out,
			  struct gpu_err *err)
{
	return snapshot_take_with_sys(be, NULL, groups, timeout_ns, out, err);
}

int snapshot_take(struct gpu_backend *be, unsigned groups, struct snapshot *out, struct gpu_err *err)
{
	return snapshot_take_timeout(be, groups, 0, out, err);
}
