/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sampler.h - the one place that reads telemetry from a backend.
 *
 * One thread per GPU, each on its own schedule, writes into that GPU's slot of
 * a snapshot; readers (top, dmon, the agent's /metrics, health, pool
 * accounting) copy the latest snapshot under a short lock and never wait on a
 * backend call. A GPU whose calls fail or hang is marked down (up = false)
 * after its deadline and the others go on.
 */
#ifndef GPUCTL_SAMPLER_H
#define GPUCTL_SAMPLER_H

#include <stdbool.h>
#include <stdint.h>
#include "device/gpu.h"
#include "device/snapshot.h"

/* ECC, PCIe (throughput reads take 20 ms), NVLink and violation counters:
 * the groups that change slowly or cost most. */
#define SAMPLER_SLOW_GROUPS (GPU_GRP_ECC | GPU_GRP_PCIE | GPU_GRP_NVLINK | GPU_GRP_NVLINK_ERR | GPU_GRP_VIOL)

struct sampler_config {
	uint64_t interval_ns;      /* default 1 s */
	unsigned groups;           /* GPU_GRP_* bitmask; GPU_GRP_ALL by default */
	uint64_t slow_group_every; /* sample SAMPLER_SLOW_GROUPS every Nth tick only (0/1 = every tick):
	                            * each NVML call costs 1-3 ms of CPU on an H200 */
	uint64_t stale_after_ns;   /* a GPU whose last good sample is older is up = false (default 5 intervals) */
	bool processes;            /* also list processes */
	bool events;               /* also collect XID events (one extra thread) */
	const struct gpu_system *sys; /* the system facts the caller read when it opened the
	                            * backend (cmd_backend), copied; NULL: the sampler asks */
};

struct sampler;

void sampler_config_default(struct sampler_config *cfg);
/* Starts the threads. The backend must stay open until sampler_stop(). */
int sampler_start(struct sampler **out, struct gpu_backend *be, const struct sampler_config *cfg, struct gpu_err *err);
/* Copies the latest snapshot into out, which has room for sampler_gpu_count()
 * GPUs (snapshot_new): of each view what is in use, the link rows [0, n)
 * (cheap; never waits on the backend). */
void sampler_read(struct sampler *s, struct snapshot *out);
/* How many times sampler_read was called (the agent reads once per tick: tests count it). */
uint64_t sampler_reads(struct sampler *s);
/* Copies one GPU's view only. */
void sampler_read_gpu(struct sampler *s, unsigned gpu, struct gpu_view *out);
/* Blocks until every GPU has been sampled at least once or timeout_ns passed. */
bool sampler_wait_first(struct sampler *s, uint64_t timeout_ns);
void sampler_stop(struct sampler *s);
/* sampler_stop(), giving backend calls in flight grace_ns in all (sampler_stop:
 * 5 s) before their threads are left (top and dmon: a hung GPU must not hold
 * Ctrl-C). */
void sampler_stop_within(struct sampler *s, uint64_t grace_ns);

/* When the slow groups of v's sample were read. */
uint64_t sampler_slow_read_ns(const struct gpu_view *v);
/* The earlier of the two readings a rate of a slow-group counter of v (ECC,
 * PCIe replays, NVLink, violation time: every counter gpuctl takes a rate of)
 * runs between: v's rate base when the sampler kept one, else prev's sample
 * (the same GPU in the caller's previous snapshot; may be NULL), put in
 * *room. NULL when there is none or it was not read before v's: the rate is
 * then not known. *dt_s gets the seconds between the two readings. */
const struct gpu_rate_base *sampler_rate_base(const struct gpu_view *v, const struct gpu_view *prev,
					      struct gpu_rate_base *room, double *dt_s);

/* The error counters of one link's sample. */
void sampler_nvlink_counts(struct nvlink_err_counts *c, const struct gpu_nvlink *l);
/* The same for the NVLink error counters of v: the counts of the earlier
 * reading, link by link, into base[GPU_MAX_NVLINKS]; returns how many links,
 * or -1 when there is no earlier reading (then *dt_s is 0). */
int sampler_nvlink_err_base(const struct gpu_view *v, const struct gpu_view *prev, struct nvlink_err_counts *base,
			    double *dt_s);

/* Where an XID was seen. Per code, the published count is the largest of the
 * sources' counts, so one event reported by both NVML and the kernel log counts once. */
enum xid_source { XID_SRC_EVENTS = 0, XID_SRC_KERNEL_LOG = 1, XID_SRC_COUNT };
/* Counts an XID on a GPU (the agent's kernel-log reader calls this). Thread-safe. */
void sampler_note_xid(struct sampler *s, unsigned gpu, uint64_t code, uint64_t when_ns, enum xid_source src);
/* Number of GPUs the sampler watches. */
unsigned sampler_gpu_count(const struct sampler *s);

/* One synchronous sweep without threads (for one-shot commands: info, health). */
int snapshot_take(struct gpu_backend *be, unsigned groups, struct snapshot *out, struct gpu_err *err);
/* The same with a deadline (0: the default, 20 s): a GPU that has not answered
 * by then is down ("no answer within ...") and the sweep returns. */
int snapshot_take_timeout(struct gpu_backend *be, unsigned groups, uint64_t timeout_ns, struct snapshot *out,
			  struct gpu_err *err);
/* The same for a caller that read the system facts when it opened the backend
 * (a command: cmd_backend): *sys becomes out->sys instead of being asked of
 * the backend again (driver, NVML and CUDA versions, host, fabric manager on
 * every GPU). sys NULL: read them, as snapshot_take_timeout does. */
int snapshot_take_with_sys(struct gpu_backend *be, const struct gpu_system *sys, unsigned groups,
			   uint64_t timeout_ns, struct snapshot *out, struct gpu_err *err);

#endif
