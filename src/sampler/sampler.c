/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sampler.c - one thread per GPU, each on its own schedule, publishing into
 * that GPU's slot of the snapshot under a short per-GPU lock.
 *
 * A GPU thread never holds its slot's lock across a backend call: it samples
 * into its own heap buffers, then copies the result in. Readers lock one slot
 * at a time for a memcpy, so a hung or slow backend call delays nobody but
 * its own GPU. Whether a GPU is "up" is decided at read time: the last
 * attempt succeeded and its sample is younger than stale_after_ns.
 *
 * XID counts live apart from the sample (struct slot.xid), fed by the events
 * thread (backend poll_events) and by sampler_note_xid() (the agent's kernel
 * log reader); they survive a GPU going away and coming back.
 */
#include "sampler.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/pages.h"
#include "core/thread.h"

#define XID_MAX 32
#define THREAD_STACK_BYTES (512u * 1024u)
#define EVENT_POLL_MS 250u
#define EVENT_BATCH 64u
#define STOP_GRACE_NS 5000000000ull

struct xid_count {
	uint64_t code;
	uint64_t count[XID_SRC_COUNT]; /* per source; the published count is the largest */
	uint64_t last_ns;
};

/* A GPU's latest state: what read_slot() hands out as a gpu_view, less the
 * XID counts (struct slot.xid) and the process and MIG tables, which a slot
 * keeps apart, sized to what it has seen. A gpu_view's tables are 11 KB and
 * mostly empty: 64 slots holding whole views were 1.2 MB apart from each
 * other, about 11 KB of each touched; dense, a slot is 7.8 KB (11.3 KB while
 * its rate base was a whole sample and its XID table in it). */
struct gpu_state {
	bool up;                     /* the last attempt succeeded */
	uint64_t last_ok_ns;
	uint64_t samples, errors;
	char last_error[128];
	struct gpu_static st;
	struct gpu_sample s;
	uint64_t slow_read_ns;       /* as in struct gpu_view */
	struct gpu_rate_base rate_base;
	uint64_t nvlink_err_read_ns, nvlink_err_base_ns;
	unsigned nvlink_err_base_n;
	struct nvlink_err_counts nvlink_err_base[GPU_MAX_NVLINKS];
};

struct slot {
	pthread_mutex_t mu;
	pthread_cond_t cv;           /* the GPU thread's sleep between ticks (CLOCK_MONOTONIC) */
	bool attempted;              /* a first attempt has finished */
	uint64_t call_started_ns;    /* backend clock; 0 when not inside a backend call */
	unsigned nxid;
	struct xid_count *xid;       /* XID_MAX entries of sampler.xid_room */
	pthread_t thread;
	bool thread_started;
	struct sampler *owner;
	unsigned index;
	struct gpu_state g;
	unsigned nproc, nmig;
	struct gpu_process *procs;   /* proc_cap entries (grown, never beyond GPU_MAX_PROCS) */
	struct gpu_mig *mig;         /* mig_cap entries */
	unsigned proc_cap, mig_cap;
};

struct sampler {
	struct gpu_backend *be;
	struct sampler_config cfg;
	struct gpu_system sys;
	unsigned n;
	struct slot *slots;
	/* the slots' XID tables, n x XID_MAX, in pages of their own: untouched,
	 * so not resident, until a GPU has an XID (in the slots, 1 KB each on
	 * pages every tick writes) */
	struct xid_count *xid_room;
	/* topology, filled once in the background (NVML's common-ancestor call is slow) */
	pthread_mutex_t link_mu;
	struct gpu_link (*link)[GPU_MAX_GPUS];
	pthread_t link_thread, ev_thread;
	bool link_started, ev_started;
	/* stop and first-sample signalling (CLOCK_MONOTONIC condition) */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	/* Set under mu, read without it: every GPU thread asks after each backend
	 * call, and 64 threads waking at the same tick queued on mu (futex waits
	 * and wake-ups at every tick) when the flag was read under it. */
	atomic_bool stopping;
	unsigned first_done;
	atomic_ullong reads;          /* sampler_read calls (sampler_reads) */
	struct sampler *abandoned_next;
};

