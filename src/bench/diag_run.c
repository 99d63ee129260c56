/* SPDX-License-Identifier: Apache-2.0 */
/*
 * diag_run.c - diag's engine (diag_run.h): level 1's checks of the snapshot
 * and the environment, and the active tests of levels 2-4 on the CUDA kernels
 * module (kernels/gpuctl_kernels.h) through its guarded table.
 */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag_run.h"
#include "core/gpu_select.h"
#include "core/stats.h"
#include "kernels_host/cuda_map.h"
#include "kernels_host/kmod.h"

#define JOB_MAX_RESULTS 32
#define MIB (1024ull * 1024ull)

/* ---- results ------------------------------------------------------------- */
__attribute__((format(printf, 9, 0))) static void result_vset(struct diag_result *r, const char *test, int gpu,
								int peer, enum health_verdict v, bool has_value,
								double value, const char *unit, const char *fmt,
								va_list ap)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->test, sizeof(r->test), "%s", test);
	r->gpu = gpu;
	r->peer = peer;
	r->verdict = v;
	r->has_value = has_value;
	r->value = value;
	snprintf(r->unit, sizeof(r->unit), "%s", unit);
	vsnprintf(r->detail, sizeof(r->detail), fmt, ap);
}

static bool results_append(struct diag_results *rs, const struct diag_result *r)
{
	if (rs->n >= DIAG_MAX_RESULTS) {
		rs->truncated = true;
		return false;
	}
	rs->r[rs->n++] = *r;
	return true;
}

void diag_add(struct diag_results *rs, const char *test, int gpu, int peer, enum health_verdict v, const char *fmt, ...)
{
	struct diag_result r;
	va_list ap;
	va_start(ap, fmt);
	result_vset(&r, test, gpu, peer, v, false, NAN, "", fmt, ap);
	va_end(ap);
	results_append(rs, &r);
}

enum health_verdict diag_results_verdict(const struct diag_results *rs)
{
	enum health_verdict v = HEALTH_NA;
	for (unsigned k = 0; k < rs->n; k++)
		if (rs->r[k].verdict > v)
			v = rs->r[k].verdict;
	return v;
}

/* ---- one GPU's (or pair's, or set's) tests -------------------------------- */
enum job_kind { JOB_LOCAL, JOB_COPY, JOB_MEMBW, JOB_P2P, JOB_NCCL };

struct job {
	enum job_kind kind;
	const struct gk_api *api;
	const struct diag_run_opts *o;
	const struct diag_hooks *h;
	const struct cat_gpu *cat;
	int gpu, cuda, peer, peer_cuda;  /* NVML indexes and CUDA ordinals */
	unsigned nvlinks;                 /* between gpu and peer (or the fewest of the set for NCCL) */
	bool p2p_expected;
	bool nccl_pair;                   /* one pair, run to find the culprit of a failed all-reduce */
	int ndevs;
	int devs[GK_MAX_DEVS], devs_nvml[GK_MAX_DEVS];
	bool hung;                        /* a call got no answer: the GPU is left alone from then on */
	unsigned nres;
	struct diag_result res[JOB_MAX_RESULTS];
};

static void job_add(struct job *j, const char *test, int gpu, int peer, enum health_verdict v, bool has_value,
		    double value, const char *unit, const char *fmt, ...) __attribute__((format(printf, 9, 10)));

static void job_add(struct job *j, const char *test, int gpu, int peer, enum health_verdict v, bool has_value,
		    double value, const char *unit, const char *fmt, ...)
{
	if (j->nres >= JOB_MAX_RESULTS)
		return;
	va_list ap;
	va_start(ap, fmt);
	result_vset(&j->res[j->nres++], test, gpu, peer, v, has_value, value, unit, fmt, ap);
	va_end(ap);
}

static void job_value(struct job *j, const char *test, int gpu, int peer, double value, const struct diag_threshold *th)
{
	struct diag_judgement jd;
	diag_judge(value, th, &jd);
	job_add(j, test, gpu, peer, jd.verdict, isfinite(value), value, th->unit, "%s", jd.detail);
}

static uint64_t deadline_in(const struct job *j, double timeout_s)
{
	return j->h->now_ns(j->h->arg) + (uint64_t)(timeout_s * j->o->timeout_scale * 1e9);
}

