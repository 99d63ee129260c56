/* SPDX-License-Identifier: Apache-2.0 */
/*
 * diag_run.h - diag's engine: the checks of `gpuctl diag` levels 1-4 on a
 * snapshot and the CUDA kernels module, into a list of results. The command
 * (src/cmd/diag.c) reads options and the environment, loads the module and
 * prints; this never prints, never reads the environment, and reads the clock
 * only through its hooks (as the bench runner, suite.h).
 *
 * The module is called through a guarded table (kernels_host/kguard.h): a call
 * that does not come back after its deadline is KGUARD_EHUNG, that test FAILs
 * ("GPU N is hung"), the GPU's remaining tests are skipped and the others go on.
 *
 * Order: one at a time so that they do not share links, PCIe copies and
 * memory bandwidth per GPU and P2P per ordered pair; then the device-local
 * tests (memory test, GEMM stress, sustained load) on all GPUs at once, a
 * thread each (after the bandwidth tests: the memory test frees most of the
 * GPU's memory, and the driver clearing it halves host-to-device copies for
 * about half a second); then the NCCL all-reduce and, when it fails, the
 * all-reduce pair by pair to name the culprit. A PCIe figure under its
 * threshold is measured once more a second later (hooks->sleep_ns).
 */
#ifndef GPUCTL_DIAG_RUN_H
#define GPUCTL_DIAG_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/catalog.h"
#include "health/diag_eval.h"
#include "kernels_host/kguard.h"

#define DIAG_MAX_RESULTS 1024

struct diag_result {
	char test[28];             /* "memtest_walking_ones", "gemm_bf16", "p2p" ... */
	int gpu, peer;             /* NVML indexes; -1 when not about one GPU / pair */
	enum health_verdict verdict;
	bool has_value;
	double value;              /* the measured figure, in unit */
	char unit[12];
	char detail[240];          /* measured value and threshold, or why it failed */
};

struct diag_results {
	unsigned n;
	bool truncated;            /* more than DIAG_MAX_RESULTS: the rest were left out */
	struct diag_result r[DIAG_MAX_RESULTS];
};

/* Appends a result without a value. */
void diag_add(struct diag_results *rs, const char *test, int gpu, int peer, enum health_verdict v, const char *fmt,
	      ...) __attribute__((format(printf, 6, 7)));
/* The worst verdict of the list (HEALTH_NA when empty). */
enum health_verdict diag_results_verdict(const struct diag_results *rs);

struct diag_run_opts {
	int level;                 /* 1 to 4 */
	uint64_t mask;             /* selected GPUs (NVML indexes) */
	uint64_t flip_bits;        /* TEST ONLY: bits the memory test flips, so that it must FAIL */
	double timeout_scale;      /* multiplies every test's timeout (default 1) */
	double variation_pct;      /* a GPU this much slower than the others' median is a WARN */
};

struct diag_hooks {
	void *arg;
	/* CLOCK_MONOTONIC in ns (the module's deadlines are on that clock). Required. */
	uint64_t (*now_ns)(void *arg);
	/* Waits ns (before a PCIe retake). NULL: no retake. */
	void (*sleep_ns)(void *arg, uint64_t ns);
};

/* The kernels module as the command found it. */
struct diag_module {
	const struct gk_api *api;  /* guarded (kguard_wrap); NULL: not loaded */
	const char *err;           /* why not, one line */
	bool absent;               /* no module file at all (built without CUDA): NA, not FAIL */
};

/* Level 1: the driver, a CUDA context on every selected GPU (through the
 * module; not on a simulated server), persistence mode, compute processes,
 * and the CUDA/NCCL environment variables (the command reads them). */
void diag_software_checks(const struct snapshot *snap, const struct diag_run_opts *o, const struct diag_module *km,
			  const struct diag_env *env, struct diag_results *out);

/* Levels 2-4 on api (a guarded table; tests pass a fake one wrapped). Returns
 * 0, or -1 with a message when CUDA sees no GPU at all. */
int diag_run_gpu_tests(const struct gk_api *api, const struct diag_hooks *hooks, const struct snapshot *snap,
		       const struct catalog *cat, const struct diag_run_opts *o, struct diag_results *out, char *err,
		       size_t errlen);

/* Level 3+: a GPU much slower than the others at the same test is a WARN. */
void diag_run_variation(const struct snapshot *snap, const struct diag_run_opts *o, struct diag_results *out);

#endif
