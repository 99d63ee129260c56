/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gk_train_main.c - the training step's GPU test and timing driver (label gpu;
 * no gpuctl_core needed: scripts/gpu/train.sh builds it with gcc beside the
 * module).
 *   gk_train --module M --check                 tiny model: loss and every gradient
 *                                               vs the CPU reference, fp32, tf32, bf16
 *   gk_train --module M --run [--model 124M] [--prec bf16] [--batch 16] [--seq 1024]
 *            [--grad-accum 1] [--steps 50] [--lr 3e-4] [--gpus N]
 *                                               timed steps of a repeated batch; the
 *                                               loss must fall; --gpus N: data parallel
 *                                               over CUDA devices 0..N-1 (NCCL, N >= 1)
 *   gk_train --module M --gemm-peak             the GEMM peak the MFU is also judged
 *                                               against: cuBLASLt 8192^3 bf16, tf32, fp32
 * Prints one line per result ("PASS ..." / "FAIL ..."), JSON with --json FILE.
 * Exit 0 when everything passed, 1 when a check failed, 2 on bad usage.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/stats.h"
#include "kernels_host/kmod.h"
#include "kernels_host/train_ref.h"

static int usage(void)
{
	fprintf(stderr, "usage: gk_train --module PATH (--check | --run [--model 124M|350M|774M] [--prec fp32|tf32|bf16] "
			"[--batch N] [--seq N] [--grad-accum N] [--steps N] [--lr X] [--gpus N]) [--device N] [--json FILE]\n");
	return 2;
}

static double aux_of(const struct gk_result *r, const char *name)
{
	for (int i = 0; i < r->naux; i++)
		if (strcmp(r->aux[i].name, name) == 0)
			return r->aux[i].value;
	return NAN;
}

