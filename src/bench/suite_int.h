/* SPDX-License-Identifier: Apache-2.0 */
/* suite_int.h - shared by the suite runners (suite*.c); not a public header. */
#ifndef GPUCTL_BENCH_SUITE_INT_H
#define GPUCTL_BENCH_SUITE_INT_H

#include "suite.h"
#include "kernels_host/kguard.h"

struct bench_ctx {
	const struct gk_api *api;
	const struct bench_plan *plan;
	const struct bench_hooks *hooks;
	struct bench_run *run;
	bool hung[GK_MAX_DEVS];      /* a GPU that timed out: later tests on it are skipped */
	bool oom;                    /* bench_run_add failed */
};

/* A gk_common for selected GPU slot i (CUDA ordinal, samples, deadline, seed). */
struct gk_common bench_common(struct bench_ctx *c, int slot);
/* A new result for GPU slot (or -1); NULL when out of memory. */
struct bench_result *bench_new(struct bench_ctx *c, const char *suite, const char *test, const char *variant, int slot);
/* A result for slot with its telemetry begun, or NULL: out of memory (c->oom),
 * or the GPU hung earlier (the result is recorded as skipped). */
struct bench_result *bench_start(struct bench_ctx *c, const char *suite, const char *test, const char *variant, int slot);
/* Telemetry around a call on slots[0..n). */
void bench_tel_begin(struct bench_ctx *c, const int *slots, unsigned n);
/* Turns a module answer into r: samples and figure on success, FAILED/SKIPPED
 * otherwise; ends telemetry and reports the result. Returns rc. */
int bench_finish(struct bench_ctx *c, struct bench_result *r, int rc, const struct gk_result *g,
		 enum bench_metric metric, double scale, const int *slots, unsigned nslots);
/* Latency entries: samples are whole pointer chases of aux "loads" dependent
 * loads each (else: aux "latency_ns" is the median's ns per load); the scale
 * turns each sample (ms) into ns per load. NAN when the call failed or gave no
 * latency. */
double bench_latency_scale(int rc, const struct gk_result *g);
/* Sizes to sweep: the plan's --size list, or the defaults given. */
unsigned bench_sizes(const struct bench_ctx *c, const uint64_t *dflt, unsigned ndflt, uint64_t *out);

/* One runner per row of BENCH_SUITE_TABLE (suite.h): bench_suite_copy ... */
#define BENCH_SUITE_RUNNER_DECL(id, name) void bench_suite_##name(struct bench_ctx *c);
BENCH_SUITE_TABLE(BENCH_SUITE_RUNNER_DECL)
#undef BENCH_SUITE_RUNNER_DECL

#endif
