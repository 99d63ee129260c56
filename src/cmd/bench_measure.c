/* SPDX-License-Identifier: Apache-2.0 */
/* bench_measure.c - see bench_measure.h. */
#include "bench_measure.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/output.h"
#include "bench/telemetry.h"
#include "core/gpu_select.h"
#include "kernels_host/cuda_map.h"
#include "kernels_host/kguard.h"
#include "kernels_host/kmod.h"
#include "sampler/sampler.h"
#include "core/clock.h"
#include "core/table.h"

/* ---- hooks: clock, telemetry, progress ---------------------------------- */

struct hook_state {
	struct cmd_ctx *ctx;
	struct bench_tel_rec *tel;
	const char *cmd;
	bool quiet;
};

static uint64_t mono_ns(void *arg)
{
	(void)arg;
	return clock_mono_ns();
}

static double mono_s(void)
{
	return (double)mono_ns(NULL) / 1e9;
}

static void h_tel_begin(void *arg, const int *gpus, unsigned n)
{
	struct hook_state *h = arg;
	bench_tel_rec_begin(h->tel, gpus, n);
}

static void h_tel_end(void *arg, struct bench_result *r)
{
	struct hook_state *h = arg;
	bench_tel_rec_end(h->tel, r);
}

static void h_tel_now(void *arg, int gpu, double *mhz, double *w, double *t)
{
	struct hook_state *h = arg;
	bench_tel_rec_now(h->tel, gpu, mhz, w, t);
}

static void h_done(void *arg, const struct bench_result *r)
{
	struct hook_state *h = arg;
	if (h->quiet)
		return;
	char label[128], v[32];
	bench_fmt_label(r, label, sizeof(label));
	if (r->status == BS_OK || r->status == BS_LOW) {
		bench_fmt_num(r->value.median, v, sizeof(v));
		fprintf(h->ctx->err, "%s: %-44s %s %s\n", h->cmd, label, v, r->unit);
	} else {
		text_line(h->ctx->err, "%s: %-44s %s: %s", h->cmd, label, bench_status_name(r->status), r->message);
	}
	fflush(h->ctx->err);
}

/* ---- setting the run up ---------------------------------------------------- */