/* Samplers whose threads were stuck in a backend call at sampler_stop(). */
static pthread_mutex_t abandoned_mu = PTHREAD_MUTEX_INITIALIZER;
static struct sampler *abandoned;

void sampler_config_default(struct sampler_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->interval_ns = 1000000000ull;
	cfg->groups = GPU_GRP_ALL;
	cfg->slow_group_every = 0;
	cfg->stale_after_ns = 0; /* 0: five intervals */
	cfg->processes = true;
	cfg->events = true;
}

static uint64_t stale_limit(const struct sampler *s)
{
	return s->cfg.stale_after_ns ? s->cfg.stale_after_ns : 5 * s->cfg.interval_ns;
}

static void mono_now(struct timespec *ts)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
}

static void ts_add_ns(struct timespec *ts, uint64_t ns)
{
	uint64_t t = (uint64_t)ts->tv_nsec + ns % 1000000000ull;
	ts->tv_sec += (time_t)(ns / 1000000000ull + t / 1000000000ull);
	ts->tv_nsec = (long)(t % 1000000000ull);
}

static int ts_cmp(const struct timespec *a, const struct timespec *b)
{
	if (a->tv_sec != b->tv_sec)
		return a->tv_sec < b->tv_sec ? -1 : 1;
	return a->tv_nsec < b->tv_nsec ? -1 : a->tv_nsec > b->tv_nsec;
}

/* Sleeps on cv (under mu) until the monotonic deadline or until
 * sampler_stop(); true if stopping. sampler_stop() signals every slot's cv
 * and the sampler's: a GPU thread sleeps on its slot's, so that the threads
 * that wake at the same tick do not all queue for one lock; the event thread
 * on the sampler's. */
static bool wait_until(struct sampler *s, pthread_mutex_t *mu, pthread_cond_t *cv, const struct timespec *deadline)
{
	pthread_mutex_lock(mu);
	while (!atomic_load(&s->stopping)) {
		if (pthread_cond_timedwait(cv, mu, deadline) != 0)
			break;
	}
	pthread_mutex_unlock(mu);
	return atomic_load(&s->stopping);
}

static bool is_stopping(struct sampler *s)
{
	return atomic_load(&s->stopping);
}

/* Buffers a GPU thread samples into, so the slot lock is held only for
 * copies. The sample first and the tables after it, used up to their counts,
 * in pages of their own (work_new): a tick writes the first page and, with
 * more than two processes, the ones after it. The static facts are read once
 * (and after the GPU comes back) into st, allocated only for that: kept with
 * the rest, they made 64 buffers 1.2 KB longer each, on pages touched every tick. */
struct gpu_work {
	struct gpu_sample smp;
	struct gpu_static *st;   /* while need_static, else NULL */
	struct gpu_process procs[GPU_MAX_PROCS];
	struct gpu_mig mig[GPU_MAX_MIG];
};

static void set_in_call(struct slot *sl, uint64_t now)
{
	pthread_mutex_lock(&sl->mu);
	sl->call_started_ns = now ? now : 1;
	pthread_mutex_unlock(&sl->mu);
}

/* Keeps the slow groups' last values (ECC, PCIe, NVLink, violation counters)
 * on a tick that skips them, rather than publishing them as unread. */
static void carry_slow_groups(struct gpu_sample *dst, const struct gpu_sample *prev)
{
	/* every field of the table whose group is a slow one */
#define CARRY_SLOW(member, group, ...) \
	if (GPU_GRP_##group & SAMPLER_SLOW_GROUPS) \
		dst->member = prev->member;
	GPU_SAMPLE_FIELDS(CARRY_SLOW)
#undef CARRY_SLOW
	dst->nvlink_n = prev->nvlink_n;
	memcpy(dst->nvlink, prev->nvlink, sizeof(dst->nvlink));
}

/* Before a new reading of the NVLink error counters: the one in v->s becomes
 * the base their rates run from (none when v->s is no good reading). */
static void keep_nvlink_err_base(struct gpu_state *v)
{
	v->nvlink_err_base_ns = 0;
	v->nvlink_err_base_n = 0;
	if (!v->s.timestamp_ns || v->s.lost || !v->nvlink_err_read_ns)
		return;
	v->nvlink_err_base_n = v->s.nvlink_n < GPU_MAX_NVLINKS ? v->s.nvlink_n : GPU_MAX_NVLINKS;
	for (unsigned l = 0; l < v->nvlink_err_base_n; l++)
		sampler_nvlink_counts(&v->nvlink_err_base[l], &v->s.nvlink[l]);
	v->nvlink_err_base_ns = v->nvlink_err_read_ns;
}

/* Makes *table hold n entries of size bytes (growing it by 8 at a time);
 * returns how many it holds: n, or its old capacity if it cannot grow. */
static unsigned fit_table(void **table, unsigned *cap, unsigned n, size_t size)
{
	if (n <= *cap)
		return n;
	unsigned want = (n + 7u) / 8u * 8u;
	void *t = realloc(*table, want * size);
	if (!t)
		return *cap;
	*table = t;
	*cap = want;
	return n;
}

/* One sampling attempt of one GPU; returns true when the static info must be re-read next time. */
static bool sample_once(struct slot *sl, struct gpu_work *w, bool need_static, uint64_t tick)
{
	struct sampler *s = sl->owner;
	struct gpu_backend *be = s->be;
	struct gpu_err err = { "" };
	unsigned nproc = 0, nmig = 0;
	int rc = GPU_OK;

	set_in_call(sl, gpu_backend_now_ns(be));
	/* After any backend call the sampler may have been stopped and, once its
	 * grace ran out, the backend closed and freed: a thread that was inside the
	 * call must not touch be again, only its own (abandoned, never freed) memory. */
	if (need_static && !w->st) {
		rc = GPU_ENOMEM;
		gpu_err_set(&err, "out of memory");
	} else if (need_static) {
		memset(w->st, 0, sizeof(*w->st));
		rc = be->ops->static_info(be, sl->index, w->st, &err);
		if (is_stopping(s))
			return need_static;
	}
	unsigned groups = s->cfg.groups;
	bool skip_slow = s->cfg.slow_group_every > 1 && tick % s->cfg.slow_group_every != 0;
	if (skip_slow)
		groups &= ~SAMPLER_SLOW_GROUPS;
	if (rc == GPU_OK) {
		memset(&w->smp, 0, sizeof(w->smp));
		rc = be->ops->sample(be, sl->index, groups, &w->smp, &err);
		if (is_stopping(s))
			return need_static;
		if (rc == GPU_OK && w->smp.lost) {
			rc = GPU_ENODEV;
			gpu_err_set(&err, "GPU %u is lost (it does not answer)", sl->index);
		}
	}
	if (rc == GPU_OK && s->cfg.processes && be->ops->processes) {
		struct gpu_err perr;
		if (be->ops->processes(be, sl->index, w->procs, GPU_MAX_PROCS, &nproc, &perr) != GPU_OK)
			nproc = 0; /* a process list that cannot be read is not a sampling failure */
		if (is_stopping(s))
			return need_static;
		if (nproc > GPU_MAX_PROCS)
			nproc = GPU_MAX_PROCS;
	}
	bool mig_on = need_static && w->st ? (VAL_HAS(w->st->mig_mode) && w->st->mig_mode.v == 1) : false;
	pthread_mutex_lock(&sl->mu);
	if (!need_static)
		mig_on = VAL_HAS(sl->g.st.mig_mode) && sl->g.st.mig_mode.v == 1;
	pthread_mutex_unlock(&sl->mu);
	if (rc == GPU_OK && mig_on && be->ops->mig_instances) {
		struct gpu_err merr;
		if (be->ops->mig_instances(be, sl->index, w->mig, GPU_MAX_MIG, &nmig, &merr) != GPU_OK)
			nmig = 0;
		if (is_stopping(s))
			return need_static;
		if (nmig > GPU_MAX_MIG)
			nmig = GPU_MAX_MIG;
	}
	uint64_t now = gpu_backend_now_ns(be);

	pthread_mutex_lock(&sl->mu);
	struct gpu_state *v = &sl->g;
	sl->call_started_ns = 0;
	if (rc == GPU_OK) {
		if (need_static)
			v->st = *w->st;
		if (!w->smp.timestamp_ns)
			w->smp.timestamp_ns = now;
		if (skip_slow) {
			carry_slow_groups(&w->smp, &v->s); /* the same reading: slow_read_ns and rate_base stay */
		} else {
			/* a new reading of the slow groups: the last one becomes the rate base */
			if (v->s.timestamp_ns && !v->s.lost) {
				gpu_rate_base_set(&v->rate_base, &v->s);
				v->rate_base.timestamp_ns = v->slow_read_ns ? v->slow_read_ns : v->s.timestamp_ns;
			} else {
				memset(&v->rate_base, 0, sizeof(v->rate_base));
			}
			v->slow_read_ns = w->smp.timestamp_ns;
			/* the NVLink error counters: a new reading of theirs, or the same served again */
			uint64_t err_ns = w->smp.nvlink_err_read_ns ? w->smp.nvlink_err_read_ns : w->smp.timestamp_ns;
			if (err_ns != v->nvlink_err_read_ns) {
				keep_nvlink_err_base(v);
				v->nvlink_err_read_ns = err_ns;
			}
		}
		v->s = w->smp;
		v->up = true;
		v->last_ok_ns = w->smp.timestamp_ns;
		v->samples++;
		v->last_error[0] = '\0';
		sl->nproc = fit_table((void **)&sl->procs, &sl->proc_cap, nproc, sizeof(w->procs[0]));
		if (sl->nproc) /* procs is NULL until a first process */
			memcpy(sl->procs, w->procs, sl->nproc * sizeof(w->procs[0]));
		sl->nmig = fit_table((void **)&sl->mig, &sl->mig_cap, nmig, sizeof(w->mig[0]));
		if (sl->nmig)
			memcpy(sl->mig, w->mig, sl->nmig * sizeof(w->mig[0]));
		need_static = false;
	} else {
		v->up = false;
		v->errors++;
		v->s.lost = rc == GPU_ENODEV;
		const char *msg = err.msg[0] ? err.msg : "backend call failed";
		size_t len = strnlen(msg, sizeof(v->last_error) - 1);
		memcpy(v->last_error, msg, len);
		v->last_error[len] = '\0';
		sl->nproc = 0;
		sl->nmig = 0;
		/* a GPU that fell off the bus may come back as a different board: re-read */
		if (rc == GPU_ENODEV)
			need_static = true;
	}
	bool first = !sl->attempted;
	sl->attempted = true;
	pthread_mutex_unlock(&sl->mu);

	if (first) {
		pthread_mutex_lock(&s->mu);
		s->first_done++;
		pthread_cond_broadcast(&s->cv);
		pthread_mutex_unlock(&s->mu);
	}
	return need_static;
}

/* A work buffer that starts on a page: its sample (3.7 KB) and first two
 * process entries fill one. From the heap, at any offset, the same bytes
 * spanned two pages of nearly every GPU's buffer: a page per GPU more. */
static struct gpu_work *work_new(void)
{
	return pages_alloc(sizeof(struct gpu_work));
}

static void work_free(struct gpu_work *w)
{
	pages_free(w, sizeof(*w));
}

static void *gpu_thread(void *arg)
{
	struct slot *sl = arg;
	struct sampler *s = sl->owner;
	char name[16];
	snprintf(name, sizeof(name), "gpuctl-gpu%u", sl->index);
	pthread_setname_np(pthread_self(), name); /* shows in top -H and /proc/PID/task */
	struct gpu_work *w = work_new();
	if (!w) {
		pthread_mutex_lock(&sl->mu);
		snprintf(sl->g.last_error, sizeof(sl->g.last_error), "out of memory");
		pthread_mutex_unlock(&sl->mu);
		return NULL;
	}
	w->st = NULL;
	bool need_static = true;
	uint64_t tick = 0;
	struct timespec next;
	mono_now(&next);
	while (!is_stopping(s)) {
		if (need_static && !w->st)
			w->st = malloc(sizeof(*w->st)); /* NULL: this attempt fails, the next tries again */
		need_static = sample_once(sl, w, need_static, tick++);
		if (!need_static && w->st) {
			free(w->st);
			w->st = NULL;
		}
		/* next tick on this GPU's own schedule; ticks missed by a slow call are skipped */
		struct timespec now;
		mono_now(&now);
		ts_add_ns(&next, s->cfg.interval_ns);
		while (ts_cmp(&next, &now) <= 0)
			ts_add_ns(&next, s->cfg.interval_ns);
		if (wait_until(s, &sl->mu, &sl->cv, &next))
			break;
	}
	free(w->st);
	work_free(w);
	return NULL;
}

static struct xid_count *xid_entry(struct slot *sl, uint64_t code)
{
	for (unsigned i = 0; i < sl->nxid; i++)
		if (sl->xid[i].code == code)
			return &sl->xid[i];
	if (sl->nxid < XID_MAX) {
		struct xid_count *x = &sl->xid[sl->nxid++];
		memset(x, 0, sizeof(*x));
		x->code = code;
		return x;
	}
	/* table full: the least recently seen code gives up its place */
	struct xid_count *old = &sl->xid[0];
	for (unsigned i = 1; i < sl->nxid; i++)
		if (sl->xid[i].last_ns < old->last_ns)
			old = &sl->xid[i];
	memset(old, 0, sizeof(*old));
	old->code = code;
	return old;
}

void sampler_note_xid(struct sampler *s, unsigned gpu, uint64_t code, uint64_t when_ns, enum xid_source src)
{
	if (!s || gpu >= s->n || (unsigned)src >= XID_SRC_COUNT)
		return;
	struct slot *sl = &s->slots[gpu];
	pthread_mutex_lock(&sl->mu);
	struct xid_count *x = xid_entry(sl, code);
	x->count[src]++;
	if (when_ns > x->last_ns)
		x->last_ns = when_ns;
	pthread_mutex_unlock(&sl->mu);
}

static void *event_thread(void *arg)
{
	struct sampler *s = arg;
	pthread_setname_np(pthread_self(), "gpuctl-events");
	struct gpu_event *ev = calloc(EVENT_BATCH, sizeof(*ev));
	if (!ev)
		return NULL;
	while (!is_stopping(s)) {
		struct gpu_err err = { "" };
		unsigned n = 0;
		int rc = s->be->ops->poll_events(s->be, EVENT_POLL_MS, ev, EVENT_BATCH, &n, &err);
		if (is_stopping(s))
			break; /* the backend may be gone: see sample_once */
		if (rc == GPU_EUNSUPPORTED || rc == GPU_ENODRIVER)
			break;
		if (rc != GPU_OK) {
			struct timespec next;
			mono_now(&next);
			ts_add_ns(&next, s->cfg.interval_ns);
			if (wait_until(s, &s->mu, &s->cv, &next))
				break;
			continue;
		}
		for (unsigned i = 0; i < n && i < EVENT_BATCH; i++) {
			if (ev[i].kind != EVT_XID)
				continue;
			uint64_t when = ev[i].timestamp_ns ? ev[i].timestamp_ns : gpu_backend_now_ns(s->be);
			sampler_note_xid(s, ev[i].gpu, ev[i].xid, when, XID_SRC_EVENTS);
		}
	}
	free(ev);
	return NULL;
}

static void *link_thread(void *arg)
{
	struct sampler *s = arg;
	pthread_setname_np(pthread_self(), "gpuctl-links");
	for (unsigned a = 0; a < s->n; a++) {
		for (unsigned b = a; b < s->n; b++) {
			if (is_stopping(s))
				return NULL;
			struct gpu_link l = { .kind = LINK_UNKNOWN, .pcie = LINK_UNKNOWN };
			struct gpu_err err;
			if (a == b)
				l.kind = l.pcie = LINK_SELF;
			else if (s->be->ops->link(s->be, a, b, &l, &err) != GPU_OK)
				l = (struct gpu_link){ .kind = LINK_UNKNOWN, .pcie = LINK_UNKNOWN };
			pthread_mutex_lock(&s->link_mu);
			s->link[a][b] = l;
			s->link[b][a] = l;
			pthread_mutex_unlock(&s->link_mu);
		}
	}
	return NULL;
}

static int start_thread(pthread_t *t, void *(*fn)(void *), void *arg)
{
	return thread_start(t, THREAD_STACK_BYTES, fn, arg);
}

static void sampler_free(struct sampler *s)
{
	if (!s)
		return;
	if (s->slots)
		for (unsigned i = 0; i < s->n; i++) {
			pthread_mutex_destroy(&s->slots[i].mu);
			pthread_cond_destroy(&s->slots[i].cv);
			free(s->slots[i].procs);
			free(s->slots[i].mig);
		}
	free(s->slots);
	pages_free(s->xid_room, (size_t)(s->n ? s->n : 1) * XID_MAX * sizeof(*s->xid_room));
	free(s->link);
	pthread_mutex_destroy(&s->link_mu);
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cv);
	free(s);
}

