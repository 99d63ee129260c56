/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gk_check.c - a correctness test for every entry of the kernels module, at
 * sizes that run in seconds: each must return GK_OK with verify.verified and
 * >= 10 samples, and bad arguments and a deliberately corrupted memory test
 * must fail the way the ABI says.
 */
#include "gk_driver.h"

#include <math.h>
#include <string.h>

#define MiB (1ull << 20)

static int good(const struct gk_result *r, int rc)
{
	return rc == GK_OK && r->rc == GK_OK && r->verify.verified && r->nsamples >= GK_MIN_SAMPLES && r->err[0] == '\0';
}

static void check_copy(struct drv *d)
{
	static const char *dirs[] = { "h2d", "d2h", "bidir" };
	for (int dir = GK_H2D; dir <= GK_BIDIR; dir++)
		for (int mem = GK_PINNED; mem <= GK_PAGEABLE; mem++)
			for (int eng = GK_CE; eng <= GK_SM; eng++)
				for (int async = 0; async <= 1; async++) {
					if (eng == GK_SM && (mem == GK_PAGEABLE || !async))
						continue;
					struct gk_copy_args a = { .c = drv_common(d, 0, 10), .dir = dir, .host_mem = mem, .engine = eng,
								  .async = async, .bytes = 16 * MiB + 48 };
					struct gk_result r;
					char name[96];
					snprintf(name, sizeof name, "copy %s %s %s %s", dirs[dir], mem ? "pageable" : "pinned",
						 eng ? "sm" : "ce", async ? "async" : "sync");
					int rc = d->api->copy(&a, &r);
					int ok = good(&r, rc) && r.bytes == (dir == GK_BIDIR ? 2.0 : 1.0) * a.bytes;
					drv_expect(d, name, ok, &r, NULL);
				}
	struct gk_copy_args a = { .c = drv_common(d, 0, 10), .dir = GK_H2D, .host_mem = GK_PINNED, .engine = GK_CE,
				  .async = true, .overlap = true, .bytes = 64 * MiB };
	struct gk_result r;
	int rc = d->api->copy(&a, &r);
	drv_expect(d, "copy h2d overlap", good(&r, rc) && r.naux == 4, &r, NULL);
	a.bytes = 0;
	rc = d->api->copy(&a, &r);
	drv_expect(d, "copy size 0 is rejected", rc == GK_EARG && r.err[0], &r, NULL);
	a.bytes = 4096;
	a.c.device = 99;
	rc = d->api->copy(&a, &r);
	drv_expect(d, "copy on GPU 99 is rejected", rc == GK_ENODEV && strstr(r.err, "99"), &r, NULL);
}

static double aux_of(const struct gk_result *r, const char *name)
{
	for (int i = 0; i < r->naux; i++)
		if (!strcmp(r->aux[i].name, name))
			return r->aux[i].value;
	return -1;
}

/* The latency chase shows the cache levels: a 16 KiB cycle is served by L1, a
 * 1 GiB one (over 8x any L2 so far) by HBM, several times slower; each sample
 * makes at least the L2's lines in loads, and both chases end where the host's
 * walk of the cycle does (verified). */
static void check_latency_levels(struct drv *d)
{
	struct gk_device_info di;
	struct gk_result none;
	memset(&none, 0, sizeof none);
	if (d->api->device_info(0, &di) != GK_OK) {
		drv_expect(d, "latency levels: device info", 0, &none, di.err);
		return;
	}
	double ns[2] = { -1, -1 };
	const size_t ws[2] = { 16 << 10, 1ull << 30 };
	for (int i = 0; i < 2; i++) {
		struct gk_mem_args a = { .c = drv_common(d, 0, 10), .op = GK_MEM_LATENCY, .bytes = ws[i] };
		struct gk_result r;
		int rc = d->api->memory(&a, &r);
		char name[64];
		snprintf(name, sizeof name, "memory latency at %zu KiB", ws[i] >> 10);
		double loads = aux_of(&r, "loads");
		drv_expect(d, name, good(&r, rc) && loads >= 65536 && loads >= di.l2_bytes / 128.0 && aux_of(&r, "stride") == 128,
			   &r, NULL);
		ns[i] = aux_of(&r, "latency_ns");
	}
	char why[96];
	snprintf(why, sizeof why, "16 KiB: %.1f ns, 1 GiB: %.1f ns", ns[0], ns[1]);
	drv_expect(d, "latency: HBM over 3x the L1's", ns[0] > 0 && ns[1] > 3 * ns[0], &none, why);
}

