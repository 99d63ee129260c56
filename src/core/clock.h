/* clock.h - the monotonic clock in nanoseconds, for intervals and deadlines
 * (never for wall-clock times, which come from the backend's clock). */
#ifndef GPUCTL_CLOCK_H
#define GPUCTL_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t clock_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif
