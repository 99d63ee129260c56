/* SPDX-License-Identifier: Apache-2.0 */
/* leakwatch.c - see leakwatch.h. */
#include "health/leakwatch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Everything but the (already zero) table. */
static void init_params(struct leakwatch *w, const struct leak_params *p)
{
	if (p)
		w->params = *p;
	else
		leak_params_default(&w->params);
	w->window_ns = (uint64_t)(w->params.min_window_s * 1e9);
}

void leakwatch_init(struct leakwatch *w, const struct leak_params *p)
{
	memset(w, 0, sizeof(*w));
	init_params(w, p);
}

struct leakwatch *leakwatch_new(const struct leak_params *p)
{
	/* calloc: zero pages the kernel gives on first use, where memset would
	 * have written (made resident) all of them */
	struct leakwatch *w = calloc(1, sizeof(*w));
	if (w)
		init_params(w, p);
	return w;
}

/* start 0 (unknown, e.g. the process ended between the list and the lookup) matches any */
static struct leakwatch_proc *find(struct leakwatch *w, unsigned gpu, const struct gpu_process *p, uint64_t start)
{
	for (unsigned i = 0; i < LEAKWATCH_MAX; i++) {
		struct leakwatch_proc *e = &w->t[i];
		if (e->used && e->gpu == gpu && e->pid == p->pid && e->uid == p->uid &&
		    strncmp(e->comm, p->name, sizeof(e->comm)) == 0 && (!start || !e->start || e->start == start))
			return e;
	}
	return NULL;
}

static struct leakwatch_proc *add(struct leakwatch *w, unsigned gpu, const struct gpu_process *p, uint64_t start)
{
	for (unsigned i = 0; i < LEAKWATCH_MAX; i++) {
		struct leakwatch_proc *e = &w->t[i];
		if (e->used)
			continue;
		memset(e, 0, sizeof(*e));
		e->used = true;
		e->gpu = gpu;
		e->pid = p->pid;
		e->uid = p->uid;
		e->start = start;
		snprintf(e->comm, sizeof(e->comm), "%s", p->name);
		snprintf(e->user, sizeof(e->user), "%s", p->user);
		w->tracked++;
		return e;
	}
	w->untracked++;
	return NULL;
}

static const struct leak_sample *newest(const struct leakwatch_proc *e)
{
	return &e->ring[(e->head + LEAKWATCH_RING - 1) % LEAKWATCH_RING];
}

static void record(struct leakwatch *w, struct leakwatch_proc *e, uint64_t t, uint64_t bytes)
{
	if (e->n && e->last_ns == t) {
		/* the same pid twice in one list (compute and graphics): one process, its larger figure */
		if (bytes <= e->last_bytes)
			return;
		e->last_bytes = bytes;
		if (newest(e)->t_ns == t)
			e->ring[(e->head + LEAKWATCH_RING - 1) % LEAKWATCH_RING].bytes = bytes;
		return;
	}
	e->last_ns = t;
	e->last_bytes = bytes;
	uint64_t spacing = w->window_ns / (LEAKWATCH_RING / 2);
	if (e->n == 0 || t - newest(e)->t_ns >= spacing) {
		e->ring[e->head] = (struct leak_sample){ t, bytes };
		e->head = (e->head + 1) % LEAKWATCH_RING;
		if (e->n < LEAKWATCH_RING)
			e->n++;
	}
}

/* Judges the samples of the last window: from the newest stored sample at or
 * before (now - window), or the oldest, to the newest sample seen. */
static void judge(const struct leakwatch *w, struct leakwatch_proc *e)
{
	struct leak_sample s[LEAKWATCH_RING + 1];
	unsigned first = (e->head + LEAKWATCH_RING - e->n) % LEAKWATCH_RING, from = 0;
	for (unsigned i = 0; i < e->n; i++) {
		const struct leak_sample *x = &e->ring[(first + i) % LEAKWATCH_RING];
		if (x->t_ns + w->window_ns <= e->last_ns)
			from = i;
	}
	unsigned n = 0;
	for (unsigned i = from; i < e->n; i++)
		s[n++] = e->ring[(first + i) % LEAKWATCH_RING];
	if (n == 0 || s[n - 1].t_ns != e->last_ns)
		s[n++] = (struct leak_sample){ e->last_ns, e->last_bytes };
	if (leak_detect(s, n, &w->params, &e->res) != 0)
		memset(&e->res, 0, sizeof(e->res));
}