int sampler_start(struct sampler **out, struct gpu_backend *be, const struct sampler_config *cfg, struct gpu_err *err)
{
	*out = NULL;
	if (!be || !be->ops || !be->ops->sample || !be->ops->static_info) {
		gpu_err_set(err, "no backend to sample");
		return GPU_EINVAL;
	}
	if (be->gpu_count > GPU_MAX_GPUS) {
		gpu_err_set(err, "%u GPUs, more than the %u gpuctl handles", be->gpu_count, GPU_MAX_GPUS);
		return GPU_EINVAL;
	}
	struct sampler *s = calloc(1, sizeof(*s));
	if (!s) {
		gpu_err_set(err, "out of memory");
		return GPU_ENOMEM;
	}
	s->be = be;
	if (cfg)
		s->cfg = *cfg;
	else
		sampler_config_default(&s->cfg);
	if (s->cfg.interval_ns == 0)
		s->cfg.interval_ns = 1000000000ull;
	s->n = be->gpu_count;
	pthread_mutex_init(&s->mu, NULL);
	pthread_mutex_init(&s->link_mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cv, &ca);

	s->slots = calloc(s->n ? s->n : 1, sizeof(*s->slots));
	s->xid_room = pages_alloc((size_t)(s->n ? s->n : 1) * XID_MAX * sizeof(*s->xid_room));
	s->link = calloc(GPU_MAX_GPUS, sizeof(*s->link));
	if (!s->slots || !s->xid_room || !s->link) {
		pthread_condattr_destroy(&ca);
		free(s->slots);
		s->slots = NULL;
		sampler_free(s);
		gpu_err_set(err, "out of memory");
		return GPU_ENOMEM;
	}
	for (unsigned a = 0; a < s->n; a++)
		for (unsigned b = 0; b < s->n; b++)
			s->link[a][b] = (struct gpu_link){ .kind = LINK_UNKNOWN, .pcie = LINK_UNKNOWN };
	if (s->cfg.sys) {
		s->sys = *s->cfg.sys; /* not asked of the backend twice (fabric manager on every GPU) */
	} else if (be->ops->system_info) {
		struct gpu_err serr;
		if (be->ops->system_info(be, &s->sys, &serr) != GPU_OK)
			memset(&s->sys, 0, sizeof(s->sys));
	}
	s->cfg.sys = NULL; /* the caller's copy may go; the sampler has its own */
	s->sys.gpu_count = s->n;
	for (unsigned i = 0; i < s->n; i++) {
		struct slot *sl = &s->slots[i];
		pthread_mutex_init(&sl->mu, NULL);
		pthread_cond_init(&sl->cv, &ca);
		sl->owner = s;
		sl->index = i;
		sl->xid = s->xid_room + (size_t)i * XID_MAX;
		sl->g.st.index = i;
		snprintf(sl->g.last_error, sizeof(sl->g.last_error), "not sampled yet");
	}
	pthread_condattr_destroy(&ca);
	for (unsigned i = 0; i < s->n; i++) {
		if (start_thread(&s->slots[i].thread, gpu_thread, &s->slots[i]) != 0) {
			gpu_err_set(err, "cannot start the sampler thread of GPU %u", i);
			sampler_stop(s);
			return GPU_ENOMEM;
		}
		s->slots[i].thread_started = true;
	}
	if (s->cfg.events && be->ops->poll_events && start_thread(&s->ev_thread, event_thread, s) == 0)
		s->ev_started = true;
	if (be->ops->link && s->n > 0 && start_thread(&s->link_thread, link_thread, s) == 0)
		s->link_started = true;
	*out = s;
	return GPU_OK;
}

