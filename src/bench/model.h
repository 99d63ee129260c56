/* SPDX-License-Identifier: Apache-2.0 */
/*
 * model.h - what a benchmark run produced: one bench_result per measured
 * figure, kept with its samples, statistics, datasheet limit, threshold
 * verdict and the telemetry seen while it ran. Pure data and pure functions:
 * the orchestration (suite.c) fills it, output.c prints it, results_file.c
 * saves and loads it, report*.c draws it.
 *
 * Units: value is in the result's unit ("GB/s" decimal 1e9, "TFLOP/s" 1e12,
 * "GFLOP/s", "ns", "us", "Mrays/s", "x"); bytes and flops are what ONE sample
 * counted. A figure that does not exist is NAN (written as JSON null).
 */
#ifndef GPUCTL_BENCH_MODEL_H
#define GPUCTL_BENCH_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/stats.h"

#define BENCH_SCHEMA "gpuctl-bench-results"
#define BENCH_SCHEMA_VERSION 1
#define BENCH_MAX_SAMPLES 128
#define BENCH_MAX_AUX 12 /* a train row: 8 figures and the planner's 4 */
#define BENCH_MAX_GPUS 64

/* How a result's value is derived from its per-sample times. */
enum bench_metric {
	BM_BANDWIDTH = 0, /* GB/s = bytes / time */
	BM_TFLOPS,        /* TFLOP/s = flops / time */
	BM_GFLOPS,        /* GFLOP/s = flops / time */
	BM_LATENCY_NS,    /* ns per dependent access = time * scale */
	BM_BUSBW,         /* GB/s = bytes / time * bus factor (nccl-tests) */
	BM_RATE,          /* millions of items per second = items / time */
	BM_TIME_US,       /* microseconds per sample */
	BM_METRIC_COUNT
};

enum bench_status {
	BS_OK = 0,        /* measured and verified; at or over its threshold (if any) */
	BS_LOW,           /* measured, but under min_ratio x datasheet, or (train) the
	                   * planner's memory off by more than 5% (train_plan.h) */
	BS_FAILED,        /* error or verification failed: no figure */
	BS_SKIPPED,       /* not supported here (library missing, one GPU for p2p, ...) */
	BS_STATUS_COUNT
};

/* The profiling figures (NVML GPM, Hopper and later) a test's telemetry
 * keeps, averaged over its samples and its GPUs: one row each,
 * X(key, member, title): its key in the results file's "telemetry" (and its
 * index in bench_telemetry.gpm_pct), the gpu_sample member it averages, its
 * name in the report's telemetry table. */
#define BENCH_TEL_GPM_TABLE(X) \
	X(sm_active_pct, prof_sm_active_pct, "SM act") \
	X(sm_occupancy_pct, prof_sm_occupancy_pct, "SM occ") \
	X(tensor_active_pct, prof_tensor_active_pct, "tensor") \
	X(dram_active_pct, prof_dram_active_pct, "DRAM")
enum bench_tel_gpm {
#define BENCH_TEL_GPM_ENUM(key, member, title) BENCH_GPM_##key,
	BENCH_TEL_GPM_TABLE(BENCH_TEL_GPM_ENUM)
#undef BENCH_TEL_GPM_ENUM
	BENCH_TEL_NGPM
};
extern const char *const bench_tel_gpm_keys[BENCH_TEL_NGPM];

/* Telemetry seen while one test ran (from the sampler). */
struct bench_telemetry {
	unsigned samples;          /* telemetry samples taken during the test; 0 = none */
	double window_s;           /* time between the first and last of them */
	double sm_clock_mhz_min, sm_clock_mhz_max;
	double mem_clock_mhz_min;
	double power_w_avg, power_w_max;
	double temp_c_max, temp_mem_c_max;
	double energy_j;           /* power_w_avg x test_s: the test's energy; NAN when unknown */
	double test_s;             /* how long the test's call took (host clock); NAN unknown */
	char energy_from[64];      /* "counter" (power from the energy counter), "readings"
	                            * (mean power reading), or why there is no energy */
	uint64_t clock_event_reasons; /* OR of the CLK_EVT_* bits seen, idle left out */
	double gpm_pct[BENCH_TEL_NGPM]; /* BENCH_TEL_GPM_TABLE's means, percent; NAN: none (no GPM) */
};

struct bench_aux { char name[24]; double value; char unit[12]; };