void leakwatch_update(struct leakwatch *w, const struct snapshot *snap, leakwatch_start_fn start_fn, void *arg)
{
	for (unsigned g = 0; g < snap->n && g < GPU_MAX_GPUS; g++) {
		const struct gpu_view *v = &snap->gpu[g];
		/* a GPU that is down or not sampled again tells nothing about its processes */
		if (!v->up || v->last_ok_ns <= w->gpu_t_ns[g])
			continue;
		uint64_t t = v->last_ok_ns;
		w->gpu_t_ns[g] = t;
		for (unsigned i = 0; i < LEAKWATCH_MAX; i++)
			if (w->t[i].used && w->t[i].gpu == g)
				w->t[i].seen = false;
		unsigned np = v->nproc < GPU_MAX_PROCS ? v->nproc : GPU_MAX_PROCS;
		for (unsigned k = 0; k < np; k++) {
			const struct gpu_process *p = &v->procs[k];
			uint64_t start = start_fn ? start_fn(arg, p->pid) : 0;
			struct leakwatch_proc *e = find(w, g, p, start);
			if (!e && !VAL_HAS(p->used_mem_bytes))
				continue;
			if (!e && !(e = add(w, g, p, start)))
				continue;
			e->seen = true;
			if (!e->start)
				e->start = start;
			if (VAL_HAS(p->used_mem_bytes))
				record(w, e, t, p->used_mem_bytes.v);
		}
		for (unsigned i = 0; i < LEAKWATCH_MAX; i++) {
			struct leakwatch_proc *e = &w->t[i];
			if (!e->used || e->gpu != g)
				continue;
			if (!e->seen) {
				e->used = false; /* it left the GPU */
				w->tracked--;
			} else if (e->n) {
				judge(w, e);
			}
		}
	}
}

unsigned leakwatch_leaks(const struct leakwatch *w, struct leakwatch_leak *out, unsigned max)
{
	unsigned n = 0;
	for (unsigned i = 0; i < LEAKWATCH_MAX; i++) {
		const struct leakwatch_proc *e = &w->t[i];
		if (!e->used || !e->res.leaking)
			continue;
		if (n < max) {
			/* insertion by (gpu, pid): the order is stable from tick to tick */
			unsigned j = n;
			while (j > 0 && (out[j - 1].gpu > e->gpu || (out[j - 1].gpu == e->gpu && out[j - 1].pid > e->pid))) {
				out[j] = out[j - 1];
				j--;
			}
			struct leakwatch_leak *l = &out[j];
			memset(l, 0, sizeof(*l));
			l->gpu = e->gpu;
			l->pid = e->pid;
			snprintf(l->comm, sizeof(l->comm), "%s", e->comm);
			snprintf(l->user, sizeof(l->user), "%s", e->user);
			l->rate = e->res.rate;
			l->window_s = e->res.window_s;
			l->bytes = e->last_bytes;
		}
		n++;
	}
	return n;
}

/* "1.50 MiB/s" style rate text for evidence. */
static void leakwatch_rate_text(double bytes_per_s, char *out, size_t outlen)
{
	static const char *const unit[] = { "B/s", "KiB/s", "MiB/s", "GiB/s" };
	unsigned u = 0;
	double v = bytes_per_s;
	while (u < 3 && (v >= 1024 || v <= -1024)) {
		v /= 1024;
		u++;
	}
	snprintf(out, outlen, "%.2f %s", v, unit[u]);
}

void leakwatch_report(const struct leakwatch_leak *leaks, unsigned n, struct health_report *rep)
{
	for (unsigned i = 0; i < n; i++) {
		const struct leakwatch_leak *l = &leaks[i];
		if (l->gpu >= rep->n)
			continue;
		struct health_entity *e = &rep->gpu[l->gpu];
		if (e->sub[HS_PROCESSES] < HEALTH_WARN)
			e->sub[HS_PROCESSES] = HEALTH_WARN;
		if (e->verdict < HEALTH_WARN)
			e->verdict = HEALTH_WARN;
		if (rep->verdict < HEALTH_WARN)
			rep->verdict = HEALTH_WARN;
		if (e->nfind >= HEALTH_MAX_FINDINGS) {
			e->truncated = true;
			continue;
		}
		struct health_finding *f = &e->find[e->nfind++];
		memset(f, 0, sizeof(*f));
		snprintf(f->rule_id, sizeof(f->rule_id), "%s", LEAKWATCH_RULE_ID);
		f->metric = HM_COUNT; /* not a rules.json metric: the agent's own watch */
		f->subsys = HS_PROCESSES;
		f->verdict = HEALTH_WARN;
		f->action = HEALTH_ACT_NONE;
		snprintf(f->reason, sizeof(f->reason), "a process's GPU memory keeps growing (a memory leak)");
		char rate[32];
		leakwatch_rate_text(l->rate, rate, sizeof(rate));
		snprintf(f->evidence, sizeof(f->evidence), "pid %u (%.40s, user %.24s): +%s over %.0f s, now %.1f MiB",
			 l->pid, l->comm, l->user, rate, l->window_s, (double)l->bytes / (1024.0 * 1024.0));
		snprintf(f->hint, sizeof(f->hint),
			 "tell the process's owner; it fails once the GPU is full (compute-sanitizer finds the leak)");
	}
}
