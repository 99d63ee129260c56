/* SPDX-License-Identifier: Apache-2.0 */
/* thread.c - starting a thread with a stack of a given size (thread.h). */
#include "thread.h"

int thread_start(pthread_t *t, size_t stack_bytes, void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	int rc = pthread_attr_init(&attr);
	if (rc)
		return rc;
	if (stack_bytes)
		rc = pthread_attr_setstacksize(&attr, stack_bytes);
	if (!rc)
		rc = pthread_create(t, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	return rc;
}
