/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent.c - the agent's threads: the sampler (sampler.c), a render thread
 * that once per interval advances the ticker (health/tick.h: one read of the
 * sampler, one health evaluation, shared with the job pool) and renders the
 * /api/v1/health document into a `struct published`, and (agent_klog.c) the
 * kernel-log XID reader. The HTTP server (http.c) only takes a reference on
 * the current published responses. The expositions (text, OpenMetrics) and
 * /api/v1/gpus are rendered by the same thread from the same snapshot, at the
 * tick when they were asked for in the two ticks before or a periodic
 * scraper is expected before the next tick, else on the first request
 * (agent_variant_ready; variants_wanted says why).
 *
 * Published response sets come from a small pool: a set is rebuilt only when
 * no scrape still holds it, so the buffers keep their capacity from tick to
 * tick and a render allocates nothing in the steady state. The pages of its
 * expositions (86 KB of gzip, 2 MB of text at 64 GPUs) are resident only
 * while it is current or a scrape reads it (drop_expositions).
 */
#include "agent_internal.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "history.h"
#include "health/leakwatch.h"
#include "health/tick.h"
#include "metrics.h"
#include "pool/pool.h"
#include "agent/pool_agent.h"
#include "core/thread.h"
#include "pool/runner.h"

#define FIRST_SAMPLE_WAIT_NS 3000000000ull
#define POOL_KEEP 2        /* response sets kept for reuse: the current one and one to render into */
#define EXPO_WAIT_NS 5000000000ull /* the longest a scrape waits for its exposition to be rendered */
#define TRIM_EVERY 30      /* ticks between giving freed heap memory back to the system */

static void mono_deadline(struct timespec *ts, uint64_t mono_ns)
{
	ts->tv_sec = (time_t)(mono_ns / 1000000000ull);
	ts->tv_nsec = (long)(mono_ns % 1000000000ull);
}

/* The render thread's clock: CLOCK_MONOTONIC, or the test's (agent_env.mono_ns). */
static uint64_t agent_mono(const struct agent *a)
{
	return a->env.mono_ns ? a->env.mono_ns(a->env.clock_arg) : clock_mono_ns();
}

bool agent_stopping(struct agent *a)
{
	pthread_mutex_lock(&a->mu);
	bool stop = a->stopping;
	pthread_mutex_unlock(&a->mu);
	return stop;
}

/* ---- published responses ---------------------------------------------------- */

struct published *agent_acquire(struct agent *a)
{
	pthread_mutex_lock(&a->pub_mu);
	struct published *p = a->current;
	if (p)
		p->refs++;
	pthread_mutex_unlock(&a->pub_mu);
	if (p)
		atomic_fetch_add(&a->scrapes, 1);
	return p;
}

void agent_release(struct agent *a, struct published *p)
{
	pthread_mutex_lock(&a->pub_mu);
	p->refs--;
	pthread_mutex_unlock(&a->pub_mu);
}

/* A set nobody reads (not current, no reference), or a new one. */
static struct published *pool_take(struct agent *a)
{
	pthread_mutex_lock(&a->pub_mu);
	struct published *p = a->pool;
	while (p && (p->refs != 0 || p == a->current))
		p = p->next;
	if (!p) {
		p = calloc(1, sizeof(*p));
		if (p) {
			p->next = a->pool;
			a->pool = p;
			p->refs = 1; /* not free while it is being built */
		}
	} else {
		p->refs = 1;
	}
	pthread_mutex_unlock(&a->pub_mu);
	return p;
}

static void published_free(struct published *p)
{
	for (unsigned f = 0; f < EXPO_N; f++) {
		gz_body_free(&p->expo[f]);
		abuf_free(&p->plain[f]);
	}
	api_doc_free(&p->gpus);
	api_doc_free(&p->health);
	free(p);
}

/* The expositions of a set nobody serves (not current, no scrape holding
 * it), or of one that is not rendered at this tick: kept, the set that
 * waits to be rendered into held a copy of every exposition of two ticks
 * before, resident and never sent again. */
static void drop_expositions(struct published *p)
{
	for (unsigned f = 0; f < EXPO_N; f++) {
		abuf_drop_pages(&p->expo[f].gz);
		p->expo[f].raw_len = 0;
		abuf_drop_pages(&p->plain[f]);
	}
}

