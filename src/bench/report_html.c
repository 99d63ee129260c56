/* SPDX-License-Identifier: Apache-2.0 */
/*
 * report_html.c - the report as one self-contained HTML file: inline CSS and
 * inline SVG charts drawn here (bandwidth vs transfer size, a roofline with
 * every measured kernel, the P2P matrix as a heat map, GEMM TFLOP/s per
 * precision vs datasheet). No script and nothing fetched: it opens offline.
 */
#include "report.h"
#include "train_plan.h"

#include <math.h>
#include <string.h>

#include "output.h"
#include "view/svg.h"

static void esc(FILE *o, const char *s) { svg_escape(o, s); }

static void table_html(FILE *o, unsigned ncols, const char *const *hdr, const char (*cells)[REPORT_CELL], bool head)
{
	fputs("<tr>", o);
	for (unsigned c = 0; c < ncols; c++) {
		fputs(head ? "<th>" : "<td>", o);
		esc(o, head ? hdr[c] : cells[c]);
		fputs(head ? "</th>" : "</td>", o);
	}
	fputs("</tr>\n", o);
}

static double pow10_floor(double v) { return pow(10, floor(log10(v))); }
static double pow10_ceil(double v) { return pow(10, ceil(log10(v))); }

/* Series against a size on log-log axes: a line and dots per series, a legend;
 * false (and nothing drawn) when no series has a positive point. */
static bool chart_series(FILE *o, const char *id, const char *title, const struct report_series *s, unsigned n,
			 const char *xlabel, const char *ylabel, const char *unit)
{
	double xlo = INFINITY, xhi = 0, ylo = INFINITY, yhi = 0;
	for (unsigned i = 0; i < n; i++)
		for (unsigned k = 0; k < s[i].n; k++) {
			xlo = fmin(xlo, s[i].x[k]);
			xhi = fmax(xhi, s[i].x[k]);
			if (s[i].y[k] > 0) {
				ylo = fmin(ylo, s[i].y[k]);
				yhi = fmax(yhi, s[i].y[k]);
			}
		}
	if (!n || !(yhi > 0))
		return false;
	struct svg_plot p;
	svg_begin(&p, o, id, title, 900, 420);
	p.mr = 260; /* room for the legend */
	p.x = (struct svg_axis){ xlo, xhi, true, SVG_TICKS_BYTES, xlabel };
	p.y = (struct svg_axis){ pow10_floor(ylo), pow10_ceil(yhi * 1.05), true, SVG_TICKS_NUM, ylabel };
	svg_axes(&p);
	for (unsigned i = 0; i < n; i++) {
		const char *col = svg_palette[i % 8];
		svg_polyline(&p, s[i].x, s[i].y, s[i].n, col, 2.0, i >= 8 ? "5,3" : NULL, s[i].name);
		for (unsigned k = 0; k < s[i].n; k++) {
			char t[160];
			snprintf(t, sizeof(t), "%s: %.4g %s at %.0f bytes", s[i].name, s[i].y[k], unit, s[i].x[k]);
			svg_dot(&p, s[i].x[k], s[i].y[k], col, t);
		}
		svg_legend(&p, i, col, s[i].name);
	}
	svg_end(&p);
	return true;
}

static void chart_bandwidth(const struct bench_run *run, FILE *o)
{
	static struct report_series s[12];
	unsigned n = report_bw_series(run, s, 12);
	if (chart_series(o, "chart-bw", "Bandwidth vs transfer size", s, n, "transfer size", "GB/s (median)", "GB/s"))
		return;
	struct svg_plot p;
	svg_begin(&p, o, "chart-bw", "Bandwidth vs transfer size", 900, 420);
	fputs("<text x=\"380\" y=\"210\" text-anchor=\"middle\">no size sweep in these results</text>\n", o);
	svg_end(&p);
}

/* The latency staircase: ns per dependent load against the working set, one
 * line per GPU, and each line's plateaus in words below it. Nothing for older
 * results files, which have no sweep. */
