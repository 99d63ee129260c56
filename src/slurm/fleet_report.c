/* SPDX-License-Identifier: Apache-2.0 */
/* fleet_report.c - the fleet report (text and HTML), two sweeps compared, and
 * the figures taken out of a bench results document (fleet.h). */
#include "slurm/fleet.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "view/svg.h"

static void fmt_fig(char *out, size_t len, double v)
{
	if (isfinite(v))
		snprintf(out, len, "%.1f", v);
	else
		snprintf(out, len, "-");
}

static void fmt_link(char *out, size_t len, const struct fleet_gpu *g)
{
	if (g->pcie_gen >= 0 && g->pcie_width >= 0)
		snprintf(out, len, "Gen%ld x%ld%s", g->pcie_gen, g->pcie_width,
			 (g->pcie_width_max > g->pcie_width || g->pcie_gen_max > g->pcie_gen) ? "!" : "");
	else
		snprintf(out, len, "-");
}

static void fmt_nvlink(char *out, size_t len, const struct fleet_gpu *g)
{
	if (g->nvlink_count > 0 && g->nvlink_active >= 0)
		snprintf(out, len, "%ld/%ld", g->nvlink_active, g->nvlink_count);
	else
		snprintf(out, len, "-");
}

/* Whether GPU index gpu of node i (gpu -1: the node itself) has an outlier. */
static bool is_outlier(const struct fleet *f, size_t i, int gpu, int fig)
{
	for (size_t o = 0; o < f->nout; o++)
		if (f->out[o].node == i && f->out[o].gpu == gpu && (fig < 0 || (f->out[o].kind == FLEET_OUT_FIGURE && (int)f->out[o].fig == fig)))
			return true;
	return false;
}

static bool node_has_outlier(const struct fleet *f, size_t i)
{
	for (size_t o = 0; o < f->nout; o++)
		if (f->out[o].node == i)
			return true;
	return false;
}

static const char *source_words(const struct fleet *f)
{
	for (size_t i = 0; i < f->n; i++)
		if (strcmp(f->node[i].figures_source, "simulated") == 0)
			return "SIMULATED figures (catalog x the simulated faults: not measured)";
	for (size_t i = 0; i < f->n; i++)
		if (strcmp(f->node[i].figures_source, "measured") == 0)
			return "figures measured by gpuctl bench --quick";
	return "no figures at this level";
}

static void outlier_line(const struct fleet *f, const struct fleet_outlier *o, char *out, size_t len)
{
	char who[32];
	if (o->gpu >= 0)
		snprintf(who, sizeof(who), " GPU %d", o->gpu);
	else
		who[0] = '\0';
	static const char *const kind[] = { "health", "diag FAIL", "slow", "not swept" };
	snprintf(out, len, "%s%s: %s %s; action: %s%s", f->node[o->node].name, who, kind[o->kind], o->what, o->action,
		 o->drain ? "" : " (not drained)");
}