/* Fills run's header and the plan's GPUs from NVML and the module. */
static int setup(struct cmd_ctx *ctx, const struct bench_measure_opts *mo, struct bench_plan *plan,
		 const struct kmod *km, const struct catalog *cat, struct bench_run *run, const struct cat_gpu **for_gpu)
{
	struct gpu_backend *be = ctx->be;
	unsigned n = be->gpu_count > BENCH_MAX_GPUS ? BENCH_MAX_GPUS : be->gpu_count;
	static struct gpu_static st[BENCH_MAX_GPUS];
	struct gpu_ident ids[BENCH_MAX_GPUS];
	struct gpu_err gerr = { "" };
	char err[256] = "";
	int ncuda = 0;
	if (km->api->device_count(&ncuda, err, sizeof(err)) != GK_OK || ncuda <= 0) {
		cmd_error(ctx, mo->cmd, "CUDA sees no GPU: %s", ncuda <= 0 && !err[0] ? "device count is 0" : err);
		return EXIT_UNAVAILABLE;
	}
	for (unsigned i = 0; i < n; i++) {
		memset(&st[i], 0, sizeof(st[i]));
		if (be->ops->static_info(be, i, &st[i], &gerr) != GPU_OK) {
			cmd_error(ctx, mo->cmd, "cannot read GPU %u: %s", i, gerr.msg);
			return EXIT_UNAVAILABLE;
		}
		ids[i].uuid = VAL_HAS(st[i].uuid) ? st[i].uuid.s : NULL;
		ids[i].bus_id = VAL_HAS(st[i].pci_bus_id) ? st[i].pci_bus_id.s : NULL;
	}
	const char *bus_ids[BENCH_MAX_GPUS];
	int cuda[BENCH_MAX_GPUS];
	for (unsigned i = 0; i < n; i++)
		bus_ids[i] = ids[i].bus_id;
	cuda_map(km->api, ncuda, bus_ids, n, cuda);
	uint64_t mask = gpu_select_all(n);
	if (mo->gpus && gpu_select_parse(mo->gpus, ids, n, &mask, err, sizeof(err)) != 0) {
		cmd_error(ctx, mo->cmd, "%s", err);
		return EXIT_USAGE;
	}
	run->ngpus = n;
	for (unsigned i = 0; i < n; i++) {
		struct bench_gpu_info *g = &run->gpu[i];
		g->index = (int)i;
		snprintf(g->name, sizeof(g->name), "%s", VAL_HAS(st[i].name) ? st[i].name.s : "");
		snprintf(g->uuid, sizeof(g->uuid), "%s", ids[i].uuid ? ids[i].uuid : "");
		snprintf(g->pci_bus_id, sizeof(g->pci_bus_id), "%s", ids[i].bus_id ? ids[i].bus_id : "");
		const struct cat_gpu *m = catalog_match(cat, g->name, VAL_HAS(st[i].mem_total_bytes) ? st[i].mem_total_bytes.v : 0);
		for_gpu[i] = m;
		snprintf(g->catalog_model, sizeof(g->catalog_model), "%s", m ? m->key : "");
		if (!gpu_select_has(mask, i))
			continue;
		if (plan->ngpus >= GK_MAX_DEVS) {
			cmd_error(ctx, mo->cmd, "more than %d GPUs selected; pick some with -i", GK_MAX_DEVS);
			return EXIT_USAGE;
		}
		int d = cuda[i];
		if (d < 0 && !mo->gpus)
			continue; /* hidden from CUDA (CUDA_VISIBLE_DEVICES): not asked for by name */
		if (d < 0) {
			cmd_error(ctx, mo->cmd, "GPU %u (%s) is not visible to CUDA (CUDA_VISIBLE_DEVICES?)", i,
				  ids[i].bus_id ? ids[i].bus_id : "no bus id");
			return EXIT_UNAVAILABLE;
		}
		plan->gpu[plan->ngpus] = (int)i;
		plan->cuda[plan->ngpus] = d;
		plan->ngpus++;
	}
	if (plan->ngpus == 0) {
		cmd_error(ctx, mo->cmd, "none of the selected GPUs is visible to CUDA (CUDA_VISIBLE_DEVICES?)");
		return EXIT_UNAVAILABLE;
	}
	for (unsigned a = 0; a < plan->ngpus; a++)
		for (unsigned b = 0; b < plan->ngpus; b++) {
			struct gpu_link l;
			if (a != b && be->ops->link &&
			    be->ops->link(be, (unsigned)plan->gpu[a], (unsigned)plan->gpu[b], &l, &gerr) == GPU_OK)
				plan->nvlinks[a][b] = (int)l.nvlinks;
		}
	snprintf(run->host, sizeof(run->host), "%s", VAL_HAS(ctx->sys.hostname) ? ctx->sys.hostname.s : ctx->sys.server_name);
	snprintf(run->driver_version, sizeof(run->driver_version), "%.31s",
		 VAL_HAS(ctx->sys.driver_version) ? ctx->sys.driver_version.s : "");
	snprintf(run->cuda_version, sizeof(run->cuda_version), "%.15s",
		 VAL_HAS(ctx->sys.cuda_driver_version) ? ctx->sys.cuda_driver_version.s : "");
	snprintf(run->kernels_build, sizeof(run->kernels_build), "%s", km->api->build_info ? km->api->build_info : "");
	snprintf(run->gpuctl_version, sizeof(run->gpuctl_version), "%s", GPUCTL_VERSION);
	snprintf(run->mode, sizeof(run->mode), "%s", plan->full ? "full" : "quick");
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(run->started_utc, sizeof(run->started_utc), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return EXIT_OK;
}

int bench_measure(struct cmd_ctx *ctx, const struct bench_measure_opts *mo, struct bench_plan *plan,
		  const struct bench_thresholds *thr, struct bench_run *run, struct catalog *cat,
		  const struct cat_gpu **for_gpu)
{
	struct gpu_backend own = { 0 };
	struct kmod km;
	char err[512];
	bool opened = false;
	int rc;
	bench_run_init(run);
	memset(cat, 0, sizeof(*cat));
	if (!ctx->be) {
		/* real GPUs or nothing: no --or-sim fallback, and no hint to use --sim */
		struct gpu_err gerr = { "" };
		rc = gpu_backend_open(&own, "nvml", NULL, &gerr);
		if (rc == GPU_OK && own.gpu_count == 0) {
			gpu_backend_close(&own);
			rc = GPU_ENODEV;
			snprintf(gerr.msg, sizeof(gerr.msg), "the NVIDIA driver reports no GPU");
		}
		if (rc == GPU_OK && own.ops->system_info(&own, &ctx->sys, &gerr) != GPU_OK) {
			gpu_backend_close(&own);
			rc = GPU_EIO;
		}
		if (rc != GPU_OK) {
			cmd_error(ctx, mo->cmd, "%s: benchmarks need real GPUs", gerr.msg);
			return EXIT_UNAVAILABLE;
		}
		ctx->be = &own;
		opened = true;
	}
	if (ctx->sys.simulated) {
		cmd_error(ctx, mo->cmd, "'%s' is a simulated server: benchmarks run on real GPUs only", ctx->sys.server_name);
		rc = EXIT_UNAVAILABLE;
		goto close_be;
	}
	if (kmod_open_default(&km, mo->kernels, getenv("GPUCTL_KERNELS"), err, sizeof(err)) != KMOD_OK) {
		cmd_error(ctx, mo->cmd, "%s", err);
		rc = EXIT_UNAVAILABLE;
		goto close_be;
	}
	if (catalog_load_dir(cat, ctx->data_dir, err, sizeof(err)) != 0) /* figures still measured, without ratios */
		cmd_error(ctx, mo->cmd, "cannot read the GPU catalog (no datasheet ratios): %s", err);
	for (unsigned i = 0; i < BENCH_MAX_GPUS; i++)
		for_gpu[i] = NULL;
	rc = setup(ctx, mo, plan, &km, cat, run, for_gpu);
	if (rc != EXIT_OK)
		goto close_km;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	plan->cpu_threads = ncpu > 0 ? (int)ncpu : 1;

	struct sampler *smp = NULL;
	struct sampler_config scfg;
	struct gpu_err gerr = { "" };
	sampler_config_default(&scfg);
	scfg.interval_ns = 50000000ull; /* 50 ms: several samples in most tests */
	/* GFLOP/s per watt from the energy counter; each test's profiling means (GPM: a
	 * GEMM's tensor activity) where the GPU has them */
	scfg.groups = GPU_GRP_BASIC | GPU_GRP_ENERGY | GPU_GRP_GPM;
	scfg.sys = &ctx->sys;
	struct hook_state hs = { .ctx = ctx, .cmd = mo->cmd, .quiet = mo->quiet };
	if (sampler_start(&smp, ctx->be, &scfg, &gerr) == 0)
		hs.tel = bench_tel_rec_start(smp, 10);
	else
		cmd_error(ctx, mo->cmd, "no telemetry during the tests: %s", gerr.msg);
	struct bench_hooks hooks = { .arg = &hs, .now_ns = mono_ns, .cpu_now_s = mono_s, .done = h_done };
	if (hs.tel) {
		hooks.tel_begin = h_tel_begin;
		hooks.tel_end = h_tel_end;
		hooks.tel_now = h_tel_now;
	}
	uint64_t t0 = mono_ns(NULL);
	/* through the watchdog: a GPU that never answers is "GPU hung", its later tests skipped */
	int prc = bench_run_plan(kguard_wrap(km.api, 0), plan, &hooks, run, err, sizeof(err));
	run->duration_s = (double)(mono_ns(NULL) - t0) / 1e9;
	bench_tel_rec_stop(hs.tel);
	if (smp)
		sampler_stop(smp);
	if (prc != 0) {
		cmd_error(ctx, mo->cmd, "%s", err);
		rc = EXIT_SOFTWARE;
		goto close_km;
	}
	bench_apply_limits(run, for_gpu, BENCH_MAX_GPUS, thr);
close_km:
	if (kguard_hung_calls() == 0) /* else a call left behind in a hung GPU still runs in it */
		kmod_close(&km);
close_be:
	if (opened) {
		gpu_backend_close(ctx->be);
		ctx->be = NULL;
	}
	return rc;
}