/* Copies a slot into out and decides up/stale at time now. Caller holds no lock. */
static void read_slot(struct sampler *s, struct slot *sl, uint64_t now, struct gpu_view *out)
{
	pthread_mutex_lock(&sl->mu);
	/* the processes there are, and the MIG instances there are: readers use
	 * procs[0, nproc) and mig[0, nmig) only, and writing the rest of the
	 * room would make it resident */
	const struct gpu_state *g = &sl->g;
	out->up = g->up;
	out->last_ok_ns = g->last_ok_ns;
	out->samples = g->samples;
	out->errors = g->errors;
	memcpy(out->last_error, g->last_error, sizeof(out->last_error));
	out->st = g->st;
	out->s = g->s;
	out->slow_read_ns = g->slow_read_ns;
	out->rate_base = g->rate_base;
	out->nvlink_err_read_ns = g->nvlink_err_read_ns;
	out->nvlink_err_base_ns = g->nvlink_err_base_ns;
	out->nvlink_err_base_n = g->nvlink_err_base_n;
	memcpy(out->nvlink_err_base, g->nvlink_err_base, g->nvlink_err_base_n * sizeof(g->nvlink_err_base[0]));
	/* out's tables have room for GPU_MAX_PROCS and GPU_MAX_MIG (snapshot.h), or are NULL */
	out->nproc = !out->procs ? 0 : sl->nproc < GPU_MAX_PROCS ? sl->nproc : GPU_MAX_PROCS;
	out->nmig = !out->mig ? 0 : sl->nmig < GPU_MAX_MIG ? sl->nmig : GPU_MAX_MIG;
	if (out->nproc)
		memcpy(out->procs, sl->procs, out->nproc * sizeof(out->procs[0]));
	if (out->nmig)
		memcpy(out->mig, sl->mig, out->nmig * sizeof(out->mig[0]));
	uint64_t in_call = sl->call_started_ns;
	out->nxid = 0;
	for (unsigned i = 0; i < sl->nxid && i < sizeof(out->xid) / sizeof(out->xid[0]); i++) {
		const struct xid_count *x = &sl->xid[i];
		uint64_t c = 0;
		for (unsigned k = 0; k < XID_SRC_COUNT; k++)
			if (x->count[k] > c)
				c = x->count[k];
		out->xid[out->nxid].code = x->code;
		out->xid[out->nxid].count = c;
		out->xid[out->nxid].last_ns = x->last_ns;
		out->nxid++;
	}
	pthread_mutex_unlock(&sl->mu);

	uint64_t limit = stale_limit(s);
	if (out->up && now > out->last_ok_ns && now - out->last_ok_ns > limit) {
		out->up = false;
		double age = (double)(now - out->last_ok_ns) / 1e9;
		if (in_call && now > in_call)
			snprintf(out->last_error, sizeof(out->last_error),
				 "stale: a backend call has not returned for %.1f s", (double)(now - in_call) / 1e9);
		else
			snprintf(out->last_error, sizeof(out->last_error), "stale: no sample for %.1f s", age);
	} else if (!out->up && !out->samples && !out->errors && in_call && now > in_call &&
		   now - in_call > limit) {
		snprintf(out->last_error, sizeof(out->last_error),
			 "no sample yet: a backend call has not returned for %.1f s", (double)(now - in_call) / 1e9);
	}
}

