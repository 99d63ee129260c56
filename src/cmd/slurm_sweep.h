/* SPDX-License-Identifier: Apache-2.0 */
/* slurm_sweep.h - `gpuctl slurm sweep` (slurm_sweep.c), registered in slurm.c's verb table. */
#ifndef GPUCTL_CMD_SLURM_SWEEP_H
#define GPUCTL_CMD_SLURM_SWEEP_H

#include "cmd.h"

/* Its usage line, what it does and its exit codes, for slurm.c's sub_help row. */
#define SLURM_SWEEP_USAGE                                                                                      \
	"[-p PARTITION] [-w NODES] [--level health|diag1|diag2|diag3|bench-quick] [--out DIR] [--drain]\n"     \
	"       [--threshold PCT] [--start-timeout DUR] [--timeout DUR] [--window DUR] [--gpuctl PATH]\n"      \
	"       [--json] | --compare OLD.json NEW.json | --gather --out DIR [--drain]\n"                      \
	"       | --run-node --out DIR [--level L] [--node NAME]"
#define SLURM_SWEEP_WHAT                                                                                       \
	"fleet acceptance: one exclusive job per node runs gpuctl at the level, each writes\n"                 \
	"DIR/nodes/NODE.json; then fleet.json, fleet.txt and fleet.html in DIR: per figure and\n"              \
	"GPU model the median and MAD, the outliers (below the median by more than --threshold,\n"             \
	"default 8%; a health rule with an action; diag FAIL; a node not swept) with their action;\n"          \
	"--drain drains the outliers' nodes (reason 'gpuctl sweep: ...'); --compare: what changed\n"            \
	"between two sweeps; --gather: the report of the results in DIR/nodes, no jobs;\n"                     \
	"--run-node: what each job runs (bench-quick on a simulated server:\n"                                 \
	"SIMULATED figures, never presented as measured)\n"
#define SLURM_SWEEP_EXITS                                                                                      \
	"0 every node swept, no outlier, 1 a node not swept, 2 an outlier, 64 usage, 65 a bad fleet.json,\n"   \
	"            66 a file that cannot be read, 69 sbatch/squeue/scontrol failed, 74 DIR cannot be written"

int slurm_sweep(int argc, char **argv, struct cmd_ctx *ctx);
/* `gpuctl slurm sweep --help`: usage, then every option of its table with its default */
void slurm_sweep_help(FILE *out);

#endif
