/* SPDX-License-Identifier: Apache-2.0 */
/* diag_eval.c - see diag_eval.h. */
#include "diag_eval.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/numfmt.h"
#include "core/pcie.h"
#include "core/stats.h"

static const char *const test_names[DT_COUNT] = {
	"memtest", "pcie_h2d", "pcie_d2h", "p2p", "mem_bw", "gemm_fp32", "gemm_tf32", "gemm_bf16", "gemm_fp8",
	"nccl_all_reduce", "sustained",
};

const char *diag_test_name(enum diag_test t)
{
	return (unsigned)t < DT_COUNT ? test_names[t] : "?";
}

/*
 * The shares. Reference ratios (2x H200 SXM, docs/h200-readings.md):
 *   pinned H2D/D2H 54.3-55.4 of 64 GB/s = 0.85-0.87    -> x0.9 -> 0.75
 *   P2P over NVLink 391-396 of 450 GB/s = 0.87-0.88    -> 0.75
 *   device copy 4.16-4.21 of 4.8 TB/s = 0.87-0.88      -> 0.70
 *     (gpuctl's own copy kernel: 4.01 TB/s = 0.84 alone; 3.53 = 0.74 when it
 *     ran beside the other GPU's tests, diag's first H200 run, 2026-11-30)
 *   GEMM FP32 0.76, TF32 0.82, BF16 0.79, FP8 0.69     -> 0.65, 0.65, 0.65, 0.60
 *     (diag's verified stress GEMM, 2026-11-30: FP32 0.76, TF32 0.74,
 *     BF16 0.73, FP8 0.67: the shares keep a 10% margin under those)
 *   NCCL all-reduce 2 GPUs busbw 327 of 450 GB/s = 0.73 -> 0.65
 * Without a reference measurement (P2P or NCCL over PCIe) the share is a
 * conservative 0.50 / 0.40 and docs/diag.md says so. Sustained load: the
 * throughput at the end must stay within 15% of the start (the guide's C8).
 */
double diag_factor(enum diag_test t, bool nvlink)
{
	switch (t) {
	case DT_PCIE_H2D:
	case DT_PCIE_D2H: return 0.75;
	case DT_P2P: return nvlink ? 0.75 : 0.50;
	case DT_MEM_BW: return 0.70;
	case DT_GEMM_FP32: return 0.65;
	case DT_GEMM_TF32: return 0.65;
	case DT_GEMM_BF16: return 0.65;
	case DT_GEMM_FP8: return 0.60;
	case DT_NCCL_ALLREDUCE: return nvlink ? 0.65 : 0.40;
	case DT_SUSTAINED: return 0.85;
	default: return NAN;
	}
}

static int set_th(struct diag_threshold *o, double datasheet, double factor, const char *unit, const char *what)
{
	if (!(datasheet > 0) || !isfinite(datasheet))
		return -1;
	o->defined = true;
	o->datasheet = datasheet;
	o->factor = factor;
	o->min = datasheet * factor;
	snprintf(o->unit, sizeof(o->unit), "%s", unit);
	snprintf(o->basis, sizeof(o->basis), "%.2f x %.6g%s%s (%s)", factor, datasheet, *unit ? " " : "", unit, what);
	return 0;
}

int diag_threshold_for(const struct cat_gpu *g, enum diag_test t, unsigned nvlinks, struct diag_threshold *out)
{
	memset(out, 0, sizeof(*out));
	if (!g || (unsigned)t >= DT_COUNT || t == DT_MEMTEST)
		return -1;
	char what[120];
	bool nvl = nvlinks > 0 && g->nvlink_links > 0 && g->nvlink_bw_gbs > 0;
	double f = diag_factor(t, nvl);
	unsigned width = g->pcie_width ? g->pcie_width : 16;
	double pcie = pcie_gbs(g->pcie_gen, width);
	/* per direction over the links a pair has (all of them through NVSwitch) */
	double nvl_bw = nvl ? g->nvlink_bw_gbs / 2 * fmin(1.0, (double)nvlinks / g->nvlink_links) : NAN;
	switch (t) {
	case DT_PCIE_H2D:
	case DT_PCIE_D2H:
		snprintf(what, sizeof(what), "%s PCIe Gen%u x%u per direction", g->key, g->pcie_gen, width);
		return set_th(out, pcie, f, "GB/s", what);
	case DT_P2P:
	case DT_NCCL_ALLREDUCE:
		if (nvl) {
			snprintf(what, sizeof(what), "%s NVLink %u of %u links per direction", g->key,
				 nvlinks < g->nvlink_links ? nvlinks : g->nvlink_links, g->nvlink_links);
			return set_th(out, nvl_bw, f, "GB/s", what);
		}
		snprintf(what, sizeof(what), "%s PCIe Gen%u x%u per direction, no NVLink", g->key, g->pcie_gen, width);
		return set_th(out, pcie, f, "GB/s", what);
	case DT_MEM_BW:
		snprintf(what, sizeof(what), "%s memory bandwidth", g->key);
		return set_th(out, g->mem_bw_gbs, f, "GB/s", what);
	case DT_GEMM_FP32:
		snprintf(what, sizeof(what), "%s FP32 dense", g->key);
		return set_th(out, g->tflops_fp32, f, "TFLOP/s", what);
	case DT_GEMM_TF32:
		snprintf(what, sizeof(what), "%s TF32 dense", g->key);
		return set_th(out, g->tflops_tf32, f, "TFLOP/s", what);
	case DT_GEMM_BF16:
		snprintf(what, sizeof(what), "%s BF16 dense", g->key);
		return set_th(out, g->tflops_bf16, f, "TFLOP/s", what);
	case DT_GEMM_FP8:
		snprintf(what, sizeof(what), "%s FP8 dense", g->key);
		return set_th(out, g->tflops_fp8, f, "TFLOP/s", what);
	case DT_SUSTAINED:
		return set_th(out, 1.0, f, "", "end/start throughput of a sustained load");
	default:
		return -1;
	}
}