static struct gk_common common(const struct job *j, int device, double timeout_s)
{
	struct gk_common c = { .device = device, .iters = GK_MIN_SAMPLES };
	c.deadline_ns = deadline_in(j, timeout_s);
	return c;
}

static double median_ms(const struct gk_result *r)
{
	struct stats st;
	if (r->nsamples <= 0 || stats_compute(r->samples_ms, (size_t)r->nsamples, &st) != 0 || !(st.median > 0))
		return NAN;
	return st.median;
}

/* A call that did not succeed: its verdict and message. NA for "not on this
 * GPU"; a hung GPU is marked so that nothing more is asked of it. */
static void job_call_failed(struct job *j, const char *test, int gpu, int peer, int rc, const char *err)
{
	if (rc == GK_EUNSUPPORTED) {
		job_add(j, test, gpu, peer, HEALTH_NA, false, NAN, "", "not available here: %.200s", err);
		return;
	}
	if (rc == KGUARD_EHUNG) {
		j->hung = true;
		job_add(j, test, gpu, peer, HEALTH_FAIL, false, NAN, "", "%.120s: GPU %d is hung; its remaining tests are skipped",
			err, gpu);
		return;
	}
	if (rc == GK_ETIMEOUT) {
		job_add(j, test, gpu, peer, HEALTH_FAIL, false, NAN, "", "timed out (the GPU may be hung): %.180s", err);
		return;
	}
	job_add(j, test, gpu, peer, HEALTH_FAIL, false, NAN, "", "%s: %.200s", kmod_rc_name(rc), err);
}

/* Whether the GPU's next test may run after a call returned rc. */
static bool go_on(int rc)
{
	return rc != GK_ETIMEOUT && rc != KGUARD_EHUNG;
}

static const char *const pattern_names[] = { "memtest_walking_ones", "memtest_address", "memtest_random" };

static bool run_memtest(struct job *j, struct gk_result *r)
{
	int passes = j->o->level >= 4 ? 4 : 1;
	for (int p = GK_MT_WALKING_ONES; p <= GK_MT_RANDOM; p++) {
		struct gk_memtest_args a = { .c = common(j, j->cuda, 120.0 * passes), .pattern = p,
					     .fraction = j->o->level >= 4 ? 0.90 : 0.85, .flip_bits = j->o->flip_bits };
		a.c.iters = passes;
		memset(r, 0, sizeof(*r));
		int rc = j->api->memtest(&a, r);
		if (rc != GK_OK && rc != GK_EVERIFY) {
			job_call_failed(j, pattern_names[p], j->gpu, -1, rc, r->err);
			if (!go_on(rc))
				return false;
			continue;
		}
		struct diag_judgement jd;
		diag_judge_errors(r->verify.mismatches, r->verify.checked, "wrong 32-bit words", &jd);
		double tested = NAN; /* the module names the buffer size in aux "tested_bytes" */
		for (int k = 0; k < r->naux && k < GK_MAX_AUX; k++)
			if (strcmp(r->aux[k].name, "tested_bytes") == 0)
				tested = r->aux[k].value;
		double gib = tested / (double)(1024 * MIB);
		job_add(j, pattern_names[p], j->gpu, -1, jd.verdict, true, (double)r->verify.mismatches, "words",
			"%s over %.1f GiB x %d pass%s%s", jd.detail, gib, passes, passes == 1 ? "" : "es",
			j->o->flip_bits ? " (test-only --flip-bits was set)" : "");
	}
	return true;
}

static void run_mem_bw(struct job *j, struct gk_result *r)
{
	struct gk_mem_args a = { .c = common(j, j->cuda, 60), .op = GK_MEM_COPY, .bytes = 1024 * MIB };
	memset(r, 0, sizeof(*r));
	int rc = j->api->memory(&a, r);
	if (rc != GK_OK) {
		job_call_failed(j, "mem_bw", j->gpu, -1, rc, r->err);
		return;
	}
	struct diag_threshold th;
	diag_threshold_for(j->cat, DT_MEM_BW, 0, &th);
	job_value(j, "mem_bw", j->gpu, -1, r->bytes / median_ms(r) / 1e6, &th);
}

