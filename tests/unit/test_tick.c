/* SPDX-License-Identifier: Apache-2.0 */
/* test_tick.c - the ticker (health/tick.h): one sampler read and one health
 * evaluation per tick, whoever takes the tick; a tick held by a consumer
 * stays as it was while later ticks are made; another thread's ticker_get
 * and tick_put race the advancing one cleanly (the TSan build runs this). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "health/tick.h"

struct fixture {
	struct gpu_backend be;
	struct sampler *s;
	struct health_rules *rules;
	struct ticker *t;
	unsigned annotated;
};

static void annotate(void *arg, struct tick *k)
{
	struct fixture *f = arg;
	f->annotated++;
	assert_true(k->rep_ok); /* called after health, before the tick is published */
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct gpu_err err = { "" };
	if (gpu_backend_open(&f->be, "sim", "l40sx4", &err) != GPU_OK)
		fail_msg("opening the simulator: %s", err.msg);
	struct sampler_config sc;
	sampler_config_default(&sc);
	sc.interval_ns = 50000000ull;
	if (sampler_start(&f->s, &f->be, &sc, &err) != GPU_OK)
		fail_msg("sampler_start: %s", err.msg);
	sampler_wait_first(f->s, 5000000000ull);
	f->rules = calloc(1, sizeof(*f->rules));
	char msg[256];
	if (health_rules_load_default(f->rules, getenv("GPUCTL_DATA_DIR"), msg, sizeof(msg)))
		fail_msg("health rules: %s", msg);
	struct ticker_config tc = { .rules = f->rules, .annotate = annotate, .annotate_arg = f };
	assert_int_equal(ticker_new(&f->t, f->s, &tc), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	ticker_free(f->t);
	sampler_stop(f->s);
	gpu_backend_close(&f->be);
	free(f->rules);
	free(f);
	return 0;
}

/* Consumers share the tick: N ticks are N sampler reads however many take them. */
static void test_one_read_per_tick(void **state)
{
	struct fixture *f = *state;
	uint64_t reads0 = sampler_reads(f->s);
	assert_null(ticker_get(f->t));
	for (unsigned i = 1; i <= 5; i++) {
		struct tick *k = ticker_advance(f->t);
		assert_non_null(k);
		assert_int_equal(k->seq, i);
		assert_int_equal(k->snap->n, 4);
		assert_true(k->rep_ok);
		assert_int_equal(k->rep->n, 4);
		/* three consumers (API, metrics, pool) take the same tick */
		struct tick *c[3];
		for (unsigned j = 0; j < 3; j++) {
			c[j] = ticker_get(f->t);
			assert_ptr_equal(c[j], k);
		}
		for (unsigned j = 0; j < 3; j++)
			tick_put(c[j]);
		tick_put(k);
	}
	assert_int_equal(sampler_reads(f->s) - reads0, 5);
	assert_int_equal(ticker_ticks(f->t), 5);
	assert_int_equal(f->annotated, 5);
}

/* A tick a consumer holds is not reused by later ticks: its snapshot and
 * report stay the ones of its tick. */
static void test_held_tick_stays(void **state)
{
	struct fixture *f = *state;
	struct tick *k = ticker_advance(f->t);
	uint64_t taken = k->snap->taken_ns, seq = k->seq;
	struct tick *held = ticker_get(f->t);
	tick_put(k);
	for (unsigned i = 0; i < 4; i++) {
		struct tick *n = ticker_advance(f->t);
		assert_ptr_not_equal(n, held);
		assert_true(n->snap->taken_ns > taken);
		tick_put(n);
	}
	assert_int_equal(held->seq, seq);
	assert_int_equal(held->snap->taken_ns, taken);
	assert_int_equal(held->rep->taken_ns, taken);
	tick_put(held);
}

struct racer {
	struct ticker *t;
	atomic_bool stop;
};

static void *race_gets(void *arg)
{
	struct racer *r = arg;
	uint64_t last = 0;
	while (!atomic_load(&r->stop)) {
		struct tick *k = ticker_get(r->t);
		if (k) {
			assert_true(k->seq >= last); /* ticks only move forward */
			last = k->seq;
			assert_int_equal(k->snap->n, 4);
			tick_put(k);
		}
	}
	return NULL;
}

/* Another thread takes and gives back ticks while this one advances. */
static void test_concurrent_consumer(void **state)
{
	struct fixture *f = *state;
	struct racer r = { .t = f->t };
	pthread_t th;
	tick_put(ticker_advance(f->t));
	assert_int_equal(pthread_create(&th, NULL, race_gets, &r), 0);
	uint64_t reads0 = sampler_reads(f->s);
	for (unsigned i = 0; i < 50; i++)
		tick_put(ticker_advance(f->t));
	atomic_store(&r.stop, true);
	pthread_join(th, NULL);
	assert_int_equal(sampler_reads(f->s) - reads0, 50);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_one_read_per_tick, setup, teardown),
		cmocka_unit_test_setup_teardown(test_held_tick_stays, setup, teardown),
		cmocka_unit_test_setup_teardown(test_concurrent_consumer, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
