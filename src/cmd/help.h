/* SPDX-License-Identifier: Apache-2.0 */
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

#include "core/opts.h"
#include "core/units.h"

/* --help of a command from its option table (core/opts.h):
 *   usage: gpuctl NAME USAGE
 *   (what it does)
 *   each option with its value, help text and default; -h, --help
 *   (notes)
 *   exit codes: EXITS                                                  */
struct cmd_help {
	const char *name;   /* "topo"; NULL: gpuctl's own (main.c's global options) */
	const char *usage;  /* after "usage: gpuctl NAME ": "[--json] [-i SPEC]" (more lines: "\n       gpuctl NAME ...") */
	const char *what;   /* what it does: lines, each ending in '\n' */
	const struct opt_spec *opts;
	size_t nopts;
	const char *notes;  /* printed after the options; NULL: none */
	const char *exits;  /* after "exit codes: ": "0 ok, 64 usage, ..." (docs/exit-codes.md) */
	bool operands;      /* takes arguments besides options; false: one is "unexpected argument" */
	void (*more)(FILE *out); /* printed after the options, before the notes (a list built at run time); may be NULL */
};

void help_print_cmd(FILE *out, const struct cmd_help *h);

/* -i/--id, which every command that reads GPUs takes (checked by cmd_check_gpu_spec). */
#define OPT_SPEC_GPU_ID                                                                                        \
	{ "id", 'i', OPT_STRING, "SPEC",                                                                       \
	  "only these GPUs: indexes, ranges, UUIDs or bus ids,\n"                                              \
	  "comma-separated (\"0-3,6\", \"GPU-8f3e12ab\", \"18:00.0\")",                                        \
	  NULL, 0, 0, NULL }
/* -i/--id in the short form of the commands that watch GPUs (dmon, top, health). */
#define OPT_SPEC_GPU_IDS { "id", 'i', OPT_STRING, "ID", "GPUs by index, range, UUID or bus id", "all", 0, 0, NULL }
/* -d/--delay, the refresh interval of dmon and top (WHAT: "interval"). */
#define OPT_SPEC_DELAY(what)                                                                                   \
	{ "delay", 'd', OPT_DURATION, NULL, what ", 100ms to 1h (docs/units.md)", "1s", 100000000,             \
	  3600 * (long long)UNITS_NS_PER_S, NULL }
/* The exit codes of a command that only reads GPUs (info, topo). */
#define HELP_EXITS_READ_GPUS                                                                                   \
	"0 ok, 64 usage, 65 bad simulation file, 66 no simulation file,\n"                                    \
	"            69 no driver or no GPU, 74 output error (docs/exit-codes.md)"
/* --json, the stable machine-readable output (docs/json.md). */
#define OPT_SPEC_JSON { "json", 0, OPT_FLAG, NULL, "machine-readable output (stable; see docs/json.md)", NULL, 0, 0, NULL }

struct cmd_ctx;
/* A usage error as the command's one line, "gpuctl CMD: MSG; see 'gpuctl CMD
 * --help'" (an unknown option, an unexpected argument). Returns EXIT_USAGE. */
int help_usage_error(const struct cmd_ctx *ctx, const char *cmd, const char *msg);
/* The parser's error as the command's one line ("gpuctl CMD: option '-i' needs
 * a value"; an unknown option as help_usage_error). Returns EXIT_USAGE. */
int help_opt_error(const struct cmd_ctx *ctx, const char *cmd, const struct opt_parser *p);
/* opt_next over the command's table (opt_init(p, argc, argv, h->opts, h->nopts)
 * first), with what every command does the same way: -h/--help prints the help
 * and returns OPT_HELP with *rc 0; a parser error, or an operand the command
 * does not take (h->operands), prints its one line and returns OPT_ERROR with
 * *rc 64. Otherwise what opt_next returns. */
int help_opt_next(const struct cmd_ctx *ctx, const struct cmd_help *h, struct opt_parser *p, struct opt_value *v,
		  int *rc);
/* An operand a command does not take: "unexpected argument 'X'". Returns EXIT_USAGE. */
int help_unexpected(const struct cmd_ctx *ctx, const char *cmd, const char *arg);

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
/* argv[1], the subcommand of `gpuctl CMD`, among subs' names: its index;
 * HELP_SUB_HELP for -h/--help (the caller prints its help); HELP_SUB_BAD after
 * the one-line error (exit 64): none given ("a subcommand is needed (a, b or
 * c); see 'gpuctl CMD --help'") or not one of them ("unknown subcommand 'X';
 * see 'gpuctl CMD --help'"). ctx is a struct cmd_ctx. */
#define HELP_SUB_HELP (-1)
#define HELP_SUB_BAD (-2)
struct cmd_ctx;
int help_sub_find(const struct cmd_ctx *ctx, const char *cmd, const struct sub_help *subs, size_t n, int argc,
		  char **argv);
/* True if argv[from..] asks for help (-h or --help) before a "--". */
bool help_asked(int argc, char **argv, int from);

#endif