static void chart_latency(const struct bench_run *run, FILE *o)
{
	static struct report_series s[8];
	unsigned n = report_latency_series(run, s, 8);
	if (!chart_series(o, "chart-latency", "Memory latency vs working set (one thread, dependent loads)", s, n,
			  "working set (random cycle, 128-byte stride)", "ns per load (median)", "ns"))
		return;
	for (unsigned i = 0; i < n; i++) {
		char steps[512];
		report_latency_steps_text(&s[i], steps, sizeof(steps));
		fputs("<p class=\"note\">", o);
		esc(o, s[i].name);
		fputs(" plateaus: ", o);
		esc(o, steps);
		fputs("</p>\n", o);
	}
}

static void chart_roofline(const struct report *rep, FILE *o)
{
	static struct report_roof_point pt[128];
	int gpu = 0;
	unsigned n = report_roof_points(rep->bench, gpu, pt, 128);
	const struct cat_gpu *g = rep->bench_cat;
	struct svg_plot p;
	svg_begin(&p, o, "chart-roofline", "Roofline (GPU 0): every measured kernel", 900, 460);
	if (!n) {
		fputs("<text x=\"380\" y=\"230\" text-anchor=\"middle\">no kernel with FLOPs in these results</text>\n", o);
		svg_end(&p);
		return;
	}
	double yhi = 0, ylo = INFINITY;
	for (unsigned i = 0; i < n; i++) {
		yhi = fmax(yhi, pt[i].gflops);
		ylo = fmin(ylo, pt[i].gflops);
	}
	struct { const char *name; double tf; } roofs[] = {
		{ "FP64 non-tensor", g ? g->tflops_fp64 : 0 }, { "FP32", g ? g->tflops_fp32 : 0 },
		{ "BF16 tensor", g ? g->tflops_bf16 : 0 }, { "FP8 tensor", g ? g->tflops_fp8 : 0 },
	};
	for (unsigned i = 0; i < 4; i++)
		yhi = fmax(yhi, roofs[i].tf * 1e3);
	p.mr = 260;
	p.x = (struct svg_axis){ 0.01, 1e4, true, SVG_TICKS_NUM, "arithmetic intensity (FLOP per byte of DRAM traffic)" };
	p.y = (struct svg_axis){ pow10_floor(fmin(ylo, 10.0)), pow10_ceil(yhi * 1.5), true, SVG_TICKS_NUM, "GFLOP/s" };
	svg_axes(&p);
	double bw = g ? g->mem_bw_gbs : 0;
	unsigned leg = 0;
	for (unsigned i = 0; i < 4 && bw > 0; i++) {
		if (!(roofs[i].tf > 0))
			continue;
		double peak = roofs[i].tf * 1e3, ridge = peak / bw;
		double xs[3] = { p.x.lo, ridge, p.x.hi }, ys[3] = { bw * p.x.lo, peak, peak };
		svg_polyline(&p, xs, ys, 3, "#888", 1.2, i ? "6,3" : NULL, NULL);
		char t[96];
		snprintf(t, sizeof(t), "roof %s: %.4g TFLOP/s", roofs[i].name, roofs[i].tf);
		svg_legend(&p, leg++, "#888", t);
	}
	if (bw > 0) {
		char t[64];
		snprintf(t, sizeof(t), "memory roof: %.4g GB/s", bw);
		svg_legend(&p, leg++, "#888", t);
	}
	for (unsigned i = 0; i < n; i++) {
		char t[160];
		double x = pt[i].compute_only ? 5e3 : pt[i].ai;
		snprintf(t, sizeof(t), "%.100s: %.4g GFLOP/s at %s%.3g FLOP/B", pt[i].name, pt[i].gflops,
			 pt[i].compute_only ? "(no DRAM traffic) " : "", pt[i].compute_only ? 0.0 : pt[i].ai);
		const char *col = svg_palette[!strncmp(pt[i].name, "compute fma", 11) ? 1 : !strncmp(pt[i].name, "compute", 7) ? 0
					      : !strncmp(pt[i].name, "gemm", 4) ? 2 : 3];
		svg_dot(&p, x, pt[i].gflops, col, t);
	}
	svg_legend(&p, leg++, svg_palette[0], "cuBLAS GEMM");
	svg_legend(&p, leg++, svg_palette[1], "FMA peak (at the right edge)");
	svg_legend(&p, leg++, svg_palette[2], "our FP32 GEMM kernels");
	svg_legend(&p, leg++, svg_palette[3], "application proxies");
	svg_end(&p);
}

