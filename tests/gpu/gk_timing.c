/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gk_timing.c - full-size timings for issue 4's goals, printed as one table
 * (measured, datasheet, ratio) and written as JSON lines. Datasheet figures
 * are the H200 SXM's (the machine the goals name); on another GPU the ratio
 * column is only indicative.
 */
#include "gk_driver.h"

#include <string.h>

#define MiB (1ull << 20)
#define GiB (1ull << 30)

struct row { char name[64]; char params[48]; double rate; char unit[12]; double sheet; int verified; int rc; };
static struct row rows[160];
static int nrows;

static void add(struct drv *d, const char *name, const char *params, const struct gk_result *r, int rc, double rate_scale,
		const char *unit, double sheet)
{
	double med = drv_median(r);
	double amount = r->flops > 0 ? r->flops : r->bytes;
	double rate = med > 0 && amount > 0 ? amount / (med * 1e-3) * rate_scale : 0;
	drv_json(d, name, params, r, rate, unit, sheet);
	if (nrows < (int)(sizeof rows / sizeof rows[0])) {
		struct row *w = &rows[nrows++];
		snprintf(w->name, sizeof w->name, "%s", name);
		snprintf(w->params, sizeof w->params, "%s", params);
		snprintf(w->unit, sizeof w->unit, "%s", unit);
		w->rate = rate; w->sheet = sheet; w->verified = r->verify.verified; w->rc = rc;
	}
	if (rc != GK_OK)
		printf("  %s %s: rc %d: %s\n", name, params, rc, r->err);
	fflush(stdout);
}

static void t_memory(struct drv *d)
{
	for (int op = GK_MEM_READ; op <= GK_MEM_TRIAD; op++) {
		struct gk_mem_args a = { .c = drv_common(d, 0, 20), .op = op, .bytes = 4 * GiB };
		struct gk_result r;
		int rc = d->api->memory(&a, &r);
		char name[48];
		snprintf(name, sizeof name, "memory %s", kmod_mem_op_name(op));
		add(d, name, "4 GiB/array", &r, rc, 1e-12, "TB/s", 4.8);
	}
	struct gk_mem_args a = { .c = drv_common(d, 0, 10), .op = GK_MEM_LATENCY, .bytes = 1 * GiB };
	struct gk_result r;
	int rc = d->api->memory(&a, &r);
	printf("  memory latency (1 GiB set): %.0f ns\n", r.naux ? r.aux[0].value : -1);
	drv_json(d, "memory latency", "1 GiB", &r, r.naux ? r.aux[0].value : 0, "ns", 0);
	(void)rc;
}

static void t_copy(struct drv *d)
{
	static const char *dirs[] = { "h2d", "d2h", "bidir" };
	for (int dir = GK_H2D; dir <= GK_BIDIR; dir++)
		for (int v = 0; v < 4; v++) {
			/* v: 0 pinned CE async, 1 pinned CE sync, 2 pageable CE sync, 3 pinned SM */
			struct gk_copy_args a = { .c = drv_common(d, 0, 10), .dir = dir, .host_mem = v == 2 ? GK_PAGEABLE : GK_PINNED,
						  .engine = v == 3 ? GK_SM : GK_CE, .async = v == 0 || v == 3, .bytes = GiB };
			if (dir == GK_BIDIR && (v == 1 || v == 2))
				continue;
			struct gk_result r;
			int rc = d->api->copy(&a, &r);
			char name[48];
			snprintf(name, sizeof name, "copy %s %s", dirs[dir],
				 v == 0 ? "pinned ce" : v == 1 ? "pinned ce sync" : v == 2 ? "pageable" : "pinned sm");
			add(d, name, "1 GiB", &r, rc, 1e-9, "GB/s", dir == GK_BIDIR ? 128 : 64);
		}
	struct gk_copy_args a = { .c = drv_common(d, 0, 10), .dir = GK_H2D, .host_mem = GK_PINNED, .engine = GK_CE,
				  .async = true, .overlap = true, .bytes = 256 * MiB };
	struct gk_result r;
	int rc = d->api->copy(&a, &r);
	printf("  copy/kernel overlap: %.2f (copy %.2f ms, kernel %.2f ms, both %.2f ms)\n", r.naux > 3 ? r.aux[3].value : -1,
	       r.naux > 0 ? r.aux[0].value : -1, r.naux > 1 ? r.aux[1].value : -1, r.naux > 2 ? r.aux[2].value : -1);
	drv_json(d, "copy overlap", "256 MiB", &r, r.naux > 3 ? r.aux[3].value : 0, "ratio", 1);
	(void)rc;
}

