/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gk_driver.h - the device test program for the kernels module: a standalone
 * C driver that links only the loader and the CPU references (no gpuctl_core,
 * no jansson), so it builds on a bare GPU machine. gk_check.c runs every
 * entry's correctness test at small sizes; gk_timing.c times the goals of
 * issue 4 at full sizes and prints a table beside the datasheet.
 */
#ifndef GK_DRIVER_H
#define GK_DRIVER_H

#include <stdio.h>

#include "kernels_host/cpu_ref.h"

struct drv {
	const struct gk_api *api;
	int ndev;
	FILE *json;     /* one JSON object a line, or NULL */
	int failures;
	int checks;
	double deadline_s; /* seconds allowed per call */
};

double drv_now(void);
struct gk_common drv_common(const struct drv *d, int dev, int iters);
double drv_median(const struct gk_result *r);
/* Record a correctness outcome: ok is what the test expects. */
void drv_expect(struct drv *d, const char *name, int ok, const struct gk_result *r, const char *why);
/* Write one result as a JSON line (name, rc, median ms, rate, unit, datasheet, verify). */
void drv_json(struct drv *d, const char *name, const char *params, const struct gk_result *r, double rate,
	      const char *unit, double datasheet);

int drv_check_all(struct drv *d);
int drv_timing_all(struct drv *d);

#endif
