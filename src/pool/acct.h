/* SPDX-License-Identifier: Apache-2.0 */
/*
 * acct.h - per-job, per-GPU accounting (pure: folds sampler snapshots).
 *
 * DCGM's job statistics in small: from the job's start to its end, for each
 * of its GPUs, the energy used (difference of the cumulative energy counter),
 * average and peak utilization and memory, the XIDs seen (counts beyond those
 * already there at the start) and the throttling seen (clock-event reasons
 * other than idle/application/display clocks, and the power and thermal
 * violation time), and the means of the profiling figures (NVML GPM: SM,
 * tensor and DRAM activity; not read on GPUs before Hopper or with MIG on).
 * GPU-seconds are the job's wall time times its GPUs.
 * A MIG slice is accounted on its parent GPU (the counters are per GPU).
 * A value that could not be read is marked so, never a silent 0.
 */
#ifndef GPUCTL_POOL_ACCT_H
#define GPUCTL_POOL_ACCT_H

#include <stdbool.h>
#include <stdint.h>

struct snapshot;

#define ACCT_MAX_XIDS 8

/* The profiling figures a job's accounting averages (gpu_sample's prof_*). */
enum acct_gpm { ACCT_GPM_SM, ACCT_GPM_TENSOR, ACCT_GPM_DRAM, ACCT_GPM_COUNT };
/* Their keys in the job's JSON and their columns in the store: "sm_active_avg_pct", ... */
const char *acct_gpm_key(enum acct_gpm m);

struct acct_gpu {
	unsigned gpu;                  /* index */
	uint64_t samples;              /* snapshots folded in */
	uint64_t last_sample_ns;       /* the GPU's sample time last folded */
	bool energy_ok;                /* counter read at the start and since, never went back */
	uint64_t energy_first_mj, energy_last_mj;
	uint64_t util_sum, util_n, util_peak;      /* percent */
	uint64_t mem_sum_mib, mem_n, mem_peak_bytes;
	uint64_t gpm_sum[ACCT_GPM_COUNT], gpm_n[ACCT_GPM_COUNT]; /* percent */
	uint64_t throttle_reasons;     /* CLK_EVT_* bits seen */
	bool viol_ok;
	uint64_t viol_power_first, viol_power_last, viol_thermal_first, viol_thermal_last; /* ns */
	unsigned nbase;                /* XID counts at the start */
	struct { uint64_t code, count; } base[32];
	unsigned nxid;                 /* XIDs seen during the job */
	struct { uint64_t code, count; } xid[ACCT_MAX_XIDS];
};

struct acct_job {
	unsigned n;
	struct acct_gpu *g;            /* heap, n entries (NULL before acct_begin) */
	uint64_t not_before_ns;        /* samples taken before this (the job's start) are not its */
	bool mig;                      /* a MIG slice: the GPM figures are GPU instance mig_gi's */
	unsigned mig_gi;
};

/* What a job's accounting says about one GPU, ready to print or store. */
struct acct_summary {
	unsigned gpu;
	double gpu_seconds;
	bool energy_ok;
	double energy_j;
	bool util_ok;
	double util_avg_pct, util_peak_pct;
	bool mem_ok;
	double mem_avg_bytes, mem_peak_bytes;
	bool gpm_ok[ACCT_GPM_COUNT];   /* false: no sample had the figure (n/a) */
	double gpm_avg_pct[ACCT_GPM_COUNT];
	uint64_t throttle_reasons;
	bool viol_ok;
	double throttle_power_s, throttle_thermal_s;
	unsigned nxid;
	struct { uint64_t code, count; } xid[ACCT_MAX_XIDS];
	uint64_t samples;
};

/* Starts accounting on the GPUs (baselines from snap, may be NULL). 0 or -1 (memory). */
int acct_begin(struct acct_job *a, const unsigned *gpus, unsigned n, const struct snapshot *snap);
/* Samples taken before start_ns (wall clock, as the samples' timestamps) are
 * not folded in: the sampler's GPUs are read apart, so a snapshot read after
 * the start can still hold a sample from before it (the previous job's memory). */
void acct_set_start(struct acct_job *a, uint64_t start_ns);
/* A job on a MIG slice (gi >= 0): its GPM means are those of its GPU
 * instance (gpu_mig's prof_*), not the GPU's; gi < 0: whole GPUs. */
void acct_set_mig(struct acct_job *a, int gi);
/* Folds a snapshot in (each GPU's sample at most once). */
void acct_update(struct acct_job *a, const struct snapshot *snap);
/* GPU i's summary for a job that ran wall_ns. */
void acct_summarize(const struct acct_job *a, unsigned i, uint64_t wall_ns, struct acct_summary *out);
void acct_free(struct acct_job *a);

#endif