static bool run_stress(struct job *j, struct gk_result *r)
{
	static const struct { int prec; enum diag_test t; } ps[] = {
		{ GK_FP32, DT_GEMM_FP32 }, { GK_TF32, DT_GEMM_TF32 }, { GK_BF16, DT_GEMM_BF16 }, { GK_FP8_E4M3, DT_GEMM_FP8 },
	};
	double seconds = j->o->level >= 4 ? 60 : 15;
	for (size_t k = 0; k < sizeof(ps) / sizeof(ps[0]); k++) {
		const char *name = diag_test_name(ps[k].t);
		struct gk_stress_args a = { .c = common(j, j->cuda, seconds + 60), .prec = ps[k].prec, .seconds = seconds };
		memset(r, 0, sizeof(*r));
		int rc = j->api->stress(&a, r);
		if (rc != GK_OK && rc != GK_EVERIFY) {
			job_call_failed(j, name, j->gpu, -1, rc, r->err);
			if (!go_on(rc))
				return false;
			continue;
		}
		if (rc == GK_EVERIFY || r->verify.mismatches || r->verify.nans) {
			job_add(j, name, j->gpu, -1, HEALTH_FAIL, true, (double)(r->verify.mismatches + r->verify.nans),
				"errors", "%llu miscompares, %llu NaN/Inf in %llu elements checked (threshold 0)%s%.120s",
				(unsigned long long)r->verify.mismatches, (unsigned long long)r->verify.nans,
				(unsigned long long)r->verify.checked, r->err[0] ? ": " : "", r->err);
			continue;
		}
		struct diag_threshold th;
		diag_threshold_for(j->cat, ps[k].t, 0, &th);
		job_value(j, name, j->gpu, -1, r->flops / median_ms(r) / 1e9, &th);
	}
	return true;
}

/* Level 4: minutes of GEMM load; the throughput of the last step over the first. */
static void run_sustained(struct job *j, struct gk_result *r)
{
	struct gk_load_args a = { .c = common(j, j->cuda, 60), .prec = GK_BF16 };
	struct gk_load *l = NULL;
	char err[GK_ERR_LEN] = "";
	int rc = j->api->load_open(&a, &l, err, sizeof(err));
	if (rc != GK_OK) {
		job_call_failed(j, "sustained", j->gpu, -1, rc, err);
		return;
	}
	const int steps = 30; /* 30 x 10 s */
	double first = NAN, last = NAN;
	for (int s = 0; s < steps; s++) {
		memset(r, 0, sizeof(*r));
		rc = j->api->load_step(l, 10.0, deadline_in(j, 70.0), r);
		if (rc != GK_OK) {
			job_call_failed(j, "sustained", j->gpu, -1, rc, r->err);
			if (go_on(rc))
				j->api->load_close(l);
			/* else the GPU may still be busy with it: the load stays open */
			return;
		}
		double tflops = r->flops / median_ms(r) / 1e9;
		if (s == 0)
			first = tflops;
		last = tflops;
	}
	j->api->load_close(l);
	struct diag_threshold th;
	diag_threshold_for(j->cat, DT_SUSTAINED, 0, &th);
	struct diag_judgement jd;
	diag_judge(last / first, &th, &jd);
	job_add(j, "sustained", j->gpu, -1, jd.verdict, true, last / first, "",
		"BF16 GEMM %.0f TFLOP/s at the start, %.0f after %d s: %s", first, last, steps * 10, jd.detail);
}

/* One pinned 256 MiB copy in one direction: its GB/s, or NAN with the failure
 * recorded (*stop: the GPU's remaining tests must not run). */
static double copy_once(struct job *j, struct gk_result *r, int dir, const char *name, bool *stop)
{
	struct gk_copy_args a = { .c = common(j, j->cuda, 60), .dir = dir, .host_mem = GK_PINNED, .engine = GK_CE,
				  .async = true, .bytes = 256 * MIB };
	memset(r, 0, sizeof(*r));
	int rc = j->api->copy(&a, r);
	if (rc != GK_OK) {
		job_call_failed(j, name, j->gpu, -1, rc, r->err);
		*stop = !go_on(rc);
		return NAN;
	}
	return r->bytes / median_ms(r) / 1e6;
}

