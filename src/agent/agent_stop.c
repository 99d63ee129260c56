/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent_stop.c - the agent's stop, in order and with a deadline
 * (agent_stop_within, agent.h): the pool's state first, then its threads,
 * the HTTP server, the render thread, the kernel-log reader and the samplers.
 * A thread that does not come back (a sampler in a GPU call that never
 * returns, an HTTP worker or the pool's scheduler waiting on a lock) holds
 * the stop only until the deadline: the caller then learns which step it was
 * and ends the process (the pool's state is on disk by then).
 */
#include "agent_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/pool_agent.h"
#include "core/thread.h"
#include "sampler/sampler.h"

static void note(void (*fn)(void *, const char *), void *arg, const char *what)
{
	if (fn)
		fn(arg, what);
}

/* The pool's state first (everything else it wrote as it happened), its
 * running jobs left running for the next start; then what serves and
 * samples. Each step that waits for a thread is noted first. */
void agent_stop_noted(struct agent *a, void (*fn)(void *arg, const char *what), void *arg)
{
	if (!a)
		return;
	if (a->job_pool) {
		note(fn, arg, "the pool's state (waiting for the pool's lock)");
		pool_agent_flush(a);
		pool_agent_stop_noted(a, fn, arg);
	}
	note(fn, arg, "the HTTP server (the door's thread, then libmicrohttpd's workers)");
	agent_http_stop(a);
	pthread_mutex_lock(&a->mu);
	a->stopping = true;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
	note(fn, arg, "the render thread");
	if (a->render_started)
		pthread_join(a->render_thread, NULL);
	note(fn, arg, "the kernel-log reader");
	if (a->klog_started)
		pthread_join(a->klog_thread, NULL);
	note(fn, arg, "the samplers (a GPU call that does not return)");
	sampler_stop(a->sampler);
	agent_free(a);
}

/* the stop's own thread and what it is waiting for */
struct stopper {
	struct agent *a;
	pthread_mutex_t mu;
	pthread_cond_t cv;  /* CLOCK_MONOTONIC */
	const char *step;   /* under mu */
	bool pool_state;    /* step is the pool's flush (a->job_pool is still there) */
	bool done;
};

static void note_step(void *arg, const char *what)
{
	struct stopper *s = arg;
	pthread_mutex_lock(&s->mu);
	s->pool_state = strncmp(what, "the pool's state", 16) == 0; /* a->job_pool is still there */
	s->step = what;
	pthread_mutex_unlock(&s->mu);
}

static void *stop_thread(void *arg)
{
	struct stopper *s = arg;
	agent_stop_noted(s->a, note_step, s);
	pthread_mutex_lock(&s->mu);
	s->done = true;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

int agent_stop_within(struct agent *a, uint64_t timeout_ns, char *stuck, size_t stucklen)
{
	struct stopper *s = calloc(1, sizeof(*s));
	pthread_t t;
	if (!s) {
		agent_stop(a); /* unbounded, as it cannot be otherwise */
		return 0;
	}
	s->a = a;
	pthread_mutex_init(&s->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (thread_start(&t, AGENT_THREAD_STACK_BYTES, stop_thread, s) != 0) {
		stop_thread(s);
	} else {
		uint64_t until = clock_mono_ns() + timeout_ns;
		struct timespec ts = { (time_t)(until / 1000000000ull), (long)(until % 1000000000ull) };
		pthread_mutex_lock(&s->mu);
		while (!s->done && pthread_cond_timedwait(&s->cv, &s->mu, &ts) != ETIMEDOUT)
			;
		if (!s->done) {
			/* the stop's thread and s stay: the caller ends the process */
			if (s->pool_state)
				snprintf(stuck, stucklen, "%s: %s", s->step, pool_agent_lock_holder(a));
			else
				snprintf(stuck, stucklen, "%s", s->step ? s->step : "the stop's first step");
			pthread_mutex_unlock(&s->mu);
			return -1;
		}
		pthread_mutex_unlock(&s->mu);
		pthread_join(t, NULL);
	}
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cv);
	free(s);
	return 0;
}
