/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd.h - what every command gets from main.c, and the command table.
 * Only src/cmd/ and src/main.c print or choose exit codes (exitcodes.h).
 */
#ifndef GPUCTL_CMD_H
#define GPUCTL_CMD_H

#include <stdio.h>
#include "core/exitcodes.h"
#include "device/gpu.h"

struct cmd_ctx {
	const char *prog;       /* "gpuctl" */
	const char *sim;        /* --sim NAME|FILE (or $GPUCTL_SIM), NULL for real GPUs */
	const char *or_sim;     /* --or-sim NAME: real GPUs if any, else this simulated server */
	const char *data_dir;   /* --data-dir or $GPUCTL_DATA_DIR, may be NULL */
	FILE *out, *err;
	/* The open backend (NULL until a command opens it: cmd_backend) and the
	 * system facts (driver, CUDA, host) read once when it opened; main closes it. */
	struct gpu_backend *be;
	struct gpu_system sys;
	struct gpu_backend be_storage; /* what cmd_backend() points be at */
	/* The command runs on (the agent): a simulated server's run-time fault
	 * file that cannot be applied is reported while it runs, not an exit 65
	 * when the backend opens (one-shot commands). */
	bool fault_file_live;
};

/* Opens the backend the context asks for (sim, or NVML with the --or-sim fallback)
 * into *be, reads the system facts into ctx->sys and sets ctx->be = be.
 * On failure prints a one-line error and returns an exit code; 0 on success. */
int cmd_open_backend(struct cmd_ctx *ctx, struct gpu_backend *be);
/* The backend for a command that reads GPUs: opens it on the first call
 * (cmd_open_backend into ctx->be_storage), then returns 0 at once. A command
 * calls it only once all its options and arguments are checked, so that a usage
 * error (64) never waits on, or fails for want of, a driver or simulated server.
 * Returns 0, or the exit code after printing the one-line error. */
int cmd_backend(struct cmd_ctx *ctx);
/* Prints "gpuctl CMD: message" to ctx->err, the message made fit for a
 * terminal (text_line in core/table.h). */
void cmd_error(const struct cmd_ctx *ctx, const char *cmd, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The banner every human-readable output of a simulated server starts with. */
void cmd_print_sim_banner(const struct cmd_ctx *ctx, FILE *out);

/* common_gpus.c: what commands that read every GPU share. */
struct snapshot;
/* Takes a heap-allocated snapshot of the metric groups asked for (GPU_GRP_*),
 * opening the backend first if no one has (cmd_backend); the snapshot's system
 * facts are ctx->sys, not read again. On failure prints the one-line error
 * ("gpuctl CMD: ..." for the snapshot) and returns NULL with *rc the exit code. */
struct snapshot *cmd_take_snapshot(struct cmd_ctx *ctx, const char *cmd, unsigned groups, int *rc);
/* Checks the form of -i/--id SPEC (NULL: every GPU) while the options are
 * parsed, before the backend opens (gpu_select_check); on a bad one prints
 * the one-line error and returns EXIT_USAGE, else 0. */
int cmd_check_gpu_spec(const struct cmd_ctx *ctx, const char *cmd, const char *spec);
/* Resolves -i/--id SPEC (NULL: every GPU) against a snapshot's GPUs into a
 * bitmap; on a bad spec prints the one-line error and returns EXIT_USAGE. */
int cmd_select_gpus(const struct cmd_ctx *ctx, const char *cmd, const struct snapshot *snap,
		    const char *spec, uint64_t *mask);

typedef int (*cmd_fn)(int argc, char **argv, struct cmd_ctx *ctx);

/* A command that reads GPUs opens the backend through cmd_backend() once its
 * options are checked (tests/cli/usage_first.sh); main opens nothing and
 * closes whatever backend a command left open. */
struct cmd_entry {
	const char *name;
	cmd_fn fn;
	const char *summary;
};

/* One line per command in commands.h (X-macro): CMD(name, "summary") */
#define CMD(name, summary) int cmd_##name(int argc, char **argv, struct cmd_ctx *ctx);
#include "commands.h"
#undef CMD

#endif
