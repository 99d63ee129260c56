/* SPDX-License-Identifier: Apache-2.0 */
/*
 * latency.h - the memory latency sweep's pure logic: which working sets to
 * chase, which of them stand for the L1, L2 and HBM figures, and the staircase
 * (plateaus of equal latency) a sweep shows. No I/O; unit-tested.
 */
#ifndef GPUCTL_BENCH_LATENCY_H
#define GPUCTL_BENCH_LATENCY_H

#include <stdint.h>

#define BENCH_LAT_MIN_WS (16ull << 10)      /* the sweep's first working set */
#define BENCH_LAT_L1_MAX_WS (32ull << 10)   /* at most this: the L1 figure (every L1 since Volta holds it) */
#define BENCH_LAT_L2_MIN_WS (1ull << 20)    /* from this to L2/4: the L2 figure */
#define BENCH_LAT_HBM_L2S 8                 /* from this many times the L2: the HBM figure */

/*
 * Working sets from lo to hi (both powers of two, lo <= hi): lo x 4^i (every
 * second octave), every octave from dense_from on, and hi itself. Writes at most
 * max, ascending; returns how many. 0 when lo or hi is not a power of two or
 * lo > hi.
 */
unsigned bench_latency_sweep(uint64_t lo, uint64_t hi, uint64_t dense_from, uint64_t *out, unsigned max);

/* The largest power of two at most x (0 for 0). */
uint64_t bench_pow2_floor(uint64_t x);

enum bench_lat_level { BLAT_NONE = 0, BLAT_L1, BLAT_L2, BLAT_HBM };

/* Which figure a working set counts towards on a GPU with l2_bytes of L2:
 * BLAT_L1 up to 32 KiB, BLAT_L2 from 1 MiB to l2/4, BLAT_HBM from 8 x l2;
 * BLAT_NONE between (the transitions) or when l2_bytes is 0. */
enum bench_lat_level bench_latency_level(uint64_t ws, uint64_t l2_bytes);
const char *bench_lat_level_name(enum bench_lat_level l); /* "l1", "l2", "hbm", "" */

/* One plateau of the staircase: working sets first..last whose latency stays
 * within `rise` of the plateau's first point; ns = median latency over them. */
struct bench_lat_step {
	uint64_t first_ws, last_ws;
	double ns;
	unsigned npoints;
};

/*
 * Splits a sweep (ws ascending, ns per point) into plateaus: a point more than
 * rise x (e.g. 1.3) over the current plateau's first latency starts a new one.
 * Points with a non-finite or non-positive latency are skipped. Returns the
 * number of plateaus written (at most max).
 */
unsigned bench_latency_steps(const uint64_t *ws, const double *ns, unsigned n, double rise,
			     struct bench_lat_step *out, unsigned max);

#endif
