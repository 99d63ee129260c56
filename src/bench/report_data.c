/* SPDX-License-Identifier: Apache-2.0 */
/* report_data.c - what the report shows, picked from a run (pure; see report.h). */
#include "report.h"

#include "latency.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct bench_result *best(const struct bench_run *run, const char *suite, const char *test,
				       const char *variant)
{
	struct claim_sel s;
	memset(&s, 0, sizeof(s));
	snprintf(s.suite, sizeof(s.suite), "%s", suite);
	snprintf(s.test, sizeof(s.test), "%s", test);
	snprintf(s.variant, sizeof(s.variant), "%s", variant ? variant : "");
	return claims_pick(run, &s);
}

unsigned report_highlights(const struct bench_run *run, struct report_highlight *out, unsigned max)
{
	static const struct { const char *label, *suite, *test, *variant; } list[] = {
		{ "device memory copy (read+write)", "memory", "copy", NULL },
		{ "device memory triad", "memory", "triad", NULL },
		{ "HBM latency (working sets >= 8x L2)", "memory", "latency", "hbm" },
		{ "L2 latency (1 MiB .. L2/4)", "memory", "latency", "l2" },
		{ "host to device, pinned", "copy", "h2d", "pinned" },
		{ "device to host, pinned", "copy", "d2h", "pinned" },
		{ "host to device, pageable", "copy", "h2d", "pageable" },
		{ "FP64 FMA peak", "compute", "fma", "fp64" },
		{ "FP32 FMA peak", "compute", "fma", "fp32" },
		{ "GEMM FP64 (cuBLAS)", "compute", "cublas", "fp64" },
		{ "GEMM FP32 (cuBLAS)", "compute", "cublas", "fp32" },
		{ "GEMM TF32 (cuBLAS)", "compute", "cublas", "tf32" },
		{ "GEMM FP16 (cuBLAS)", "compute", "cublas", "fp16" },
		{ "GEMM BF16 (cuBLAS)", "compute", "cublas", "bf16" },
		{ "GEMM FP8 (cuBLASLt)", "compute", "cublaslt", "fp8_e4m3" },
		{ "our best FP32 GEMM (register-blocked)", "gemm", "regblock", "fp32" },
		{ "P2P one way (copy engine)", "p2p", "ce", "uni" },
		{ "P2P both ways (copy engine)", "p2p", "ce", "bidir" },
		{ "P2P staged through host", "p2p", "host", "uni" },
		{ "NCCL all-reduce bus bandwidth", "nccl", "all_reduce", NULL },
		{ "host memcpy (read+write)", "host", "memcpy", NULL },
		{ "sustained BF16 GEMM", "sustained", "gemm", NULL },
	};
	unsigned n = 0;
	for (unsigned i = 0; i < sizeof(list) / sizeof(list[0]) && n < max; i++) {
		out[n].label = list[i].label;
		out[n].r = run ? best(run, list[i].suite, list[i].test, list[i].variant) : NULL;
		out[n].best_of_variants = !list[i].variant;
		n++;
	}
	return n;
}

#define MAX_CANDIDATES 256

static bool is_latency_point(const struct bench_result *r)
{
	return r->metric == BM_LATENCY_NS && !strcmp(r->suite, "memory") && !strcmp(r->test, "latency") &&
	       !strcmp(r->variant, "sweep");
}

