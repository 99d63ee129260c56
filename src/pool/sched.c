/* SPDX-License-Identifier: Apache-2.0 */
/* sched.c - see sched.h. */
#include "sched.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sched_job_order(const struct sched_job *a, const struct sched_job *b)
{
	if (a->priority != b->priority)
		return a->priority > b->priority ? -1 : 1;
	if (a->submit_ns != b->submit_ns)
		return a->submit_ns < b->submit_ns ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id ? 1 : 0;
}

static int cmp_job_ptr(const void *pa, const void *pb)
{
	const struct sched_job *a = *(const struct sched_job *const *)pa;
	const struct sched_job *b = *(const struct sched_job *const *)pb;
	return sched_job_order(a, b);
}

static unsigned popcount64(uint64_t v)
{
	unsigned c = 0;
	for (; v; v &= v - 1)
		c++;
	return c;
}

static unsigned user_gpus(const struct sched_input *in, uint32_t uid, const uint64_t *extra_mask_by_uid_start,
			  const uint32_t *extra_uid, unsigned nextra)
{
	unsigned c = 0;
	for (unsigned i = 0; i < in->nrunning; i++)
		if (in->running[i].uid == uid)
			c += popcount64(in->running[i].gpu_mask);
	for (unsigned i = 0; i < nextra; i++)
		if (extra_uid[i] == uid)
			c += popcount64(extra_mask_by_uid_start[i]);
	return c;
}

/*
 * The head's reservation: walk running jobs by end time, freeing their GPUs,
 * until placement succeeds. Returns the time (0 if never: a job without a
 * limit holds what it needs) and the GPU set it would get then.
 */
static uint64_t reserve_for(const struct sched_input *in, const struct sched_job *job, const struct place_gpu *now,
			    uint64_t *reserved_mask)
{
	struct place_gpu g[GPU_MAX_GPUS];
	memcpy(g, now, sizeof(g));
	unsigned order[GPU_MAX_GPUS * 2], m = 0;
	for (unsigned i = 0; i < in->nrunning && m < GPU_MAX_GPUS * 2; i++)
		if (in->running[i].gpu_mask)
			order[m++] = i;
	/* sort running jobs by end time (small m: insertion sort) */
	for (unsigned a = 1; a < m; a++)
		for (unsigned b = a; b > 0 && in->running[order[b - 1]].end_ns > in->running[order[b]].end_ns; b--) {
			unsigned t = order[b];
			order[b] = order[b - 1];
			order[b - 1] = t;
		}
	for (unsigned k = 0; k < m; k++) {
		const struct sched_running *r = &in->running[order[k]];
		if (r->end_ns == UINT64_MAX)
			break;
		for (unsigned i = 0; i < in->n; i++)
			if (r->gpu_mask >> i & 1)
				g[i].busy = false;
		struct place_result pr;
		if (place_choose(in->n, in->link, g, &job->req, &pr)) {
			*reserved_mask = 0;
			for (unsigned i = 0; i < pr.count; i++)
				*reserved_mask |= 1ull << pr.gpu[i];
			return r->end_ns;
		}
	}
	*reserved_mask = 0;
	return 0;
}

static int pick_mig(const struct sched_input *in, const struct sched_job *job, const bool *mig_taken)
{
	for (unsigned i = 0; i < in->nmig; i++) {
		const struct sched_mig *m = &in->mig[i];
		if (mig_taken[i] || strcmp(m->profile, job->mig_profile) != 0)
			continue;
		if (m->gpu >= in->n || in->gpu[m->gpu].unhealthy || in->gpu[m->gpu].lost)
			continue;
		return (int)i;
	}
	return -1;
}