/* PCIe copies. For about half a second after a process frees a large part of
 * the GPU's memory, the driver clears that memory on the copy engine that
 * host-to-device copies use, and they run at half rate (measured on an H200:
 * 29.6 GB/s instead of 55.4 for 0.5 s after 118 GiB was freed; bench/RESULTS.md,
 * issue 31). diag's own memory test therefore runs after this; a figure under
 * its threshold is measured again DIAG_RETAKE_NS later (the job that ended
 * just before a Slurm epilog freed its memory too), and the retake is judged. */
#define DIAG_RETAKE_NS 1000000000ull
static void run_copy(struct job *j, struct gk_result *r)
{
	for (int dir = GK_H2D; dir <= GK_D2H; dir++) {
		const char *name = dir == GK_H2D ? "pcie_h2d" : "pcie_d2h";
		bool stop = false;
		double gbs = copy_once(j, r, dir, name, &stop);
		if (stop)
			return;
		if (isnan(gbs))
			continue;
		struct diag_threshold th;
		diag_threshold_for(j->cat, dir == GK_H2D ? DT_PCIE_H2D : DT_PCIE_D2H, 0, &th);
		struct diag_judgement jd;
		diag_judge(gbs, &th, &jd);
		if (jd.verdict != HEALTH_FAIL || !j->h->sleep_ns) {
			job_add(j, name, j->gpu, -1, jd.verdict, true, gbs, th.unit, "%s", jd.detail);
			continue;
		}
		j->h->sleep_ns(j->h->arg, DIAG_RETAKE_NS);
		double again = copy_once(j, r, dir, name, &stop);
		if (stop)
			return;
		if (isnan(again))
			continue;
		diag_judge(again, &th, &jd);
		job_add(j, name, j->gpu, -1, jd.verdict, true, again, th.unit, "%s (retaken 1 s after a first %.4g %s)",
			jd.detail, gbs, th.unit);
	}
}

static void run_p2p(struct job *j, struct gk_result *r)
{
	struct gk_p2p_args a = { .c = common(j, j->cuda, 60), .peer = j->peer_cuda, .mode = GK_P2P_CE, .bytes = 256 * MIB };
	memset(r, 0, sizeof(*r));
	int rc = j->api->p2p(&a, r);
	if (rc == GK_EUNSUPPORTED && !j->p2p_expected) {
		job_add(j, "p2p", j->gpu, j->peer, HEALTH_NA, false, NAN, "", "no peer access on this path (as the topology says)");
		return;
	}
	if (rc != GK_OK) {
		job_call_failed(j, "p2p", j->gpu, j->peer, rc, r->err);
		return;
	}
	double gbs = r->bytes / median_ms(r) / 1e6;
	if (j->o->level < 3) { /* level 2: reachability, data verified */
		job_add(j, "p2p", j->gpu, j->peer, HEALTH_PASS, true, gbs, "GB/s", "reachable, data verified (%.0f GB/s)", gbs);
		return;
	}
	struct diag_threshold th;
	diag_threshold_for(j->cat, DT_P2P, j->nvlinks, &th);
	job_value(j, "p2p", j->gpu, j->peer, gbs, &th);
}

static void run_nccl(struct job *j, struct gk_result *r)
{
	struct gk_nccl_args a = { .c = common(j, 0, 120), .op = GK_ALL_REDUCE, .ndevs = j->ndevs, .bytes = 1024 * MIB };
	memcpy(a.devs, j->devs, sizeof(a.devs));
	memset(r, 0, sizeof(*r));
	int rc = j->api->nccl(&a, r);
	const char *name = j->nccl_pair ? "nccl_pair" : "nccl_all_reduce";
	char who[64];
	if (j->ndevs == 2)
		snprintf(who, sizeof(who), "pair %d-%d", j->devs_nvml[0], j->devs_nvml[1]);
	else
		snprintf(who, sizeof(who), "%d GPUs", j->ndevs);
	if (rc == KGUARD_EHUNG) { /* which GPU of the set is not known: the pairs follow */
		j->hung = true;
		job_add(j, name, j->gpu, j->peer, HEALTH_FAIL, false, NAN, "", "all-reduce over %s hung: %.160s", who, r->err);
		return;
	}
	if (rc != GK_OK) {
		job_call_failed(j, name, j->gpu, j->peer, rc, r->err);
		return;
	}
	double busbw = r->bytes / median_ms(r) / 1e6 * kmod_busbw_factor(GK_ALL_REDUCE, j->ndevs);
	struct diag_threshold th;
	diag_threshold_for(j->cat, DT_NCCL_ALLREDUCE, j->nvlinks, &th);
	struct diag_judgement jd;
	diag_judge(busbw, &th, &jd);
	job_add(j, name, j->gpu, j->peer, jd.verdict, true, busbw, "GB/s", "%s, 1 GiB, bus bandwidth: %s", who, jd.detail);
}