/* Series of figures over sizes: bandwidths, or the memory latency sweep's points. */
static unsigned size_series(const struct bench_run *run, bool latency, struct report_series *res, unsigned max)
{
	/* every (suite, test, variant, gpu, peer) first; only sweeps are kept at the end */
	struct report_series *out = calloc(MAX_CANDIDATES, sizeof(*out));
	if (!out)
		return 0;
	unsigned ns = 0;
	for (size_t i = 0; run && i < run->n; i++) {
		const struct bench_result *r = &run->r[i];
		if ((r->status != BS_OK && r->status != BS_LOW) || !r->size_bytes)
			continue;
		if (latency ? !is_latency_point(r) : r->metric != BM_BANDWIDTH && r->metric != BM_BUSBW)
			continue;
		char name[112];
		if (r->peer >= 0)
			snprintf(name, sizeof(name), "%s %s %s GPU%d->%d", r->suite, r->test, r->variant, r->gpu, r->peer);
		else if (r->gpu >= 0)
			snprintf(name, sizeof(name), "%s %s %s GPU%d", r->suite, r->test, r->variant, r->gpu);
		else
			snprintf(name, sizeof(name), "%s %s%s%s", r->suite, r->test, r->metric == BM_BUSBW ? " busbw" : "",
				 r->variant);
		unsigned k;
		for (k = 0; k < ns; k++)
			if (strcmp(out[k].name, name) == 0)
				break;
		if (k == ns) {
			if (ns >= MAX_CANDIDATES)
				continue;
			memset(&out[ns], 0, sizeof(out[ns]));
			snprintf(out[ns].name, sizeof(out[ns].name), "%s", name);
			ns++;
		}
		struct report_series *s = &out[k];
		if (s->n < REPORT_MAX_POINTS) {
			/* keep x ascending */
			unsigned at = s->n;
			while (at > 0 && s->x[at - 1] > (double)r->size_bytes) {
				s->x[at] = s->x[at - 1];
				s->y[at] = s->y[at - 1];
				at--;
			}
			s->x[at] = (double)r->size_bytes;
			s->y[at] = r->value.median;
			s->n++;
		}
	}
	/* only series that sweep sizes */
	unsigned w = 0;
	for (unsigned k = 0; k < ns && w < max; k++)
		if (out[k].n >= 2)
			res[w++] = out[k];
	free(out);
	return w;
}

unsigned report_bw_series(const struct bench_run *run, struct report_series *res, unsigned max)
{
	return size_series(run, false, res, max);
}

unsigned report_latency_series(const struct bench_run *run, struct report_series *res, unsigned max)
{
	return size_series(run, true, res, max);
}

static void fmt_bytes(double v, char *out, size_t len)
{
	const char *u = "B";
	if (v >= 1 << 30) { v /= 1 << 30; u = "GiB"; } else if (v >= 1 << 20) { v /= 1 << 20; u = "MiB"; }
	else if (v >= 1 << 10) { v /= 1 << 10; u = "KiB"; }
	snprintf(out, len, "%g %s", v, u);
}

void report_latency_steps_text(const struct report_series *s, char *out, size_t len)
{
	uint64_t ws[REPORT_MAX_POINTS];
	struct bench_lat_step st[REPORT_MAX_POINTS];
	for (unsigned i = 0; i < s->n; i++)
		ws[i] = (uint64_t)s->x[i];
	unsigned n = bench_latency_steps(ws, s->y, s->n, REPORT_LAT_RISE, st, REPORT_MAX_POINTS);
	size_t at = 0;
	out[0] = '\0';
	for (unsigned i = 0; i < n && at < len; i++) {
		char a[24], b[24];
		fmt_bytes((double)st[i].first_ws, a, sizeof(a));
		fmt_bytes((double)st[i].last_ws, b, sizeof(b));
		int w = st[i].first_ws == st[i].last_ws
				? snprintf(out + at, len - at, "%s%s: %.0f ns", i ? "; " : "", a, st[i].ns)
				: snprintf(out + at, len - at, "%s%s .. %s: %.0f ns", i ? "; " : "", a, b, st[i].ns);
		if (w < 0)
			break;
		at += (size_t)w;
	}
}

static double elem_bytes(const char *prec)
{
	if (!strcmp(prec, "fp64")) return 8;
	if (!strcmp(prec, "fp16") || !strcmp(prec, "bf16")) return 2;
	if (!strncmp(prec, "fp8", 3)) return 1;
	return 4;
}