static void chart_p2p(const struct bench_run *run, FILE *o)
{
	static double m[16 * 16];
	unsigned n = report_p2p_matrix(run, m, 16);
	double cell = n ? fmin(90.0, 560.0 / n) : 90;
	double w = 120 + cell * (n ? n : 1) + 40, h = 90 + cell * (n ? n : 1) + 30;
	struct svg_plot p;
	svg_begin(&p, o, "chart-p2p", "P2P bandwidth, one way (GB/s, copy engine, largest size)", fmax(w, 640), h);
	if (n < 2) {
		fputs("<text x=\"240\" y=\"80\" text-anchor=\"middle\">no GPU pair measured</text>\n", o);
		svg_end(&p);
		return;
	}
	double vmax = 0;
	for (unsigned i = 0; i < n * n; i++)
		if (isfinite(m[i]))
			vmax = fmax(vmax, m[i]);
	double x0 = 100, y0 = 60;
	for (unsigned j = 0; j < n; j++)
		fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" class=\"tick\" text-anchor=\"middle\">to GPU %u</text>\n",
			x0 + cell * (j + 0.5), y0 - 6, j);
	for (unsigned i = 0; i < n; i++) {
		fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" class=\"tick\" text-anchor=\"end\">from GPU %u</text>\n", x0 - 6,
			y0 + cell * (i + 0.5) + 4, i);
		for (unsigned j = 0; j < n; j++) {
			double v = m[i * n + j];
			double x = x0 + cell * j, y = y0 + cell * i;
			if (!isfinite(v)) {
				fprintf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#eee\"/>\n", x, y,
					cell - 2, cell - 2);
				continue;
			}
			/* white (0) to dark blue (the best pair) */
			double f = vmax > 0 ? v / vmax : 0;
			char col[8], t[96];
			snprintf(col, sizeof(col), "#%02x%02x%02x", (int)(247 - f * (247 - 8)), (int)(251 - f * (251 - 48)),
				 (int)(255 - f * (255 - 107)));
			snprintf(t, sizeof(t), "GPU %u -> GPU %u: %.4g GB/s", i, j, v);
			svg_rect(o, x, y, cell - 2, cell - 2, col, t);
			fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" class=\"cellv\" text-anchor=\"middle\" fill=\"%s\">%.0f</text>\n",
				x + cell / 2 - 1, y + cell / 2 + 4, f > 0.5 ? "#fff" : "#000", v);
		}
	}
	svg_end(&p);
}