static void job_run(struct job *j)
{
	struct gk_result *r = malloc(sizeof(*r));
	if (!r) {
		job_add(j, "diag", j->gpu, -1, HEALTH_FAIL, false, NAN, "", "out of memory");
		return;
	}
	switch (j->kind) {
	case JOB_LOCAL:
		if (run_memtest(j, r) && j->o->level >= 3 && run_stress(j, r) && j->o->level >= 4)
			run_sustained(j, r);
		break;
	case JOB_COPY: run_copy(j, r); break;
	case JOB_MEMBW: run_mem_bw(j, r); break;
	case JOB_P2P: run_p2p(j, r); break;
	case JOB_NCCL: run_nccl(j, r); break;
	}
	free(r);
}

static void *job_thread(void *arg)
{
	job_run(arg);
	return NULL;
}

/* Moves the job's results to out. Returns false when its GPU hung. */
static bool job_collect(struct job *j, struct diag_results *out)
{
	for (unsigned i = 0; i < j->nres; i++)
		if (!results_append(out, &j->res[i]))
			break;
	return !j->hung;
}

/* Runs a job here and frees it. Returns false when its GPU hung (or no memory). */
static bool run_one(struct job *j, struct diag_results *out)
{
	if (!j)
		return true;
	job_run(j);
	bool ok = job_collect(j, out);
	free(j);
	return ok;
}

/* ---- mapping NVML GPUs to CUDA ordinals ----------------------------------- */
/* cuda[i] = CUDA ordinal of NVML GPU i, -1 when CUDA does not see it. */
static int map_cuda(const struct gk_api *api, const struct snapshot *snap, int *cuda, char *err, size_t errlen)
{
	int count = 0;
	for (unsigned i = 0; i < snap->n; i++)
		cuda[i] = -1;
	if (api->device_count(&count, err, errlen) != GK_OK)
		return -1;
	const char *bus_ids[GPU_MAX_GPUS];
	for (unsigned i = 0; i < snap->n; i++)
		bus_ids[i] = VAL_HAS(snap->gpu[i].st.pci_bus_id) ? snap->gpu[i].st.pci_bus_id.s : NULL;
	cuda_map(api, count, bus_ids, snap->n, cuda);
	return 0;
}

/* ---- level 1 ------------------------------------------------------------- */
static void cuda_context_check(const struct gk_api *api, const struct snapshot *snap, const struct diag_run_opts *o,
			       struct diag_results *out)
{
	int cuda[GPU_MAX_GPUS];
	char err[256] = "";
	if (map_cuda(api, snap, cuda, err, sizeof(err)) != 0) {
		diag_add(out, "cuda_context", -1, -1, HEALTH_FAIL, "CUDA finds no GPU: %s", err);
		return;
	}
	for (unsigned i = 0; i < snap->n; i++) {
		if (!gpu_select_has(o->mask, i))
			continue;
		if (cuda[i] < 0) {
			diag_add(out, "cuda_context", (int)i, -1, HEALTH_FAIL,
				 "CUDA does not see this GPU (check CUDA_VISIBLE_DEVICES and the driver)");
			continue;
		}
		struct gk_device_info di;
		memset(&di, 0, sizeof(di));
		if (api->device_info(cuda[i], &di) != GK_OK || di.mem_total_bytes == 0)
			diag_add(out, "cuda_context", (int)i, -1, HEALTH_FAIL, "cannot create a context: %.200s", di.err);
		else
			diag_add(out, "cuda_context", (int)i, -1, HEALTH_PASS, "CUDA device %d, context made, %.1f GiB free",
				 cuda[i], (double)di.mem_free_bytes / (double)(1024 * MIB));
	}
	/* the driver/CUDA mismatch: the module's runtime against what the driver supports */
	for (unsigned i = 0; i < snap->n; i++) {
		struct gk_device_info di;
		memset(&di, 0, sizeof(di));
		if (cuda[i] < 0 || api->device_info(cuda[i], &di) != GK_OK || !di.driver_version || !di.runtime_version)
			continue;
		int d = di.driver_version, r = di.runtime_version;
		diag_add(out, "cuda_version", -1, -1, d >= r ? HEALTH_PASS : HEALTH_FAIL,
			 "driver supports CUDA %d.%d, the kernels module's runtime is %d.%d%s", d / 1000, d % 1000 / 10,
			 r / 1000, r % 1000 / 10, d >= r ? "" : ": upgrade the driver");
		break;
	}
}

