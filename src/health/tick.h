/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tick.h - one (snapshot, health report) per tick, shared.
 *
 * The ticker reads the sampler once per tick and evaluates health once on
 * that snapshot (ticker_advance). Everything that wants the tick's view, the
 * agent's API, its metrics and page, and the job pool, takes a reference on
 * the current tick (ticker_get) and gives it back (tick_put): no consumer
 * reads the sampler or evaluates health on its own. A tick is immutable once
 * published; its memory is reused when the last reference goes.
 */
#ifndef GPUCTL_TICK_H
#define GPUCTL_TICK_H

#include <stdbool.h>
#include <stdint.h>

#include "health.h"
#include "sampler/sampler.h"

struct tick {
	uint64_t seq;                /* 1 for the first tick, then one more each */
	struct snapshot *snap;       /* the tick's one read of the sampler */
	struct health_report *rep;   /* valid when rep_ok */
	bool rep_ok;                 /* health evaluated (rules loaded, no error) */
	/* private */
	unsigned refs;               /* under the ticker's lock */
	struct ticker *owner;
	struct tick *next_free;
};

struct ticker_config {
	const struct health_rules *rules; /* NULL: no health report (rep_ok false) */
	struct health_opts health;   /* what health_evaluate is given (prev: none; rates come
	                              * from the sampler's rate bases) */
	/* Called by ticker_advance on the new tick before it is published, on the
	 * advancing thread: the place to add findings to t->rep (the agent's leak
	 * watch and fault-file notes). May be NULL. */
	void (*annotate)(void *arg, struct tick *t);
	void *annotate_arg;
};

struct ticker;

/* 0, or -1 out of memory. The sampler must outlive the ticker. */
int ticker_new(struct ticker **out, struct sampler *s, const struct ticker_config *cfg);
/* Frees the ticker; every reference must have been put. */
void ticker_free(struct ticker *t);
/* Reads the sampler once, evaluates health and makes it the current tick.
 * Returns it with a reference held for the caller (tick_put), or NULL out of
 * memory (the current tick stays). One thread advances a ticker. */
struct tick *ticker_advance(struct ticker *t);
/* The current tick with a reference held (tick_put), NULL before the first. Thread-safe. */
struct tick *ticker_get(struct ticker *t);
/* Gives a reference back. NULL is nothing. Thread-safe. */
void tick_put(struct tick *k);
/* Ticks made so far. */
uint64_t ticker_ticks(struct ticker *t);

#endif
