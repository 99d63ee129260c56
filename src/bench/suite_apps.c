/* SPDX-License-Identifier: Apache-2.0 */
/*
 * suite_apps.c - application proxies against the host CPU (apps), the
 * sustained load with telemetry each second (sustained), and the host's own
 * memory copy bandwidth (host, the CPU side of the guide's claim C6).
 */
#include "suite_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels_host/cpu_ref.h"

void bench_suite_apps(struct bench_ctx *c)
{
	/* one GPU is enough for a speed-up over the CPU: the first selected */
	int slot = 0;
	bool full = c->plan->full;
	int threads = c->plan->cpu_threads > 0 ? c->plan->cpu_threads : 1;
	for (int which = 0; which < 3; which++) {
		static const char *const names[] = { "spmv", "lj", "bvh" };
		struct bench_result *r = bench_start(c, "apps", names[which], "", slot);
		if (!r) {
			if (c->oom)
				return;
			continue;
		}
		struct gk_common com = bench_common(c, slot);
		struct gk_result g;
		struct kref_app_run out = { 0 };
		memset(&g, 0, sizeof(g));
		int rc;
		enum bench_metric m = BM_GFLOPS;
		double scale = NAN;
		if (which == 0) {
			int rows = full ? 4 << 20 : 2 << 20;
			bench_result_add_aux(r, "rows", rows, "");
			rc = kref_run_spmv(c->api, &com, rows, 27, threads, c->hooks->cpu_now_s, &g, &out);
		} else if (which == 1) {
			int natoms = full ? 64 << 10 : 32 << 10; /* the CPU side grows fast */
			bench_result_add_aux(r, "atoms", natoms, "");
			rc = kref_run_lj(c->api, &com, natoms, threads, c->hooks->cpu_now_s, &g, &out);
		} else {
			int ntris = full ? 1 << 20 : 128 << 10, nrays = full ? 2 << 20 : 1 << 20;
			bench_result_add_aux(r, "triangles", ntris, "");
			bench_result_add_aux(r, "rays", nrays, "");
			m = BM_RATE;
			scale = nrays;
			snprintf(r->unit, sizeof(r->unit), "Mrays/s");
			rc = kref_run_bvh(c->api, &com, ntris, nrays, threads, c->hooks->cpu_now_s, &g, &out);
		}
		bench_finish(c, r, rc, &g, m, scale, &slot, 1);
	}
}

/* Median of the first or last tenth of v[0..n) (at least one value). */
static double tenth_median(const double *v, unsigned n, bool last)
{
	unsigned k = n / 10 ? n / 10 : 1;
	struct stats st;
	if (stats_compute(last ? v + (n - k) : v, k, &st) != 0)
		return NAN;
	return st.median;
}

static void sustained_one(struct bench_ctx *c, int slot)
{
	struct bench_result *r = bench_new(c, "sustained", "gemm", "bf16", slot);
	if (!r)
		return;
	if (!c->api->load_open || !c->api->load_step || !c->api->load_close) {
		bench_result_fail(r, BS_SKIPPED, "the kernels module has no sustained load");
		if (c->hooks->done)
			c->hooks->done(c->hooks->arg, r);
		return;
	}
	double total = c->plan->sustained_s > 0 ? c->plan->sustained_s : 60.0;
	/* at most BENCH_MAX_SAMPLES steps of at least one second */
	double step = total / BENCH_MAX_SAMPLES > 1.0 ? total / BENCH_MAX_SAMPLES : 1.0;
	unsigned nsteps = (unsigned)(total / step);
	if (nsteps < 2)
		nsteps = 2;
	struct gk_load_args la = { .c = bench_common(c, slot), .prec = GK_BF16, .n = 8192 };
	la.c.deadline_ns = c->hooks->now_ns(c->hooks->arg) + (uint64_t)((total + 120.0) * 1e9);
	struct gk_load *load = NULL;
	struct gk_result g;
	memset(&g, 0, sizeof(g));
	bench_tel_begin(c, &slot, 1);
	int rc = c->api->load_open(&la, &load, g.err, sizeof(g.err));
	double step_ms[BENCH_MAX_SAMPLES], tflops[BENCH_MAX_SAMPLES];
	double clock_min = NAN, temp_max = NAN, power_max = NAN;
	uint64_t mismatches = 0, nans = 0;
	double flops = 0;
	unsigned done = 0;
	while (rc == GK_OK && done < nsteps) {
		struct gk_result s;
		memset(&s, 0, sizeof(s));
		rc = c->api->load_step(load, step, la.c.deadline_ns, &s);
		mismatches += s.verify.mismatches;
		nans += s.verify.nans;
		if (rc != GK_OK) {
			memcpy(g.err, s.err, sizeof(g.err));
			break;
		}
		struct stats st;
		if (stats_compute(s.samples_ms, (size_t)(s.nsamples > 0 ? s.nsamples : 0), &st) != 0 || !(s.flops > 0)) {
			snprintf(g.err, sizeof(g.err), "load step %u returned no samples", done);
			rc = GK_ECUDA;
			break;
		}
		flops = s.flops;
		step_ms[done] = st.median;
		tflops[done] = s.flops / (st.median * 1e-3) / 1e12;
		if (c->hooks->tel_now) {
			double mhz, w, t;
			c->hooks->tel_now(c->hooks->arg, c->plan->gpu[slot], &mhz, &w, &t);
			if (isfinite(mhz) && !(mhz >= clock_min))
				clock_min = mhz;
			if (isfinite(t) && !(t <= temp_max))
				temp_max = t;
			if (isfinite(w) && !(w <= power_max))
				power_max = w;
		}
		done++;
	}
	if (load && rc != KGUARD_EHUNG) /* a hung GPU's load stays open: closing it would wait on the GPU */
		c->api->load_close(load);
	/* per-step figures stand in for the samples: one median GEMM time per step */
	g.nsamples = (int)done;
	memcpy(g.samples_ms, step_ms, done * sizeof(double));
	g.flops = flops;
	g.verify.verified = rc == GK_OK && mismatches == 0 && nans == 0;
	g.verify.mismatches = mismatches;
	g.verify.nans = nans;
	if (rc == GK_OK && !g.verify.verified) {
		rc = GK_EVERIFY;
		snprintf(g.err, sizeof(g.err), "GEMM results of the sustained load differ from the first, checked one");
	}
	if (done >= 2) {
		double first = tenth_median(tflops, done, false), last = tenth_median(tflops, done, true);
		bench_result_add_aux(r, "first_tflops", first, "TFLOP/s");
		bench_result_add_aux(r, "last_tflops", last, "TFLOP/s");
		bench_result_add_aux(r, "loss_pct", 100.0 * (first - last) / first, "%");
		bench_result_add_aux(r, "step_s", step, "s");
		/* named as the results file's telemetry names them (issue 35: one spelling per field) */
		bench_result_add_aux(r, "sm_clock_mhz_min", clock_min, "MHz");
		bench_result_add_aux(r, "temp_c_max", temp_max, "C");
		bench_result_add_aux(r, "power_w_max", power_max, "W");
	}
	r->m = r->n = r->k = 8192;
	bench_finish(c, r, rc, &g, BM_TFLOPS, NAN, &slot, 1);
}