/* Counts the expositions the sets hold (agent_status). The render thread's:
 * it alone writes and drops them. */
static void count_expositions(struct agent *a)
{
	unsigned long long buffers = 0, bytes = 0;
	pthread_mutex_lock(&a->pub_mu);
	for (const struct published *p = a->pool; p; p = p->next)
		for (unsigned f = 0; f < EXPO_N; f++) {
			buffers += (p->expo[f].gz.len != 0) + (p->plain[f].len != 0);
			bytes += p->expo[f].gz.len + p->plain[f].len;
		}
	pthread_mutex_unlock(&a->pub_mu);
	atomic_store(&a->expo_buffers, buffers);
	atomic_store(&a->expo_bytes, bytes);
}

/* Makes p current. Only the render thread (or agent_start before it runs)
 * calls it and pool_take: a set neither current nor held stays so until the
 * next pool_take, so its expositions are dropped outside the lock. */
static void publish(struct agent *a, struct published *p)
{
	pthread_mutex_lock(&a->pub_mu);
	struct published *old = a->current;
	a->current = p; /* keeps the reference pool_take gave it */
	if (old)
		old->refs--;
	/* sets made while slow clients held the others go once they are free */
	unsigned kept = 0;
	struct published **pp = &a->pool, *unused = NULL, *idle[POOL_KEEP];
	unsigned nidle = 0;
	while (*pp) {
		struct published *q = *pp;
		if (++kept > POOL_KEEP && q->refs == 0 && q != a->current) {
			*pp = q->next;
			q->next = unused;
			unused = q;
			continue;
		}
		if (q->refs == 0 && q != a->current && nidle < POOL_KEEP)
			idle[nidle++] = q;
		pp = &q->next;
	}
	pthread_mutex_unlock(&a->pub_mu);
	for (unsigned i = 0; i < nidle; i++)
		drop_expositions(idle[i]);
	while (unused) {
		struct published *next = unused->next;
		published_free(unused);
		unused = next;
	}
	count_expositions(a);
}

static void pool_free(struct agent *a)
{
	struct published *p = a->pool;
	while (p) {
		struct published *next = p->next;
		published_free(p);
		p = next;
	}
	a->pool = a->current = NULL;
}

/* ---- rendering ----------------------------------------------------------------- */

/* The render thread's state. After a tick, tick is that tick (a reference:
 * its snapshot and health report) and opts/mh what its expositions are
 * rendered with (at the tick or on request). One snapshot: health's rates run
 * between the two readings each view holds (its sample and the sampler's
 * rate base), so no previous snapshot is kept. The leaks and the fault
 * file's error are the tick's, in a->notes (agent_tick.c). */
struct render_scratch {
	struct tick *tick;
	const struct snapshot *snap;  /* tick's */
	struct gz_writer gz;          /* compresses the expositions as they are rendered */
	struct metrics_opts opts;
	struct metrics_health mh[GPU_MAX_GPUS];
};

static void scratch_free(struct render_scratch *s)
{
	if (!s)
		return;
	tick_put(s->tick);
	gz_writer_free(&s->gz);
	free(s);
}

static struct render_scratch *scratch_new(void)
{
	struct render_scratch *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	if (gz_writer_init(&s->gz) == 0)
		return s;
	scratch_free(s);
	return NULL;
}

static int health_status(enum health_verdict v)
{
	switch (v) {
	case HEALTH_PASS: return 0;
	case HEALTH_WARN: return 1;
	case HEALTH_FAIL: return 2;
	default: return -1;
	}
}

/* Renders one exposition of the last tick into p (gzip-compressed as it goes). */
static int render_gzip(struct agent *a, struct render_scratch *s, struct published *p, unsigned fmt)
{
	uint64_t t0 = clock_mono_ns();
	struct metrics_opts o = s->opts;
	o.openmetrics = fmt == EXPO_OM;
	o.last_render_ns = atomic_load(&a->last_render_ns);
	struct abuf *text = gz_begin(&s->gz, &p->expo[fmt]);
	int rc = metrics_render(text, s->snap, &o);
	pool_metrics_append(a->job_pool, text, fmt == EXPO_OM);
	rc |= gz_end(&s->gz);
	atomic_store(&a->last_render_ns, clock_mono_ns() - t0);
	atomic_fetch_add(&a->expo_renders, 1);
	return rc ? -1 : 0;
}