int main(int argc, char **argv)
{
	const char *module = NULL, *json = NULL, *model = "124M";
	bool check = false, run = false, peak = false;
	struct ktrain_opts o;
	ktrain_opts_default(&o);
	int steps = 50, device = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--check")) check = true;
		else if (!strcmp(a, "--run")) run = true;
		else if (!strcmp(a, "--gemm-peak")) peak = true;
		else if (!v) return usage();
		else if (!strcmp(a, "--module")) module = argv[++i];
		else if (!strcmp(a, "--json")) json = argv[++i];
		else if (!strcmp(a, "--model")) model = argv[++i];
		else if (!strcmp(a, "--prec")) { o.prec = kmod_prec_parse(argv[++i]); if (o.prec < 0) return usage(); }
		else if (!strcmp(a, "--batch")) o.batch = atoi(argv[++i]);
		else if (!strcmp(a, "--seq")) o.seq = atoi(argv[++i]);
		else if (!strcmp(a, "--grad-accum")) o.grad_accum = atoi(argv[++i]);
		else if (!strcmp(a, "--steps")) steps = atoi(argv[++i]);
		else if (!strcmp(a, "--lr")) o.lr = (float)atof(argv[++i]);
		else if (!strcmp(a, "--device")) device = atoi(argv[++i]);
		else if (!strcmp(a, "--gpus")) {
			o.ndevs = atoi(argv[++i]);
			if (o.ndevs < 1 || o.ndevs > GK_MAX_DEVS) return usage();
			for (int d = 0; d < o.ndevs; d++) o.devs[d] = d;
		}
		else return usage();
	}
	if (!module || (!check && !run && !peak) || ktrain_preset(model, &o.m) != 0 || steps < 6 || steps > GK_MAX_SAMPLES + 3)
		return usage();
	struct kmod km;
	char err[512];
	if (kmod_open_default(&km, module, NULL, err, sizeof err) != KMOD_OK) {
		fprintf(stderr, "gk_train: %s\n", err);
		return 1;
	}
	FILE *jf = json ? fopen(json, "a") : NULL;
	int failed = 0;
	struct gk_common c = { .device = device, .seed = 1 };
	if (check) {
		static const int precs[] = { GK_FP32, GK_TF32, GK_BF16 };
		for (int i = 0; i < 3; i++) {
			struct gk_result r;
			int rc = ktrain_run_check(km.api, &c, precs[i], &r);
			failed += rc != GK_OK;
			printf("%s train_check %s: loss %.6f (cpu %.6f, error %.2g), worst gradient error %.3g of max (tolerance %.2g)%s%s\n",
			       rc == GK_OK ? "PASS" : "FAIL", kmod_prec_name(precs[i]), aux_of(&r, "loss_gpu"), aux_of(&r, "loss_cpu"),
			       aux_of(&r, "loss_err"), aux_of(&r, "grad_err"), aux_of(&r, "grad_tol"), r.err[0] ? ": " : "", r.err);
			if (jf)
				fprintf(jf, "{\"test\":\"train_check\",\"prec\":\"%s\",\"rc\":%d,\"loss_gpu\":%.8g,\"loss_cpu\":%.8g,"
					"\"grad_err\":%.4g,\"grad_tol\":%.4g}\n", kmod_prec_name(precs[i]), rc, aux_of(&r, "loss_gpu"),
					aux_of(&r, "loss_cpu"), aux_of(&r, "grad_err"), aux_of(&r, "grad_tol"));
		}
	}
	if (peak) {
		static const int precs[] = { GK_BF16, GK_TF32, GK_FP32 };
		for (int i = 0; i < 3; i++) {
			struct gk_gemm_args g = { .c = c, .lib = GK_CUBLASLT, .prec = precs[i], .m = 8192, .n = 8192, .k = 8192 };
			g.c.iters = 20;
			struct gk_result r;
			int rc = km.api->gemm(&g, &r);
			struct stats st = { 0 };
			stats_compute(r.samples_ms, (size_t)r.nsamples, &st);
			double tf = rc == GK_OK && st.median > 0 ? r.flops / (st.median * 1e-3) / 1e12 : NAN;
			failed += rc != GK_OK;
			printf("%s gemm_peak %s: %.1f TFLOP/s%s%s\n", rc == GK_OK ? "PASS" : "FAIL", kmod_prec_name(precs[i]), tf,
			       r.err[0] ? ": " : "", r.err);
			if (jf)
				fprintf(jf, "{\"test\":\"gemm_peak\",\"prec\":\"%s\",\"rc\":%d,\"tflops\":%.2f}\n", kmod_prec_name(precs[i]),
					rc, tf);
		}
	}
	if (run) {
		c.warmup = 3;
		c.iters = steps - 3;
		float losses[GK_MAX_SAMPLES + 3];
		struct gk_result r;
		int rc = ktrain_run(km.api, &c, &o, &r, losses, GK_MAX_SAMPLES + 3);
		failed += rc != GK_OK;
		struct stats st = { 0 };
		stats_compute(r.samples_ms, (size_t)r.nsamples, &st);
		double tokens = aux_of(&r, "tokens"), ms = st.median;
		double tps = ms > 0 ? tokens / (ms * 1e-3) : NAN, tflops = ms > 0 ? r.flops / (ms * 1e-3) / 1e12 : NAN;
		printf("%s train %s %s batch %d seq %d accum %d gpus %d: step %.2f ms (min %.2f, max %.2f), %.0f tokens/s, %.1f TFLOP/s, "
		       "memory %.2f GiB (model %.2f), loss %.4f -> %.4f%s%s\n", rc == GK_OK ? "PASS" : "FAIL", model,
		       kmod_prec_name(o.prec), o.batch, o.seq, o.grad_accum, o.ndevs, ms, st.min, st.max, tps, tflops, aux_of(&r, "mem_gib"),
		       aux_of(&r, "model_gib"), losses[0], losses[steps - 1], r.err[0] ? ": " : "", r.err);
		printf("losses:");
		for (int i = 0; i < steps && i < r.nsamples + 3; i++)
			printf(" %.4f", losses[i]);
		printf("\n");
		if (jf) {
			fprintf(jf, "{\"test\":\"train\",\"model\":\"%s\",\"prec\":\"%s\",\"batch\":%d,\"seq\":%d,\"grad_accum\":%d,\"gpus\":%d,\"rc\":%d,"
				"\"step_ms\":%.4f,\"tokens_per_s\":%.1f,\"tflops\":%.2f,\"mem_gib\":%.3f,\"loss_first\":%.5f,"
				"\"loss_last\":%.5f,\"samples_ms\":[", model, kmod_prec_name(o.prec), o.batch, o.seq, o.grad_accum, o.ndevs, rc,
				ms, tps, tflops, aux_of(&r, "mem_gib"), losses[0], losses[steps - 1]);
			for (int i = 0; i < r.nsamples; i++)
				fprintf(jf, "%s%.4f", i ? "," : "", r.samples_ms[i]);
			fprintf(jf, "]}\n");
		}
	}
	if (jf)
		fclose(jf);
	kmod_close(&km);
	return failed ? 1 : 0;
}
