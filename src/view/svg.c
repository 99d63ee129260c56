/* SPDX-License-Identifier: Apache-2.0 */
/* svg.c - see svg.h. */
#include "view/svg.h"

#include <math.h>

const char *const svg_palette[8] = {
	"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
};

void svg_escape(FILE *out, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		default: fputc(*s, out);
		}
	}
}

void svg_begin(struct svg_plot *p, FILE *out, const char *id, const char *title, double w, double h)
{
	p->out = out;
	p->w = w;
	p->h = h;
	p->ml = 70;
	p->mr = 20;
	p->mt = 34;
	p->mb = 50;
	fprintf(out, "<svg class=\"chart\" id=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
		"viewBox=\"0 0 %.0f %.0f\" role=\"img\">\n<title>", id, w, h, w, h);
	svg_escape(out, title);
	fprintf(out, "</title>\n<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#fff\"/>\n", w, h);
	fprintf(out, "<text x=\"%.0f\" y=\"20\" class=\"ctitle\">", w / 2);
	svg_escape(out, title);
	fputs("</text>\n", out);
}

static double tr(const struct svg_axis *a, double v)
{
	if (a->log)
		return (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo));
	return (v - a->lo) / (a->hi - a->lo);
}

static double svg_px(const struct svg_plot *p, double x)
{
	return p->ml + tr(&p->x, x) * (p->w - p->ml - p->mr);
}

double svg_py(const struct svg_plot *p, double y)
{
	return p->h - p->mb - tr(&p->y, y) * (p->h - p->mt - p->mb);
}

static void tick_label(char *out, size_t len, double v, enum svg_ticks kind)
{
	if (kind == SVG_TICKS_BYTES) {
		static const char *const u[] = { "B", "KiB", "MiB", "GiB", "TiB" };
		int k = 0;
		while (v >= 1024 && k < 4) {
			v /= 1024;
			k++;
		}
		snprintf(out, len, "%g %s", v, u[k]);
	} else if (fabs(v) >= 1e4 || (fabs(v) < 1e-2 && v != 0)) {
		snprintf(out, len, "%.0e", v);
	} else {
		snprintf(out, len, "%g", v);
	}
}

/* Tick values: powers of 10 (log), powers of 4 (byte sizes), or ~5 round steps. */
static unsigned ticks(const struct svg_axis *a, double *t, unsigned max)
{
	unsigned n = 0;
	if (a->ticks == SVG_TICKS_NONE)
		return 0;
	if (a->log) {
		double base = a->ticks == SVG_TICKS_BYTES ? 4.0 : 10.0;
		double v = pow(base, floor(log(a->lo) / log(base)));
		for (; v <= a->hi * 1.0001 && n < max; v *= base)
			if (v >= a->lo * 0.9999)
				t[n++] = v;
		return n;
	}
	double span = a->hi - a->lo;
	double step = pow(10, floor(log10(span / 5)));
	if (span / step > 10) step *= 2;
	if (span / step > 10) step *= 2.5;
	for (double v = ceil(a->lo / step) * step; v <= a->hi + step * 1e-9 && n < max; v += step)
		t[n++] = v;
	return n;
}

void svg_axes(struct svg_plot *p)
{
	FILE *o = p->out;
	double x0 = p->ml, x1 = p->w - p->mr, y0 = p->h - p->mb, y1 = p->mt;
	double t[32];
	char lab[32];
	unsigned n = ticks(&p->x, t, 32);
	for (unsigned i = 0; i < n; i++) {
		double x = svg_px(p, t[i]);
		tick_label(lab, sizeof(lab), t[i], p->x.ticks);
		fprintf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>"
			"<text x=\"%.1f\" y=\"%.1f\" class=\"tick\" text-anchor=\"middle\">%s</text>\n",
			x, y0, x, y1, x, y0 + 15, lab);
	}
	n = ticks(&p->y, t, 32);
	for (unsigned i = 0; i < n; i++) {
		double y = svg_py(p, t[i]);
		tick_label(lab, sizeof(lab), t[i], p->y.ticks);
		fprintf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>"
			"<text x=\"%.1f\" y=\"%.1f\" class=\"tick\" text-anchor=\"end\">%s</text>\n",
			x0, y, x1, y, x0 - 5, y + 4, lab);
	}
	fprintf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" class=\"frame\"/>\n", x0, y1, x1 - x0, y0 - y1);
	fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" class=\"alabel\" text-anchor=\"middle\">", (x0 + x1) / 2, p->h - 12);
	svg_escape(o, p->x.label);
	fprintf(o, "</text>\n<text transform=\"translate(16 %.1f) rotate(-90)\" class=\"alabel\" text-anchor=\"middle\">",
		(y0 + y1) / 2);
	svg_escape(o, p->y.label);
	fputs("</text>\n", o);
}

static bool inside(const struct svg_axis *a, double v)
{
	return isfinite(v) && (!a->log || v > 0);
}

void svg_polyline(struct svg_plot *p, const double *x, const double *y, unsigned n, const char *color, double width,
		  const char *dash, const char *title)
{
	fprintf(p->out, "<polyline class=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"%.1f\"%s%s%s points=\"",
		title ? "data" : "roof", color, width, dash ? " stroke-dasharray=\"" : "", dash ? dash : "", dash ? "\"" : "");
	for (unsigned i = 0; i < n; i++)
		if (inside(&p->x, x[i]) && inside(&p->y, y[i]))
			fprintf(p->out, "%.1f,%.1f ", svg_px(p, x[i]), svg_py(p, y[i]));
	fputs("\">", p->out);
	if (title) {
		fputs("<title>", p->out);
		svg_escape(p->out, title);
		fputs("</title>", p->out);
	}
	fputs("</polyline>\n", p->out);
}

void svg_dot(struct svg_plot *p, double x, double y, const char *color, const char *title)
{
	if (!inside(&p->x, x) || !inside(&p->y, y))
		return;
	fprintf(p->out, "<circle class=\"data\" cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\" fill=\"%s\" stroke=\"#000\" "
		"stroke-width=\"0.6\"><title>", svg_px(p, x), svg_py(p, y), color);
	svg_escape(p->out, title);
	fputs("</title></circle>\n", p->out);
}

void svg_rect(FILE *out, double x, double y, double w, double h, const char *color, const char *title)
{
	fprintf(out, "<rect class=\"data\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>", x, y,
		w, h, color);
	svg_escape(out, title);
	fputs("</title></rect>\n", out);
}

void svg_legend(struct svg_plot *p, unsigned i, const char *color, const char *text)
{
	/* to the right of the plot area: give the plot a right margin of ~250 px */
	double x = p->w - p->mr + 12, y = p->mt + 8 + 15 * i;
	fprintf(p->out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"4\" fill=\"%s\"/>"
		"<text x=\"%.1f\" y=\"%.1f\" class=\"legend\">", x, y - 4, color, x + 16, y);
	svg_escape(p->out, text);
	fputs("</text>\n", p->out);
}

void svg_end(struct svg_plot *p)
{
	fputs("</svg>\n", p->out);
}
