/* SPDX-License-Identifier: Apache-2.0 */
/*
 * snapshot.h - what the GPUs looked like at one moment: a view per GPU and
 * the link matrix. The sampler (sampler/sampler.h) and one-shot sweeps
 * (snapshot_take) fill it; health, the views, the agent, the pool and the
 * commands read it. Types only and their memory: below the sampler, so that a
 * reader needs no sampler.
 *
 * A snapshot's arrays are sized by the GPU count: snapshot_new(n) allocates
 * the header, n views, n link rows and the room for n views' process and MIG
 * tables in one block (free() or snapshot_free releases it). The views are
 * dense (about 11 KB each) and their tables live after them: a fill
 * (sampler_read, snapshot_copy) packs each view's table right after the one
 * before, so that a 64-GPU snapshot's resident pages are its 64 views and the
 * processes there are, not 64 process tables of 8 KB mostly unused between
 * them (issue 14 part 6). A struct snapshot assigned by value shares the
 * arrays of the original; snapshot_copy copies them.
 */
#ifndef GPUCTL_SNAPSHOT_H
#define GPUCTL_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "device/gpu.h"

/* A link's error counters, as NVLink rates are taken of them. */
struct nvlink_err_counts {
	u64v crc_flit, crc_data, replay, recovery;
};

/* The earlier reading a rate runs from (sampler_rate_base): of a sample, its
 * time, every field of the table and the links' byte counters, the values a
 * rate is taken of (the links' error counters have their own base, struct
 * nvlink_err_counts); not the whole sample, whose links (3 KB of its 3.7) the
 * sampler's slots and every view held twice. */
struct gpu_rate_base {
	uint64_t timestamp_ns;   /* when it was read; 0: no reading */
	bool lost;
#define GPU_RATE_BASE_MEMBER(member, ...) u64v member;
	GPU_SAMPLE_FIELDS(GPU_RATE_BASE_MEMBER)
#undef GPU_RATE_BASE_MEMBER
	unsigned nvlink_n;       /* entries in nvlink[] */
	struct { u64v tx_bytes, rx_bytes; } nvlink[GPU_MAX_NVLINKS];
};

/* The rate base of sample s: its time, fields and links' byte counters. */
void gpu_rate_base_set(struct gpu_rate_base *b, const struct gpu_sample *s);
/* The field of the table at byte offset sample_offset of struct gpu_sample
 * (offsetof(struct gpu_sample, member), as the field table's readers name
 * one); unknown status for an offset that is no field's. */
u64v gpu_rate_base_field(const struct gpu_rate_base *b, size_t sample_offset);

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
	 * read (0: with the rest, at s.timestamp_ns), rate_base the counters of
	 * their reading before that one, its timestamp_ns the time of that
	 * reading (0: none yet). Every rate of a slow counter runs between those
	 * two readings (sampler_rate_base), never over one tick of carried values. */
	uint64_t slow_read_ns;
	struct gpu_rate_base rate_base;
	/* The NVLink error counters may be read less often still (the backend
	 * serves them from an earlier reading: s.nvlink_err_read_ns): when s's were
	 * read, and those of the reading before, its time (0: none yet) and links. */
	uint64_t nvlink_err_read_ns;
	uint64_t nvlink_err_base_ns;
	unsigned nvlink_err_base_n;
	struct nvlink_err_counts nvlink_err_base[GPU_MAX_NVLINKS];
	/* The process and MIG tables: nproc entries at procs, nmig at mig (the
	 * pointers last: snapshot_copy_view copies what is before them). A view
	 * of snapshot_new, snapshot_clear, snapshot_attach or gpu_view_new has
	 * room for GPU_MAX_PROCS and GPU_MAX_MIG entries; after a fill that packs
	 * them (sampler_read, snapshot_copy, snapshot_take) a snapshot's view has
	 * room for its counts only: to write more, snapshot_clear it first.
	 * NULL: no tables (the counts stay 0 when the view is filled). */
	unsigned nproc, nmig;
	struct gpu_process *procs;
	struct gpu_mig *mig;
};

struct snapshot {
	uint64_t taken_ns;         /* backend clock when the reading ended: no sample in it is newer */
	struct gpu_system sys;
	unsigned n;                /* GPUs in gpu[] and rows of link */
	unsigned cap;              /* GPUs there is room for (n <= cap <= GPU_MAX_GPUS) */
	struct gpu_view *gpu;      /* cap views */
	/* cap rows, [a][b] for GPUs a, b < n; read once at start: sampler_read fills rows [0, n) */
	struct gpu_link (*link)[GPU_MAX_GPUS];
	/* the room for the views' tables: cap x GPU_MAX_PROCS and cap x GPU_MAX_MIG entries */
	struct gpu_process *proc_room;
	struct gpu_mig *mig_room;
};

/* Caller-owned room for the tables of GPU_MAX_GPUS views (snapshot_attach). */
struct snapshot_tables {
	struct gpu_process procs[GPU_MAX_GPUS * GPU_MAX_PROCS];
	struct gpu_mig mig[GPU_MAX_GPUS * GPU_MAX_MIG];
};

/* A zeroed snapshot with room for cap GPUs (1..GPU_MAX_GPUS; 0 counts as 1),
 * in one block. NULL when out of memory. */
struct snapshot *snapshot_new(unsigned cap);
void snapshot_free(struct snapshot *s);
/* Points s at caller-owned arrays of cap (<= GPU_MAX_GPUS) views, cap link
 * rows and the tables' room (a snapshot inside a larger struct); zeroes the
 * header and points each view at its own part of the room. */
void snapshot_attach(struct snapshot *s, struct gpu_view *views, struct gpu_link (*rows)[GPU_MAX_GPUS],
		     struct snapshot_tables *tables, unsigned cap);
/* Zeroes s's header but for its arrays and cap (the views are left as they are). */
void snapshot_reset(struct snapshot *s);
/* Zeroes s: its header (but for its arrays and cap), all cap views and rows
 * and the table entries in use; each view gets its own part of the room back. */
void snapshot_clear(struct snapshot *s);
/* For a fill of views 0, 1, ... in that order: points view i's tables right
 * after view i-1's (its nproc and nmig entries), or at the start of the room
 * for view 0: packed, the tables in use are one run. View i then has room for
 * GPU_MAX_PROCS and GPU_MAX_MIG entries (views i+1.. are placed after it). */
void snapshot_place_tables(struct snapshot *s, unsigned i);
/* Copies src into dst: the header, each view up to its process and MIG
 * counts (packed), the link rows [0, n). Returns 0, or -1 (dst unchanged)
 * when dst has room for fewer than src->n GPUs. */
int snapshot_copy(struct snapshot *dst, const struct snapshot *src);
/* Copies one view, its tables up to their counts, into dst's tables (room
 * for them: see struct gpu_view; none when dst's are NULL). */
void snapshot_copy_view(struct gpu_view *dst, const struct gpu_view *src);
/* The view's MIG instance with GPU instance id gi_id, or NULL. */
const struct gpu_mig *gpu_view_mig(const struct gpu_view *v, unsigned gi_id);
/* A view on its own with room for its tables, in one block (free() releases
 * it), zeroed; NULL when out of memory. */
struct gpu_view *gpu_view_new(void);
/* Zeroes v but for where its tables are (their entries are left as they are). */
void gpu_view_zero(struct gpu_view *v);

#endif