/* /api/v1/gpus of the last tick into p (s->opts: the tick's hostname). */
static int render_gpus_doc(struct agent *a, struct render_scratch *s, struct published *p)
{
	int rc = api_render_gpus(&p->gpus, s->snap, s->opts.hostname);
	atomic_fetch_add(&a->doc_renders, 1);
	return rc;
}

/* Makes variant v of p ready: /api/v1/gpus, or an exposition: the gzip one
 * rendered, the plain one inflated from it (one inflation per tick serves
 * every client without gzip). */
static int render_variant(struct agent *a, struct render_scratch *s, struct published *p, unsigned v)
{
	if (atomic_load(&p->ready[v]))
		return 0;
	if (v == VAR_GPUS) {
		bool ok = render_gpus_doc(a, s, p) == 0;
		atomic_store(ok ? &p->ready[v] : &p->failed[v], true);
		return ok ? 0 : -1;
	}
	unsigned fmt = v % EXPO_N;
	if (!atomic_load(&p->ready[fmt])) {
		if (render_gzip(a, s, p, fmt) != 0) {
			atomic_store(&p->failed[fmt], true);
			atomic_store(&p->failed[v], true);
			return -1;
		}
		atomic_store(&p->ready[fmt], true);
	}
	if (v != fmt) {
		abuf_reset(&p->plain[fmt]);
		if (gz_inflate_all(&p->expo[fmt], &p->plain[fmt]) != 0) {
			atomic_store(&p->failed[v], true);
			return -1;
		}
		atomic_store(&p->ready[v], true);
	}
	return 0;
}

/* Renders tick k (its reference becomes the scratch's): /api/v1/health into p
 * and the variants whose bit is set in want_now (the others on request). */
static int render_into(struct agent *a, struct render_scratch *s, struct published *p, unsigned want_now,
		       struct tick *k)
{
	uint64_t t0 = clock_mono_ns();
	tick_put(s->tick);
	s->tick = k;
	s->snap = k->snap;
	history_add_snapshot(a->history, s->snap);
	struct leakwatch_leak *leaks = a->notes.leaks;
	unsigned nleaks = a->notes.nleaks;
	int fault_file_bad = a->notes.fault_file_bad;
	const struct health_report *rep = k->rep_ok ? k->rep : NULL;
	memset(s->mh, 0, sizeof(s->mh));
	for (unsigned i = 0; rep && i < s->snap->n && i < rep->n; i++) {
		s->mh[i].status = health_status(health_gpu_verdict(rep, i));
		s->mh[i].valid = s->mh[i].status >= 0;
	}
	const char *host = a->cfg.hostname[0] ? a->cfg.hostname : NULL;
	struct metrics_opts *o = &s->opts;
	metrics_opts_default(o);
	o->groups = a->cfg.groups;
	o->dcgm_compat = a->cfg.dcgm_compat;
	o->hostname = host;
	o->nlabels = a->cfg.nlabels;
	memcpy(o->labels, a->cfg.labels, sizeof(o->labels));
	o->version = a->env.version;
	o->kernel_log = atomic_load(&a->kernel_log);
	o->sim_fault_file = fault_file_bad;
	o->health = rep ? s->mh : NULL;
	o->leaks = a->leaks ? leaks : NULL;
	o->nleaks = nleaks;
	struct api_leak_watch lw = { 0 };
	if (a->leaks) {
		lw.leaks = leaks;
		lw.nleaks = nleaks;
		lw.window_s = a->leaks->params.min_window_s;
		lw.min_rate = a->leaks->params.min_rate;
		lw.min_growth = a->leaks->params.min_growth;
		lw.tracked = a->leaks->tracked;
		lw.untracked = a->leaks->untracked;
	}
	int rc = api_render_health_watch(&p->health, s->snap, rep, host, a->leaks ? &lw : NULL);
	/* gpuctl_agent_render_seconds is always there: before the first exposition
	 * it is the first tick's rendering (JSON, health), as it was before the
	 * expositions were rendered on request */
	unsigned long long zero = 0; /* the atomic's own type (clang: not uint64_t's) */
	atomic_compare_exchange_strong(&a->last_render_ns, &zero, clock_mono_ns() - t0);
	bool freed = false;
	for (unsigned v = 0; v < RENDER_VARIANTS; v++) {
		atomic_store(&p->ready[v], false);
		atomic_store(&p->failed[v], false);
		atomic_store(&p->asked[v], 0);
		atomic_store(&p->first_ask_ns[v], 0);
		atomic_store(&p->last_ask_ns[v], 0);
	}
	for (unsigned f = 0; f < EXPO_N; f++) {
		abuf_reset(&p->expo[f].gz);
		p->expo[f].raw_len = 0;
		/* the text is 2 MB at 64 GPUs: kept only while clients without gzip come */
		if (!(want_now & (1u << expo_variant(f, false))) && p->plain[f].cap) {
			abuf_free(&p->plain[f]);
			freed = true;
		}
	}
	/* the pages of the last exposition rendered into this set are dead:
	 * resident only as far as this tick's rendering writes them again */
	drop_expositions(p);
	/* 60 KB at 64 GPUs: kept only while it is asked for */
	if (!(want_now & (1u << VAR_GPUS)) && p->gpus.head.cap) {
		api_doc_free(&p->gpus);
		api_doc_init(&p->gpus);
		freed = true;
	}
	for (unsigned v = 0; v < RENDER_VARIANTS; v++)
		if (want_now & (1u << v))
			rc |= render_variant(a, s, p, v);
	if (freed)
		malloc_trim(0); /* glibc may have kept the freed text in the heap */
	p->mono_ns = clock_mono_ns();
	atomic_fetch_add(&a->renders, 1);
	return rc ? -1 : 0;
}