void bench_suite_sustained(struct bench_ctx *c)
{
	for (unsigned s = 0; s < c->plan->ngpus; s++)
		if (!c->hung[s])
			sustained_one(c, (int)s);
}

struct host_copy { char *dst; const char *src; size_t chunk, size; };

static void host_copy_part(int begin, int end, void *arg)
{
	struct host_copy *h = arg;
	for (int i = begin; i < end; i++) {
		size_t off = (size_t)i * h->chunk;
		size_t len = off + h->chunk > h->size ? h->size - off : h->chunk;
		memcpy(h->dst + off, h->src + off, len);
	}
}

void bench_suite_host(struct bench_ctx *c)
{
	struct bench_result *r = bench_new(c, "host", "memcpy", "", -1);
	if (!r)
		return;
	r->ngpus = 0;
	size_t size = c->plan->full ? (size_t)2 << 30 : (size_t)512 << 20;
	r->size_bytes = size;
	char *src = malloc(size), *dst = malloc(size);
	if (!src || !dst) {
		free(src);
		free(dst);
		bench_result_fail(r, BS_SKIPPED, "cannot allocate 2 x %zu MiB of host memory", size >> 20);
		if (c->hooks->done)
			c->hooks->done(c->hooks->arg, r);
		return;
	}
	uint64_t seed = c->plan->seed ? c->plan->seed : 0x9e3779b97f4a7c15ull;
	for (size_t i = 0; i < size; i += 8) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		memcpy(src + i, &seed, 8);
	}
	struct host_copy h = { dst, src, (size_t)16 << 20, size };
	int chunks = (int)((size + h.chunk - 1) / h.chunk);
	int threads = c->plan->cpu_threads > 0 ? c->plan->cpu_threads : 1;
	int iters = c->plan->iters > 0 ? c->plan->iters : GK_MIN_SAMPLES;
	if (iters > BENCH_MAX_SAMPLES)
		iters = BENCH_MAX_SAMPLES;
	double ms[BENCH_MAX_SAMPLES];
	kref_parallel_for(chunks, threads, host_copy_part, &h); /* warm-up: pages touched */
	for (int i = 0; i < iters; i++) {
		uint64_t t0 = c->hooks->now_ns(c->hooks->arg);
		kref_parallel_for(chunks, threads, host_copy_part, &h);
		ms[i] = (double)(c->hooks->now_ns(c->hooks->arg) - t0) / 1e6;
	}
	r->verified = memcmp(src, dst, size) == 0;
	free(src);
	free(dst);
	bench_result_add_aux(r, "threads", threads, "");
	if (!r->verified)
		bench_result_fail(r, BS_FAILED, "host copy differs from its source");
	else /* bytes read plus bytes written, as for the device copy */
		bench_result_set_samples(r, BM_BANDWIDTH, ms, (unsigned)iters, 2.0 * (double)size, 0, NAN);
	if (c->hooks->done)
		c->hooks->done(c->hooks->arg, r);
}