static void chart_gemm(const struct report *rep, FILE *o)
{
	static const struct { const char *label, *suite, *test, *variant, *ds; } cat[] = {
		{ "FP64", "compute", "cublas", "fp64", "fp64" }, { "FP32", "compute", "cublas", "fp32", "fp32" },
		{ "TF32", "compute", "cublas", "tf32", "tf32" }, { "FP16", "compute", "cublas", "fp16", "fp16" },
		{ "BF16", "compute", "cublas", "bf16", "bf16" }, { "FP8", "compute", "cublaslt", "fp8_e4m3", "fp8" },
		{ "naive FP32", "gemm", "naive", "fp32", "fp32" }, { "tiled FP32", "gemm", "tiled", "fp32", "fp32" },
		{ "ours FP32", "gemm", "regblock", "fp32", "fp32" },
	};
	enum { N = sizeof(cat) / sizeof(cat[0]) };
	const struct cat_gpu *g = rep->bench_cat;
	double meas[N], ds[N], hi = 0;
	unsigned have = 0;
	for (unsigned i = 0; i < N; i++) {
		struct claim_sel s;
		memset(&s, 0, sizeof(s));
		snprintf(s.suite, sizeof(s.suite), "%s", cat[i].suite);
		snprintf(s.test, sizeof(s.test), "%s", cat[i].test);
		snprintf(s.variant, sizeof(s.variant), "%s", cat[i].variant);
		const struct bench_result *r = claims_pick(rep->bench, &s);
		meas[i] = r ? r->value.median : NAN;
		have += r != NULL;
		const char *d = cat[i].ds;
		ds[i] = !g ? NAN : !strcmp(d, "fp64") ? (g->tflops_fp64_tc > 0 ? g->tflops_fp64_tc : g->tflops_fp64)
			: !strcmp(d, "fp32") ? g->tflops_fp32 : !strcmp(d, "tf32") ? g->tflops_tf32
			: !strcmp(d, "fp16") ? g->tflops_fp16 : !strcmp(d, "bf16") ? g->tflops_bf16 : g->tflops_fp8;
		hi = fmax(hi, fmax(isfinite(meas[i]) ? meas[i] : 0, isfinite(ds[i]) ? ds[i] : 0));
	}
	struct svg_plot p;
	svg_begin(&p, o, "chart-gemm", "GEMM TFLOP/s per precision vs datasheet (dense)", 760, 420);
	if (!have) {
		fputs("<text x=\"380\" y=\"210\" text-anchor=\"middle\">no GEMM in these results</text>\n", o);
		svg_end(&p);
		return;
	}
	p.mb = 64; /* category labels under the axis, then the axis label */
	p.x = (struct svg_axis){ 0, N, false, SVG_TICKS_NONE, "precision (best shape); light bar: datasheet" };
	p.y = (struct svg_axis){ 1, pow10_ceil(hi * 1.2), true, SVG_TICKS_NUM, "TFLOP/s" };
	svg_axes(&p);
	double x0 = p.ml, bw = (p.w - p.mr - p.ml) / N;
	double ybase = svg_py(&p, 1);
	for (unsigned i = 0; i < N; i++) {
		double cx = x0 + bw * i;
		char t[128];
		fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" class=\"tick\" text-anchor=\"middle\">%s</text>\n", cx + bw / 2,
			ybase + 16, cat[i].label);
		if (isfinite(ds[i]) && ds[i] > 1) {
			double y = svg_py(&p, ds[i]);
			snprintf(t, sizeof(t), "%s datasheet: %.4g TFLOP/s", cat[i].label, ds[i]);
			fprintf(o, "<rect class=\"ds\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#c6dbef\"><title>%s</title></rect>\n",
				cx + bw * 0.15, y, bw * 0.7, ybase - y, t);
		}
		if (isfinite(meas[i]) && meas[i] > 1) {
			double y = svg_py(&p, meas[i]);
			snprintf(t, sizeof(t), "%s measured: %.4g TFLOP/s", cat[i].label, meas[i]);
			svg_rect(o, cx + bw * 0.3, y, bw * 0.4, ybase - y, i >= 6 ? svg_palette[2] : svg_palette[0], t);
			if (isfinite(ds[i]) && ds[i] > 0)
				fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" class=\"cellv\" text-anchor=\"middle\">%.2f</text>\n",
					cx + bw / 2, y - 4, meas[i] / ds[i]);
		}
	}
	svg_end(&p);
}