void diag_software_checks(const struct snapshot *s, const struct diag_run_opts *o, const struct diag_module *km,
			  const struct diag_env *env, struct diag_results *out)
{
	if (s->sys.simulated)
		diag_add(out, "driver", -1, -1, HEALTH_PASS, "simulated backend answered for %u GPUs (SIMULATED)", s->n);
	else
		diag_add(out, "driver", -1, -1, HEALTH_PASS, "NVML answered for %u GPUs, driver %s", s->n,
			 VAL_HAS(s->sys.driver_version) ? s->sys.driver_version.s : "version unknown");
	if (s->sys.simulated)
		diag_add(out, "cuda_context", -1, -1, HEALTH_NA, "not possible on a simulated server");
	else if (!km->api)
		diag_add(out, "cuda_context", -1, -1, km->absent ? HEALTH_NA : HEALTH_FAIL, "%s", km->err);
	else
		cuda_context_check(km->api, s, o, out);
	for (unsigned i = 0; i < s->n; i++) {
		if (!gpu_select_has(o->mask, i))
			continue;
		const struct gpu_view *g = &s->gpu[i];
		if (!VAL_HAS(g->st.persistence_mode))
			diag_add(out, "persistence", (int)i, -1, HEALTH_NA, "persistence mode: %s",
				 val_status_name(g->st.persistence_mode.st));
		else
			diag_add(out, "persistence", (int)i, -1, g->st.persistence_mode.v ? HEALTH_PASS : HEALTH_WARN,
				 "persistence mode %s", g->st.persistence_mode.v ? "on" : "off (nvidia-smi -pm 1)");
		char pids[120] = "";
		unsigned nc = 0;
		for (unsigned k = 0; k < g->nproc && k < GPU_MAX_PROCS; k++) {
			if (g->procs[k].type != 'C')
				continue;
			size_t len = strlen(pids);
			if (len < sizeof(pids) - 24)
				snprintf(pids + len, sizeof(pids) - len, "%s%u (%.12s)", nc ? ", " : "", g->procs[k].pid,
					 g->procs[k].name);
			nc++;
		}
		if (nc)
			diag_add(out, "compute_processes", (int)i, -1, HEALTH_WARN,
				 "%u compute process%s running: %s; active tests would share the GPU", nc, nc == 1 ? "" : "es",
				 pids);
		else
			diag_add(out, "compute_processes", (int)i, -1, HEALTH_PASS, "no compute process running");
	}
	struct diag_check checks[8];
	unsigned n = diag_env_check(env, s, checks, 8);
	for (unsigned k = 0; k < n; k++)
		diag_add(out, checks[k].name, -1, -1, checks[k].verdict, "%s", checks[k].detail);
}

/* ---- levels 2-4 ---------------------------------------------------------- */
static const struct cat_gpu *model_of(const struct catalog *cat, const struct gpu_view *g)
{
	const struct cat_gpu *m = NULL;
	if (VAL_HAS(g->st.catalog_model))
		m = catalog_find(cat, g->st.catalog_model.s);
	if (!m && VAL_HAS(g->st.name))
		m = catalog_match(cat, g->st.name.s, VAL_HAS(g->st.mem_total_bytes) ? g->st.mem_total_bytes.v : 0);
	return m;
}

