/*
 * agent.c - the agent's threads: the sampler (sampler.c), a render thread
 * that once per interval reads a snapshot, evaluates health and renders every
 * response into a `struct published`, and the kernel-log XID reader. The HTTP
 * server (http.c) only takes a reference on the current published responses.
 *
 * Published response sets come from a small pool: a set is rebuilt only when
 * no scrape still holds it, so the buffers keep their capacity from tick to
 * tick and a render allocates nothing in the steady state.
 */
#include "agent_internal.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kmsg.h"
#include "leakwatch.h"
#include "metrics.h"
#include "../pool/pool.h"
#include "../pool/pool_agent.h"
#include "../pool/runner.h"

#define FIRST_SAMPLE_WAIT_NS 3000000000ull
#define POOL_KEEP 2        /* response sets kept for reuse: the current one and one to render into */
#define OM_KEEP_RENDERS 60 /* OpenMetrics is rendered while asked for within this many ticks */
#define TRIM_EVERY 30      /* ticks between giving freed heap memory back to the system */
#define KLOG_POLL_MS 250u

uint64_t agent_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void mono_deadline(struct timespec *ts, uint64_t mono_ns)
{
	ts->tv_sec = (time_t)(mono_ns / 1000000000ull);
	ts->tv_nsec = (long)(mono_ns % 1000000000ull);
}

/* Sleeps until the monotonic time or agent_stop(); true when stopping. */
static bool agent_wait(struct agent *a, uint64_t until_mono_ns)
{
	struct timespec ts;
	mono_deadline(&ts, until_mono_ns);
	pthread_mutex_lock(&a->mu);
	while (!a->stopping)
		if (pthread_cond_timedwait(&a->cv, &a->mu, &ts) != 0)
			break;
	bool stop = a->stopping;
	pthread_mutex_unlock(&a->mu);
	return stop;
}

static bool agent_stopping(struct agent *a)
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
	gz_body_free(&p->prom);
	gz_body_free(&p->om);
	api_doc_free(&p->gpus);
	api_doc_free(&p->health);
	free(p);
}

static void publish(struct agent *a, struct published *p)
{
	pthread_mutex_lock(&a->pub_mu);
	struct published *old = a->current;
	a->current = p; /* keeps the reference pool_take gave it */
	if (old)
		old->refs--;
	/* sets made while slow clients held the others go once they are free */
	unsigned kept = 0;
	struct published **pp = &a->pool, *unused = NULL;
	while (*pp) {
		struct published *q = *pp;
		if (++kept > POOL_KEEP && q->refs == 0 && q != a->current) {
			*pp = q->next;
			q->next = unused;
			unused = q;
			continue;
		}
		pp = &q->next;
	}
	pthread_mutex_unlock(&a->pub_mu);
	while (unused) {
		struct published *next = unused->next;
		published_free(unused);
		unused = next;
	}
}

void agent_want_openmetrics(struct agent *a)
{
	atomic_store(&a->om_asked, atomic_load(&a->renders) + 1);
}