/* Waits for the next tick, stopping, or a request to render a variant of the
 * current set. Returns 1 on a tick, 0 on a request (its bits in *req), -1 when stopping. */
static int render_wait(struct agent *a, uint64_t until_mono_ns, unsigned *req)
{
	struct timespec ts;
	mono_deadline(&ts, until_mono_ns);
	int rc = 1;
	pthread_mutex_lock(&a->mu);
	for (;;) {
		if (a->stopping) {
			rc = -1;
			break;
		}
		if (a->render_req) {
			*req = a->render_req;
			a->render_req = 0;
			rc = 0;
			break;
		}
		if (a->env.mono_ns) { /* the test's clock: it wakes us when it moves (agent_clock_moved) */
			if (agent_mono(a) >= until_mono_ns)
				break;
			a->waiting_until = until_mono_ns;
			pthread_cond_broadcast(&a->cv);
			pthread_cond_wait(&a->cv, &a->mu);
			continue;
		}
		if (pthread_cond_timedwait(&a->cv, &a->mu, &ts) != 0)
			break;
	}
	a->waiting_until = 0;
	pthread_mutex_unlock(&a->mu);
	return rc;
}

/* The variants asked for in the last tick's set, and when first and last. */
static unsigned variants_asked(struct agent *a, uint64_t first_ns[], uint64_t last_ns[])
{
	unsigned asked = 0;
	pthread_mutex_lock(&a->pub_mu);
	for (unsigned v = 0; v < RENDER_VARIANTS; v++) {
		first_ns[v] = last_ns[v] = 0;
		if (a->current && atomic_load(&a->current->asked[v])) {
			asked |= 1u << v;
			first_ns[v] = atomic_load(&a->current->first_ask_ns[v]);
			last_ns[v] = atomic_load(&a->current->last_ask_ns[v]);
		}
	}
	pthread_mutex_unlock(&a->pub_mu);
	return asked;
}

/* What was asked for in each of the last two ticks is rendered at the tick:
 * scrapers that come every tick find it ready. A scraper slower than the
 * tick (Prometheus's 15 s) has it rendered at the tick before its next
 * request, once it has come twice at the same period (render_ahead.h); its
 * first two requests, and one that comes off its period, have it rendered on
 * request. Nobody scraping costs no rendering. (Rendering at every tick what
 * the last tick was asked for cost a 15 s scraper an unused rendering per
 * scrape.) */