unsigned sched_pass(const struct sched_input *in, struct sched_decision *out)
{
	struct place_gpu g[GPU_MAX_GPUS];
	memset(g, 0, sizeof(g));
	memcpy(g, in->gpu, sizeof(struct place_gpu) * (in->n < GPU_MAX_GPUS ? in->n : GPU_MAX_GPUS));
	bool *mig_taken = calloc(in->nmig ? in->nmig : 1, sizeof(bool));
	const struct sched_job **q = calloc(in->npending ? in->npending : 1, sizeof(*q));
	uint64_t *start_mask = calloc(in->npending ? in->npending : 1, sizeof(uint64_t));
	uint32_t *start_uid = calloc(in->npending ? in->npending : 1, sizeof(uint32_t));
	if (!mig_taken || !q || !start_mask || !start_uid) {
		free(mig_taken);
		free(q);
		free(start_mask);
		free(start_uid);
		return 0;
	}
	for (unsigned i = 0; i < in->nrunning; i++) {
		const struct sched_running *r = &in->running[i];
		for (unsigned k = 0; k < in->n; k++)
			if (r->gpu_mask >> k & 1) {
				g[k].busy = true;
				g[k].held_by_job = r->id;
				g[k].held_by_slurm = r->slurm_job;
			}
		for (unsigned k = 0; k < in->nmig; k++)
			if (r->mig_gpu >= 0 && in->mig[k].gpu == (unsigned)r->mig_gpu && in->mig[k].gi_id == (unsigned)r->mig_gi)
				mig_taken[k] = true;
	}
	/* A GPU with a MIG slice in use is not free as a whole GPU. */
	for (unsigned k = 0; k < in->nmig; k++)
		if (mig_taken[k] && in->mig[k].gpu < in->n)
			g[in->mig[k].gpu].busy = true;
	for (unsigned i = 0; i < in->npending; i++)
		q[i] = &in->pending[i];
	qsort(q, in->npending, sizeof(*q), cmp_job_ptr);

	/* Once a reservation stands, jobs of one shape fail the same way until a
	 * job starts: remember those failures within the pass, so a queue of
	 * 10 000 jobs of a few shapes costs a few placements, not 10 000. */
	struct { struct place_request req; bool ends_in_time; char reason[SCHED_REASON_LEN]; } fails[32];
	unsigned nfails = 0;
	unsigned nstart = 0;
	bool blocked = false;            /* a job ahead holds a reservation */
	uint64_t reserved = 0;           /* its GPUs */
	uint64_t reserved_at = 0;        /* and when it starts (0: unknown) */
	uint64_t head = 0;               /* the job holding it */
	for (unsigned qi = 0; qi < in->npending; qi++) {
		const struct sched_job *job = q[qi];
		struct sched_decision *d = &out[qi];
		memset(d, 0, sizeof(*d));
		d->job_id = job->id;
		d->mig_index = -1;

		if (job->after_job && !(in->has_ended && in->has_ended(job->after_job, in->arg))) {
			snprintf(d->reason, sizeof(d->reason), "waiting for job %llu to end", (unsigned long long)job->after_job);
			continue;
		}
		unsigned want = job->mig_profile[0] ? 0 : job->req.count;
		if (in->max_gpus_per_user && want &&
		    user_gpus(in, job->uid, start_mask, start_uid, nstart) + want > in->max_gpus_per_user) {
			snprintf(d->reason, sizeof(d->reason), "user limit of %u GPUs reached", in->max_gpus_per_user);
			continue;
		}
		if (job->mig_profile[0]) {
			int mi = pick_mig(in, job, mig_taken);
			if (mi < 0) {
				snprintf(d->reason, sizeof(d->reason), "waiting for a free MIG slice %s", job->mig_profile);
				continue;
			}
			/* a slice never waits behind a whole-GPU reservation on its GPU */
			if (blocked && (reserved >> in->mig[mi].gpu & 1)) {
				snprintf(d->reason, sizeof(d->reason), "GPU %u reserved for job %llu, ahead in the queue",
					 in->mig[mi].gpu, (unsigned long long)head);
				continue;
			}
			mig_taken[mi] = true;
			g[in->mig[mi].gpu].busy = true;
			nfails = 0;
			d->start = true;
			d->mig_index = mi;
			d->backfilled = blocked;
			start_uid[nstart] = job->uid;
			start_mask[nstart] = 0;
			nstart++;
			continue;
		}

		/* Backfill: a later job may not touch the reservation unless it
		 * surely ends before the reservation starts. */
		struct place_gpu avail[GPU_MAX_GPUS];
		memcpy(avail, g, sizeof(avail));
		bool ends_in_time = blocked && reserved_at && job->time_limit_ns &&
				    in->now_ns + job->time_limit_ns <= reserved_at;
		bool cached = false;
		for (unsigned f = 0; blocked && f < nfails && !cached; f++)
			if (fails[f].ends_in_time == ends_in_time && fails[f].req.count == job->req.count &&
			    fails[f].req.need_nvlink == job->req.need_nvlink &&
			    fails[f].req.mem_per_gpu == job->req.mem_per_gpu &&
			    fails[f].req.allowed_mask == job->req.allowed_mask) {
				snprintf(d->reason, sizeof(d->reason), "%s", fails[f].reason);
				cached = true;
			}
		if (cached)
			continue;
		if (blocked && !ends_in_time)
			for (unsigned k = 0; k < in->n; k++)
				if (reserved >> k & 1)
					avail[k].busy = true;
		struct place_result pr;
		if (place_choose(in->n, in->link, avail, &job->req, &pr)) {
			d->start = true;
			d->place = pr;
			d->backfilled = blocked;
			uint64_t mask = 0;
			for (unsigned k = 0; k < pr.count; k++) {
				g[pr.gpu[k]].busy = true;
				g[pr.gpu[k]].held_by_job = job->id;
				g[pr.gpu[k]].held_by_slurm = 0;
				mask |= 1ull << pr.gpu[k];
			}
			start_uid[nstart] = job->uid;
			start_mask[nstart] = mask;
			nstart++;
			nfails = 0; /* the GPUs changed */
			continue;
		}
		/* Explain with what the job would see without reservations. */
		if (!place_choose(in->n, in->link, g, &job->req, &pr))
			snprintf(d->reason, sizeof(d->reason), "%s", pr.reason);
		else
			snprintf(d->reason, sizeof(d->reason), "GPUs reserved for job %llu, ahead in the queue",
				 (unsigned long long)head);
		if (blocked && nfails < sizeof(fails) / sizeof(fails[0])) {
			fails[nfails].req = job->req;
			fails[nfails].ends_in_time = ends_in_time;
			snprintf(fails[nfails].reason, sizeof(fails[nfails].reason), "%s", d->reason);
			nfails++;
		}
		if (!blocked) {
			uint64_t mask;
			head = job->id;
			reserved_at = reserve_for(in, job, g, &mask);
			d->est_start_ns = reserved_at;
			if (reserved_at) {
				blocked = true;
				reserved = mask;
			} else {
				/* no estimate: hold everything it could use so it is not starved */
				blocked = true;
				reserved = 0;
				for (unsigned k = 0; k < in->n; k++)
					if (!job->req.allowed_mask || (job->req.allowed_mask >> k & 1))
						reserved |= 1ull << k;
			}
		}
	}
	free(mig_taken);
	free(q);
	free(start_mask);
	free(start_uid);
	return nstart;
}