static const char *const css =
	"body{font-family:system-ui,sans-serif;margin:24px;color:#111;max-width:1100px}"
	"h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ccc;padding-bottom:4px;margin-top:28px}"
	"table{border-collapse:collapse;font-size:13px;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 7px;text-align:left}"
	"th{background:#f4f4f4}.sim{background:#fff3cd;border:1px solid #e0b000;padding:8px;font-weight:bold}"
	".note{color:#555;font-size:13px}.chart{display:block;margin:12px 0;border:1px solid #eee}"
	".ctitle{font-size:15px;font-weight:bold;text-anchor:middle}.tick{font-size:11px;fill:#333}"
	".alabel{font-size:12px;fill:#111}.legend{font-size:11px}.grid{stroke:#e6e6e6}.frame{fill:none;stroke:#999}"
	".cellv{font-size:11px}.low{color:#b00;font-weight:bold}";

static void html_results_table(const struct bench_run *b, FILE *o)
{
	fputs("<details><summary>every result</summary><table>\n<tr><th>suite</th><th>test</th><th>variant</th><th>GPU</th>"
	      "<th>size</th><th>median</th><th>min</th><th>max</th><th>counted</th><th>datasheet</th><th>ratio</th>"
	      "<th>status</th></tr>\n", o);
	for (size_t i = 0; i < b->n; i++) {
		const struct bench_result *r = &b->r[i];
		char size[32], med[32], mn[32], mx[32], work[32], lim[32], gpu[24];
		bench_fmt_size(r->size_bytes, size, sizeof(size));
		if (r->m)
			snprintf(size, sizeof(size), "%u^3", r->m);
		bench_fmt_num(r->value.median, med, sizeof(med));
		bench_fmt_num(r->value.min, mn, sizeof(mn));
		bench_fmt_num(r->value.max, mx, sizeof(mx));
		bench_fmt_work(r, work, sizeof(work));
		bench_fmt_num(r->limit, lim, sizeof(lim));
		if (r->peer >= 0)
			snprintf(gpu, sizeof(gpu), "%d-&gt;%d", r->gpu, r->peer);
		else if (r->gpu >= 0)
			snprintf(gpu, sizeof(gpu), "%d", r->gpu);
		else
			snprintf(gpu, sizeof(gpu), "%s", r->ngpus > 1 ? "all" : "host");
		fputs("<tr><td>", o);
		esc(o, r->suite);
		fputs("</td><td>", o);
		esc(o, r->test);
		fputs("</td><td>", o);
		esc(o, r->variant);
		fprintf(o, "</td><td>%s</td><td>%s</td>", gpu, size);
		if (r->status == BS_FAILED || r->status == BS_SKIPPED) {
			fprintf(o, "<td colspan=\"6\"></td><td>%s: ", bench_status_name(r->status));
			esc(o, r->message);
			fputs("</td></tr>\n", o);
			continue;
		}
		fprintf(o, "<td>%s ", med);
		esc(o, r->unit);
		fprintf(o, "</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td>", mn, mx, work, lim);
		if (isfinite(r->ratio))
			fprintf(o, "<td>%.2f</td>", r->ratio);
		else
			fputs("<td>n/a</td>", o);
		fprintf(o, "<td%s>%s</td></tr>\n", r->status == BS_LOW ? " class=\"low\"" : "",
			r->status == BS_LOW ? "LOW" : "ok");
	}
	fputs("</table></details>\n", o);
}

/* The training steps (bench -s train) beside the planner's prediction. */
static void html_train_table(const struct bench_run *b, FILE *o)
{
	_Static_assert(TRAIN_PLAN_CELL == REPORT_CELL, "train rows are report cells");
	const struct bench_result *rows[64];
	unsigned n = train_plan_rows(b, rows, 64);
	if (!n)
		return;
	char cells[TRAIN_PLAN_COLS][TRAIN_PLAN_CELL], legend[384];
	fputs("<h3>Training steps (GPT-2, micro-batch x sequence; MFU against the datasheet)</h3>\n<table>\n", o);
	table_html(o, TRAIN_PLAN_COLS, train_plan_headers, NULL, true);
	for (unsigned i = 0; i < n; i++) {
		train_plan_row(rows[i], cells);
		table_html(o, TRAIN_PLAN_COLS, NULL, (const char (*)[REPORT_CELL])cells, false);
	}
	train_plan_legend(legend, sizeof(legend));
	fputs("</table>\n<p class=\"note\">", o);
	esc(o, legend);
	fputs("</p>\n", o);
}