unsigned report_roof_points(const struct bench_run *run, int gpu, struct report_roof_point *out, unsigned max)
{
	unsigned n = 0;
	for (size_t i = 0; run && i < run->n && n < max; i++) {
		const struct bench_result *r = &run->r[i];
		if ((r->status != BS_OK && r->status != BS_LOW) || !(r->flops > 0) || r->gpu != gpu ||
		    !(r->time_ms.median > 0))
			continue;
		double bytes = r->bytes;
		if (r->m && !(bytes > 0)) /* GEMM: A, B read once and C written once at least */
			bytes = elem_bytes(r->variant) * ((double)r->m * r->k + (double)r->k * r->n + (double)r->m * r->n);
		struct report_roof_point *p = &out[n++];
		snprintf(p->name, sizeof(p->name), "%s %s%s%s", r->suite, r->test, r->variant[0] ? " " : "", r->variant);
		p->gflops = r->flops / 1e9 / (r->time_ms.median * 1e-3);
		p->compute_only = !(bytes > 0);
		p->ai = bytes > 0 ? r->flops / bytes : INFINITY;
	}
	return n;
}

unsigned report_p2p_matrix(const struct bench_run *run, double *m, unsigned max_gpus)
{
	unsigned ng = 0;
	for (size_t i = 0; run && i < run->n; i++) {
		const struct bench_result *r = &run->r[i];
		if (!strcmp(r->suite, "p2p") && r->gpu >= 0 && r->peer >= 0) {
			if ((unsigned)r->gpu + 1 > ng) ng = (unsigned)r->gpu + 1;
			if ((unsigned)r->peer + 1 > ng) ng = (unsigned)r->peer + 1;
		}
	}
	if (ng > max_gpus)
		ng = max_gpus;
	for (unsigned i = 0; i < ng * ng; i++)
		m[i] = NAN;
	uint64_t size[64 * 64] = { 0 };
	for (size_t i = 0; ng && ng <= 64 && i < run->n; i++) {
		const struct bench_result *r = &run->r[i];
		if ((r->status != BS_OK && r->status != BS_LOW) || strcmp(r->suite, "p2p") || strcmp(r->test, "ce") ||
		    strcmp(r->variant, "uni") || r->gpu < 0 || r->peer < 0 || (unsigned)r->gpu >= ng ||
		    (unsigned)r->peer >= ng)
			continue;
		unsigned k = (unsigned)r->gpu * ng + (unsigned)r->peer;
		if (isnan(m[k]) || r->size_bytes > size[k]) {
			m[k] = r->value.median;
			size[k] = r->size_bytes;
		}
	}
	return ng;
}

/* ---- rows shared by text and HTML --------------------------------------------- */

const char *const report_inventory_headers[REPORT_INV_COLS] = {
	"GPU", "name", "catalog model", "memory", "PCI bus id", "NUMA", "power limit", "ECC", "MIG", "persistence",
};

static void onoff(char *cell, u64v v)
{
	snprintf(cell, REPORT_CELL, "%s", VAL_HAS(v) ? (v.v ? "on" : "off") : val_status_name(v.st));
}