void diag_judge(double measured, const struct diag_threshold *th, struct diag_judgement *out)
{
	const char *u = th->unit, *sp = *th->unit ? " " : "";
	if (!isfinite(measured)) {
		out->verdict = HEALTH_FAIL;
		snprintf(out->detail, sizeof(out->detail), "no valid measurement");
		return;
	}
	if (!th->defined) {
		out->verdict = HEALTH_NA;
		snprintf(out->detail, sizeof(out->detail), "measured %.4g (no threshold: the catalog lacks the figure)",
			 measured);
		return;
	}
	out->verdict = measured < th->min ? HEALTH_FAIL : HEALTH_PASS;
	char m[48], t[48];
	snprintf(out->detail, sizeof(out->detail), "measured %s%s%s %s threshold %s%s%s (%.120s)",
		 numfmt(m, sizeof(m), measured, 4), sp, u, out->verdict == HEALTH_FAIL ? "<" : ">=",
		 numfmt(t, sizeof(t), th->min, 4), sp, u, th->basis);
}

void diag_judge_errors(uint64_t errors, uint64_t checked, const char *what, struct diag_judgement *out)
{
	out->verdict = errors ? HEALTH_FAIL : (checked ? HEALTH_PASS : HEALTH_FAIL);
	if (!checked)
		snprintf(out->detail, sizeof(out->detail), "nothing was checked");
	else
		snprintf(out->detail, sizeof(out->detail), "%llu %.40s in %llu checked (threshold 0)",
			 (unsigned long long)errors, what, (unsigned long long)checked);
}

unsigned diag_variation(const double *values, const bool *valid, unsigned n, double max_slower_pct, bool *slow,
			double *pct_below)
{
	unsigned nvalid = 0, nslow = 0;
	for (unsigned i = 0; i < n; i++) {
		slow[i] = false;
		pct_below[i] = 0;
		nvalid += valid[i] && isfinite(values[i]);
	}
	if (nvalid < 2)
		return 0;
	double *others = malloc(sizeof(double) * n);
	if (!others)
		return 0;
	for (unsigned i = 0; i < n; i++) {
		if (!valid[i] || !isfinite(values[i]))
			continue;
		unsigned k = 0;
		for (unsigned j = 0; j < n; j++)
			if (j != i && valid[j] && isfinite(values[j]))
				others[k++] = values[j];
		stats_sort(others, k);
		double med = stats_percentile_sorted(others, k, 50);
		if (!(med > 0))
			continue;
		pct_below[i] = 100.0 * (med - values[i]) / med;
		if (pct_below[i] > max_slower_pct) {
			slow[i] = true;
			nslow++;
		}
	}
	free(others);
	return nslow;
}

/* ---- environment ---------------------------------------------------------- */

static void add(struct diag_check *out, unsigned max, unsigned *n, const char *name, enum health_verdict v,
		const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static void add(struct diag_check *out, unsigned max, unsigned *n, const char *name, enum health_verdict v,
		const char *fmt, ...)
{
	if (*n >= max)
		return;
	struct diag_check *c = &out[(*n)++];
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->verdict = v;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->detail, sizeof(c->detail), fmt, ap);
	va_end(ap);
}

static bool is_true(const char *s)
{
	return s && (strcmp(s, "1") == 0 || strcasecmp(s, "true") == 0 || strcasecmp(s, "yes") == 0);
}

