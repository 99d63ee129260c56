/* SPDX-License-Identifier: Apache-2.0 */
/*
 * summary.h - one line of a job's GPU statistics (pure), for a Slurm job's
 * AdminComment and the SPANK plugin: the accounting array of a job document
 * (docs/pool.md, "Job objects") summed over its GPUs.
 */
#ifndef GPUCTL_SLURM_SUMMARY_H
#define GPUCTL_SLURM_SUMMARY_H

#include <jansson.h>
#include <stddef.h>

/* "gpuctl: 2 GPUs, 120.0 GPU-s, 41230.5 J, util avg 97 % peak 99 %, mem peak
 * 70.12 GiB, XIDs none, throttle none"; a value no GPU reported is "n/a".
 * Returns 0, or -1 when job has no accounting array. */
int slurm_stats_summary(const json_t *job, char *out, size_t outlen);

#endif