void fleet_write_text(const struct fleet *f, FILE *o)
{
	size_t done = 0, gpus = 0;
	for (size_t i = 0; i < f->n; i++) {
		done += f->node[i].state == FLEET_DONE;
		gpus += f->node[i].ngpu;
	}
	if (f->simulated)
		fputs("*** SIMULATED servers: no figure below was measured on a GPU ***\n", o);
	fprintf(o, "fleet sweep, level %s: %zu nodes (%zu swept), %zu GPUs; outlier threshold %.1f%% below the median\n",
		f->level, f->n, done, gpus, f->threshold_pct);
	fprintf(o, "figures: %s\n\n", source_words(f));
	fprintf(o, "%-16s %-4s %-11s %-5s %-10s %-7s %5s %5s", "node", "GPU", "state", "health", "PCIe", "NVLink", "XIDs",
		"remap");
	for (int k = 0; k < FLEET_NFIG; k++)
		fprintf(o, " %10.10s", fleet_figs[k].key);
	fputc('\n', o);
	for (size_t i = 0; i < f->n; i++) {
		const struct fleet_node *n = &f->node[i];
		if (n->state != FLEET_DONE || !n->ngpu) {
			fprintf(o, "%-16s %-4s %-11s %s\n", n->name, "-", fleet_state_name(n->state), n->note);
			continue;
		}
		for (unsigned g = 0; g < n->ngpu; g++) {
			const struct fleet_gpu *fg = &n->gpu[g];
			char link[64], nvl[64], remap[32];
			fmt_link(link, sizeof(link), fg);
			fmt_nvlink(nvl, sizeof(nvl), fg);
			if (fg->remap_pending >= 0)
				snprintf(remap, sizeof(remap), "%ld", fg->remap_pending);
			else
				snprintf(remap, sizeof(remap), "-");
			fprintf(o, "%-16s %-4u %-11s %-5s %-10s %-7s %5u %5s", n->name, fg->index, fleet_state_name(n->state),
				fg->verdict, link, nvl, fg->xids, remap);
			for (int k = 0; k < FLEET_NFIG; k++) {
				char v[24];
				double x = fleet_figs[k].per_node ? (g == 0 ? n->fig[k] : NAN) : fg->fig[k];
				fmt_fig(v, sizeof(v), x);
				bool low = is_outlier(f, i, fleet_figs[k].per_node ? -1 : (int)fg->index, k);
				fprintf(o, " %9s%s", v, low ? "*" : " ");
			}
			fputc('\n', o);
		}
		if (n->diag_verdict[0])
			fprintf(o, "%-16s diag %s%s%s\n", n->name, n->diag_verdict, n->diag_fail[0] ? ": " : "", n->diag_fail);
	}
	fputs("\nfleet median (MAD) per figure and group (GPU model, driver, CUDA):\n", o);
	for (size_t s = 0; s < f->nstat; s++)
		fprintf(o, "  %-20s %-44s %10.1f (%.1f) %s over %zu\n", fleet_figs[f->stat[s].fig].key,
			f->stat[s].model[0] ? f->stat[s].model : "(per node)", f->stat[s].median, f->stat[s].mad,
			fleet_figs[f->stat[s].fig].unit, f->stat[s].n);
	if (!f->nstat)
		fputs("  none (no figure at this level)\n", o);
	fprintf(o, "\noutliers: %zu\n", f->nout);
	for (size_t k = 0; k < f->nout; k++) {
		char line[512];
		outlier_line(f, &f->out[k], line, sizeof(line));
		fprintf(o, "  %s\n", line);
	}
}

static void esc(FILE *o, const char *s) { svg_escape(o, s); }