static void check_memory(struct drv *d)
{
	for (int op = GK_MEM_READ; op <= GK_MEM_LATENCY; op++) {
		struct gk_mem_args a = { .c = drv_common(d, 0, 10), .op = op, .bytes = 64 * MiB + 4096 };
		struct gk_result r;
		char name[64];
		snprintf(name, sizeof name, "memory %s", kmod_mem_op_name(op));
		int rc = d->api->memory(&a, &r);
		int ok = good(&r, rc);
		if (op == GK_MEM_LATENCY)
			ok = ok && r.naux >= 1 && r.aux[0].value > 50 && r.aux[0].value < 5000;
		drv_expect(d, name, ok, &r, NULL);
	}
	/* the runtime's device copy: checked like our kernels, and named variant 27 */
	struct gk_mem_args a = { .c = drv_common(d, 0, 10), .op = GK_MEM_COPY, .bytes = 64 * MiB, .runtime_copy = true };
	struct gk_result r;
	int rc = d->api->memory(&a, &r);
	drv_expect(d, "memory copy through cudaMemcpy", good(&r, rc) && aux_of(&r, "variant") == 27, &r, NULL);
	check_latency_levels(d);
}

static void check_fma(struct drv *d)
{
	int precs[] = { GK_FP64, GK_FP32, GK_FP16X2, GK_BF16X2 };
	for (int i = 0; i < 4; i++) {
		struct gk_fma_args a = { .c = drv_common(d, 0, 10), .prec = precs[i] };
		struct gk_result r;
		char name[64];
		snprintf(name, sizeof name, "fma %s", kmod_prec_name(precs[i]));
		int rc = d->api->fma(&a, &r);
		drv_expect(d, name, good(&r, rc) && r.flops > 0, &r, NULL);
	}
	struct gk_fma_args a = { .c = drv_common(d, 0, 10), .prec = GK_TF32 };
	struct gk_result r;
	drv_expect(d, "fma tf32 is rejected", d->api->fma(&a, &r) == GK_EARG, &r, NULL);
}

static void check_gemm(struct drv *d)
{
	int shapes[2][3] = { { 1024, 768, 512 }, { 1000, 776, 336 } };
	for (int lib = GK_CUBLAS; lib <= GK_CUBLASLT; lib++)
		for (int p = GK_FP64; p <= GK_FP8_E4M3; p++)
			for (int s = 0; s < 2; s++)
				for (int nn = 0; nn <= 1; nn++) {
					struct gk_gemm_args a = { .c = drv_common(d, 0, 10), .lib = lib, .prec = p, .m = shapes[s][0],
								  .n = shapes[s][1], .k = shapes[s][2], .nn = nn };
					struct gk_result r;
					char name[96];
					snprintf(name, sizeof name, "gemm %s %s %s %dx%dx%d", lib ? "cublasLt" : "cublas", kmod_prec_name(p),
						 nn ? "NN" : "TN", a.m, a.n, a.k);
					int rc = d->api->gemm(&a, &r);
					if (p == GK_FP8_E4M3 && (lib == GK_CUBLAS || nn))
						drv_expect(d, name, rc == GK_EUNSUPPORTED, &r, " (expected: not supported)");
					else if (p == GK_FP8_E4M3 && s == 1 && a.m % 16)
						drv_expect(d, name, rc == GK_EARG, &r, " (expected: bad shape)");
					else
						drv_expect(d, name, good(&r, rc) && r.flops == 2.0 * a.m * a.n * a.k, &r, NULL);
				}
}

static void check_own_gemm(struct drv *d)
{
	int shapes[2][3] = { { 300, 200, 100 }, { 1024, 1024, 1024 } };
	for (int v = GK_GEMM_NAIVE; v <= GK_GEMM_REGBLOCK; v++)
		for (int s = 0; s < 2; s++) {
			struct gk_own_gemm_args a = { .c = drv_common(d, 0, 10), .variant = v, .m = shapes[s][0], .n = shapes[s][1],
						      .k = shapes[s][2] };
			struct gk_result r;
			char name[96];
			snprintf(name, sizeof name, "own gemm %s %dx%dx%d", v == 0 ? "naive" : v == 1 ? "tiled" : "regblock", a.m, a.n, a.k);
			int rc = d->api->own_gemm(&a, &r);
			drv_expect(d, name, good(&r, rc) && r.naux >= 1 && r.aux[0].value == 1, &r, " (vs cuBLAS)");
		}
}

static void check_p2p(struct drv *d)
{
	if (d->ndev < 2) {
		printf("SKIP p2p and multi-GPU nccl: %d GPU\n", d->ndev);
		return;
	}
	static const char *modes[] = { "ce", "sm", "host-staged" };
	for (int m = GK_P2P_CE; m <= GK_P2P_HOST_STAGED; m++)
		for (int bi = 0; bi <= 1; bi++) {
			struct gk_p2p_args a = { .c = drv_common(d, 0, 10), .peer = 1, .mode = m, .bidirectional = bi,
						 .bytes = 72 * MiB + 16 };
			struct gk_result r;
			char name[96];
			snprintf(name, sizeof name, "p2p 0->1 %s %s", modes[m], bi ? "bidirectional" : "one way");
			int rc = d->api->p2p(&a, &r);
			drv_expect(d, name, good(&r, rc) && r.bytes == (bi ? 2.0 : 1.0) * a.bytes, &r, NULL);
		}
	struct gk_p2p_args a = { .c = drv_common(d, 0, 10), .peer = 1, .mode = GK_P2P_LATENCY, .bytes = 16 * MiB };
	struct gk_result r;
	int rc = d->api->p2p(&a, &r);
	drv_expect(d, "p2p latency", good(&r, rc), &r, NULL);
	a.peer = 0;
	drv_expect(d, "p2p to itself is rejected", d->api->p2p(&a, &r) == GK_EARG, &r, NULL);
}

