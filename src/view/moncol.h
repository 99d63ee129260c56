/* SPDX-License-Identifier: Apache-2.0 */
/*
 * moncol.h - the monitoring columns shared by `gpuctl dmon` and `gpuctl top`:
 * what each column is, its unit, and how its value comes out of two
 * successive views of a GPU (a rate runs between the two readings
 * sampler_rate_base names: the sampler's rate base, else the previous view). Pure: no I/O
 * beyond writing rows into a FILE* the caller owns.
 *
 * Columns belong to groups, picked with dmon's -s like nvidia-smi dmon:
 *   p power/temperature  u utilization  c clocks  v violations (throttled time)
 *   m memory  e ECC/PCIe errors  t PCIe throughput  n NVLink throughput
 *   s state (P-state, throttle reason)  g profiling (GPM: SM activity, occupancy,
 *   tensor, DRAM and FP pipe activity; nvidia-smi dmon --gpm-metrics)
 * Machine output (CSV header, JSON keys) uses each column's `key`, which
 * carries the unit; docs/dmon.md lists them and is the stable interface.
 * dmon --json writes a column of one sample value under its sample_key,
 * the --json vocabulary's, instead (CSV keeps the column keys).
 * A column of one sample field is that field's COL(...) in the field table
 * (device/gpu_fields.h); moncol.c adds those of other values (fbpct, NVLink).
 */
#ifndef GPUCTL_MONCOL_H
#define GPUCTL_MONCOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sampler/sampler.h"

enum moncol_kind { MONCOL_NUM, MONCOL_TEXT };

struct moncol_value {
	enum val_status st;   /* VAL_OK, VAL_UNSUPPORTED, VAL_ERROR, VAL_UNKNOWN (no rate yet) */
	double num;
	char text[16];
};

struct moncol {
	const char *name;     /* short name in the text header: "pwr" */
	const char *key;      /* machine name with its unit: "power_w" */
	const char *unit;     /* text header's unit line: "W" */
	char group;           /* 'p', 'u', ... */
	enum moncol_kind kind;
	unsigned width;       /* text column width */
	unsigned decimals;
	const char *help;     /* one line for --help and the docs */
	/* prev may be NULL (no rate yet) */
	void (*get)(const struct moncol *c, const struct gpu_view *cur, const struct gpu_view *prev,
		    struct moncol_value *out);
	size_t field;         /* a field table column: the u64v's offset in struct gpu_sample */
	double scale;         /* and the factor it is shown with */
	unsigned groups;      /* the GPU_GRP_* the sampler reads it in */
	/* a column that shows one sample value as it is (calc VALUE, and
	 * PSTATE): that value's key in --json's "sample" (docs/json.md), which
	 * dmon --json writes with the exact integer; NULL for rates, shares and
	 * throttle's word */
	const char *sample_key;
};

extern const struct moncol moncols[];
extern const unsigned moncol_count;

#define MONCOL_GROUPS "pucvmetnsg"
#define MONCOL_DEFAULT_GROUPS "pucm"
#define MONCOL_MAX_SELECTED 32

/* Column by short name or key (case-insensitive); NULL if none. */
const struct moncol *moncol_find(const char *name);

/* Builds the column list from -s GROUPS and/or --columns a,b,c (either may be
 * NULL; both NULL means the default groups). Groups come first in table
 * order, then listed columns not already chosen. Returns the count, or -1
 * with a one-line message ("unknown column 'x'", "unknown group 'q'"). */
int moncol_select(const char *groups, const char *columns, const struct moncol **out, unsigned max,
		  char *err, size_t errlen);

/* The GPU metric groups (GPU_GRP_*) the sampler must read for these columns. */
unsigned moncol_sampler_groups(const struct moncol *const *cols, unsigned n);

/* One value (the GPU down: VAL_ERROR for every column). */
void moncol_eval(const struct moncol *c, const struct gpu_view *cur, const struct gpu_view *prev,
		 struct moncol_value *out);

/* "-" not ready, "n/a" not supported, "ERR" error, else the value. */
void moncol_format(const struct moncol *c, const struct moncol_value *v, char *out, size_t outlen);

/* The most telling throttle reason of CLK_EVT_* bits as a short word, with "+"
 * when there are more: "none", "idle", "pwrcap", "hwslow+", ... */
void moncol_throttle_short(uint64_t bits, char *out, size_t outlen);

/* ---- rows, as dmon prints them ---- */

enum moncol_format { MONFMT_TEXT, MONFMT_CSV, MONFMT_JSON };

struct monrow_ctx {
	enum moncol_format fmt;
	const struct moncol *const *cols;
	unsigned ncols;
	bool simulated;
	bool show_date, show_time; /* text: nvidia-smi's -o D / -o T columns */
};

/* Text: the two '#' header lines (names, units). CSV: one header line. JSON: nothing. */
void monrow_header(const struct monrow_ctx *rc, FILE *out);
/* One row for one GPU. date ("20261130") and time ("00:10:05") are for the
 * text columns; iso_ts ("2026-11-30T00:10:05Z") for CSV/JSON; ts_ns for JSON. */
void monrow_print(const struct monrow_ctx *rc, const struct gpu_view *cur, const struct gpu_view *prev,
		  unsigned gpu, const char *date, const char *time, const char *iso_ts, uint64_t ts_ns,
		  FILE *out);

#endif
