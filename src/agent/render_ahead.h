/* SPDX-License-Identifier: Apache-2.0 */
/* render_ahead.h - which of the agent's response variants to render at a tick
 * ahead of a periodic request (pure: times in, a bit set out; no clock).
 *
 * A scraper slower than the tick (Prometheus at 15 s, the agent at 1 s) asks
 * for a variant once per period. Each variant keeps a few streams: the last
 * request of one scraper and its period, learnt from two requests. At the
 * tick before the next expected request the variant is rendered, so the
 * request finds it at most one interval old instead of waiting for it. A
 * stream whose request does not come is dropped: one unused rendering, then
 * none. Nothing asked, nothing rendered. */
#ifndef GPUCTL_AGENT_RENDER_AHEAD_H
#define GPUCTL_AGENT_RENDER_AHEAD_H

#include <stdbool.h>
#include <stdint.h>

#define RENDER_AHEAD_STREAMS 4    /* scrapers at different periods followed per variant */
#define RENDER_AHEAD_VARIANTS 32  /* the bits of the set of variants rendered */
#define RENDER_AHEAD_TIMES 2      /* request times noted per tick: the first and the last */
#define RENDER_AHEAD_MAX_PERIOD_NS (600ull * 1000000000ull) /* 10 min: longer is not followed */

struct render_stream {
	uint64_t last_ns;   /* the stream's latest request; 0: the slot is free */
	uint64_t period_ns;
};

struct render_expect {
	struct render_stream s[RENDER_AHEAD_STREAMS];
	uint64_t unmatched_ns; /* the latest request no stream expected, 0 if none: a new stream's first */
};

/* Notes a tick's requests for the variant: its first and its last (nt <=
 * RENDER_AHEAD_TIMES; two scrapers that share a tick are both seen). Each
 * stream advances to the time nearest to where it expects its request, if
 * near enough; the latest time no stream took starts a stream with the one
 * no stream took before it, when their distance is a period worth following
 * (2 ticks .. 10 min). */
void render_expect_note(struct render_expect *e, const uint64_t t_ns[], unsigned nt, uint64_t interval_ns);

/* Whether to render the variant at the tick at tick_ns (the next one at
 * tick_ns + interval_ns): a stream expects its next request between the two.
 * A request that comes before that tick or after the next (jitter across a
 * tick) is rendered on request. Streams whose expected request is more than
 * a margin (a tick and an eighth of the period) past are dropped. */
bool render_expect_due(struct render_expect *e, uint64_t tick_ns, uint64_t interval_ns);

/* The variants to render at the tick at tick_ns: those asked for in each of
 * the two ticks before (asked: the tick that ended, asked_before: the one
 * before; scrapers that come every tick), and those a stream expects before
 * the next tick. Notes the ended tick's requests first (bit v of asked, the
 * first at first_ask_ns[v], the last at last_ask_ns[v]; 0: not known, not noted).
 * A variant asked for in both ticks has its streams forgotten: the scrapers
 * slower than the tick among its pollers are learnt again when they stop. */
unsigned render_ahead(struct render_expect ex[], unsigned nvariants, unsigned asked, unsigned asked_before,
		      const uint64_t first_ask_ns[], const uint64_t last_ask_ns[], uint64_t tick_ns,
		      uint64_t interval_ns);

#endif