/* Does one CUDA_VISIBLE_DEVICES entry name a GPU (or MIG instance) of s? */
static bool cvd_entry_ok(const char *e, const struct snapshot *s, int *index)
{
	*index = -1;
	char *end;
	long v = strtol(e, &end, 10);
	if (end != e && *end == '\0') {
		*index = (int)v;
		return v >= 0 && v < (long)s->n;
	}
	size_t len = strlen(e);
	for (unsigned i = 0; i < s->n; i++) {
		const struct gpu_view *g = &s->gpu[i];
		/* CUDA accepts a unique UUID prefix ("GPU-8f3e12ab") */
		if (VAL_HAS(g->st.uuid) && len >= 5 && strncasecmp(g->st.uuid.s, e, len) == 0) {
			*index = (int)i;
			return true;
		}
		for (unsigned m = 0; m < g->nmig && m < GPU_MAX_MIG; m++)
			if (len >= 5 && strncasecmp(g->mig[m].uuid, e, len) == 0) {
				*index = (int)i;
				return true;
			}
	}
	return false;
}

static void check_cvd(const char *cvd, const struct snapshot *s, struct diag_check *out, unsigned max, unsigned *n)
{
	const char *name = "cuda_visible_devices";
	if (!cvd) {
		add(out, max, n, name, HEALTH_PASS, "unset: CUDA sees all %u GPUs", s->n);
		return;
	}
	if (!*cvd) {
		add(out, max, n, name, HEALTH_WARN, "set but empty: CUDA sees no GPU");
		return;
	}
	char buf[512];
	snprintf(buf, sizeof(buf), "%s", cvd);
	bool seen[GPU_MAX_GPUS] = { false };
	unsigned count = 0;
	char *save = NULL;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		while (*tok == ' ')
			tok++;
		int idx;
		if (!cvd_entry_ok(tok, s, &idx)) {
			add(out, max, n, name, HEALTH_WARN,
			    "'%.60s' names no GPU here: CUDA ignores it and every entry after it (%u usable)", tok, count);
			return;
		}
		if (idx >= 0 && idx < GPU_MAX_GPUS && seen[idx]) {
			add(out, max, n, name, HEALTH_WARN, "GPU %d is listed twice in '%.100s'", idx, cvd);
			return;
		}
		if (idx >= 0 && idx < GPU_MAX_GPUS)
			seen[idx] = true;
		count++;
	}
	add(out, max, n, name, HEALTH_PASS, "'%.100s': CUDA sees %u of %u GPUs", cvd, count, s->n);
}

unsigned diag_env_check(const struct diag_env *env, const struct snapshot *s, struct diag_check *out, unsigned max)
{
	unsigned n = 0;
	check_cvd(env->cuda_visible_devices, s, out, max, &n);

	/* CUDA numbers GPUs fastest first unless told PCI_BUS_ID; with different
	 * models that order differs from NVML's (nvidia-smi, gpuctl). */
	bool mixed = false;
	for (unsigned i = 1; i < s->n; i++)
		if (VAL_HAS(s->gpu[i].st.name) && VAL_HAS(s->gpu[0].st.name) &&
		    strcmp(s->gpu[i].st.name.s, s->gpu[0].st.name.s) != 0)
			mixed = true;
	const char *order = env->cuda_device_order;
	if (order && strcmp(order, "PCI_BUS_ID") == 0)
		add(out, max, &n, "cuda_device_order", HEALTH_PASS, "PCI_BUS_ID: CUDA numbers GPUs as nvidia-smi does");
	else if (mixed)
		add(out, max, &n, "cuda_device_order", HEALTH_WARN,
		    "%s with different GPU models: CUDA's GPU numbers differ from nvidia-smi's (set CUDA_DEVICE_ORDER=PCI_BUS_ID)",
		    order ? order : "unset (FASTEST_FIRST)");
	else
		add(out, max, &n, "cuda_device_order", HEALTH_PASS, "%s: one GPU model, same numbering as nvidia-smi",
		    order ? order : "unset");

	if (is_true(env->cuda_launch_blocking))
		add(out, max, &n, "cuda_launch_blocking", HEALTH_WARN,
		    "CUDA_LAUNCH_BLOCKING=%s serializes every kernel launch (a debugging setting)", env->cuda_launch_blocking);
	bool has_nvlink = false;
	for (unsigned i = 0; i < s->n; i++)
		for (unsigned j = 0; j < s->n; j++)
			has_nvlink |= i != j && s->link[i][j].kind == LINK_NVLINK;
	if (is_true(env->nccl_p2p_disable))
		add(out, max, &n, "nccl_p2p_disable", has_nvlink ? HEALTH_WARN : HEALTH_PASS,
		    "NCCL_P2P_DISABLE=%s: NCCL will not use %s", env->nccl_p2p_disable,
		    has_nvlink ? "NVLink between these GPUs" : "peer-to-peer copies");
	if (is_true(env->nccl_shm_disable))
		add(out, max, &n, "nccl_shm_disable", HEALTH_WARN, "NCCL_SHM_DISABLE=%s: NCCL will not use shared memory",
		    env->nccl_shm_disable);
	return n;
}
