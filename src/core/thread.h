/* SPDX-License-Identifier: Apache-2.0 */
/* thread.h - starting a thread with a stack of a given size. The default is
 * RLIMIT_STACK (8 MiB on Debian) of address space per thread; gpuctl's
 * long-lived threads (the sampler's one per GPU, the agent's own) say what
 * they need instead. Only the pages a thread touches are resident, so the
 * size bounds address space, not resident memory. */
#ifndef GPUCTL_THREAD_H
#define GPUCTL_THREAD_H

#include <pthread.h>
#include <stddef.h>

/* pthread_create with a stack of stack_bytes (0: the default); its result. */
int thread_start(pthread_t *t, size_t stack_bytes, void *(*fn)(void *), void *arg);

#endif