static struct job *job_new(enum job_kind kind, const struct gk_api *api, const struct diag_hooks *h,
			   const struct diag_run_opts *o, const struct cat_gpu *m, int gpu, int cuda)
{
	struct job *j = calloc(1, sizeof(*j));
	if (j) {
		j->kind = kind;
		j->api = api;
		j->h = h;
		j->o = o;
		j->cat = m;
		j->gpu = gpu;
		j->cuda = cuda;
		j->peer = j->peer_cuda = -1;
	}
	return j;
}

static unsigned nvlinks_between(const struct snapshot *snap, unsigned a, unsigned b)
{
	const struct gpu_link *l = &snap->link[a][b];
	return l->kind == LINK_NVLINK ? l->nvlinks : 0;
}

/* 3. device-local tests on every usable GPU at once, a thread each */
static void phase_local(const struct gk_api *api, const struct diag_hooks *h, const struct snapshot *snap,
			const struct diag_run_opts *o, const struct cat_gpu *const *model, const int *cuda, bool *usable,
			struct diag_results *out)
{
	struct job *local[GPU_MAX_GPUS] = { NULL };
	pthread_t tid[GPU_MAX_GPUS];
	bool threaded[GPU_MAX_GPUS] = { false };
	for (unsigned i = 0; i < snap->n; i++) {
		if (!usable[i] || !(local[i] = job_new(JOB_LOCAL, api, h, o, model[i], (int)i, cuda[i])))
			continue;
		threaded[i] = pthread_create(&tid[i], NULL, job_thread, local[i]) == 0;
		if (!threaded[i])
			job_run(local[i]); /* no thread to be had: run it here */
	}
	for (unsigned i = 0; i < snap->n; i++) {
		if (!local[i])
			continue;
		if (threaded[i])
			pthread_join(tid[i], NULL); /* every call is guarded: each comes back */
		usable[i] = job_collect(local[i], out);
		free(local[i]);
	}
}

/* 4. NCCL all-reduce over all usable GPUs; on failure, pair by pair to name the culprit */
static void phase_nccl(const struct gk_api *api, const struct diag_hooks *h, const struct snapshot *snap,
		       const struct diag_run_opts *o, const struct cat_gpu *const *model, const int *cuda,
		       const bool *usable, unsigned min_links, struct diag_results *out)
{
	unsigned nsel = 0;
	for (unsigned i = 0; i < snap->n; i++)
		nsel += usable[i];
	struct job *nj = NULL;
	if (o->level < 3 || nsel < 2 || nsel > GK_MAX_DEVS || !(nj = job_new(JOB_NCCL, api, h, o, NULL, -1, 0)))
		return;
	for (unsigned i = 0; i < snap->n; i++)
		if (usable[i]) {
			if (!nj->cat)
				nj->cat = model[i];
			nj->devs_nvml[nj->ndevs] = (int)i;
			nj->devs[nj->ndevs++] = cuda[i];
		}
	nj->nvlinks = min_links == UINT32_MAX ? 0 : min_links;
	int devs[GK_MAX_DEVS], devs_nvml[GK_MAX_DEVS], n = nj->ndevs;
	memcpy(devs, nj->devs, sizeof(devs));
	memcpy(devs_nvml, nj->devs_nvml, sizeof(devs_nvml));
	unsigned before = out->n;
	run_one(nj, out);
	bool failed = out->n > before && out->r[out->n - 1].verdict == HEALTH_FAIL;
	for (int a = 0; failed && n > 2 && a < n; a++)
		for (int b = a + 1; b < n; b++) {
			struct job *pj = job_new(JOB_NCCL, api, h, o, model[devs_nvml[a]], devs_nvml[a], 0);
			if (!pj)
				continue;
			pj->peer = devs_nvml[b];
			pj->nccl_pair = true;
			pj->ndevs = 2;
			pj->devs[0] = devs[a];
			pj->devs[1] = devs[b];
			pj->devs_nvml[0] = devs_nvml[a];
			pj->devs_nvml[1] = devs_nvml[b];
			pj->nvlinks = nvlinks_between(snap, (unsigned)devs_nvml[a], (unsigned)devs_nvml[b]);
			run_one(pj, out);
		}
}