static unsigned variants_wanted(struct agent *a, unsigned *asked_before, uint64_t tick_ns)
{
	uint64_t first_ns[RENDER_VARIANTS], last_ns[RENDER_VARIANTS];
	unsigned asked = variants_asked(a, first_ns, last_ns);
	unsigned want = render_ahead(a->expect, RENDER_VARIANTS, asked, *asked_before, first_ns, last_ns, tick_ns,
				     a->cfg.interval_ns);
	*asked_before = asked;
	return want;
}

static void render_requested(struct agent *a, struct render_scratch *s, unsigned req)
{
	pthread_mutex_lock(&a->pub_mu);
	struct published *p = a->current;
	if (p)
		p->refs++;
	pthread_mutex_unlock(&a->pub_mu);
	if (p) {
		for (unsigned v = 0; v < RENDER_VARIANTS; v++)
			if (req & (1u << v))
				render_variant(a, s, p, v);
		agent_release(a, p);
		count_expositions(a);
	}
	pthread_mutex_lock(&a->mu);
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
}

static bool is_current(struct agent *a, const struct published *p)
{
	pthread_mutex_lock(&a->pub_mu);
	bool cur = a->current == p;
	pthread_mutex_unlock(&a->pub_mu);
	return cur;
}

void agent_clock_moved(struct agent *a)
{
	pthread_mutex_lock(&a->mu);
	pthread_cond_broadcast(&a->cv);
	while (a->render_started && !a->stopping && !(a->waiting_until > agent_mono(a)))
		pthread_cond_wait(&a->cv, &a->mu);
	pthread_mutex_unlock(&a->mu);
}

bool agent_variant_ready(struct agent *a, struct published *p, unsigned variant)
{
	uint64_t now = agent_mono(a);
	unsigned long long none = 0; /* the atomic's own type (clang: not uint64_t's) */
	/* before asked: a tick that sees asked sees the time */
	atomic_compare_exchange_strong(&p->first_ask_ns[variant], &none, now);
	atomic_store(&p->last_ask_ns[variant], now);
	atomic_fetch_add(&p->asked[variant], 1);
	if (atomic_load(&p->ready[variant]))
		return true;
	/* bounded: a render takes milliseconds, but the render thread may be stopping */
	struct timespec ts;
	mono_deadline(&ts, clock_mono_ns() + EXPO_WAIT_NS);
	pthread_mutex_lock(&a->mu); /* then pub_mu (is_current); nothing takes them the other way */
	while (!atomic_load(&p->ready[variant]) && !atomic_load(&p->failed[variant]) && !a->stopping &&
	       is_current(a, p)) {
		if (!(a->render_req & (1u << variant))) {
			/* once per request: the waiters share the cv with the render thread */
			a->render_req |= 1u << variant;
			pthread_cond_broadcast(&a->cv);
		}
		if (pthread_cond_timedwait(&a->cv, &a->mu, &ts) != 0)
			break;
	}
	pthread_mutex_unlock(&a->mu);
	return atomic_load(&p->ready[variant]);
}

