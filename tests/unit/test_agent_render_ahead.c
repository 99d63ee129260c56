/* SPDX-License-Identifier: Apache-2.0 */
/* test_agent_render_ahead.c - render_ahead (src/agent/render_ahead.h): which
 * variants the agent renders at a tick, replayed over simulated request
 * times at 1 s ticks. A request "finds it ready" when the tick before it
 * rendered its variant; else it waits for a rendering on request. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "agent/render_ahead.h"

#define S 1000000000ull
#define MS 1000000ull
#define TICK S
#define BASE (1000 * S) /* the first tick; monotonic times are far from 0 */
#define MAXREQ 512
#define MAXTICKS 400

struct replay {
	uint64_t req[MAXREQ]; /* request times, ascending */
	unsigned nreq;
	bool due[MAXTICKS];  /* tick k at BASE + k * TICK rendered the variant at the tick */
	unsigned ndue;
	unsigned waited, ready; /* requests that found it not rendered / rendered */
};

static void add_req(struct replay *r, uint64_t t)
{
	assert_true(r->nreq < MAXREQ);
	r->req[r->nreq++] = t;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Runs the ticks over one variant (bit 0) and counts the requests served.
 * A request waited for a rendering when its tick did not render the variant
 * and no earlier request of the same tick had it rendered on request. */
static void replay_run(struct replay *r, unsigned nticks, unsigned from_req)
{
	qsort(r->req, r->nreq, sizeof(r->req[0]), cmp_u64);
	struct render_expect ex[1];
	memset(ex, 0, sizeof(ex));
	unsigned asked_before = 0, next = 0;
	for (unsigned k = 0; k < nticks; k++) {
		uint64_t tick = BASE + k * TICK;
		unsigned asked = 0;
		uint64_t first = 0, last = 0;
		while (next < r->nreq && r->req[next] < tick) {
			if (!asked)
				first = r->req[next];
			last = r->req[next];
			asked = 1;
			next++;
		}
		unsigned due = render_ahead(ex, 1, asked, asked_before, &first, &last, tick, TICK);
		asked_before = asked;
		r->due[k] = due & 1u;
		r->ndue += r->due[k];
	}
	uint64_t last_tick_waited = 0;
	for (unsigned i = from_req; i < r->nreq; i++) {
		unsigned k = (unsigned)((r->req[i] - BASE) / TICK);
		assert_true(k < nticks);
		if (r->due[k]) {
			r->ready++;
		} else if (last_tick_waited != k + 1) {
			r->waited++;
			last_tick_waited = k + 1;
		}
	}
}

static unsigned tick_of(uint64_t t)
{
	return (unsigned)((t - BASE) / TICK);
}

static void test_no_scraper_renders_nothing(void **state)
{
	(void)state;
	struct replay r = { 0 };
	replay_run(&r, 300, 0);
	assert_int_equal(r.ndue, 0);
}

/* Prometheus's 15 s at 1 s ticks: from the third scrape on, each finds its
 * exposition rendered at the tick before it, the only rendering of its period */
static void test_15s_scraper_rendered_once_per_period_before_it(void **state)
{
	(void)state;
	struct replay r = { 0 };
	for (unsigned i = 0; i < 20; i++)
		add_req(&r, BASE + 3 * S + 500 * MS + i * 15 * S);
	replay_run(&r, 300, 2);
	assert_int_equal(r.waited, 0);
	assert_int_equal(r.ready, 18);
	for (unsigned k = 0; k < 300; k++) {
		bool before_a_scrape = false;
		for (unsigned i = 2; i < r.nreq; i++)
			before_a_scrape |= tick_of(r.req[i]) == k;
		assert_int_equal(r.due[k], before_a_scrape);
	}
	/* the first two scrapes were rendered on request, nothing before them ahead */
	assert_int_equal(r.ndue, 18);
}

static void test_every_tick_scraper_every_tick(void **state)
{
	(void)state;
	struct replay r = { 0 };
	for (unsigned i = 0; i < 100; i++)
		add_req(&r, BASE + 200 * MS + i * S);
	replay_run(&r, 100, 2);
	assert_int_equal(r.waited, 0);
	for (unsigned k = 2; k < 100; k++)
		assert_true(r.due[k]);
	/* and when it stops, the renderings stop */
	struct replay q = { 0 };
	for (unsigned i = 0; i < 50; i++)
		add_req(&q, BASE + 200 * MS + i * S);
	replay_run(&q, 100, 0);
	for (unsigned k = 51; k < 100; k++)
		assert_false(q.due[k]);
}

/* a one-off request, then a poller every half tick from 10 s to 30 s: the
 * two are no periodic scraper; when the poller stops, the renderings stop */
static void test_one_off_then_poller(void **state)
{
	(void)state;
	struct replay r = { 0 };
	add_req(&r, BASE + 2 * S + 400 * MS);
	for (unsigned i = 0; i < 40; i++)
		add_req(&r, BASE + 10 * S + 300 * MS + i * 500 * MS);
	replay_run(&r, 100, 0);
	for (unsigned k = 32; k < 100; k++)
		assert_false(r.due[k]);
}

/* one rendering for the scrape that does not come, then none */
static void test_stopped_scraper_one_missed_period(void **state)
{
	(void)state;
	struct replay r = { 0 };
	for (unsigned i = 0; i < 6; i++)
		add_req(&r, BASE + 3 * S + 500 * MS + i * 15 * S);
	replay_run(&r, 300, 0);
	uint64_t missed = r.req[5] + 15 * S;
	unsigned after = 0;
	for (unsigned k = tick_of(r.req[5]) + 1; k < 300; k++)
		if (r.due[k]) {
			assert_int_equal(k, tick_of(missed));
			after++;
		}
	assert_int_equal(after, 1);
}

/* 15 s +- 150 ms (Prometheus's own jitter is far smaller), scrapes mid-tick */
static void test_jittered_period(void **state)
{
	(void)state;
	static const int jitter_ms[] = { 0, 120, -80, 150, -150, 30, -20, 90, -110, 60, 0, -140, 140, 10, -60, 75 };
	struct replay r = { 0 };
	unsigned n = sizeof(jitter_ms) / sizeof(jitter_ms[0]);
	for (unsigned i = 0; i < n; i++)
		add_req(&r, (uint64_t)((int64_t)(BASE + 3 * S + 500 * MS + i * 15 * S) + jitter_ms[i] * (int64_t)MS));
	replay_run(&r, 300, 2);
	assert_int_equal(r.waited, 0);
	/* one for each scrape after the first two, one for the one after the last */
	assert_int_equal(r.ndue, n - 1);
}

/* 15 s and 10 s scrapers (their scrapes share a tick every 30 s): once both
 * are learnt each finds its variant rendered, and no rendering is unused */
static void test_two_scrapers(void **state)
{
	(void)state;
	struct replay r = { 0 };
	for (unsigned i = 0; i < 20; i++)
		add_req(&r, BASE + 2 * S + 300 * MS + i * 15 * S);
	for (unsigned i = 0; i < 30; i++)
		add_req(&r, BASE + 2 * S + 700 * MS + i * 10 * S);
	replay_run(&r, 300, 0);
	unsigned learnt_from = tick_of(BASE + 60 * S), unused = 0;
	for (unsigned k = learnt_from; k < 290; k++) {
		bool asked = false;
		for (unsigned i = 0; i < r.nreq; i++)
			asked |= tick_of(r.req[i]) == k;
		if (r.due[k] && !asked)
			unused++;
		if (asked && !r.due[k])
			print_error("tick %u asked, not rendered\n", k);
		if (asked)
			assert_true(r.due[k]);
	}
	assert_int_equal(unused, 0);
}

/* a period under 2 ticks is the every-tick rule's; over 10 min is not followed */
static void test_periods_not_followed(void **state)
{
	(void)state;
	struct render_expect e;
	memset(&e, 0, sizeof(e));
	uint64_t t[] = { BASE, BASE + TICK + TICK / 2, BASE + 601 * S };
	render_expect_note(&e, &t[0], 1, TICK);
	render_expect_note(&e, &t[1], 1, TICK);
	assert_int_equal(e.s[0].last_ns, 0);
	memset(&e, 0, sizeof(e));
	render_expect_note(&e, &t[0], 1, TICK);
	render_expect_note(&e, &t[2], 1, TICK);
	for (unsigned k = 601; k < 1300; k++)
		assert_false(render_expect_due(&e, BASE + k * S, TICK));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_scraper_renders_nothing),
		cmocka_unit_test(test_15s_scraper_rendered_once_per_period_before_it),
		cmocka_unit_test(test_every_tick_scraper_every_tick),
		cmocka_unit_test(test_stopped_scraper_one_missed_period),
		cmocka_unit_test(test_one_off_then_poller),
		cmocka_unit_test(test_jittered_period),
		cmocka_unit_test(test_two_scrapers),
		cmocka_unit_test(test_periods_not_followed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
