/* SPDX-License-Identifier: Apache-2.0 */
/* test_sim_events.c - the simulator's event wait (poll_events) on the real
 * clock sleeps until something can happen: no periodic wake-ups while
 * nothing is scheduled, not even while other threads' calls come and go;
 * it wakes when a scheduled event is due, at close, and looks at the
 * run-time fault file about once a second. */
#include "test_sim_util.h"

#include <pthread.h>
#include <stdatomic.h>

#define MS 1000000ull

/* Opens "sim" with arg on the real clock (no be->now_ns). */
static void open_sim_real(struct gpu_backend *be, const char *arg)
{
	memset(be, 0, sizeof(*be));
	struct gpu_err err = { "" };
	int rc = gpu_backend_open(be, "sim", arg, &err);
	if (rc != GPU_OK)
		fail_msg("opening sim '%s' failed (%d): %s", arg, rc, err.msg);
}

struct sampler_arg {
	struct gpu_backend *be;
	atomic_int stop;
	unsigned calls;
};

/* Calls for GPU 1 in a loop: each call that finishes signals the simulator's
 * call condition, which must not wake an event waiter. */
static void *busy_caller(void *p)
{
	struct sampler_arg *a = p;
	while (!atomic_load(&a->stop)) {
		struct gpu_sample s;
		struct gpu_err err = { "" };
		if (a->be->ops->sample(a->be, 1, GPU_GRP_BASIC, &s, &err) == GPU_OK)
			a->calls++;
		usleep(2000);
	}
	return NULL;
}

static void test_idle_wait_is_one_sleep(void **state)
{
	(void)state;
	struct gpu_backend be;
	open_sim_real(&be, "h200x8,latency_us=0");
	struct sampler_arg a = { &be, 0, 0 };
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, busy_caller, &a), 0);
	struct gpu_event ev[4];
	struct gpu_err err = { "" };
	unsigned n = 9;
	uint64_t t = mono_now_ns();
	assert_int_equal(be.ops->poll_events(&be, 400, ev, 4, &n, &err), GPU_OK);
	uint64_t took = mono_now_ns() - t;
	atomic_store(&a.stop, 1);
	pthread_join(th, NULL);
	assert_int_equal(n, 0);
	assert_true(took >= 400 * MS);
	assert_true(a.calls > 20); /* the other thread's calls did finish meanwhile */
	/* one sleep for the whole timeout (the old wait slept 10 ms at a time: 40);
	 * one more is allowed for a spurious wake-up */
	uint64_t waits = sim_event_waits(&be);
	if (waits > 2)
		fail_msg("poll_events slept %llu times in 400 ms with nothing scheduled", (unsigned long long)waits);
	gpu_backend_close(&be);
}

static void test_wakes_when_event_due(void **state)
{
	(void)state;
	struct gpu_backend be;
	/* at_s counts from the injection: t is taken before the simulator
	 * opens, so whatever opening and injecting cost on a loaded machine,
	 * the event cannot be due sooner than 300 ms after t */
	uint64_t t = mono_now_ns();
	open_sim_real(&be, "h200x8,latency_us=0");
	struct gpu_err err = { "" };
	assert_true(sim_inject(&be, &(struct sim_fault){ .kind = SIM_FAULT_XID, .gpu = 3, .xid = 48, .at_s = 0.3 },
			       &err) > 0);
	struct gpu_event ev[4];
	unsigned n = 0;
	assert_int_equal(be.ops->poll_events(&be, 60000, ev, 4, &n, &err), GPU_OK);
	uint64_t took = mono_now_ns() - t;
	assert_int_equal(n, 1);
	assert_int_equal(ev[0].xid, 48);
	assert_int_equal(ev[0].gpu, 3);
	/* not before the event's time, and woken by the event, not by the 60 s
	 * timeout (the bound is far from both: a loaded machine only delays) */
	assert_true(took >= 300 * MS);
	assert_true(took < 30000 * MS);
	uint64_t waits = sim_event_waits(&be);
	if (waits > 2)
		fail_msg("poll_events slept %llu times waiting 300 ms for one event", (unsigned long long)waits);
	gpu_backend_close(&be);
}

struct poll_arg {
	struct gpu_backend *be;
	int rc;
	unsigned n;
};

static void *poller(void *p)
{
	struct poll_arg *a = p;
	struct gpu_event ev[4];
	struct gpu_err err = { "" };
	a->rc = a->be->ops->poll_events(a->be, 10000, ev, 4, &a->n, &err);
	return NULL;
}

static void test_close_wakes_waiter(void **state)
{
	(void)state;
	struct gpu_backend be;
	open_sim_real(&be, "h200x8,latency_us=0");
	struct poll_arg a = { &be, -1, 9 };
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, poller, &a), 0);
	usleep(100000);
	uint64_t t = mono_now_ns();
	gpu_backend_close(&be); /* waits for the call in flight to leave */
	pthread_join(th, NULL);
	assert_true(mono_now_ns() - t < 2000 * MS);
	assert_int_equal(a.rc, GPU_OK);
	assert_int_equal(a.n, 0);
}

static void test_fault_file_seen_within_a_second(void **state)
{
	(void)state;
	char path[64];
	write_temp(path, ".json", "[]");
	char arg[160];
	snprintf(arg, sizeof(arg), "h200x8,latency_us=0,faults=%s", path);
	struct gpu_backend be;
	open_sim_real(&be, arg);
	struct poll_arg a = { &be, -1, 0 };
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, poller, &a), 0);
	usleep(200000);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("[{\"kind\": \"xid\", \"gpu\": 0, \"xid\": 79}]", f);
	fclose(f);
	uint64_t t = mono_now_ns();
	pthread_join(th, NULL);
	uint64_t took = mono_now_ns() - t;
	assert_int_equal(a.rc, GPU_OK);
	assert_int_equal(a.n, 1);
	assert_true(took < 1500 * MS);
	/* about once a second, not every 10 ms */
	uint64_t waits = sim_event_waits(&be);
	if (waits > 4)
		fail_msg("poll_events slept %llu times in about a second", (unsigned long long)waits);
	gpu_backend_close(&be);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_idle_wait_is_one_sleep),
		cmocka_unit_test(test_wakes_when_event_due),
		cmocka_unit_test(test_close_wakes_waiter),
		cmocka_unit_test(test_fault_file_seen_within_a_second),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