struct bench_result {
	char suite[16];            /* copy memory compute gemm p2p nccl apps sustained host */
	char test[40];             /* "h2d_pinned", "triad", "fma", "cublas", "tiled", ... */
	char variant[16];          /* precision ("fp32") or direction, "" when none */
	int gpu;                   /* device, -1 for host-only or all-GPU tests */
	int peer;                  /* p2p destination, -1 otherwise */
	int ngpus;                 /* GPUs taking part (nccl ranks), 1 for one-GPU tests */
	uint64_t size_bytes;       /* transfer or working-set size; 0 when not a size sweep */
	unsigned m, n, k;          /* GEMM shape; 0 otherwise */
	enum bench_metric metric;
	char unit[12];
	double bytes, flops;       /* counted per sample (0 when not applicable) */
	double scale;              /* BM_LATENCY_NS: ns per ms of sample; BM_BUSBW: bus factor;
	                            * BM_RATE: items per sample */
	unsigned nsamples;
	double samples_ms[BENCH_MAX_SAMPLES];
	struct stats time_ms;      /* of samples_ms */
	struct stats value;        /* of the per-sample values, in unit */
	double algbw_gbs;          /* BM_BUSBW: median algorithm bandwidth; NAN otherwise */
	double limit;              /* datasheet limit in unit; NAN when none */
	char limit_what[64];       /* where the limit comes from: "H200 SXM mem_bw 4800 GB/s" */
	double ratio;              /* value.median / limit; NAN when no limit */
	double min_ratio;          /* threshold applied; NAN when none */
	enum bench_status status;
	bool verified;
	double max_err;            /* of the verification, NAN when not reported */
	char message[160];         /* the error or skip reason; "" when OK */
	unsigned naux;
	struct bench_aux aux[BENCH_MAX_AUX];
	struct bench_telemetry tel;
	double gflops_per_watt;    /* flops per joule over the test, NAN when not known */
};

struct bench_gpu_info {
	int index;
	char name[96];             /* as the driver names it */
	char uuid[96];
	char pci_bus_id[32];
	char catalog_model[32];    /* catalog key, "" when not in the catalog */
};

struct bench_run {
	int schema_version;
	char gpuctl_version[16];
	char started_utc[32];      /* "2026-11-30T01:02:03Z" */
	char host[96];
	char driver_version[32];
	char cuda_version[16];
	char kernels_build[96];    /* the module's build_info */
	char mode[8];              /* "quick", "full" */
	char note[256];            /* free text kept with the run ("" none), e.g. a fixture's origin */
	double duration_s;
	unsigned ngpus;
	struct bench_gpu_info gpu[BENCH_MAX_GPUS];
	size_t n, cap;
	struct bench_result *r;
};

void bench_run_init(struct bench_run *run);
void bench_run_free(struct bench_run *run);
/* Appends a cleared result (gpu/peer -1, every figure NAN); NULL when out of memory. */
struct bench_result *bench_run_add(struct bench_run *run, const char *suite, const char *test, const char *variant);
void bench_result_clear(struct bench_result *r);

/*
 * Fills samples, time and value statistics from per-sample device times.
 * metric/unit pick the figure; scale as documented in struct bench_result.
 * Returns 0, or -1 (status BS_FAILED with a message) when there is no usable
 * sample or the counted work is missing for the metric.
 */
int bench_result_set_samples(struct bench_result *r, enum bench_metric metric, const double *samples_ms,
			     unsigned n, double bytes, double flops, double scale);
void bench_result_add_aux(struct bench_result *r, const char *name, double value, const char *unit);
/* NAN when absent. */
double bench_result_aux(const struct bench_result *r, const char *name);
void bench_result_fail(struct bench_result *r, enum bench_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

const char *bench_metric_name(enum bench_metric m);   /* "bandwidth", "tflops", ... */
const char *bench_metric_unit(enum bench_metric m);   /* default unit */
int bench_metric_parse(const char *s, enum bench_metric *out);
const char *bench_status_name(enum bench_status s);   /* "ok", "low", "failed", "skipped" */
int bench_status_parse(const char *s, enum bench_status *out);

/* Counts of results per status. */
void bench_count_status(const struct bench_run *run, size_t counts[BS_STATUS_COUNT]);

/* Finds the first result matching suite/test/variant (NULL or "" = any), on gpu
 * (-2 = any); with size_bytes == UINT64_MAX the largest size measured. */
const struct bench_result *bench_run_find(const struct bench_run *run, const char *suite, const char *test,
					  const char *variant, int gpu, uint64_t size_bytes);

#endif