void sampler_read(struct sampler *s, struct snapshot *out)
{
	atomic_fetch_add(&s->reads, 1);
	uint64_t now = gpu_backend_now_ns(s->be);
	out->sys = s->sys;
	/* out has room for sampler_gpu_count() GPUs (snapshot_new); one with less
	 * gets the first GPUs it has room for, never a write past its arrays */
	out->n = s->n <= out->cap ? s->n : out->cap;
	for (unsigned i = 0; i < out->n; i++) {
		/* packed: the processes there are, one run after the views */
		snapshot_place_tables(out, i);
		read_slot(s, &s->slots[i], now, &out->gpu[i]);
	}
	pthread_mutex_lock(&s->link_mu);
	/* the rows of the GPUs there are: the full 64x64 matrix is 64 KiB, and
	 * copying it every tick kept two of them resident in the agent */
	memcpy(out->link, s->link, out->n * sizeof(out->link[0]));
	pthread_mutex_unlock(&s->link_mu);
	/* a GPU's thread may publish a sample while the slots are being read (it
	 * took its time before publishing): the snapshot is dated when the
	 * reading ended, so that no sample in it is newer than the snapshot */
	out->taken_ns = gpu_backend_now_ns(s->be);
}

void sampler_read_gpu(struct sampler *s, unsigned gpu, struct gpu_view *out)
{
	if (gpu >= s->n) {
		gpu_view_zero(out);
		snprintf(out->last_error, sizeof(out->last_error), "no GPU %u", gpu);
		return;
	}
	read_slot(s, &s->slots[gpu], gpu_backend_now_ns(s->be), out);
}

