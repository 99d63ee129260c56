/* SPDX-License-Identifier: Apache-2.0 */
/*
 * history.h - the agent's short memory: per GPU, a ring buffer of the main
 * series (utilization, memory, power, temperature, SM clock, and the
 * profiling figures: SM activity, occupancy, tensor and DRAM activity) at the
 * sampling interval, for the web page's charts (/api/v1/history,
 * docs/agent.md).
 *
 * Compact: a point is 20 bytes (a 32-bit time in 10 ms steps from the
 * history's start, six 16-bit quantized values and four 8-bit percentages).
 * Two tiers, as RRD or Prometheus downsampling: the last HISTORY_FULL_NS at
 * the sampling interval, and before that one point per 10 s (mean, least and
 * greatest of each series, 52 bytes), folded from the points the full tier
 * lets go; so an hour at 1 s of 64 GPUs takes 1.25 MiB (4.4 MiB at full
 * resolution). The render thread adds a snapshot per tick; HTTP
 * threads render the JSON. Both take the history's own lock, the renderer
 * only while it copies the points it needs. Nothing here prints.
 */
#ifndef GPUCTL_HISTORY_H
#define GPUCTL_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "device/snapshot.h"
#include "core/abuf.h"

#define HISTORY_WIDE 6      /* series stored in 16 bits: v[] */
#define HISTORY_NARROW 4    /* then series stored in 8 bits (whole percent): p[] */
#define HISTORY_SERIES (HISTORY_WIDE + HISTORY_NARROW)
#define HISTORY_MAX_SLOTS 65536u  /* per GPU: 1 MiB, whatever the duration and interval ask */
#define HISTORY_MISSING 0xFFFFu    /* a value the sample did not have */
#define HISTORY_Q_MAX 0xFFFEu      /* larger values are stored as this (saturated) */
#define HISTORY_NARROW_Q_MAX 0xFEu /* the same for an 8-bit series (0xFF: missing) */

#define HISTORY_FULL_NS (120ull * 1000000000ull)  /* the last 2 min at the sampling interval */
#define HISTORY_COARSE_NS (10ull * 1000000000ull) /* then one point per 10 s */

/* A sample's values, quantized. */
struct history_vals {
	uint16_t v[HISTORY_WIDE];
	uint8_t p[HISTORY_NARROW];
};

/* One stored sample. t: 10 ms steps from struct history's base_ns. */
struct history_point {
	uint32_t t;
	struct history_vals x;
};

/* One 10 s point of the coarse tier (52 bytes): the mean (rounded), least and
 * greatest of each series over the bucket's points that had it; mean.t: the
 * newest of them. */
struct history_coarse {
	struct history_point mean;
	struct history_vals lo, hi;
};

/* The series, in the order of history_point.v (the one table of them). Each
 * is a row of the field table (device/gpu_fields.h): its key is the member's
 * name, the key of "sample" in --json and /api/v1/gpus, in the same unit. */
struct history_series {
	const char *name;      /* the JSON key: the gpu_sample member's name */
	size_t field;          /* offsetof(struct gpu_sample, the u64v) */
	uint64_t quantum;      /* stored value = round(sample value / quantum); written as q * quantum */
};
extern const struct history_series history_series[HISTORY_SERIES];

/* Quantizes one sample value of series i (HISTORY_MISSING when it has none;
 * saturated at HISTORY_Q_MAX, or HISTORY_NARROW_Q_MAX for a narrow one). Pure. */
uint16_t history_quantize(unsigned series, uint64_t value, bool present);

struct history;

/* The origin of a history started at now_ns (the backend's clock): an hour
 * earlier, so that the samples taken before it started fit too. Pure. */
uint64_t history_base_ns(uint64_t now_ns);
/* A history of ngpus GPUs, full points at the interval each and coarse 10 s
 * points before them (full + coarse at most HISTORY_MAX_SLOTS; its memory is
 * touched at once, so the resident size is what it will be full). base_ns:
 * CLOCK_REALTIME origin of the stored times. NULL: out of memory, or full or
 * ngpus 0. */
struct history *history_new_tiered(unsigned ngpus, unsigned full, unsigned coarse, uint64_t base_ns);
/* history_new_tiered without a coarse tier: slots points at the interval. */
struct history *history_new(unsigned ngpus, unsigned slots, uint64_t base_ns);
void history_free(struct history *h);
/* Bytes it holds (points and bookkeeping). */
size_t history_bytes(const struct history *h);
/* The most points a GPU's document can have: the full tier's, the coarse
 * tier's and its bucket being filled (`capacity` in /api/v1/history). */
unsigned history_slots(const struct history *h);
/* The number of points needed for `duration_ns` at `interval_ns` (rounded
 * up, at least 1, at most HISTORY_MAX_SLOTS). Pure. */
unsigned history_slots_for(uint64_t duration_ns, uint64_t interval_ns);
/* The tiers for `duration_ns` at `interval_ns`: the last HISTORY_FULL_NS at
 * the interval, the rest in 10 s points (none when the interval is 10 s or
 * more, or the duration no longer than HISTORY_FULL_NS: all at the
 * interval); together at most HISTORY_MAX_SLOTS. Pure. */
void history_tiers_for(uint64_t duration_ns, uint64_t interval_ns, unsigned *full, unsigned *coarse);

/* Stores GPU gpu's sample if it is newer than the last one stored (a GPU
 * that is down adds nothing: its chart has a gap). Thread-safe. */
void history_add(struct history *h, unsigned gpu, const struct gpu_sample *s);
/* history_add of every GPU of a snapshot that is up. */
void history_add_snapshot(struct history *h, const struct snapshot *snap);

struct history_doc_opts {
	uint64_t gpu_mask;     /* bits of the GPUs to include */
	uint64_t since_ns;     /* only points taken after this (CLOCK_REALTIME); 0: all */
	bool simulated;
	uint64_t interval_ns;
};
/* /api/v1/history (docs/agent.md) into out. 0, or -1 out of memory. */
int history_render(struct history *h, const struct history_doc_opts *o, struct abuf *out);
/* The same document a piece at a time (the head, one GPU, the tail), so that
 * the server holds one GPU's part of it at once (10 MB whole at 64 GPUs x
 * 3600 points): history_cursor_next appends the next piece to out and is
 * false once the tail has been given. NULL: out of memory. */
struct history_cursor;
struct history_cursor *history_cursor_new(struct history *h, const struct history_doc_opts *o);
bool history_cursor_next(struct history_cursor *c, struct abuf *out);
void history_cursor_free(struct history_cursor *c);

#endif
