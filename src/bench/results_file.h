/* SPDX-License-Identifier: Apache-2.0 */
/*
 * results_file.h - the saved results file of `gpuctl bench --save FILE`, also
 * what `gpuctl bench --json` prints and what `gpuctl report --results FILE`
 * reads. The format is documented in docs/bench.md ("Results file"); numbers
 * are written with 17 significant digits so a load gives back the same values,
 * and a figure that does not exist is null.
 */
#ifndef GPUCTL_BENCH_RESULTS_FILE_H
#define GPUCTL_BENCH_RESULTS_FILE_H

#include <stddef.h>

#include "model.h"

/* The run as JSON text (malloc'd, ends with a newline); NULL when out of memory. */
char *bench_results_to_json(const struct bench_run *run);
/* Writes the JSON text to path (replacing it). Returns 0, or -1 with a message. */
int bench_results_save(const struct bench_run *run, const char *path, char *err, size_t errlen);
/* Parses results-file text into run (initialised here). Returns 0, or -1 with a
 * one-line message; run is then empty. Never trusts the input: every field is
 * type-checked and bounded. */
int bench_results_parse(struct bench_run *run, const char *text, size_t len, char *err, size_t errlen);
/* Reads and parses a file: 0, -1 unreadable (message), -2 malformed (message). */
int bench_results_load(struct bench_run *run, const char *path, char *err, size_t errlen);

#endif
