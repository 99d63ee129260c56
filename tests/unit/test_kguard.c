/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_kguard.c - the guarded kernels-module table (src/kernels_host/kguard.c)
 * over a fake module: a call that returns comes back unchanged (its result
 * and code), a call that never returns is KGUARD_EHUNG once its deadline and
 * the grace have passed while the caller's result stays untouched by the
 * thread left behind, that thread frees its call once released, and entries
 * without a deadline or with caller memory in their arguments are called
 * directly.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "core/clock.h"
#include "kernels_host/kguard.h"
#include "kernels_host/kmod.h"

static atomic_int released;       /* the "hung" copy call returns once set */
static atomic_int late_write_done; /* it wrote its result after it was given up on */
static pthread_t caller;
/* what the fake saw (read by the test after the call came back: no asserts in its thread) */
static int seen_nsamples;
static bool seen_own_thread;

static void pause_5ms(void)
{
	nanosleep(&(struct timespec){ 0, 5000000 }, NULL);
}

static bool wait_until_no_hung_calls(void)
{
	for (int i = 0; i < 12000 && kguard_hung_calls() > 0; i++) /* 60 s bound */
		pause_5ms();
	return kguard_hung_calls() == 0;
}

static int f_copy(const struct gk_copy_args *a, struct gk_result *r)
{
	if (a->bytes == 0) { /* the hung GPU: ignores its deadline until released */
		while (!atomic_load(&released))
			pause_5ms();
		r->nsamples = 99;
		snprintf(r->err, sizeof(r->err), "late");
		atomic_store(&late_write_done, 1);
		return GK_OK;
	}
	seen_nsamples = r->nsamples;
	seen_own_thread = !pthread_equal(pthread_self(), caller);
	r->nsamples = GK_MIN_SAMPLES;
	r->bytes = (double)a->bytes;
	snprintf(r->err, sizeof(r->err), "from the module");
	return GK_ETIMEOUT;
}

static int f_spmv(const struct gk_spmv_args *a, struct gk_result *r)
{
	(void)a;
	seen_own_thread = !pthread_equal(pthread_self(), caller);
	r->nsamples = 3;
	return GK_OK;
}

static int f_count(int *count, char *err, size_t errlen)
{
	snprintf(err, errlen, "two");
	*count = 2;
	return GK_OK;
}

static int f_load_open(const struct gk_load_args *a, struct gk_load **out, char *err, size_t errlen)
{
	(void)a;
	static int token;
	*out = (struct gk_load *)&token;
	snprintf(err, errlen, "opened");
	return GK_OK;
}

static const struct gk_api fake = {
	.abi_version = GK_ABI_VERSION, .struct_size = sizeof(struct gk_api), .build_info = "fake",
	.device_count = f_count, .copy = f_copy, .spmv = f_spmv, .load_open = f_load_open,
};

static uint64_t in_ms(unsigned ms)
{
	return clock_mono_ns() + (uint64_t)ms * 1000000ull;
}

static void test_answer_comes_back(void **state)
{
	(void)state;
	caller = pthread_self();
	const struct gk_api *g = kguard_wrap(&fake, 5);
	assert_ptr_not_equal(g->copy, fake.copy);
	assert_null(g->memtest); /* what the module lacks stays missing */
	struct gk_copy_args a = { .c = { .deadline_ns = in_ms(60000) }, .bytes = 4096 };
	struct gk_result r = { .nsamples = 7 };
	assert_int_equal(g->copy(&a, &r), GK_ETIMEOUT);
	assert_int_equal(seen_nsamples, 7); /* the caller's result went in */
	assert_true(seen_own_thread);
	assert_int_equal(r.nsamples, GK_MIN_SAMPLES);
	assert_float_equal(r.bytes, 4096, 0);
	assert_string_equal(r.err, "from the module");
	int n = 0;
	char err[32] = "";
	assert_int_equal(g->device_count(&n, err, sizeof(err)), GK_OK);
	assert_int_equal(n, 2);
	assert_string_equal(err, "two");
	struct gk_load *l = NULL;
	struct gk_load_args la = { .c = { .deadline_ns = in_ms(60000) } };
	assert_int_equal(g->load_open(&la, &l, err, sizeof(err)), GK_OK);
	assert_non_null(l);
	assert_string_equal(err, "opened");
	assert_int_equal(kguard_hung_calls(), 0);
}

static void test_caller_memory_and_no_deadline_called_directly(void **state)
{
	(void)state;
	caller = pthread_self();
	const struct gk_api *g = kguard_wrap(&fake, 5);
	assert_ptr_equal(g->spmv, fake.spmv); /* its arguments point into the caller's memory */
	struct gk_spmv_args s = { .c = { .deadline_ns = in_ms(60000) } };
	struct gk_result r = { 0 };
	seen_own_thread = true;
	assert_int_equal(g->spmv(&s, &r), GK_OK);
	assert_false(seen_own_thread);
	/* no deadline: nothing to time the watchdog from, so no thread */
	atomic_store(&released, 1);
	struct gk_copy_args a = { .c = { .deadline_ns = 0 }, .bytes = 0 };
	assert_int_equal(g->copy(&a, &r), GK_OK);
	assert_int_equal(r.nsamples, 99);
	atomic_store(&released, 0);
	atomic_store(&late_write_done, 0);
}

static void test_hung_call_is_given_up_after_deadline_and_grace(void **state)
{
	(void)state;
	caller = pthread_self();
	const struct gk_api *g = kguard_wrap(&fake, 0.2);
	struct gk_copy_args a = { .c = { .deadline_ns = in_ms(100) }, .bytes = 0 };
	struct gk_result r = { .nsamples = 7 };
	uint64_t t0 = clock_mono_ns();
	int rc = g->copy(&a, &r);
	double took = (double)(clock_mono_ns() - t0) / 1e9;
	assert_int_equal(rc, KGUARD_EHUNG);
	assert_int_equal(r.rc, KGUARD_EHUNG);
	assert_string_equal(kmod_rc_name(rc), "GPU hung");
	assert_non_null(strstr(r.err, "no answer 0.2 s past its deadline"));
	assert_true(took >= 0.3 - 0.01); /* not before the deadline plus the grace */
	assert_int_equal(kguard_hung_calls(), 1);
	/* the thread left behind answers late, into its own copy */
	atomic_store(&released, 1);
	for (int i = 0; i < 12000 && !atomic_load(&late_write_done); i++)
		pause_5ms();
	assert_true(atomic_load(&late_write_done));
	assert_true(wait_until_no_hung_calls());
	assert_int_equal(r.nsamples, 0);
	assert_non_null(strstr(r.err, "past its deadline"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_answer_comes_back),
		cmocka_unit_test(test_caller_memory_and_no_deadline_called_directly),
		cmocka_unit_test(test_hung_call_is_given_up_after_deadline_and_grace),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