int diag_run_gpu_tests(const struct gk_api *api, const struct diag_hooks *h, const struct snapshot *snap,
		       const struct catalog *cat, const struct diag_run_opts *o, struct diag_results *out, char *err,
		       size_t errlen)
{
	if (!api || !h || !h->now_ns) {
		snprintf(err, errlen, "internal error: no kernels module or clock");
		return -1;
	}
	int cuda[GPU_MAX_GPUS];
	if (map_cuda(api, snap, cuda, err, errlen) != 0)
		return -1;
	const struct cat_gpu *model[GPU_MAX_GPUS];
	bool usable[GPU_MAX_GPUS] = { false };
	for (unsigned i = 0; i < snap->n; i++) {
		model[i] = model_of(cat, &snap->gpu[i]);
		if (!gpu_select_has(o->mask, i))
			continue;
		if (cuda[i] < 0)
			diag_add(out, "cuda_visible", (int)i, -1, HEALTH_FAIL, "CUDA does not see this GPU: not tested");
		else if (!model[i])
			diag_add(out, "catalog", (int)i, -1, HEALTH_NA, "GPU model not in the catalog: no thresholds");
		usable[i] = cuda[i] >= 0;
	}
	/* 1. PCIe copies and device-memory bandwidth, one GPU at a time: bandwidth
	 * measured while other GPUs run their tests from the same process came out
	 * 12% under the same kernel alone (3.53 vs 4.01 TB/s on an H200). Before
	 * the memory test: its free of 85% of the memory halves H2D copies for
	 * about half a second after it (run_copy) */
	for (unsigned i = 0; i < snap->n; i++) {
		if (usable[i])
			usable[i] = run_one(job_new(JOB_COPY, api, h, o, model[i], (int)i, cuda[i]), out);
		if (usable[i] && o->level >= 3)
			usable[i] = run_one(job_new(JOB_MEMBW, api, h, o, model[i], (int)i, cuda[i]), out);
	}
	/* 2. P2P for every ordered pair (before the memory test too: a peer copy
	 * writes the peer's memory on a copy engine) */
	unsigned min_links = UINT32_MAX;
	for (unsigned a = 0; a < snap->n; a++) {
		for (unsigned b = 0; b < snap->n; b++) {
			if (a == b || !usable[a] || !usable[b])
				continue;
			unsigned links = nvlinks_between(snap, a, b);
			if (links < min_links)
				min_links = links;
			struct job *j = job_new(JOB_P2P, api, h, o, model[a], (int)a, cuda[a]);
			if (!j)
				continue;
			j->peer = (int)b;
			j->peer_cuda = cuda[b];
			j->nvlinks = links;
			j->p2p_expected = snap->link[a][b].p2p_supported;
			if (!run_one(j, out))
				usable[a] = usable[b] = false;
		}
	}
	/* 3. the device-local tests, all GPUs at once; 4. NCCL */
	phase_local(api, h, snap, o, model, cuda, usable, out);
	phase_nccl(api, h, snap, o, model, cuda, usable, min_links, out);
	return 0;
}

/* A GPU much slower than the others at the same test is a WARN. */
void diag_run_variation(const struct snapshot *s, const struct diag_run_opts *o, struct diag_results *out)
{
	static const char *const tests[] = { "mem_bw", "gemm_fp32", "gemm_tf32", "gemm_bf16", "gemm_fp8", "pcie_h2d",
					     "pcie_d2h" };
	for (size_t t = 0; t < sizeof(tests) / sizeof(tests[0]); t++) {
		double v[GPU_MAX_GPUS];
		bool valid[GPU_MAX_GPUS] = { false }, slow[GPU_MAX_GPUS];
		double below[GPU_MAX_GPUS];
		for (unsigned k = 0; k < out->n; k++) {
			const struct diag_result *r = &out->r[k];
			if (strcmp(r->test, tests[t]) == 0 && r->has_value && r->gpu >= 0 && r->gpu < GPU_MAX_GPUS &&
			    r->verdict == HEALTH_PASS) {
				v[r->gpu] = r->value;
				valid[r->gpu] = true;
			}
		}
		if (diag_variation(v, valid, s->n, o->variation_pct, slow, below) == 0)
			continue;
		for (unsigned i = 0; i < s->n; i++)
			if (slow[i])
				diag_add(out, "variation", (int)i, -1, HEALTH_WARN,
					 "%s: %.4g is %.1f%% below the other GPUs' median (limit %.0f%%)", tests[t], v[i],
					 below[i], o->variation_pct);
	}
}