void report_print_html(const struct report *rep, FILE *o)
{
	char cells[16][REPORT_CELL];
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>gpuctl report: ", o);
	esc(o, rep->sys.server_name);
	fprintf(o, "</title><style>%s</style></head><body>\n<h1>gpuctl report: ", css);
	esc(o, rep->sys.server_name);
	fprintf(o, "</h1>\n<p class=\"note\">%u GPU%s, driver ", rep->n, rep->n == 1 ? "" : "s");
	esc(o, VAL_HAS(rep->sys.driver_version) ? rep->sys.driver_version.s : "n/a");
	fprintf(o, ", generated %s</p>\n", rep->generated_utc);
	if (rep->simulated)
		fputs("<p class=\"sim\">SIMULATED server: the inventory below comes from the simulator, not real hardware; "
		      "no benchmark figure is invented for it.</p>\n", o);

	fprintf(o, "<h2>Inventory%s</h2>\n", rep->simulated ? " (SIMULATED)" : "");
	if (rep->inventory_source[0]) {
		fputs("<p>As recorded in ", o);
		esc(o, rep->inventory_source);
		fputs("</p>\n", o);
	}
	fputs("<table>\n", o);
	table_html(o, REPORT_INV_COLS, report_inventory_headers, NULL, true);
	for (unsigned i = 0; i < rep->n; i++) {
		report_inventory_row(rep, i, cells);
		table_html(o, REPORT_INV_COLS, NULL, (const char (*)[REPORT_CELL])cells, false);
	}
	fputs("</table>\n<h2>Topology</h2>\n", o);
	if (rep->link) {
		fputs("<table><tr><th></th>", o);
		for (unsigned j = 0; j < rep->n; j++)
			fprintf(o, "<th>GPU %u</th>", j);
		fputs("</tr>\n", o);
		for (unsigned i = 0; i < rep->n; i++) {
			fprintf(o, "<tr><th>GPU %u</th>", i);
			for (unsigned j = 0; j < rep->n; j++) {
				const struct gpu_link *l = &rep->link[i][j];
				if (i == j)
					fputs("<td>X</td>", o);
				else if (l->kind == LINK_NVLINK)
					fprintf(o, "<td>NV%u</td>", l->nvlinks);
				else
					fprintf(o, "<td>%s</td>", gpu_link_kind_name(l->kind));
			}
			fputs("</tr>\n", o);
		}
		fputs("</table>\n", o);
	} else {
		fputs("<p>not read</p>\n", o);
	}

	fputs("<h2>Health</h2>\n", o);
	if (!rep->health) {
		fputs("<p>not evaluated: ", o);
		esc(o, rep->health_note);
		fputs("</p>\n", o);
	} else {
		const struct health_report *h = rep->health;
		fprintf(o, "<p>server: <b>%s</b> (action: %s)</p>\n<table><tr><th>GPU</th><th>verdict</th><th>findings</th></tr>\n",
			health_verdict_name(h->verdict), health_action_text(h->action));
		for (unsigned i = 0; i < h->n; i++) {
			const struct health_entity *e = &h->gpu[i];
			fprintf(o, "<tr><td>%d</td><td>%s</td><td>", e->index, health_verdict_name(health_gpu_verdict(h, i)));
			for (unsigned k = 0; k < e->nfind; k++) {
				if (e->find[k].verdict < HEALTH_WARN)
					continue;
				esc(o, e->find[k].reason);
				fputs(" (", o);
				esc(o, e->find[k].evidence);
				fputs(")<br>", o);
			}
			fputs("</td></tr>\n", o);
		}
		fputs("</table>\n", o);
	}

	const struct cat_gpu *models[8];
	unsigned nm = report_models(rep, models, 8);
	fputs("<h2>Datasheet (what to plan with)</h2>\n", o);
	if (nm) {
		fputs("<table>\n", o);
		table_html(o, REPORT_DS_COLS, report_datasheet_headers, NULL, true);
		for (unsigned i = 0; i < nm; i++) {
			report_datasheet_row(models[i], cells);
			table_html(o, REPORT_DS_COLS, NULL, (const char (*)[REPORT_CELL])cells, false);
		}
		fputs("</table>\n", o);
	} else {
		fputs("<p>no GPU of this server is in the catalog</p>\n", o);
	}

	fprintf(o, "<h2>Planning (%u GPU%s of %.1f GB)</h2>\n", rep->plan_gpus, rep->plan_gpus == 1 ? "" : "s",
		rep->plan_mem_bytes / 1e9);
	if (rep->nplan) {
		fputs("<table>\n", o);
		table_html(o, REPORT_PLAN_COLS, report_plan_headers, NULL, true);
		for (unsigned i = 0; i < rep->nplan; i++) {
			report_plan_row(rep, &rep->plan[i], cells);
			table_html(o, REPORT_PLAN_COLS, NULL, (const char (*)[REPORT_CELL])cells, false);
		}
		fputs("</table>\n<p class=\"note\">sequence 2048, micro-batch 1 for training; 4096-token context "
		      "for serving, which fits only when a sequence does within the planner's 90% of memory; "
		      "details: gpuctl plan</p>\n", o);
	} else {
		fputs("<p>", o);
		esc(o, rep->plan_note[0] ? rep->plan_note : "no planning figures");
		fputs("</p>\n", o);
	}

	fputs("<h2>Benchmark</h2>\n", o);
	if (!rep->bench) {
		fputs("<p>no benchmark figures: ", o);
		esc(o, rep->bench_note);
		fputs("</p>\n", o);
	} else {
		const struct bench_run *b = rep->bench;
		fputs("<p class=\"note\">from ", o);
		esc(o, rep->bench_source);
		fputs(": host ", o);
		esc(o, b->host);
		fprintf(o, ", %s, %s run, %zu results. Medians of device-timed samples; GB = 10<sup>9</sup> bytes.</p>\n",
			b->started_utc, b->mode, b->n);
		if (b->note[0] || rep->bench_note[0]) {
			fputs("<p class=\"sim\">", o);
			esc(o, b->note[0] ? b->note : rep->bench_note);
			fputs("</p>\n", o);
		}
		struct report_highlight hl[REPORT_MAX_HIGHLIGHTS];
		unsigned nh = report_highlights(b, hl, REPORT_MAX_HIGHLIGHTS);
		fputs("<table>\n", o);
		table_html(o, REPORT_HL_COLS, report_highlight_headers, NULL, true);
		for (unsigned i = 0; i < nh; i++) {
			report_highlight_row(&hl[i], cells);
			table_html(o, REPORT_HL_COLS, NULL, (const char (*)[REPORT_CELL])cells, false);
		}
		fputs("</table>\n", o);
		html_train_table(b, o);
		chart_bandwidth(b, o);
		chart_latency(b, o);
		chart_roofline(rep, o);
		chart_p2p(b, o);
		chart_gemm(rep, o);
		html_results_table(b, o);
	}

	if (rep->claims && rep->evals) {
		fputs("<h2>The guide's claims</h2>\n<table>\n", o);
		table_html(o, REPORT_CLAIM_COLS, report_claim_headers, NULL, true);
		for (unsigned i = 0; i < rep->claims->n; i++) {
			report_claim_row(&rep->evals[i], cells);
			table_html(o, REPORT_CLAIM_COLS, NULL, (const char (*)[REPORT_CELL])cells, false);
		}
		fputs("</table>\n", o);
	}
	fputs("<p class=\"note\">made by gpuctl report; every figure with its unit; n/a: not known.</p>\n</body></html>\n", o);
}
