/*
 * cmd.h - what every command gets from main.c, and the command table.
 * Only src/cmd/ and src/main.c print or choose exit codes (exitcodes.h).
 */
#ifndef GPUCTL_CMD_H
#define GPUCTL_CMD_H

#include <stdio.h>
#include "../core/exitcodes.h"
#include "../device/gpu.h"

struct cmd_ctx {
	const char *prog;       /* "gpuctl" */
	const char *sim;        /* --sim NAME|FILE (or $GPUCTL_SIM), NULL for real GPUs */
	const char *or_sim;     /* --or-sim NAME: real GPUs if any, else this simulated server */
	const char *data_dir;   /* --data-dir or $GPUCTL_DATA_DIR, may be NULL */
	FILE *out, *err;
	/* Set by main for commands flagged CMD_NEED_BACKEND: */
	struct gpu_backend *be;
	struct gpu_system sys;
};

/* Opens the backend the context asks for (sim, or NVML with the --or-sim fallback).
 * On failure prints a one-line error and returns an exit code; 0 on success. */
int cmd_open_backend(struct cmd_ctx *ctx, struct gpu_backend *be);
/* Prints "gpuctl CMD: message" to ctx->err. */
void cmd_error(const struct cmd_ctx *ctx, const char *cmd, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The banner every human-readable output of a simulated server starts with. */
void cmd_print_sim_banner(const struct cmd_ctx *ctx, FILE *out);

/* common_gpus.c: what commands that read every GPU share. */
struct snapshot;
/* Takes a heap-allocated snapshot of the metric groups asked for (GPU_GRP_*);
 * on failure prints "gpuctl CMD: ..." and returns NULL with *rc the exit code. */
struct snapshot *cmd_take_snapshot(struct cmd_ctx *ctx, const char *cmd, unsigned groups, int *rc);
/* Resolves -i/--id SPEC (NULL: every GPU) against a snapshot's GPUs into a
 * bitmap; on a bad spec prints the one-line error and returns EXIT_USAGE. */
int cmd_select_gpus(const struct cmd_ctx *ctx, const char *cmd, const struct snapshot *snap,
		    const char *spec, uint64_t *mask);

#define CMD_NEED_BACKEND 0x1u /* main opens the backend before calling */

typedef int (*cmd_fn)(int argc, char **argv, struct cmd_ctx *ctx);

struct cmd_entry {
	const char *name;
	cmd_fn fn;
	unsigned flags;
	const char *summary;
};

/* One line per command in commands.h (X-macro): CMD(name, flags, "summary") */
#define CMD(name, flags, summary) int cmd_##name(int argc, char **argv, struct cmd_ctx *ctx);
#include "commands.h"
#undef CMD

#endif
