/* SPDX-License-Identifier: Apache-2.0 */
/*
 * scontrol.h - what gpuctl asks of Slurm through scontrol, in one place:
 * reading a node, draining or resuming it, a job's AdminComment (`slurm
 * health-check`, `slurm sweep --drain`, `slurm stats --admin-comment`).
 * Each run goes through core/spawn.h, killed after SCONTROL_TIMEOUT_MS.
 */
#ifndef GPUCTL_SLURM_SCONTROL_H
#define GPUCTL_SLURM_SCONTROL_H

#include <stddef.h>

#include "slurm/node.h"

#define SCONTROL_TIMEOUT_MS 60000ull /* a hung slurmctld must not hang a health check */
#define SCONTROL_OUTPUT_MAX (1u << 20)

/* `SCONTROL show node NODE -o`, parsed. 0, or -1 with err: why scontrol
 * failed (its exit status and first stderr line), or why its answer did not parse. */
int scontrol_show_node(const char *scontrol, const char *node, struct slurm_node_info *ni, char *err, size_t errlen);

/* SLURM_HC_DRAIN: `SCONTROL update NodeName=NODE State=DRAIN Reason=REASON`;
 * SLURM_HC_RESUME: `... State=RESUME`; other actions do nothing. 0, or -1
 * with err "'SCONTROL update NodeName=NODE State=X' failed[: why]". */
int scontrol_node_action(const char *scontrol, const char *node, enum slurm_hc_action act, const char *reason,
			 char *err, size_t errlen);

/* `SCONTROL update JobId=JOB AdminComment=TEXT`. 0, or -1 with err as above. */
int scontrol_job_comment(const char *scontrol, unsigned long long job, const char *text, char *err, size_t errlen);

#endif
