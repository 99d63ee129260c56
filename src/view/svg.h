/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svg.h - the little plotting the HTML report needs: a plot area with linear
 * or logarithmic axes, grid, ticks and labels, written as inline SVG into a
 * FILE*. Every mark that shows data carries class="data" (the report's
 * rendering test counts them and checks their size).
 */
#ifndef GPUCTL_BENCH_SVG_H
#define GPUCTL_BENCH_SVG_H

#include <stdbool.h>
#include <stdio.h>

enum svg_ticks { SVG_TICKS_NUM = 0, SVG_TICKS_BYTES = 1, SVG_TICKS_NONE = 2 /* categories: the caller labels */ };

struct svg_axis {
	double lo, hi;          /* data range (> 0 when log) */
	bool log;
	enum svg_ticks ticks;
	const char *label;
};

struct svg_plot {
	FILE *out;
	double w, h;            /* whole picture, px */
	double ml, mr, mt, mb;  /* margins around the plot area */
	struct svg_axis x, y;
};

extern const char *const svg_palette[8];

/* Writes a string with &, <, >, " escaped. */
void svg_escape(FILE *out, const char *s);
/* Opens <svg> with a title; set p->x / p->y before svg_axes. */
void svg_begin(struct svg_plot *p, FILE *out, const char *id, const char *title, double w, double h);
void svg_axes(struct svg_plot *p);
double svg_py(const struct svg_plot *p, double y);
/* Data marks: a line through n points (skipping non-finite ones), a dot, a bar. */
void svg_polyline(struct svg_plot *p, const double *x, const double *y, unsigned n, const char *color, double width,
		  const char *dash, const char *title);
void svg_dot(struct svg_plot *p, double x, double y, const char *color, const char *title);
void svg_rect(FILE *out, double x, double y, double w, double h, const char *color, const char *title);
/* A legend entry at row i, right of the plot area (set p->mr to leave room). */
void svg_legend(struct svg_plot *p, unsigned i, const char *color, const char *text);
void svg_end(struct svg_plot *p);

#endif