/* OpenMetrics costs a second rendering: done only while clients ask for it. */
static bool openmetrics_wanted(struct agent *a)
{
	uint64_t asked = atomic_load(&a->om_asked);
	return asked && atomic_load(&a->renders) + 1 - asked < OM_KEEP_RENDERS;
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

struct render_scratch {
	struct snapshot *now, *prev;
	bool have_prev;
	struct health_report *rep;
	struct leakwatch_leak *leaks; /* LEAKWATCH_MAX */
	struct gz_writer gz;          /* compresses the expositions as they are rendered */
};

static int scratch_init(struct render_scratch *s)
{
	memset(s, 0, sizeof(*s));
	s->now = calloc(1, sizeof(*s->now));
	s->prev = calloc(1, sizeof(*s->prev));
	s->rep = calloc(1, sizeof(*s->rep));
	s->leaks = calloc(LEAKWATCH_MAX, sizeof(*s->leaks));
	int gz = gz_writer_init(&s->gz);
	return s->now && s->prev && s->rep && s->leaks && gz == 0 ? 0 : -1;
}

static void scratch_free(struct render_scratch *s)
{
	free(s->now);
	free(s->prev);
	free(s->rep);
	free(s->leaks);
	gz_writer_free(&s->gz);
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

/* The leak watch's start identity of a host pid: /proc/PID/stat's start time
 * (0 when the pid is not visible here, e.g. in another pid namespace). */
static uint64_t proc_start_of(void *arg, uint32_t pid)
{
	(void)arg;
	struct proc_stat st;
	if (pid > (uint32_t)INT32_MAX || proc_stat_read((int)pid, &st) != 0)
		return 0;
	return st.start_ticks;
}

/* Reads the sampler and renders every response into p. */
static int render_into(struct agent *a, struct render_scratch *s, struct published *p)
{
	uint64_t t0 = agent_mono_ns();
	sampler_read(a->sampler, s->now);
	unsigned nleaks = 0;
	if (a->leaks) {
		/* a simulated server's pids are not this machine's */
		leakwatch_update(a->leaks, s->now, s->now->sys.simulated ? NULL : proc_start_of, NULL);
		nleaks = leakwatch_leaks(a->leaks, s->leaks, LEAKWATCH_MAX);
		if (nleaks > LEAKWATCH_MAX)
			nleaks = LEAKWATCH_MAX;
	}
	const struct health_report *rep = NULL;
	struct metrics_health mh[GPU_MAX_GPUS];
	memset(mh, 0, sizeof(mh));
	if (a->rules) {
		struct health_opts ho = { 0 };
		char herr[160];
		ho.xids_unknown = !(a->cfg.groups & MG_XID);
		if (health_evaluate(a->rules, s->now, s->have_prev ? s->prev : NULL, &ho, s->rep, herr, sizeof(herr)) == 0) {
			rep = s->rep;
			leakwatch_report(s->leaks, nleaks, s->rep);
			for (unsigned i = 0; i < s->now->n && i < rep->n; i++) {
				mh[i].status = health_status(health_gpu_verdict(rep, i));
				mh[i].valid = mh[i].status >= 0;
			}
		}
	}
	const char *host = a->cfg.hostname[0] ? a->cfg.hostname : NULL;
	struct metrics_opts o;
	metrics_opts_default(&o);
	o.groups = a->cfg.groups;
	o.hostname = host;
	o.nlabels = a->cfg.nlabels;
	memcpy(o.labels, a->cfg.labels, sizeof(o.labels));
	o.version = a->env.version;
	o.kernel_log = atomic_load(&a->kernel_log);
	o.last_render_ns = atomic_load(&a->last_render_ns);
	o.health = rep ? mh : NULL;
	o.leaks = a->leaks ? s->leaks : NULL;
	o.nleaks = nleaks;
	struct abuf *text = gz_begin(&s->gz, &p->prom);
	int rc = metrics_render(text, s->now, &o);
	pool_metrics_append(a->job_pool, text, false);
	rc |= gz_end(&s->gz);
	abuf_reset(&p->om.gz);
	p->om.raw_len = 0;
	if (openmetrics_wanted(a)) {
		o.openmetrics = true;
		text = gz_begin(&s->gz, &p->om);
		rc |= metrics_render(text, s->now, &o);
		pool_metrics_append(a->job_pool, text, true);
		rc |= gz_end(&s->gz);
	}
	rc |= api_render_gpus(&p->gpus, s->now, host);
	struct api_leak_watch lw = { 0 };
	if (a->leaks) {
		lw.leaks = s->leaks;
		lw.nleaks = nleaks;
		lw.window_s = a->leaks->params.min_window_s;
		lw.min_rate = a->leaks->params.min_rate;
		lw.min_growth = a->leaks->params.min_growth;
		lw.tracked = a->leaks->tracked;
		lw.untracked = a->leaks->untracked;
	}
	rc |= api_render_health_watch(&p->health, s->now, rep, host, a->leaks ? &lw : NULL);
	/* this tick's snapshot is the next one's "previous" (health rates) */
	struct snapshot *t = s->prev;
	s->prev = s->now;
	s->now = t;
	s->have_prev = true;
	p->mono_ns = agent_mono_ns();
	atomic_store(&a->last_render_ns, p->mono_ns - t0);
	atomic_fetch_add(&a->renders, 1);
	return rc ? -1 : 0;
}

static void *render_thread(void *arg)
{
	struct agent *a = arg;
	struct render_scratch s;
	if (scratch_init(&s) == 0) {
		uint64_t next = agent_mono_ns();
		for (;;) {
			next += a->cfg.interval_ns;
			uint64_t now = agent_mono_ns();
			while (next <= now)
				next += a->cfg.interval_ns;
			if (agent_wait(a, next))
				break;
			struct published *p = pool_take(a);
			if (!p)
				continue;
			if (render_into(a, &s, p) == 0) {
				publish(a, p);
				/* a burst of scrapers leaves freed response sets behind: return them */
				if (atomic_load(&a->renders) % TRIM_EVERY == 0)
					malloc_trim(0);
			} else {
				pthread_mutex_lock(&a->pub_mu);
				p->refs--;
				pthread_mutex_unlock(&a->pub_mu);
			}
		}
	}
	scratch_free(&s);
	return NULL;
}

/* ---- kernel log ----------------------------------------------------------------- */

struct klog_ctx {
	struct agent *a;
	struct kmsg_reader *reader;
	unsigned n;
	bool known[GPU_MAX_GPUS];
	unsigned dom[GPU_MAX_GPUS], bus[GPU_MAX_GPUS], dev[GPU_MAX_GPUS];
	struct gpu_view *view;   /* scratch for reading the sampler */
	uint64_t next_refresh_ns;
};

/* Learns each GPU's PCI address from the sampler's static info (once read). */
static void klog_refresh(struct klog_ctx *k)
{
	uint64_t now = agent_mono_ns();
	if (now < k->next_refresh_ns)
		return;
	k->next_refresh_ns = now + 5000000000ull;
	for (unsigned i = 0; i < k->n; i++) {
		if (k->known[i])
			continue;
		sampler_read_gpu(k->a->sampler, i, k->view);
		if (VAL_HAS(k->view->st.pci_bus_id) &&
		    kmsg_parse_pci(k->view->st.pci_bus_id.s, &k->dom[i], &k->bus[i], &k->dev[i]) == 0)
			k->known[i] = true;
	}
}

static void klog_on_xid(void *arg, const struct kmsg_xid *x)
{
	struct klog_ctx *k = arg;
	k->next_refresh_ns = 0;
	klog_refresh(k);
	struct timespec rt, mono;
	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	uint64_t real_ns = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec;
	uint64_t mono_ns = (uint64_t)mono.tv_sec * 1000000000ull + (uint64_t)mono.tv_nsec;
	uint64_t when = real_ns;
	/* kernel timestamps count from boot (the monotonic clock) */
	if (x->has_time && x->boot_us * 1000ull <= mono_ns)
		when = real_ns - mono_ns + x->boot_us * 1000ull;
	for (unsigned i = 0; i < k->n; i++)
		if (k->known[i] && k->dom[i] == x->pci_domain && k->bus[i] == x->pci_bus && k->dev[i] == x->pci_dev)
			sampler_note_xid(k->a->sampler, i, x->xid, when, XID_SRC_KERNEL_LOG);
}

static void *klog_thread(void *arg)
{
	struct klog_ctx *k = arg;
	struct agent *a = k->a;
	while (!agent_stopping(a)) {
		klog_refresh(k);
		if (kmsg_reader_poll(k->reader, KLOG_POLL_MS, klog_on_xid, k) < 0) {
			snprintf(a->kernel_log_error, sizeof(a->kernel_log_error), "reading the kernel log '%.200s' failed",
				 a->cfg.kernel_log);
			atomic_store(&a->kernel_log, 0);
			break;
		}
	}
	kmsg_reader_close(k->reader);
	free(k->view);
	free(k);
	return NULL;
}

static void start_klog(struct agent *a)
{
	atomic_store(&a->kernel_log, -1);
	if (!a->cfg.kernel_log[0] || !(a->cfg.groups & MG_XID))
		return;
	struct klog_ctx *k = calloc(1, sizeof(*k));
	struct gpu_view *view = malloc(sizeof(*view));
	if (!k || !view) {
		free(k);
		free(view);
		snprintf(a->kernel_log_error, sizeof(a->kernel_log_error), "out of memory");
		atomic_store(&a->kernel_log, 0);
		return;
	}
	k->a = a;
	k->view = view;
	k->n = sampler_gpu_count(a->sampler);
	if (kmsg_reader_open(&k->reader, a->cfg.kernel_log, a->kernel_log_error, sizeof(a->kernel_log_error))) {
		free(view);
		free(k);
		atomic_store(&a->kernel_log, 0);
		return;
	}
	atomic_store(&a->kernel_log, 1);
	if (pthread_create(&a->klog_thread, NULL, klog_thread, k) == 0) {
		a->klog_started = true;
	} else {
		kmsg_reader_close(k->reader);
		free(view);
		free(k);
		atomic_store(&a->kernel_log, 0);
		snprintf(a->kernel_log_error, sizeof(a->kernel_log_error), "cannot start the kernel log thread");
	}
}

/* ---- life cycle ------------------------------------------------------------------ */

static void sampler_cfg_of(const struct agent_config *c, struct sampler_config *sc)
{
	sampler_config_default(sc);
	sc->interval_ns = c->interval_ns;
	sc->groups = c->groups & GPU_GRP_ALL;
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
		a->leaks = malloc(sizeof(*a->leaks));
		if (!a->leaks) {
			free(a);
			return NULL;
		}
		struct leak_params lp;
		leak_params_default(&lp);
		lp.min_window_s = (double)cfg->leak_window_ns / 1e9;
		lp.min_rate = cfg->leak_min_rate;
		lp.min_growth = cfg->leak_min_growth;
		leakwatch_init(a->leaks, &lp);
	}
	a->cfg = *cfg;
	if (env)
		a->env = *env;
	a->be = be;
	atomic_store(&a->kernel_log, -1);
	pthread_mutex_init(&a->pub_mu, NULL);
	pthread_mutex_init(&a->mu, NULL);
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

static void agent_free(struct agent *a)
{
	pool_free(a);
	free(a->rules);
	free(a->leaks);
	pthread_mutex_destroy(&a->pub_mu);
	pthread_mutex_destroy(&a->mu);
	pthread_cond_destroy(&a->cv);
	free(a);
}

static int start_sampler(struct agent *a, char *err, size_t errlen)
{
	struct sampler_config sc;
	sampler_cfg_of(&a->cfg, &sc);
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
	start_klog(a);
	if (a->cfg.pool && pool_agent_start(a, err, errlen)) {
		agent_stop(a);
		return -1;
	}
	/* the first responses exist before the port opens */
	struct render_scratch s;
	struct published *p = NULL;
	int rc = scratch_init(&s);
	if (rc == 0 && (p = pool_take(a)) != NULL && render_into(a, &s, p) == 0)
		publish(a, p);
	else
		rc = -1;
	scratch_free(&s);
	if (rc) {
		snprintf(err, errlen, "out of memory rendering the first exposition");
		agent_stop(a);
		return -1;
	}
	if (pthread_create(&a->render_thread, NULL, render_thread, a) != 0) {
		snprintf(err, errlen, "cannot start the render thread");
		agent_stop(a);
		return -1;
	}
	a->render_started = true;
	if (agent_http_start(a, err, errlen)) {
		agent_stop(a);
		return -1;
	}
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
	st->renders = atomic_load(&a->renders);
	st->scrapes = atomic_load(&a->scrapes);
}

void agent_stop(struct agent *a)
{
	if (!a)
		return;
	agent_http_stop(a);
	pthread_mutex_lock(&a->mu);
	a->stopping = true;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
	if (a->render_started)
		pthread_join(a->render_thread, NULL);
	if (a->klog_started)
		pthread_join(a->klog_thread, NULL);
	pool_agent_stop(a);
	sampler_stop(a->sampler);
	agent_free(a);
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
	struct render_scratch s;
	struct published *p = NULL;
	if (openmetrics)
		agent_want_openmetrics(a);
	int rc = scratch_init(&s);
	if (rc == 0 && (p = pool_take(a)) != NULL && render_into(a, &s, p) == 0) {
		rc = gz_inflate_all(openmetrics ? &p->om : &p->prom, out);
	} else {
		rc = -1;
	}
	if (rc)
		snprintf(err, errlen, "out of memory rendering the exposition");
	scratch_free(&s);
	sampler_stop(a->sampler);
	agent_free(a);
	return rc;
}
