/* SPDX-License-Identifier: Apache-2.0 */
/*
 * spawn.h - the one way gpuctl runs a program and reads what it says:
 * argv (no shell, PATH searched), stdin /dev/null, its stdout captured up to
 * a cap, the first line of its stderr, an optional timeout. What `slurm
 * health-check`, `slurm stats` and `slurm sweep` run (scontrol, sinfo, srun).
 */
#ifndef GPUCTL_CORE_SPAWN_H
#define GPUCTL_CORE_SPAWN_H

#include <stddef.h>
#include <stdint.h>

struct spawn_opts {
	size_t out_max;      /* the most stdout kept; more is an error (out NULL: read and thrown away) */
	uint64_t timeout_ms; /* 0: none; past it the program is killed (SIGKILL) and reaped */
};

/* Runs argv; *out (out not NULL) gets its stdout (heap, NUL-terminated,
 * *len bytes when len is not NULL), errline the first line of its stderr.
 * Returns its exit status, or -1 with errline saying why: it could not run,
 * was killed by a signal, wrote more than out_max to stdout, or ran past the
 * timeout. *out is NULL whenever -1 is returned. */
int spawn_run(char *const argv[], const struct spawn_opts *o, char **out, size_t *len, char *errline,
	      size_t errlen);

#endif
