/* SPDX-License-Identifier: Apache-2.0 */
/* limits.c - see limits.h. */
#include "limits.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/pcie.h"

#include "train_plan.h"

static int set_limit(double v, double *limit, char *what, size_t whatlen, const char *fmt_model,
		     const char *figure, const char *unit)
{
	if (!(v > 0.0) || !isfinite(v))
		return -1;
	*limit = v;
	snprintf(what, whatlen, "%s %s %.6g %s", fmt_model, figure, v, unit);
	return 0;
}

/* Tensor/cuBLAS datasheet figure for a precision name; NAN if unknown. */
static double gemm_tflops(const struct cat_gpu *g, const char *prec, const char **figure)
{
	*figure = prec;
	if (strcmp(prec, "fp64") == 0) {
		*figure = "fp64_tc";
		return g->tflops_fp64_tc > 0 ? g->tflops_fp64_tc : g->tflops_fp64;
	}
	if (strcmp(prec, "fp32") == 0) return g->tflops_fp32;
	if (strcmp(prec, "tf32") == 0) return g->tflops_tf32;
	if (strcmp(prec, "fp16") == 0) return g->tflops_fp16;
	if (strcmp(prec, "bf16") == 0) return g->tflops_bf16;
	if (strcmp(prec, "fp8") == 0 || strcmp(prec, "fp8_e4m3") == 0) return g->tflops_fp8;
	if (strcmp(prec, "int8") == 0) return g->tflops_int8;
	return NAN;
}

/* Non-tensor FMA peak. Packed FP16/BF16 without tensor cores is not in the
 * catalog: NVIDIA's whitepapers give it as 2x FP32 on Hopper and 4x on A100. */
static double fma_tflops(const struct cat_gpu *g, const char *prec, const char **figure)
{
	*figure = prec;
	if (strcmp(prec, "fp64") == 0) return g->tflops_fp64;
	if (strcmp(prec, "fp32") == 0) return g->tflops_fp32;
	if (strcmp(prec, "fp16x2") == 0 || strcmp(prec, "bf16x2") == 0) {
		if (strcmp(g->architecture, "Hopper") == 0) {
			*figure = "2x fp32 (Hopper non-tensor half)";
			return 2.0 * g->tflops_fp32;
		}
		if (g->cc_major == 8 && g->cc_minor == 0) {
			*figure = "4x fp32 (A100 non-tensor half)";
			return 4.0 * g->tflops_fp32;
		}
	}
	return NAN;
}

int bench_datasheet_limit(const struct cat_gpu *g, const struct bench_result *r, double *limit, char *what, size_t whatlen)
{
	if (!g || !r)
		return -1;
	const char *fig = NULL;
	const char *s = r->suite, *t = r->test, *v = r->variant;
	bool flops = r->metric == BM_TFLOPS || r->metric == BM_GFLOPS;
	double tf_to_unit = r->metric == BM_GFLOPS ? 1e3 : 1.0;
	double pcie = pcie_gbs(g->pcie_gen, g->pcie_width ? g->pcie_width : 16);

	if (strcmp(s, "copy") == 0 && r->metric == BM_BANDWIDTH) {
		/* bidirectional copies move both directions at once */
		double mult = strcmp(t, "bidir") == 0 ? 2.0 : 1.0;
		char f[40];
		snprintf(f, sizeof(f), "PCIe Gen%u x%u%s", g->pcie_gen, g->pcie_width ? g->pcie_width : 16,
			 mult > 1 ? " both ways" : "");
		return set_limit(pcie * mult, limit, what, whatlen, g->key, f, "GB/s");
	}
	if (strcmp(s, "memory") == 0 && r->metric == BM_BANDWIDTH)
		return set_limit(g->mem_bw_gbs, limit, what, whatlen, g->key, "mem_bw", "GB/s");
	if ((strcmp(s, "compute") == 0 && strcmp(t, "fma") == 0) && flops) {
		double tf = fma_tflops(g, v, &fig);
		return set_limit(tf * tf_to_unit, limit, what, whatlen, g->key, fig, r->unit);
	}
	/* a training step's TFLOP/s over its precision's tensor peak is its MFU */
	if ((strcmp(s, "compute") == 0 || strcmp(s, "gemm") == 0 || strcmp(s, "sustained") == 0 ||
	     strcmp(s, "train") == 0) && flops) {
		double tf = gemm_tflops(g, v[0] ? v : "fp32", &fig);
		return set_limit(tf * tf_to_unit, limit, what, whatlen, g->key, fig, r->unit);
	}
	if (strcmp(s, "p2p") == 0 && r->metric == BM_BANDWIDTH) {
		double mult = strcmp(v, "bidir") == 0 ? 1.0 : 0.5;
		if (strcmp(t, "host") == 0) {
			/* staged through host memory: bounded by PCIe, one direction per GPU */
			return set_limit(pcie * mult * 2.0, limit, what, whatlen, g->key,
					 mult < 1 ? "PCIe per direction" : "PCIe both ways", "GB/s");
		}
		double links = bench_result_aux(r, "nvlinks");
		if (g->nvlink_bw_gbs > 0 && g->nvlink_links > 0 && links > 0) {
			double share = links >= g->nvlink_links ? 1.0 : links / (double)g->nvlink_links;
			return set_limit(g->nvlink_bw_gbs * mult * share, limit, what, whatlen, g->key,
					 mult < 1 ? "NVLink per direction" : "NVLink both ways", "GB/s");
		}
		if (links == 0)
			return set_limit(pcie * mult * 2.0, limit, what, whatlen, g->key,
					 mult < 1 ? "PCIe per direction" : "PCIe both ways", "GB/s");
		return -1;
	}
	if (strcmp(s, "nccl") == 0 && r->metric == BM_BUSBW) {
		/* nccl-tests' bus bandwidth is comparable to one link direction */
		if (g->nvlink_bw_gbs > 0)
			return set_limit(g->nvlink_bw_gbs / 2.0, limit, what, whatlen, g->key, "NVLink per direction", "GB/s");
		return set_limit(pcie, limit, what, whatlen, g->key, "PCIe per direction", "GB/s");
	}
	return -1;
}