static void td(FILE *o, bool bad, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void td(FILE *o, bool bad, const char *fmt, ...)
{
	char cell[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cell, sizeof(cell), fmt, ap);
	va_end(ap);
	fputs(bad ? "<td class=\"bad\">" : "<td>", o);
	esc(o, cell);
	fputs("</td>", o);
}

void fleet_write_html(const struct fleet *f, FILE *o)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>gpuctl fleet sweep", o);
	if (f->simulated)
		fputs(" (SIMULATED)", o);
	fputs("</title>\n<style>body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse}"
	      "td,th{border:1px solid #bbb;padding:2px 6px;text-align:right}td:first-child,th:first-child{text-align:left}"
	      "tr.outlier td{background:#fde8e8}td.bad{background:#f4a3a3;font-weight:bold}"
	      ".banner{background:#ffe08a;padding:6px;font-weight:bold}</style></head><body>\n", o);
	if (f->simulated)
		fputs("<p class=\"banner\" id=\"simulated\">SIMULATED servers: no figure on this page was measured on a GPU</p>\n", o);
	fprintf(o, "<h1>Fleet sweep, level ");
	esc(o, f->level);
	fprintf(o, "%s</h1>\n<p>%zu nodes; outliers: %zu (threshold %.1f%% below the fleet median); ",
		f->simulated ? " (SIMULATED)" : "", f->n, f->nout, f->threshold_pct);
	esc(o, source_words(f));
	fputs(".</p>\n<h2>Outliers</h2>\n<ul id=\"outliers\">\n", o);
	for (size_t k = 0; k < f->nout; k++) {
		char line[512];
		outlier_line(f, &f->out[k], line, sizeof(line));
		fputs("<li class=\"outlier\" data-node=\"", o);
		esc(o, f->node[f->out[k].node].name);
		fputs("\">", o);
		esc(o, line);
		fputs("</li>\n", o);
	}
	if (!f->nout)
		fputs("<li>none</li>\n", o);
	fputs("</ul>\n<h2>Nodes</h2>\n<table id=\"nodes\"><tr><th>node</th><th>GPU</th><th>state</th><th>health</th>"
	      "<th>failing rules</th><th>PCIe</th><th>NVLink</th><th>XIDs</th><th>ECC unc.</th><th>remap pending</th>", o);
	for (int k = 0; k < FLEET_NFIG; k++) {
		fputs("<th>", o);
		esc(o, fleet_figs[k].label);
		fprintf(o, " (%s)</th>", fleet_figs[k].unit);
	}
	fputs("</tr>\n", o);
	for (size_t i = 0; i < f->n; i++) {
		const struct fleet_node *n = &f->node[i];
		bool out = node_has_outlier(f, i);
		unsigned rows = n->state == FLEET_DONE && n->ngpu ? n->ngpu : 1;
		for (unsigned g = 0; g < rows; g++) {
			const struct fleet_gpu *fg = n->state == FLEET_DONE && n->ngpu ? &n->gpu[g] : NULL;
			fprintf(o, "<tr class=\"node%s\" data-node=\"", out ? " outlier" : "");
			esc(o, n->name);
			fputs("\">", o);
			td(o, false, "%s", n->name);
			if (!fg) {
				td(o, false, "-");
				td(o, true, "%s", fleet_state_name(n->state));
				fprintf(o, "<td colspan=\"%d\">", 7 + FLEET_NFIG);
				esc(o, n->note);
				fputs("</td></tr>\n", o);
				continue;
			}
			char link[64], nvl[64];
			fmt_link(link, sizeof(link), fg);
			fmt_nvlink(nvl, sizeof(nvl), fg);
			td(o, false, "%u", fg->index);
			td(o, false, "%s", fleet_state_name(n->state));
			td(o, strcmp(fg->verdict, "FAIL") == 0, "%s", fg->verdict);
			td(o, fg->fail_rules[0] != 0, "%s%s%s", fg->fail_rules, fg->fail_rules[0] && fg->warn_rules[0] ? " / " : "",
			   fg->warn_rules);
			td(o, strchr(link, '!') != NULL, "%s", link);
			td(o, fg->nvlink_active >= 0 && fg->nvlink_active < fg->nvlink_count, "%s", nvl);
			td(o, fg->xids > 0, "%u", fg->xids);
			td(o, fg->ecc_uncorrected > 0, "%ld", fg->ecc_uncorrected);
			td(o, fg->remap_pending > 0, "%ld", fg->remap_pending);
			for (int k = 0; k < FLEET_NFIG; k++) {
				char v[24];
				bool node_fig = fleet_figs[k].per_node;
				fmt_fig(v, sizeof(v), node_fig ? (g == 0 ? n->fig[k] : NAN) : fg->fig[k]);
				td(o, is_outlier(f, i, node_fig ? -1 : (int)fg->index, k), "%s", v);
			}
			fputs("</tr>\n", o);
		}
	}
	fputs("</table>\n<h2>Fleet median and spread</h2>\n<table id=\"stats\"><tr><th>figure</th><th>model</th>"
	      "<th>n</th><th>median</th><th>MAD</th></tr>\n", o);
	for (size_t s = 0; s < f->nstat; s++) {
		fputs("<tr>", o);
		td(o, false, "%s (%s)", fleet_figs[f->stat[s].fig].label, fleet_figs[f->stat[s].fig].unit);
		td(o, false, "%s", f->stat[s].model[0] ? f->stat[s].model : "per node");
		td(o, false, "%zu", f->stat[s].n);
		td(o, false, "%.1f", f->stat[s].median);
		td(o, false, "%.1f", f->stat[s].mad);
		fputs("</tr>\n", o);
	}
	fputs("</table>\n<p>gpuctl slurm sweep (docs/slurm.md, \"Fleet sweep\")</p>\n</body></html>\n", o);
}

