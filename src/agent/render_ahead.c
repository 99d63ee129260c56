/* SPDX-License-Identifier: Apache-2.0 */
/* render_ahead.c - see render_ahead.h. */
#include "render_ahead.h"

#include <string.h>

/* How far a request may be from where a stream expects it and still be its
 * own: the tick (requests are noted once per tick) plus an eighth of the period. */
static uint64_t match_margin(uint64_t period_ns, uint64_t interval_ns)
{
	return interval_ns + period_ns / 8;
}

static uint64_t distance(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

static bool period_followed(uint64_t period_ns, uint64_t interval_ns)
{
	return period_ns >= 2 * interval_ns && period_ns <= RENDER_AHEAD_MAX_PERIOD_NS;
}

void render_expect_note(struct render_expect *e, const uint64_t t_ns[], unsigned nt, uint64_t interval_ns)
{
	bool used[RENDER_AHEAD_TIMES] = { false };
	if (nt > RENDER_AHEAD_TIMES)
		nt = RENDER_AHEAD_TIMES;
	for (unsigned i = 0; i < RENDER_AHEAD_STREAMS; i++) {
		struct render_stream *s = &e->s[i];
		if (!s->last_ns)
			continue;
		/* the time nearest to where the stream expects its request */
		uint64_t expected = s->last_ns + s->period_ns, best = 0;
		unsigned bi = 0;
		for (unsigned j = 0; j < nt; j++)
			if (t_ns[j] > s->last_ns && (!best || distance(t_ns[j], expected) < distance(best, expected))) {
				best = t_ns[j];
				bi = j;
			}
		if (best && distance(best, expected) <= match_margin(s->period_ns, interval_ns)) {
			s->period_ns = best - s->last_ns; /* follows a drifting period */
			s->last_ns = best;
			used[bi] = true;
		}
	}
	/* the latest time no stream expected starts a stream with the one before */
	uint64_t t = 0;
	for (unsigned j = 0; j < nt; j++)
		if (!used[j] && t_ns[j] > t)
			t = t_ns[j];
	if (!t)
		return;
	uint64_t before = e->unmatched_ns;
	e->unmatched_ns = t;
	if (!before || t <= before || !period_followed(t - before, interval_ns))
		return;
	/* a free slot, else the one whose latest request is the oldest */
	unsigned slot = 0;
	for (unsigned i = 0; i < RENDER_AHEAD_STREAMS; i++) {
		if (!e->s[i].last_ns) {
			slot = i;
			break;
		}
		if (e->s[i].last_ns < e->s[slot].last_ns)
			slot = i;
	}
	e->s[slot].last_ns = t;
	e->s[slot].period_ns = t - before;
	e->unmatched_ns = 0;
}

bool render_expect_due(struct render_expect *e, uint64_t tick_ns, uint64_t interval_ns)
{
	bool due = false;
	for (unsigned i = 0; i < RENDER_AHEAD_STREAMS; i++) {
		struct render_stream *s = &e->s[i];
		if (!s->last_ns)
			continue;
		uint64_t expected = s->last_ns + s->period_ns;
		if (tick_ns > expected + match_margin(s->period_ns, interval_ns)) {
			memset(s, 0, sizeof(*s)); /* its request did not come */
			continue;
		}
		/* the last tick before the request renders it: its set is the
		 * current one until the next tick */
		if (expected >= tick_ns && expected < tick_ns + interval_ns)
			due = true;
	}
	return due;
}

unsigned render_ahead(struct render_expect ex[], unsigned nvariants, unsigned asked, unsigned asked_before,
		      const uint64_t first_ask_ns[], const uint64_t last_ask_ns[], uint64_t tick_ns,
		      uint64_t interval_ns)
{
	unsigned due = asked & asked_before;
	for (unsigned v = 0; v < nvariants && v < RENDER_AHEAD_VARIANTS; v++) {
		if (asked & asked_before & (1u << v)) {
			/* asked every tick: the two-tick rule renders it; what a poller's
			 * requests would teach the streams is noise (relearnt after it) */
			memset(&ex[v], 0, sizeof(ex[v]));
		} else if ((asked & (1u << v)) && first_ask_ns[v]) {
			uint64_t t[RENDER_AHEAD_TIMES] = { first_ask_ns[v], last_ask_ns[v] };
			render_expect_note(&ex[v], t, last_ask_ns[v] > first_ask_ns[v] ? 2 : 1, interval_ns);
		}
		if (render_expect_due(&ex[v], tick_ns, interval_ns))
			due |= 1u << v;
	}
	return due;
}
