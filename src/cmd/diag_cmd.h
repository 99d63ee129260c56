/*
 * diag_cmd.h - what diag.c (options, level 1, output) and diag_gpu.c (the
 * active tests of levels 2-4 on the CUDA kernels module) share.
 */
#ifndef GPUCTL_DIAG_CMD_H
#define GPUCTL_DIAG_CMD_H

#include <stdbool.h>
#include <stdint.h>

#include "cmd.h"
#include "../core/catalog.h"
#include "../health/diag_eval.h"
#include "../../kernels/gpuctl_kernels.h"

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
	bool truncated;
	struct diag_result r[DIAG_MAX_RESULTS];
};

void diag_add(struct diag_results *rs, const char *test, int gpu, int peer, enum health_verdict v, const char *fmt,
	      ...) __attribute__((format(printf, 6, 7)));

struct diag_gpu_opts {
	int level;                 /* 2, 3 or 4 */
	uint64_t mask;             /* selected GPUs (NVML indexes) */
	uint64_t flip_bits;        /* TEST ONLY: bits the memory test flips, so that it must FAIL */
	double timeout_scale;      /* multiplies every test's timeout (default 1) */
	double grace_s;            /* past a call's deadline, when its GPU counts as hung (0: 20 s) */
	double variation_pct;      /* a GPU this much slower than the others' median is a WARN */
	const char *kernels_path;  /* --kernels, or NULL */
	const char *kernels_env;   /* $GPUCTL_KERNELS, or NULL */
};

/* Runs the active tests on the real GPUs of snap. Returns EXIT_OK when the
 * tests ran (their verdicts are in out), or EXIT_UNAVAILABLE after printing
 * one line when they cannot run at all (no kernels module, no CUDA). */
int diag_gpu_tests(struct cmd_ctx *ctx, const struct snapshot *snap, const struct catalog *cat,
		   const struct diag_gpu_opts *o, struct diag_results *out);

/* The tests themselves, on a loaded module's table (tests pass a fake one).
 * Returns 0, or -1 with a message when CUDA sees no GPU at all. */
int diag_gpu_run(const struct gk_api *api, const struct snapshot *snap, const struct catalog *cat,
		 const struct diag_gpu_opts *o, struct diag_results *out, char *err, size_t errlen);

/* Level 1's "CUDA context on every GPU": through the kernels module. Adds one
 * result per selected GPU (NA with the reason when the module is missing). */
void diag_cuda_context_check(const struct snapshot *snap, const struct diag_gpu_opts *o, struct diag_results *out);

#endif