void report_inventory_row(const struct report *rep, unsigned i, char c[REPORT_INV_COLS][REPORT_CELL])
{
	const struct gpu_static *s = &rep->st[i];
	snprintf(c[0], REPORT_CELL, "%u", s->index);
	snprintf(c[1], REPORT_CELL, "%s", VAL_HAS(s->name) ? s->name.s : "n/a");
	snprintf(c[2], REPORT_CELL, "%s", rep->cat && rep->cat[i] ? rep->cat[i]->key : "not in catalog");
	if (VAL_HAS(s->mem_total_bytes))
		snprintf(c[3], REPORT_CELL, "%.1f GiB", (double)s->mem_total_bytes.v / (1u << 30));
	else
		snprintf(c[3], REPORT_CELL, "n/a");
	snprintf(c[4], REPORT_CELL, "%s", VAL_HAS(s->pci_bus_id) ? s->pci_bus_id.s : "n/a");
	if (VAL_HAS(s->numa_node))
		snprintf(c[5], REPORT_CELL, "%lld", (long long)s->numa_node.v);
	else
		snprintf(c[5], REPORT_CELL, "n/a");
	if (VAL_HAS(s->power_limit_mw))
		snprintf(c[6], REPORT_CELL, "%.0f W", (double)s->power_limit_mw.v / 1e3);
	else
		snprintf(c[6], REPORT_CELL, "n/a");
	onoff(c[7], s->ecc_mode);
	onoff(c[8], s->mig_mode);
	onoff(c[9], s->persistence_mode);
}

const char *const report_highlight_headers[REPORT_HL_COLS] = {
	"figure", "median", "datasheet", "ratio", "measured at", "spread",
};

void report_highlight_row(const struct report_highlight *h, char c[REPORT_HL_COLS][REPORT_CELL])
{
	const struct bench_result *r = h->r;
	if (r && h->best_of_variants && r->variant[0]) /* the fastest checked variant, named */
		snprintf(c[0], REPORT_CELL, "%s, best: %s", h->label, r->variant);
	else
		snprintf(c[0], REPORT_CELL, "%s", h->label);
	if (!r) {
		snprintf(c[1], REPORT_CELL, "not measured");
		for (int k = 2; k < REPORT_HL_COLS; k++)
			c[k][0] = '\0';
		return;
	}
	snprintf(c[1], REPORT_CELL, "%.4g %s", r->value.median, r->unit);
	if (isfinite(r->limit)) {
		snprintf(c[2], REPORT_CELL, "%.4g %s", r->limit, r->unit);
		snprintf(c[3], REPORT_CELL, "%.2f%s", r->ratio, r->status == BS_LOW ? " LOW" : "");
	} else {
		snprintf(c[2], REPORT_CELL, "n/a");
		snprintf(c[3], REPORT_CELL, "n/a");
	}
	char where[48] = "";
	if (r->m)
		snprintf(where, sizeof(where), "%u^3", r->m);
	else if (r->size_bytes) {
		double v = (double)r->size_bytes;
		const char *u = "B";
		if (v >= 1 << 30) { v /= 1 << 30; u = "GiB"; } else if (v >= 1 << 20) { v /= 1 << 20; u = "MiB"; }
		else if (v >= 1 << 10) { v /= 1 << 10; u = "KiB"; }
		snprintf(where, sizeof(where), "%g %s", v, u);
	}
	if (r->peer >= 0)
		snprintf(c[4], REPORT_CELL, "GPU %d->%d%s%s", r->gpu, r->peer, where[0] ? ", " : "", where);
	else if (r->gpu >= 0)
		snprintf(c[4], REPORT_CELL, "GPU %d%s%s", r->gpu, where[0] ? ", " : "", where);
	else if (r->ngpus > 1)
		snprintf(c[4], REPORT_CELL, "%d GPUs%s%s", r->ngpus, where[0] ? ", " : "", where);
	else
		snprintf(c[4], REPORT_CELL, "host%s%s", where[0] ? ", " : "", where);
	if (isfinite(r->value.spread_pct))
		snprintf(c[5], REPORT_CELL, "%.1f%%", r->value.spread_pct);
	else
		snprintf(c[5], REPORT_CELL, "n/a");
}

const char *const report_datasheet_headers[REPORT_DS_COLS] = {
	"model", "memory", "bandwidth", "FP64 TC", "FP32", "TF32", "BF16", "FP8", "NVLink / PCIe",
};

