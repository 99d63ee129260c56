/* SPDX-License-Identifier: Apache-2.0 */
/* cpulist.h - the one parser of Linux CPU lists ("0-55,112-167"): the
 * simulator's numa_nodes (device/sim_parse.c) and gres.conf's Cores=
 * (slurm/gres.c) read them with it. Pure. */
#ifndef GPUCTL_CPULIST_H
#define GPUCTL_CPULIST_H

#include <stddef.h>
#include <stdint.h>

#define CPULIST_MAX_CPUS 4096 /* a CPU number is below this */

/* Parses s, a list of CPU numbers and ranges "a-b" (a <= b) separated by
 * single commas, every CPU below ncpu (at most CPULIST_MAX_CPUS), into a
 * bitmap of ncpu bits (bits NULL: checks only). Returns 0, or -1 with a
 * one-line message: empty, bad syntax ("5-1", ",,", a trailing '-'), a CPU
 * beyond ncpu. */
int cpulist_parse(const char *s, uint8_t *bits, unsigned ncpu, char *err, size_t errlen);

#endif
