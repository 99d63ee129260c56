/* SPDX-License-Identifier: Apache-2.0 */
/*
 * output.h - `gpuctl bench` output for people (text tables) and scripts (CSV;
 * JSON is the results file, results_file.h). Writes into a FILE* the command
 * owns. Column meanings are documented in docs/bench.md.
 */
#ifndef GPUCTL_BENCH_OUTPUT_H
#define GPUCTL_BENCH_OUTPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model.h"

/* "4 KiB", "1 GiB", "1.5 MiB", "" for 0. */
void bench_fmt_size(uint64_t bytes, char *out, size_t outlen);
/* A figure with 3-4 significant digits: "4210", "54.3", "0.876"; "n/a" for NAN. */
void bench_fmt_num(double v, char *out, size_t outlen);
/* Work counted per sample, decimal units: "8.59 GB", "4.10 kB", "1.10 TFLOP"; "" when none. */
void bench_fmt_work(const struct bench_result *r, char *out, size_t outlen);
/* Clock-event reasons as nvidia-smi names them ("SW Power Cap, HW Slowdown"), idle left out; "none". */
void bench_fmt_reasons(uint64_t bits, char *out, size_t outlen);
/* What a result measured, in one short label: "memory copy 4 GiB", "compute cublas bf16 8192^3". */
void bench_fmt_label(const struct bench_result *r, char *out, size_t outlen);

/* The run header line, the results table, the telemetry table and a summary. */
void bench_print_text(const struct bench_run *run, FILE *out);
/* CSV: one header line, one line per result (RFC 4180 quoting). */
void bench_print_csv(const struct bench_run *run, FILE *out);

#endif