unsigned report_models(const struct report *rep, const struct cat_gpu **out, unsigned max)
{
	unsigned n = 0;
	for (unsigned i = 0; rep->cat && i < rep->n; i++) {
		const struct cat_gpu *g = rep->cat[i];
		bool seen = !g;
		for (unsigned k = 0; k < n && !seen; k++)
			seen = out[k] == g;
		if (!seen && n < max)
			out[n++] = g;
	}
	return n;
}

static void tf(char *cell, double v)
{
	if (v > 0)
		snprintf(cell, REPORT_CELL, "%.4g TFLOP/s", v);
	else
		snprintf(cell, REPORT_CELL, "n/a");
}

void report_datasheet_row(const struct cat_gpu *g, char c[REPORT_DS_COLS][REPORT_CELL])
{
	snprintf(c[0], REPORT_CELL, "%s", g->key);
	snprintf(c[1], REPORT_CELL, "%.4g GB %s", g->mem_gb, g->mem_type);
	snprintf(c[2], REPORT_CELL, "%.4g GB/s", g->mem_bw_gbs);
	tf(c[3], g->tflops_fp64_tc > 0 ? g->tflops_fp64_tc : g->tflops_fp64);
	tf(c[4], g->tflops_fp32);
	tf(c[5], g->tflops_tf32);
	tf(c[6], g->tflops_bf16);
	tf(c[7], g->tflops_fp8);
	if (g->nvlink_bw_gbs > 0)
		snprintf(c[8], REPORT_CELL, "NVLink %u: %.4g GB/s; PCIe Gen%u", g->nvlink_gen, g->nvlink_bw_gbs, g->pcie_gen);
	else
		snprintf(c[8], REPORT_CELL, "PCIe Gen%u x%u", g->pcie_gen, g->pcie_width);
}

const char *const report_claim_headers[REPORT_CLAIM_COLS] = {
	"id", "the guide says", "guide", "ours", "ours / guide", "how we checked",
};

void report_claim_row(const struct claim_eval *e, char c[REPORT_CLAIM_COLS][REPORT_CELL])
{
	const struct claim *cl = e->claim;
	snprintf(c[0], REPORT_CELL, "%s", cl->id);
	snprintf(c[1], REPORT_CELL, "%.95s", cl->text);
	snprintf(c[2], REPORT_CELL, "%s", cl->guide_text);
	snprintf(c[3], REPORT_CELL, "%s", e->ours_text);
	if (isfinite(e->ratio))
		snprintf(c[4], REPORT_CELL, "%.2f", e->ratio);
	else
		snprintf(c[4], REPORT_CELL, "n/a");
	snprintf(c[5], REPORT_CELL, "%.95s", e->note[0] && isnan(e->ours) ? e->note : cl->how);
}

const char *const report_plan_headers[REPORT_PLAN_COLS] = {
	"model", "parameters", "train, 1 GPU (BF16, AdamW)", "train, all GPUs (ZeRO-3)", "serve BF16, all GPUs (TP)",
};

static void fits(char *cell, double need, double have)
{
	if (!isfinite(need)) {
		snprintf(cell, REPORT_CELL, "n/a");
		return;
	}
	snprintf(cell, REPORT_CELL, "%.1f GB/GPU, %s", need / 1e9, need <= have ? "fits" : "does not fit");
}

void report_plan_row(const struct report *rep, const struct report_plan_row *p, char c[REPORT_PLAN_COLS][REPORT_CELL])
{
	snprintf(c[0], REPORT_CELL, "%s", p->model);
	snprintf(c[1], REPORT_CELL, "%.3g B", p->params / 1e9);
	fits(c[2], p->train1_bytes, rep->plan_mem_bytes);
	fits(c[3], p->trainn_bytes, rep->plan_mem_bytes);
	/* serving fits only when a sequence does, not when the weights do (issue 40) */
	if (isfinite(p->serve_bytes))
		snprintf(c[4], REPORT_CELL, "%.1f GB/GPU, %s", p->serve_bytes / 1e9, p->serve_fit);
	else
		snprintf(c[4], REPORT_CELL, "n/a");
}
