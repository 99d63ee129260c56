/* SPDX-License-Identifier: Apache-2.0 */
/* clock.h - the monotonic clock in nanoseconds, for intervals and deadlines
 * (never for wall-clock times, which come from the backend's clock). */
#ifndef GPUCTL_CLOCK_H
#define GPUCTL_CLOCK_H

#include <errno.h>
#include <stdint.h>
#include <time.h>

static inline uint64_t clock_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Sleeps ns on the monotonic clock, the whole of it even through signals. */
static inline void clock_sleep_ns(uint64_t ns)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t end = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + ns;
	ts.tv_sec = (time_t)(end / 1000000000ull);
	ts.tv_nsec = (long)(end % 1000000000ull);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

#endif
