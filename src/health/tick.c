/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tick.c - the ticker (tick.h): one sampler read and one health evaluation
 * per tick, shared by reference count.
 *
 * A tick whose last reference goes joins a free list (at most TICK_SPARES
 * kept): the next tick reuses its snapshot and report. The report (0.85 MB at
 * 64 GPUs, mostly untouched) lives in its own pages, given back to the
 * kernel while the tick waits on the list (pages_drop).
 */
#include "tick.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/pages.h"

#define TICK_SPARES 2u

struct ticker {
	struct sampler *sampler;
	struct ticker_config cfg;
	unsigned ngpu;
	pthread_mutex_t mu;          /* current, the references, the free list, ticks */
	struct tick *current;        /* holds a reference */
	struct tick *free_list;
	unsigned nfree;
	uint64_t ticks;
};

static void tick_free(struct tick *k)
{
	if (!k)
		return;
	snapshot_free(k->snap);
	pages_free(k->rep, sizeof(*k->rep));
	free(k);
}

static struct tick *tick_new(struct ticker *t)
{
	struct tick *k = calloc(1, sizeof(*k));
	if (!k)
		return NULL;
	k->owner = t;
	k->snap = snapshot_new(t->ngpu);
	k->rep = pages_alloc(sizeof(*k->rep));
	if (k->snap && k->rep)
		return k;
	tick_free(k);
	return NULL;
}

int ticker_new(struct ticker **out, struct sampler *s, const struct ticker_config *cfg)
{
	*out = NULL;
	struct ticker *t = calloc(1, sizeof(*t));
	if (!t)
		return -1;
	t->sampler = s;
	t->cfg = *cfg;
	t->ngpu = sampler_gpu_count(s);
	pthread_mutex_init(&t->mu, NULL);
	*out = t;
	return 0;
}

void ticker_free(struct ticker *t)
{
	if (!t)
		return;
	tick_put(t->current);
	while (t->free_list) {
		struct tick *k = t->free_list;
		t->free_list = k->next_free;
		tick_free(k);
	}
	pthread_mutex_destroy(&t->mu);
	free(t);
}

/* A tick to fill: one from the free list, else a new one. */
static struct tick *tick_take(struct ticker *t)
{
	pthread_mutex_lock(&t->mu);
	struct tick *k = t->free_list;
	if (k) {
		t->free_list = k->next_free;
		t->nfree--;
	}
	pthread_mutex_unlock(&t->mu);
	return k ? k : tick_new(t);
}

struct tick *ticker_advance(struct ticker *t)
{
	struct tick *k = tick_take(t);
	if (!k)
		return NULL;
	k->next_free = NULL;
	sampler_read(t->sampler, k->snap);
	k->rep_ok = false;
	if (t->cfg.rules) {
		char herr[160];
		k->rep_ok = health_evaluate(t->cfg.rules, k->snap, NULL, &t->cfg.health, k->rep, herr, sizeof(herr)) == 0;
	}
	if (t->cfg.annotate)
		t->cfg.annotate(t->cfg.annotate_arg, k);
	pthread_mutex_lock(&t->mu);
	k->seq = ++t->ticks;
	k->refs = 2; /* the ticker's (current) and the caller's */
	struct tick *old = t->current;
	t->current = k;
	pthread_mutex_unlock(&t->mu);
	tick_put(old);
	return k;
}

struct tick *ticker_get(struct ticker *t)
{
	pthread_mutex_lock(&t->mu);
	struct tick *k = t->current;
	if (k)
		k->refs++;
	pthread_mutex_unlock(&t->mu);
	return k;
}

void tick_put(struct tick *k)
{
	if (!k)
		return;
	struct ticker *t = k->owner;
	pthread_mutex_lock(&t->mu);
	bool last = --k->refs == 0;
	bool keep = last && t->nfree < TICK_SPARES;
	if (keep) {
		pages_drop(k->rep, sizeof(*k->rep)); /* rewritten by the next health_evaluate */
		k->next_free = t->free_list;
		t->free_list = k;
		t->nfree++;
	}
	pthread_mutex_unlock(&t->mu);
	if (last && !keep)
		tick_free(k);
}

uint64_t ticker_ticks(struct ticker *t)
{
	pthread_mutex_lock(&t->mu);
	uint64_t n = t->ticks;
	pthread_mutex_unlock(&t->mu);
	return n;
}