static void *render_thread(void *arg)
{
	struct agent *a = arg;
	struct render_scratch *s = a->scratch;
	uint64_t next = a->first_tick_ns;
	unsigned asked_before = 0; /* variants asked for in the tick before the last */
	for (;;) {
		next += a->cfg.interval_ns;
		uint64_t now = agent_mono(a);
		while (next <= now)
			next += a->cfg.interval_ns;
		unsigned req = 0;
		int w;
		while ((w = render_wait(a, next, &req)) == 0)
			render_requested(a, s, req);
		if (w < 0)
			break;
		unsigned want = variants_wanted(a, &asked_before, agent_mono(a));
		struct published *p = pool_take(a);
		if (!p)
			continue;
		struct tick *k = ticker_advance(a->ticker);
		if (!k) {
			pthread_mutex_lock(&a->pub_mu);
			p->refs--;
			pthread_mutex_unlock(&a->pub_mu);
			continue;
		}
		if (render_into(a, s, p, want, k) == 0) {
			publish(a, p);
			/* scrapers waiting for the replaced set's exposition take this one */
			pthread_mutex_lock(&a->mu);
			pthread_cond_broadcast(&a->cv);
			pthread_mutex_unlock(&a->mu);
			/* a burst of scrapers leaves freed response sets behind: return them */
			if (atomic_load(&a->renders) % TRIM_EVERY == 0)
				malloc_trim(0);
		} else {
			pthread_mutex_lock(&a->pub_mu);
			p->refs--;
			pthread_mutex_unlock(&a->pub_mu);
		}
	}
	/* wake scrapers waiting for a render that will not come */
	pthread_mutex_lock(&a->mu);
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

/* ---- life cycle ------------------------------------------------------------------ */


static void sampler_cfg_of(const struct agent_config *c, struct sampler_config *sc)
{
	sampler_config_default(sc);
	sc->interval_ns = c->interval_ns;
	sc->groups = metrics_sampler_groups(c->groups);
	sc->slow_group_every = c->slow_group_every;
	sc->stale_after_ns = c->stale_after_ns;
	sc->processes = (c->groups & (MG_PROCESSES | MG_HEALTH)) != 0;
	sc->events = (c->groups & (MG_XID | MG_HEALTH)) != 0;
}

static struct agent *agent_new(struct gpu_backend *be, const struct agent_config *cfg, const struct agent_env *env)
{
	struct agent *a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	if (cfg->groups & (MG_PROCESSES | MG_HEALTH)) {
		/* the watch needs the process lists, sampled for either group */
		struct leak_params lp;
		leak_params_default(&lp);
		lp.min_window_s = (double)cfg->leak_window_ns / 1e9;
		lp.min_rate = cfg->leak_min_rate;
		lp.min_growth = cfg->leak_min_growth;
		a->leaks = leakwatch_new(&lp);
		if (!a->leaks) {
			free(a);
			return NULL;
		}
	}
	a->cfg = *cfg;
	if (env)
		a->env = *env;
	a->be = be;
	atomic_store(&a->kernel_log, -1);
	pthread_mutex_init(&a->pub_mu, NULL);
	pthread_mutex_init(&a->mu, NULL);
	pthread_mutex_init(&a->log_mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&a->cv, &ca);
	pthread_condattr_destroy(&ca);
	a->rules = calloc(1, sizeof(*a->rules));
	if (a->rules && health_rules_load_default(a->rules, a->env.data_dir_env, a->health_error, sizeof(a->health_error))) {
		free(a->rules);
		a->rules = NULL;
	}
	return a;
}

void agent_free(struct agent *a)
{
	pool_free(a);
	scratch_free(a->scratch);
	agent_ticker_free(a);
	free(a->rules);
	free(a->leaks);
	history_free(a->history);
	pthread_mutex_destroy(&a->pub_mu);
	pthread_mutex_destroy(&a->mu);
	pthread_mutex_destroy(&a->log_mu);
	pthread_cond_destroy(&a->cv);
	free(a);
}

static int start_sampler(struct agent *a, char *err, size_t errlen)
{
	struct sampler_config sc;
	sampler_cfg_of(&a->cfg, &sc);
	sc.sys = a->env.sys;
	struct gpu_err gerr = { "" };
	if (sampler_start(&a->sampler, a->be, &sc, &gerr) != GPU_OK) {
		snprintf(err, errlen, "cannot start the sampler: %s", gerr.msg);
		return -1;
	}
	uint64_t wait = 3 * a->cfg.interval_ns;
	sampler_wait_first(a->sampler, wait < FIRST_SAMPLE_WAIT_NS ? wait : FIRST_SAMPLE_WAIT_NS);
	return 0;
}

int agent_start(struct agent **out, struct gpu_backend *be, const struct agent_config *cfg,
		const struct agent_env *env, char *err, size_t errlen)
{
	*out = NULL;
	struct agent *a = agent_new(be, cfg, env);
	if (!a) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (start_sampler(a, err, errlen)) {
		agent_free(a);
		return -1;
	}
	agent_start_klog(a);
	unsigned full = 0, coarse = 0;
	history_tiers_for(a->cfg.history_ns, a->cfg.interval_ns, &full, &coarse);
	if (a->cfg.history_ns && be->gpu_count &&
	    !(a->history = history_new_tiered(be->gpu_count, full, coarse, history_base_ns(gpu_backend_now_ns(be))))) {
		snprintf(err, errlen, "out of memory for the history");
		agent_stop(a);
		return -1;
	}
	/* the first tick before the pool, which takes it in at its start */
	struct tick *k = NULL;
	a->first_tick_ns = agent_mono(a);
	if (!(a->scratch = scratch_new()) || agent_ticker_start(a) != 0 || (k = ticker_advance(a->ticker)) == NULL) {
		snprintf(err, errlen, "out of memory for the first tick");
		agent_stop(a);
		return -1;
	}
	if (a->cfg.pool && pool_agent_start(a, err, errlen)) {
		tick_put(k);
		agent_stop(a);
		return -1;
	}
	/* the first responses exist before the port opens (the expositions: on request) */
	struct published *p = NULL;
	int rc = -1;
	if ((p = pool_take(a)) != NULL && render_into(a, a->scratch, p, 0, k) == 0) {
		publish(a, p);
		rc = 0;
	} else if (!p) {
		tick_put(k);
	}
	if (rc) {
		snprintf(err, errlen, "out of memory rendering the first exposition");
		agent_stop(a);
		return -1;
	}
	if (thread_start(&a->render_thread, AGENT_THREAD_STACK_BYTES, render_thread, a) != 0) {
		snprintf(err, errlen, "cannot start the render thread");
		agent_stop(a);
		return -1;
	}
	a->render_started = true;
	if (agent_http_start(a, err, errlen)) {
		agent_stop(a);
		return -1;
	}
	if (a->env.mono_ns) /* the test's clock: the render thread waits for its first tick before it moves */
		agent_clock_moved(a);
	*out = a;
	return 0;
}

void agent_get_status(struct agent *a, struct agent_status *st)
{
	memset(st, 0, sizeof(*st));
	st->port = a->port;
	st->kernel_log = atomic_load(&a->kernel_log);
	snprintf(st->kernel_log_error, sizeof(st->kernel_log_error), "%s", a->kernel_log_error);
	st->health_rules = a->rules != NULL;
	snprintf(st->health_error, sizeof(st->health_error), "%s", a->health_error);
	pthread_mutex_lock(&a->mu);
	snprintf(st->sim_fault_file_error, sizeof(st->sim_fault_file_error), "%s", a->sim_fault_file_error);
	pthread_mutex_unlock(&a->mu);
	st->renders = atomic_load(&a->renders);
	st->ticks = a->ticker ? ticker_ticks(a->ticker) : 0;
	st->sampler_reads = sampler_reads(a->sampler);
	st->scrapes = atomic_load(&a->scrapes);
	st->expo_renders = atomic_load(&a->expo_renders);
	st->doc_renders = atomic_load(&a->doc_renders);
	st->expo_buffers = (unsigned)atomic_load(&a->expo_buffers);
	st->expo_bytes = (size_t)atomic_load(&a->expo_bytes);
}

void agent_stop(struct agent *a)
{
	agent_stop_noted(a, NULL, NULL);
}

int agent_render_once(struct gpu_backend *be, const struct agent_config *cfg, const struct agent_env *env,
		      bool openmetrics, struct abuf *out, char *err, size_t errlen)
{
	struct agent *a = agent_new(be, cfg, env);
	if (!a) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (start_sampler(a, err, errlen)) {
		agent_free(a);
		return -1;
	}
	unsigned fmt = openmetrics ? EXPO_OM : EXPO_TEXT;
	struct published *p = NULL;
	struct tick *k = NULL;
	int rc = -1;
	if ((a->scratch = scratch_new()) != NULL && agent_ticker_start(a) == 0 &&
	    (k = ticker_advance(a->ticker)) != NULL && (p = pool_take(a)) != NULL &&
	    render_into(a, a->scratch, p, 1u << expo_variant(fmt, false), k) == 0) {
		abuf_put(out, p->plain[fmt].p, p->plain[fmt].len);
		rc = out->oom ? -1 : 0;
	} else if (k && !p) {
		tick_put(k);
	}
	if (rc)
		snprintf(err, errlen, "out of memory rendering the exposition");
	sampler_stop(a->sampler);
	agent_free(a);
	return rc;
}
