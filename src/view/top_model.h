/* SPDX-License-Identifier: Apache-2.0 */
/*
 * top_model.h - the pure part of `gpuctl top`: history rings, the process
 * list and its sorting, the choice of layout for the terminal size and GPU
 * count, and the text pieces (bars, chart cells, sizes). No ncurses here:
 * src/cmd/top*.c draws what these decide, and tests check them directly.
 */
#ifndef GPUCTL_TOP_MODEL_H
#define GPUCTL_TOP_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sampler/sampler.h"

/* ---- what top samples ---- */

/* The metric groups (GPU_GRP_*) top reads: what its screen shows, and not the
 * energy counter, the violation counters or the NVLink error counters, which
 * it never shows and which on an H200 cost more CPU than all the rest. */
unsigned top_sampler_groups(void);
/* How many ticks apart the slow groups (ECC, PCIe, NVLink state) are read at
 * this refresh interval: about every 5 s, every tick from 5 s up. */
unsigned top_slow_every(uint64_t interval_ns);

/* ---- history: the last TOP_HIST refreshes of one GPU, in percent ---- */
#define TOP_HIST 256

enum top_series { TOP_SER_UTIL, TOP_SER_MEM, TOP_SER_POWER, TOP_SER_COUNT };

struct top_hist {
	float v[TOP_SER_COUNT][TOP_HIST]; /* NAN where the value was not known */
	unsigned head, n;                 /* next slot; how many are filled */
};

/* Appends one refresh: utilization %, memory used %, power % of the limit
 * from a view (NAN for what the view lacks or when the GPU is down). */
void top_hist_push_view(struct top_hist *h, const struct gpu_view *v);
/* The value `age` refreshes ago (0 = newest); NAN if none. */
float top_hist_get(const struct top_hist *h, enum top_series s, unsigned age);

/* ---- processes ---- */
struct top_proc {
	unsigned gpu;
	uint32_t pid;
	char user[32];
	char name[64];
	u64v mem_bytes;
	char type; /* 'C' compute, 'G' graphics */
};

enum top_sort { TOP_SORT_MEM, TOP_SORT_PID, TOP_SORT_GPU, TOP_SORT_USER, TOP_SORT_NAME, TOP_SORT_COUNT };

const char *top_sort_name(enum top_sort k); /* "memory", "pid", ... */
/* The processes of the GPUs in mask (bit i = GPU i) that are up. */
unsigned top_procs_collect(const struct snapshot *s, uint64_t mask, struct top_proc *out, unsigned max);
/* Stable order: by key (memory: largest first), ties by GPU then pid. */
void top_procs_sort(struct top_proc *p, unsigned n, enum top_sort key, bool reverse);

/* Keeps the processes whose user is `user` (the name, exactly; NULL or ""
 * keeps all), in order; returns the new count. */
unsigned top_procs_filter_user(struct top_proc *p, unsigned n, const char *user);

/* ---- a process's host side (batch mode's CPU %, host memory, runtime) ---- */
/* The share of one core, in percent, a process used: (cpu1 - cpu0) clock
 * ticks over dt_s seconds; NAN when dt_s <= 0, clk_tck <= 0 or cpu1 < cpu0. */
double top_cpu_pct(uint64_t cpu0_ticks, uint64_t cpu1_ticks, double dt_s, long clk_tck);
/* Seconds since a process started: uptime_s less its start (clock ticks
 * since boot); NAN when that is negative or clk_tck <= 0. */
double top_runtime_s(uint64_t start_ticks, double uptime_s, long clk_tck);
/* A runtime as ps's ELAPSED: "MM:SS", "HH:MM:SS", "D-HH:MM:SS"; "-" for NAN. */
void top_fmt_runtime(double s, char *out, size_t outlen);

/* ---- the summary line: the shown GPUs together ---- */
struct top_summary {
	unsigned ngpus, down;
	double power_w, limit_w, util_pct; /* NAN where no GPU reports it */
	double mem_used, mem_total;         /* bytes; NAN where none reports it */
};
void top_summary_compute(const struct snapshot *s, const unsigned *shown, unsigned nshown, struct top_summary *out);

/* ---- layout ---- */
enum top_layout_kind {
	TOP_PANELS, /* two lines per GPU: bars, then clocks/throttle/PCIe/NVLink */
	TOP_LINES,  /* one line per GPU */
	TOP_GRID,   /* many GPUs: small cells, several per line */
};

struct top_layout {
	enum top_layout_kind kind;
	unsigned header_rows;  /* title and summary */
	unsigned gpu_rows;     /* screen rows for the GPU area */
	unsigned grid_cols;    /* TOP_GRID: cells per row */
	unsigned cell_width;   /* TOP_GRID: characters per cell */
	unsigned chart_rows;   /* history chart height (0: none) */
	unsigned proc_rows;    /* process list rows, its header included (0: none) */
	bool gpu_scroll;       /* TOP_GRID: more GPU rows than fit; the area scrolls */
	bool too_small;        /* below TOP_MIN_ROWS x TOP_MIN_COLS */
};

#define TOP_MIN_COLS 40
#define TOP_MIN_ROWS 8
#define TOP_GRID_CELL 26
#define TOP_GRID_CELL_NARROW 13

/* Picks the layout: the most detail that leaves room for the process list
 * (at least a few rows) and, when asked, the charts. */
void top_layout_choose(unsigned ngpus, unsigned rows, unsigned cols, bool charts, struct top_layout *out);

/* ---- text pieces ---- */
/* "|||||     " of `width` characters for frac in [0,1] (clamped; NAN: blanks). */
void top_bar(char *out, size_t outlen, unsigned width, double frac);
/* Eighths (0..8) of chart cell `row` (0 = top) in a chart of `rows` rows for a
 * value in percent: how much of that cell a bar of that height fills. */
unsigned top_chart_eighths(float pct, unsigned row, unsigned rows);
/* Bytes as "512M", "80.0G", "141G" (binary units, at most 5 characters). */
void top_fmt_bytes(uint64_t bytes, char *out, size_t outlen);
/* A rate in MB/s as "0M", "850M", "12.5G" (decimal, per second, at most 5 characters). */
void top_fmt_rate(double mbs, char *out, size_t outlen);
/* The short model name for a GPU: its catalog key if matched, else the
 * driver name without "NVIDIA "/"Tesla "/"GeForce ". */
void top_model_name(const struct gpu_static *st, char *out, size_t outlen);


#endif