uint64_t sampler_reads(struct sampler *s)
{
	return atomic_load(&s->reads);
}

unsigned sampler_gpu_count(const struct sampler *s)
{
	return s ? s->n : 0;
}

bool sampler_wait_first(struct sampler *s, uint64_t timeout_ns)
{
	struct timespec deadline;
	mono_now(&deadline);
	ts_add_ns(&deadline, timeout_ns);
	pthread_mutex_lock(&s->mu);
	while (s->first_done < s->n && !s->stopping) {
		if (pthread_cond_timedwait(&s->cv, &s->mu, &deadline) != 0)
			break;
	}
	bool all = s->first_done >= s->n;
	pthread_mutex_unlock(&s->mu);
	return all;
}

/* Joins a thread, but gives up on one stuck in a backend call that never returns. */
static bool join_bounded(pthread_t t, const struct timespec *deadline)
{
	if (pthread_timedjoin_np(t, NULL, deadline) == 0)
		return true;
	pthread_detach(t);
	return false;
}

void sampler_stop(struct sampler *s)
{
	sampler_stop_within(s, STOP_GRACE_NS);
}

void sampler_stop_within(struct sampler *s, uint64_t grace_ns)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->mu);
	atomic_store(&s->stopping, true);
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	/* under each slot's lock: a thread between its check and its sleep is not missed */
	for (unsigned i = 0; i < s->n; i++) {
		pthread_mutex_lock(&s->slots[i].mu);
		pthread_cond_broadcast(&s->slots[i].cv);
		pthread_mutex_unlock(&s->slots[i].mu);
	}
	/* backend calls in flight get a few seconds (in all) to return */
	struct timespec deadline;
	clock_gettime(CLOCK_REALTIME, &deadline);
	ts_add_ns(&deadline, grace_ns);
	bool all_joined = true;
	for (unsigned i = 0; i < s->n; i++)
		if (s->slots[i].thread_started)
			all_joined &= join_bounded(s->slots[i].thread, &deadline);
	if (s->ev_started)
		all_joined &= join_bounded(s->ev_thread, &deadline);
	if (s->link_started)
		all_joined &= join_bounded(s->link_thread, &deadline);
	/* A thread still inside a hung backend call owns its slot: leave the memory
	 * to it rather than free it under its feet (the process is about to end).
	 * It stays on a list so that it is not reported as a leak. */
	if (all_joined) {
		sampler_free(s);
	} else {
		pthread_mutex_lock(&abandoned_mu);
		s->abandoned_next = abandoned;
		abandoned = s;
		pthread_mutex_unlock(&abandoned_mu);
	}
}
