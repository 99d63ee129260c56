/* SPDX-License-Identifier: Apache-2.0 */
/* test_thread.c - thread_start gives the thread the stack size asked for. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>

#include "core/thread.h"

static void *stack_size_of_self(void *arg)
{
	pthread_attr_t attr;
	size_t *size = arg;
	*size = 0;
	if (pthread_getattr_np(pthread_self(), &attr) == 0) {
		pthread_attr_getstacksize(&attr, size);
		pthread_attr_destroy(&attr);
	}
	return NULL;
}

static void test_stack_size_asked(void **state)
{
	(void)state;
	pthread_t t;
	size_t got = 0;
	assert_int_equal(thread_start(&t, 256u * 1024u, stack_size_of_self, &got), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
#ifdef __SANITIZE_THREAD__
	/* ThreadSanitizer's pthread_create gives a thread more than it was asked for */
	assert_true(got >= 256u * 1024u);
#else
	assert_int_equal(got, 256u * 1024u);
#endif
	/* 0: the default, whatever it is here, at least as large as asked above */
	assert_int_equal(thread_start(&t, 0, stack_size_of_self, &got), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_true(got >= 256u * 1024u);
}

static void test_too_small_refused(void **state)
{
	(void)state;
	pthread_t t;
	size_t got = 0;
	/* below PTHREAD_STACK_MIN: pthread_attr_setstacksize's EINVAL, no thread */
	assert_int_not_equal(thread_start(&t, 1, stack_size_of_self, &got), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stack_size_asked),
		cmocka_unit_test(test_too_small_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
