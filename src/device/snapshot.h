/*
 * snapshot.h - what the GPUs looked like at one moment: a view per GPU and
 * the link matrix. The sampler (sampler/sampler.h) and one-shot sweeps
 * (snapshot_take) fill it; health, the views, the agent, the pool and the
 * commands read it. Types only and their memory: below the sampler, so that a
 * reader needs no sampler.
 *
 * A snapshot's arrays are sized by the GPU count: snapshot_new(n) allocates
 * the header, n views and n link rows in one block (free() or snapshot_free
 * releases it). A 64-GPU snapshot is 64 views of ~21 KB (their process and
 * MIG tables used up to nproc and nmig) and 64 rows of 64 links; an 8-GPU one
 * is an eighth of that. A struct snapshot assigned by value shares the arrays
 * of the original; snapshot_copy copies them.
 */
#ifndef GPUCTL_SNAPSHOT_H
#define GPUCTL_SNAPSHOT_H

#include <stdbool.h>
#include <stdint.h>

#include "device/gpu.h"

/* A link's error counters, as NVLink rates are taken of them. */
struct nvlink_err_counts {
	u64v crc_flit, crc_data, replay, recovery;
};

/* The latest view of one GPU. */
struct gpu_view {
	bool up;                   /* last sample succeeded and is fresh */
	uint64_t last_ok_ns;       /* when the last good sample was taken */
	uint64_t samples, errors;  /* counters since start */
	char last_error[128];
	struct gpu_static st;      /* read once at start (re-read after a GPU comes back) */
	struct gpu_sample s;
	/* XID events seen, per code, kept across sampler restarts of the GPU */
	unsigned nxid;
	struct { uint64_t code, count, last_ns; } xid[32];
	/* The slow groups (SAMPLER_SLOW_GROUPS) are read every slow_group_every
	 * ticks and carried in s between readings: slow_read_ns is when s's were
	 * read (0: with the rest, at s.timestamp_ns), rate_base the sample that
	 * held their reading before that one, its timestamp_ns the time of that
	 * reading (0: none yet). Every rate of a slow counter runs between those
	 * two readings (sampler_rate_base), never over one tick of carried values. */
	uint64_t slow_read_ns;
	struct gpu_sample rate_base;
	/* The NVLink error counters may be read less often still (the backend
	 * serves them from an earlier reading: s.nvlink_err_read_ns): when s's were
	 * read, and those of the reading before, its time (0: none yet) and links. */
	uint64_t nvlink_err_read_ns;
	uint64_t nvlink_err_base_ns;
	unsigned nvlink_err_base_n;
	struct nvlink_err_counts nvlink_err_base[GPU_MAX_NVLINKS];
	/* the tables last, each used up to its count: a copy of a view up to
	 * procs[nproc] and mig[nmig] leaves the rest of its 17 KB untouched (a
	 * snapshot holds 64 views) */
	unsigned nproc, nmig;
	struct gpu_process procs[GPU_MAX_PROCS];
	struct gpu_mig mig[GPU_MAX_MIG];
};

struct snapshot {
	uint64_t taken_ns;
	struct gpu_system sys;
	unsigned n;                /* GPUs in gpu[] and rows of link */
	unsigned cap;              /* GPUs there is room for (n <= cap <= GPU_MAX_GPUS) */
	struct gpu_view *gpu;      /* cap views */
	/* cap rows, [a][b] for GPUs a, b < n; read once at start: sampler_read fills rows [0, n) */
	struct gpu_link (*link)[GPU_MAX_GPUS];
};

/* A zeroed snapshot with room for cap GPUs (1..GPU_MAX_GPUS; 0 counts as 1),
 * in one block. NULL when out of memory. */
struct snapshot *snapshot_new(unsigned cap);
void snapshot_free(struct snapshot *s);
/* Points s at caller-owned arrays of cap views and cap link rows (a snapshot
 * inside a larger struct); zeroes the header. */
void snapshot_attach(struct snapshot *s, struct gpu_view *views, struct gpu_link (*rows)[GPU_MAX_GPUS], unsigned cap);
/* Zeroes s: its header (but for its arrays and cap) and all cap views and rows. */
void snapshot_clear(struct snapshot *s);
/* Copies src into dst: the header, each view up to its process and MIG
 * counts, the link rows [0, n). Returns 0, or -1 (dst unchanged) when dst
 * has room for fewer than src->n GPUs. */
int snapshot_copy(struct snapshot *dst, const struct snapshot *src);
/* Copies one view up to its process and MIG counts (the rest of the tables
 * is 11 KB of each view, left untouched). */
void snapshot_copy_view(struct gpu_view *dst, const struct gpu_view *src);

#endif