/* ---- two sweeps compared --------------------------------------------------------------- */

struct out_text {
	char *p;
	size_t len, used, lines;
};

static void say(struct out_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct out_text *t, const char *fmt, ...)
{
	t->lines++;
	if (t->used + 1 >= t->len)
		return;
	va_list ap;
	va_start(ap, fmt);
	int w = vsnprintf(t->p + t->used, t->len - t->used, fmt, ap);
	va_end(ap);
	if (w > 0)
		t->used = t->used + (size_t)w < t->len ? t->used + (size_t)w : t->len - 1;
}

static const struct fleet_node *find_node(const struct fleet *f, const char *name, size_t *idx)
{
	for (size_t i = 0; i < f->n; i++)
		if (strcmp(f->node[i].name, name) == 0) {
			*idx = i;
			return &f->node[i];
		}
	return NULL;
}

static const struct fleet_gpu *find_gpu(const struct fleet_node *n, unsigned index)
{
	for (unsigned g = 0; g < n->ngpu; g++)
		if (n->gpu[g].index == index)
			return &n->gpu[g];
	return NULL;
}

static void compare_figs(struct out_text *t, const char *who, const double *a, const double *b, bool per_node,
			 double thr)
{
	for (int k = 0; k < FLEET_NFIG; k++) {
		if (fleet_figs[k].per_node != per_node || !isfinite(a[k]) || !isfinite(b[k]) || !(a[k] > 0))
			continue;
		double d = 100.0 * (b[k] - a[k]) / a[k];
		if (fabs(d) > thr)
			say(t, "%s: %s %s %.1f -> %.1f %s (%+.1f%%)\n", who, d < 0 ? "slower" : "faster", fleet_figs[k].key,
			    a[k], b[k], fleet_figs[k].unit, d);
	}
}

size_t fleet_compare(const struct fleet *old, const struct fleet *new, char *out, size_t outlen)
{
	struct out_text t = { out, outlen, 0, 0 };
	if (outlen)
		out[0] = '\0';
	for (size_t i = 0; i < new->n; i++) {
		const struct fleet_node *b = &new->node[i];
		size_t oi;
		const struct fleet_node *a = find_node(old, b->name, &oi);
		if (!a) {
			say(&t, "%s: new in this sweep\n", b->name);
			continue;
		}
		bool was = node_has_outlier(old, oi), is = node_has_outlier(new, i);
		if (was && !is)
			say(&t, "%s: recovered (an outlier before, none now)\n", b->name);
		else if (!was && is)
			say(&t, "%s: new outlier\n", b->name);
		if (a->state != b->state)
			say(&t, "%s: %s -> %s\n", b->name, fleet_state_name(a->state), fleet_state_name(b->state));
		compare_figs(&t, b->name, a->fig, b->fig, true, new->threshold_pct);
		for (unsigned g = 0; g < b->ngpu; g++) {
			const struct fleet_gpu *gb = &b->gpu[g], *ga = find_gpu(a, gb->index);
			if (!ga)
				continue;
			char who[FLEET_NAME_LEN + 16];
			snprintf(who, sizeof(who), "%s GPU %u", b->name, gb->index);
			if (strcmp(ga->verdict, gb->verdict) != 0 && ga->verdict[0] && gb->verdict[0])
				say(&t, "%s: health %s -> %s%s%s\n", who, ga->verdict, gb->verdict, gb->fail_rules[0] ? " " : "",
				    gb->fail_rules);
			compare_figs(&t, who, ga->fig, gb->fig, false, new->threshold_pct);
		}
	}
	for (size_t i = 0; i < old->n; i++) {
		size_t ni;
		if (!find_node(new, old->node[i].name, &ni))
			say(&t, "%s: not in this sweep\n", old->node[i].name);
	}
	return t.lines;
}

