/* SPDX-License-Identifier: Apache-2.0 */
/*
 * numfmt.h - numbers in text output as docs/conventions.md writes them:
 * never in e-notation ("1e+09", "7.283e+19"). Pure.
 */
#ifndef GPUCTL_NUMFMT_H
#define GPUCTL_NUMFMT_H

#include <stddef.h>

/* v with `sig` significant digits (1 to 9; trailing zeros dropped), below
 * 1e6 in plain decimals ("32900", "0.154", "6.5"); from 1e6 below 1e16 with
 * the suffixes the option parser reads numbers in, M, B, T ("1B", "6.738B",
 * "1000T"), so a range in --help can be typed back; above that "4.365 x 10^19". NaN: "n/a"; infinities: "inf", "-inf". Returns out. */
char *numfmt(char *out, size_t outlen, double v, int sig);

#endif