static void t_compute(struct drv *d)
{
	int precs[] = { GK_FP64, GK_FP32, GK_FP16X2, GK_BF16X2 };
	double sheet[] = { 33.5, 66.9, 133.8, 133.8 };
	for (int i = 0; i < 4; i++) {
		struct gk_fma_args a = { .c = drv_common(d, 0, 20), .prec = precs[i] };
		struct gk_result r;
		int rc = d->api->fma(&a, &r);
		char name[48];
		snprintf(name, sizeof name, "fma %s", kmod_prec_name(precs[i]));
		add(d, name, "peak", &r, rc, 1e-12, "TFLOP/s", sheet[i]);
	}
	double gsheet[] = { 66.9, 66.9, 494.7, 989.4, 989.4, 1978.9 };
	for (int p = GK_FP64; p <= GK_FP8_E4M3; p++)
		for (int lib = GK_CUBLAS; lib <= GK_CUBLASLT; lib++)
			for (int nn = 0; nn <= 1; nn++) {
				if (p == GK_FP8_E4M3 && (lib == GK_CUBLAS || nn))
					continue;
				struct gk_gemm_args a = { .c = drv_common(d, 0, 20), .lib = lib, .prec = p, .m = 8192, .n = 8192,
							  .k = 8192, .nn = nn };
				struct gk_result r;
				int rc = d->api->gemm(&a, &r);
				char name[48];
				snprintf(name, sizeof name, "gemm %s %s", kmod_prec_name(p), lib ? "cublasLt" : "cublas");
				add(d, name, nn ? "8192^3 NN" : "8192^3 TN", &r, rc, 1e-12, "TFLOP/s", gsheet[p]);
			}
	int own[][4] = { { GK_GEMM_NAIVE, 4096 }, { GK_GEMM_TILED, 4096 }, { GK_GEMM_REGBLOCK, 4096 }, { GK_GEMM_REGBLOCK, 8192 } };
	for (int i = 0; i < 4; i++) {
		int n = own[i][1];
		struct gk_own_gemm_args a = { .c = drv_common(d, 0, 10), .variant = own[i][0], .m = n, .n = n, .k = n };
		struct gk_result r;
		int rc = d->api->own_gemm(&a, &r);
		char name[48], params[32];
		snprintf(name, sizeof name, "own sgemm %s", own[i][0] == 0 ? "naive" : own[i][0] == 1 ? "tiled" : "regblock");
		snprintf(params, sizeof params, "%d^3", n);
		add(d, name, params, &r, rc, 1e-12, "TFLOP/s", 66.9);
	}
}

static void t_p2p(struct drv *d)
{
	if (d->ndev < 2)
		return;
	static const char *modes[] = { "ce", "sm", "host-staged" };
	for (int m = GK_P2P_CE; m <= GK_P2P_HOST_STAGED; m++)
		for (int bi = 0; bi <= 1; bi++) {
			struct gk_p2p_args a = { .c = drv_common(d, 0, 10), .peer = 1, .mode = m, .bidirectional = bi, .bytes = GiB };
			struct gk_result r;
			int rc = d->api->p2p(&a, &r);
			char name[48];
			snprintf(name, sizeof name, "p2p 0->1 %s %s", modes[m], bi ? "bidir" : "uni");
			add(d, name, "1 GiB", &r, rc, 1e-9, "GB/s", m == GK_P2P_HOST_STAGED ? (bi ? 128 : 64) : (bi ? 900 : 450));
		}
	struct gk_p2p_args a = { .c = drv_common(d, 0, 10), .peer = 1, .mode = GK_P2P_LATENCY, .bytes = 64 * MiB };
	struct gk_result r;
	d->api->p2p(&a, &r);
	printf("  p2p latency 0->1: %.0f ns\n", r.naux > 1 ? r.aux[1].value : -1);
	drv_json(d, "p2p latency", "64 MiB", &r, r.naux > 1 ? r.aux[1].value : 0, "ns", 0);
}

