/*
 * snapshot.c - snapshot_take: one synchronous sweep of every GPU (static
 * facts, a sample of the asked groups, processes, MIG instances and its row
 * of the link matrix) for one-shot commands such as info, topo and health.
 *
 * The GPUs are read in parallel, one thread each: NVML is thread-safe, and
 * 8 GPUs x ~40 calls x 1-3 ms (plus 17 ms per topology pair) would take
 * seconds serially. A GPU that fails is recorded in its view (up = false,
 * last_error) and the others go on.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "sampler.h"

struct sweep {
	struct gpu_backend *be;
	unsigned groups;
	struct snapshot *out;
	unsigned gpu;
};

static void record_error(struct gpu_view *v, const struct gpu_err *e)
{
	v->errors++;
	if (!v->last_error[0])
		snprintf(v->last_error, sizeof(v->last_error), "%.127s", e->msg);
}

static void *read_gpu(void *arg)
{
	struct sweep *sw = arg;
	struct gpu_backend *be = sw->be;
	const struct gpu_backend_ops *ops = be->ops;
	unsigned i = sw->gpu;
	struct gpu_view *v = &sw->out->gpu[i];
	struct gpu_err e = { "" };

	if (ops->static_info(be, i, &v->st, &e) != GPU_OK)
		record_error(v, &e);
	v->st.index = i;
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
	if (ops->processes) {
		e.msg[0] = '\0';
		rc = ops->processes(be, i, v->procs, GPU_MAX_PROCS, &v->nproc, &e);
		if (rc != GPU_OK) {
			v->nproc = 0;
			if (rc != GPU_EUNSUPPORTED)
				record_error(v, &e);
		}
	}
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
	for (unsigned j = 0; j < sw->out->n; j++) {
		struct gpu_link *l = &sw->out->link[i][j];
		e.msg[0] = '\0';
		if (!ops->link || ops->link(be, i, j, l, &e) != GPU_OK) {
			memset(l, 0, sizeof(*l));
			l->kind = l->pcie = i == j ? LINK_SELF : LINK_UNKNOWN;
		}
	}
	return NULL;
}

int snapshot_take(struct gpu_backend *be, unsigned groups, struct snapshot *out, struct gpu_err *err)
{
	memset(out, 0, sizeof(*out));
	if (!be || !be->ops) {
		gpu_err_set(err, "no backend is open");
		return GPU_EINVAL;
	}
	int rc = be->ops->system_info(be, &out->sys, err);
	if (rc != GPU_OK)
		return rc;
	out->n = be->gpu_count < GPU_MAX_GPUS ? be->gpu_count : GPU_MAX_GPUS;
	out->taken_ns = gpu_backend_now_ns(be);

	struct sweep sw[GPU_MAX_GPUS];
	pthread_t tid[GPU_MAX_GPUS];
	bool started[GPU_MAX_GPUS];
	for (unsigned i = 0; i < out->n; i++) {
		sw[i] = (struct sweep){ .be = be, .groups = groups, .out = out, .gpu = i };
		started[i] = pthread_create(&tid[i], NULL, read_gpu, &sw[i]) == 0;
		if (!started[i])
			read_gpu(&sw[i]); /* no thread to be had: read it here */
	}
	for (unsigned i = 0; i < out->n; i++)
		if (started[i])
			pthread_join(tid[i], NULL);
	return GPU_OK;
}