/* ---- figures from a bench results document -------------------------------------------- */

static const char *bstr(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "";
}

/* max into *dst, ignoring NAN */
static void keep_max(double *dst, double v)
{
	if (isfinite(v) && v > 0 && (!isfinite(*dst) || v > *dst))
		*dst = v;
}

int fleet_figures_from_bench(struct fleet_node *n, const json_t *bench, char *err, size_t errlen)
{
	const json_t *results = json_object_get(bench, "results");
	if (strcmp(bstr(bench, "schema"), "gpuctl-bench-results") != 0 || !json_is_array(results)) {
		snprintf(err, errlen, "its bench results are not a gpuctl-bench-results document");
		return -1;
	}
	if (json_is_true(json_object_get(bench, "simulated"))) {
		snprintf(err, errlen, "its bench results say simulated: figures never come from a simulator");
		return -1;
	}
	/* P2P: the best size per ordered pair, then each GPU's slowest peer */
	double pair[FLEET_MAX_GPUS][FLEET_MAX_GPUS];
	for (unsigned a = 0; a < FLEET_MAX_GPUS; a++)
		for (unsigned b = 0; b < FLEET_MAX_GPUS; b++)
			pair[a][b] = NAN;
	size_t i;
	const json_t *r;
	json_array_foreach(results, i, r)
	{
		if (strcmp(bstr(r, "status"), "ok") != 0)
			continue;
		const char *suite = bstr(r, "suite"), *test = bstr(r, "test"), *var = bstr(r, "variant");
		double v = json_number_value(json_object_get(r, "median"));
		json_int_t gpu = json_integer_value(json_object_get(r, "gpu")), peer = json_integer_value(json_object_get(r, "peer"));
		if (strcmp(suite, "nccl") == 0 && strcmp(test, "all_reduce") == 0) {
			keep_max(&n->fig[FIG_ALLREDUCE], v);
			continue;
		}
		if (gpu < 0 || gpu >= FLEET_MAX_GPUS)
			continue;
		struct fleet_gpu *g = NULL;
		for (unsigned k = 0; k < n->ngpu; k++)
			if ((json_int_t)n->gpu[k].index == gpu)
				g = &n->gpu[k];
		if (!g)
			continue;
		if (strcmp(suite, "memory") == 0 && strcmp(test, "copy") == 0 && strcmp(var, "kernel") == 0)
			keep_max(&g->fig[FIG_MEM_BW], v);
		else if (strcmp(suite, "compute") == 0 && strcmp(test, "cublas") == 0 && strcmp(var, "bf16") == 0)
			keep_max(&g->fig[FIG_GEMM_BF16], v);
		else if (strcmp(suite, "copy") == 0 && strcmp(test, "h2d") == 0 && strcmp(var, "pinned") == 0)
			keep_max(&g->fig[FIG_H2D], v);
		else if (strcmp(suite, "p2p") == 0 && strcmp(test, "ce") == 0 && strcmp(var, "uni") == 0 && peer >= 0 &&
			 peer < FLEET_MAX_GPUS)
			keep_max(&pair[gpu][peer], v);
	}
	for (unsigned k = 0; k < n->ngpu; k++) {
		unsigned a = n->gpu[k].index;
		for (unsigned b = 0; b < FLEET_MAX_GPUS; b++)
			if (isfinite(pair[a][b]) && (!isfinite(n->gpu[k].fig[FIG_P2P]) || pair[a][b] < n->gpu[k].fig[FIG_P2P]))
				n->gpu[k].fig[FIG_P2P] = pair[a][b];
	}
	snprintf(n->figures_source, sizeof(n->figures_source), "measured");
	return 0;
}