static void t_nccl(struct drv *d)
{
	if (d->ndev < 2)
		return;
	for (size_t b = MiB; b <= 4 * GiB; b *= 4) {
		for (int op = GK_ALL_REDUCE; op <= GK_ALL_TO_ALL; op++) {
			if (op != GK_ALL_REDUCE && b != 64 * MiB && b != GiB)
				continue;
			struct gk_nccl_args a = { .c = drv_common(d, 0, 20), .op = op, .ndevs = d->ndev, .bytes = b };
			for (int i = 0; i < d->ndev && i < GK_MAX_DEVS; i++)
				a.devs[i] = i;
			struct gk_result r;
			int rc = d->api->nccl(&a, &r);
			char name[48], params[32];
			snprintf(name, sizeof name, "nccl %s busbw", kmod_coll_name(op));
			snprintf(params, sizeof params, "%zu MiB %d GPUs", (size_t)(b / MiB), d->ndev);
			add(d, name, params, &r, rc, 1e-9 * kmod_busbw_factor(op, d->ndev), "GB/s", 0);
		}
	}
}

static void t_apps(struct drv *d)
{
	struct gk_result r;
	struct kref_app_run run;
	struct gk_common c = drv_common(d, 0, 10);
	int rc = kref_run_spmv(d->api, &c, 4 << 20, 27, 32, drv_now, &r, &run);
	add(d, "apps spmv", "4M rows 27 nnz", &r, rc, 1e-9, "GFLOP/s", 0);
	printf("  spmv: gpu %.3f ms, cpu %.1f ms, speed-up %.0fx\n", run.gpu_ms, run.cpu_ms, run.gpu_ms > 0 ? run.cpu_ms / run.gpu_ms : 0);
	rc = kref_run_lj(d->api, &c, 32768, 32, drv_now, &r, &run);
	add(d, "apps lj", "32768 atoms", &r, rc, 1e-9, "GFLOP/s", 0);
	printf("  lj: gpu %.3f ms, cpu %.1f ms, speed-up %.0fx\n", run.gpu_ms, run.cpu_ms, run.gpu_ms > 0 ? run.cpu_ms / run.gpu_ms : 0);
	rc = kref_run_bvh(d->api, &c, 1 << 20, 1 << 21, 32, drv_now, &r, &run);
	drv_json(d, "apps bvh", "1M tris 2M rays", &r, 0, "rays/s", 0);
	printf("  bvh: gpu %.3f ms, cpu %.1f ms, speed-up %.0fx, rc %d %s\n", run.gpu_ms, run.cpu_ms,
	       run.gpu_ms > 0 ? run.cpu_ms / run.gpu_ms : 0, rc, r.err);
}

static void t_diag(struct drv *d)
{
	struct gk_memtest_args m = { .c = drv_common(d, 0, 1), .pattern = GK_MT_RANDOM, .fraction = 0.9 };
	struct gk_result r;
	double t0 = drv_now();
	int rc = d->api->memtest(&m, &r);
	printf("  memtest random 90%% of free: rc %d, %.1f GB tested in %.2f s wall, bad %llu\n", rc,
	       r.naux ? r.aux[0].value / 1e9 : 0, drv_now() - t0, (unsigned long long)r.verify.mismatches);
	drv_json(d, "memtest random", "0.9 free", &r, 0, "", 0);
	struct gk_stress_args s = { .c = drv_common(d, 0, 0), .prec = GK_FP32, .n = 8192, .seconds = 3 };
	rc = d->api->stress(&s, &r);
	add(d, "stress fp32 3 s", "8192^3", &r, rc, 1e-12, "TFLOP/s", 66.9);
	s.prec = GK_BF16;
	rc = d->api->stress(&s, &r);
	add(d, "stress bf16 3 s", "8192^3", &r, rc, 1e-12, "TFLOP/s", 989.4);
}

int drv_timing_all(struct drv *d)
{
	d->deadline_s = 300;
	t_memory(d);
	t_copy(d);
	t_compute(d);
	t_p2p(d);
	t_nccl(d);
	t_apps(d);
	t_diag(d);
	printf("\n%-32s %-18s %12s %-8s %10s %6s %s\n", "test", "size", "measured", "unit", "datasheet", "ratio", "verified");
	for (int i = 0; i < nrows; i++) {
		struct row *w = &rows[i];
		char sheet[16] = "-", ratio[16] = "-";
		if (w->sheet > 0) {
			snprintf(sheet, sizeof sheet, "%.1f", w->sheet);
			snprintf(ratio, sizeof ratio, "%.3f", w->rate / w->sheet);
		}
		printf("%-32s %-18s %12.2f %-8s %10s %6s %s\n", w->name, w->params, w->rate, w->unit, sheet, ratio,
		       w->rc ? "ERROR" : w->verified ? "yes" : "NO");
	}
	return 0;
}