static void check_nccl(struct drv *d)
{
	for (int op = GK_ALL_REDUCE; op <= GK_ALL_TO_ALL; op++)
		for (int s = 0; s < 2; s++) {
			struct gk_nccl_args a = { .c = drv_common(d, 0, 10), .op = op, .ndevs = d->ndev,
						  .bytes = s ? 3 * MiB + 4 * 37 * d->ndev : MiB };
			for (int i = 0; i < d->ndev && i < GK_MAX_DEVS; i++)
				a.devs[i] = i;
			struct gk_result r;
			char name[96];
			snprintf(name, sizeof name, "nccl %s %d GPUs %zu B", kmod_coll_name(op), d->ndev, a.bytes);
			int rc = d->api->nccl(&a, &r);
			drv_expect(d, name, good(&r, rc), &r, NULL);
		}
}

static void check_apps(struct drv *d)
{
	struct gk_result r;
	struct kref_app_run run;
	struct gk_common c = drv_common(d, 0, 10);
	int rc = kref_run_spmv(d->api, &c, 100000, 27, 8, drv_now, &r, &run);
	drv_expect(d, "apps spmv 100k rows", good(&r, rc) && run.cpu_ms > 0, &r, NULL);
	rc = kref_run_lj(d->api, &c, 4096, 8, drv_now, &r, &run);
	drv_expect(d, "apps lj 4096 atoms", good(&r, rc), &r, NULL);
	rc = kref_run_bvh(d->api, &c, 20000, 100000, 8, drv_now, &r, &run);
	drv_expect(d, "apps bvh 20k tris 100k rays", good(&r, rc), &r, NULL);
}

static void check_memtest(struct drv *d)
{
	static const char *pat[] = { "walking ones", "address", "random" };
	for (int p = GK_MT_WALKING_ONES; p <= GK_MT_RANDOM; p++) {
		struct gk_memtest_args a = { .c = drv_common(d, 0, 1), .pattern = p, .fraction = 0.02 };
		struct gk_result r;
		char name[64];
		snprintf(name, sizeof name, "memtest %s", pat[p]);
		int rc = d->api->memtest(&a, &r);
		drv_expect(d, name, rc == GK_OK && r.verify.verified && r.nsamples == 1, &r, NULL);
		a.flip_bits = 7;
		snprintf(name, sizeof name, "memtest %s with 7 flipped bits FAILS", pat[p]);
		rc = d->api->memtest(&a, &r);
		drv_expect(d, name, rc == GK_EVERIFY && r.verify.mismatches == 7 && !r.verify.verified, &r, NULL);
	}
}

static void check_stress(struct drv *d)
{
	int precs[] = { GK_FP32, GK_TF32, GK_BF16, GK_FP16, GK_FP8_E4M3, GK_FP64 };
	for (int i = 0; i < 6; i++) {
		struct gk_stress_args a = { .c = drv_common(d, 0, 0), .prec = precs[i], .n = 2048, .seconds = 0.5 };
		struct gk_result r;
		char name[64];
		snprintf(name, sizeof name, "stress %s 0.5 s", kmod_prec_name(precs[i]));
		int rc = d->api->stress(&a, &r);
		drv_expect(d, name, rc == GK_OK && r.verify.verified && r.nsamples >= 1 && r.verify.checked > 0, &r, NULL);
	}
	struct gk_load_args la = { .c = drv_common(d, 0, 0), .prec = GK_BF16, .n = 4096 };
	struct gk_load *l = NULL;
	char err[GK_ERR_LEN];
	struct gk_result r;
	memset(&r, 0, sizeof r);
	int rc = d->api->load_open(&la, &l, err, sizeof err);
	int ok = rc == GK_OK;
	for (int step = 0; ok && step < 2; step++) {
		rc = d->api->load_step(l, 0.3, la.c.deadline_ns, &r);
		ok = rc == GK_OK && r.verify.verified && r.nsamples > 0;
	}
	if (l)
		d->api->load_close(l);
	drv_expect(d, "load open/step/step/close bf16", ok, &r, rc ? err : NULL);
	/* a deadline already past must come back as a timeout, not a hang */
	struct gk_stress_args a = { .c = drv_common(d, 0, 0), .prec = GK_FP32, .n = 4096, .seconds = 5 };
	a.c.deadline_ns = 1;
	rc = d->api->stress(&a, &r);
	drv_expect(d, "stress with a passed deadline times out", rc == GK_ETIMEOUT, &r, NULL);
}

int drv_check_all(struct drv *d)
{
	check_copy(d);
	check_memory(d);
	check_fma(d);
	check_gemm(d);
	check_own_gemm(d);
	check_p2p(d);
	check_nccl(d);
	check_apps(d);
	check_memtest(d);
	check_stress(d);
	return d->failures;
}
