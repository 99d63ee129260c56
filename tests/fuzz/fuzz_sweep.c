/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_sweep.c - what the fleet sweep reads from Slurm (src/slurm/sweep.h):
 * the node list (scontrol show hostnames / sinfo), sbatch's answer, and
 * squeue's lines for every listed node's job. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "slurm/sweep.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 65536)
		return 0;
	char *s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	char *copy = strdup(s), err[256];
	struct sweep_job *jobs = NULL;
	size_t n = 0;
	if (copy && sweep_jobs_parse(copy, &jobs, &n, err, sizeof(err)) == 0) {
		for (size_t i = 0; i < n; i++) {
			(void)sweep_job_submitted(&jobs[i], 0, jobs[i].node, "");
			if (sweep_job_step(&jobs[i], s, i % 2, (long long)i, 1) == SWEEP_ENDED)
				sweep_job_ended(&jobs[i], s);
			(void)sweep_job_timeout(&jobs[i], 1);
		}
		size_t c[SWEEP_JOB_NSTATES];
		sweep_counts(jobs, n, c);
	}
	free(jobs);
	free(copy);
	free(s);
	return 0;
}
