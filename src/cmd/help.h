/*
 * help.h - --help for commands with subcommands (plan, slurm), generated from
 * one table per command: each subcommand's usage, what it does and its exit
 * codes. `gpuctl CMD --help` prints every row, `gpuctl CMD SUB --help` (and
 * `gpuctl help CMD SUB`) its own.
 */
#ifndef GPUCTL_CMD_HELP_H
#define GPUCTL_CMD_HELP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct sub_help {
	const char *name;    /* "gres-conf" */
	const char *usage;   /* its arguments: "[--node NAME] ..." */
	const char *what;    /* what it does: lines, each ending in '\n' */
	const char *exits;   /* "0 written, 64 usage, ..." */
};

/* gpuctl CMD --help: every subcommand's usage line, then each one's text,
 * then notes (may be NULL) and each one's exit codes. */
void help_print_subs(FILE *out, const char *cmd, const struct sub_help *subs, size_t n, const char *notes);
/* gpuctl CMD SUB --help: its usage, text, notes (may be NULL) and exit codes. */
void help_print_sub(FILE *out, const char *cmd, const struct sub_help *s, const char *notes);
/* True if argv[from..] asks for help (-h or --help) before a "--". */
bool help_asked(int argc, char **argv, int from);

#endif