void bench_thresholds_init(struct bench_thresholds *t)
{
	memset(t, 0, sizeof(*t));
	t->all = NAN;
}

static int parse_ratio(const char *s, size_t len, double *out)
{
	char buf[32];
	if (len == 0 || len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	char *end;
	double v = strtod(buf, &end);
	if (*end || !(v > 0.0 && v <= 2.0))
		return -1;
	*out = v;
	return 0;
}

int bench_thresholds_parse(struct bench_thresholds *t, const char *spec, char *err, size_t errlen)
{
	if (!spec || !*spec) {
		snprintf(err, errlen, "empty threshold");
		return -1;
	}
	const char *p = spec;
	while (*p) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		const char *eq = memchr(p, '=', len);
		double v;
		if (!eq) {
			if (parse_ratio(p, len, &v) != 0) {
				snprintf(err, errlen, "bad ratio '%.*s' (want a number in (0, 2])", (int)len, p);
				return -1;
			}
			t->all = v;
		} else {
			size_t nlen = (size_t)(eq - p);
			if (nlen == 0 || nlen >= sizeof(t->per[0].suite)) {
				snprintf(err, errlen, "bad suite name in '%.*s'", (int)len, p);
				return -1;
			}
			if (parse_ratio(eq + 1, len - nlen - 1, &v) != 0) {
				snprintf(err, errlen, "bad ratio in '%.*s' (want a number in (0, 2])", (int)len, p);
				return -1;
			}
			unsigned i;
			for (i = 0; i < t->n; i++)
				if (strlen(t->per[i].suite) == nlen && strncmp(t->per[i].suite, p, nlen) == 0)
					break;
			if (i == t->n) {
				if (t->n >= BENCH_MAX_THRESHOLDS) {
					snprintf(err, errlen, "too many per-suite thresholds");
					return -1;
				}
				t->n++;
				memcpy(t->per[i].suite, p, nlen);
				t->per[i].suite[nlen] = '\0';
			}
			t->per[i].min = v;
		}
		if (!comma)
			break;
		p = comma + 1;
		if (!*p) {
			snprintf(err, errlen, "trailing ',' in '%s'", spec);
			return -1;
		}
	}
	return 0;
}

double bench_threshold_for(const struct bench_thresholds *t, const char *suite)
{
	if (!t)
		return NAN;
	for (unsigned i = 0; i < t->n; i++)
		if (strcmp(t->per[i].suite, suite) == 0)
			return t->per[i].min;
	return t->all;
}

size_t bench_apply_limits(struct bench_run *run, const struct cat_gpu *const *cat_for_gpu, unsigned ncat,
			  const struct bench_thresholds *t)
{
	size_t low = 0;
	for (size_t i = 0; i < run->n; i++) {
		struct bench_result *r = &run->r[i];
		if (r->status != BS_OK && r->status != BS_LOW)
			continue;
		unsigned gi = r->gpu >= 0 ? (unsigned)r->gpu : 0;
		const struct cat_gpu *g = cat_for_gpu && gi < ncat ? cat_for_gpu[gi] : NULL;
		double lim;
		r->limit = NAN;
		r->ratio = NAN;
		r->limit_what[0] = '\0';
		if (bench_datasheet_limit(g, r, &lim, r->limit_what, sizeof(r->limit_what)) == 0) {
			r->limit = lim;
			/* latency-like metrics would invert; only rates have limits */
			r->ratio = r->value.median / lim;
		}
		if (t)
			r->min_ratio = bench_threshold_for(t, r->suite);
		r->status = BS_OK;
		if (!isnan(r->min_ratio) && !isnan(r->ratio) && r->ratio < r->min_ratio)
			r->status = BS_LOW;
		train_plan_apply(r); /* a training step beside the planner's prediction, its memory rule */
		low += r->status == BS_LOW;
	}
	return low;
}

void bench_saved_catalog(const struct bench_run *run, const struct catalog *cat, const struct cat_gpu **for_gpu)
{
	for (unsigned i = 0; i < BENCH_MAX_GPUS; i++)
		for_gpu[i] = NULL;
	for (unsigned i = 0; i < run->ngpus; i++) {
		const struct bench_gpu_info *g = &run->gpu[i];
		if (g->index >= 0 && g->index < BENCH_MAX_GPUS && g->catalog_model[0])
			for_gpu[g->index] = catalog_find(cat, g->catalog_model);
	}
}
