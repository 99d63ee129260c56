/* SPDX-License-Identifier: Apache-2.0 */
/*
 * main.c - gpuctl's entry point: global options, then one table that
 * dispatches to src/cmd/<name>.c (the git pattern).
 *
 * Global options may stand before the command or among its arguments (up to
 * a "--"): --sim NAME|FILE, --or-sim NAME, --data-dir DIR. They are taken out
 * of argv before the command sees it.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/help.h"
#include "cmd/info_data.h"

#ifndef GPUCTL_VERSION
#define GPUCTL_VERSION "0.0.0"
#endif
#ifdef GPUCTL_COMMIT_HEADER
#include "gpuctl_commit.h" /* written at build time by cmake/commit.cmake */
#endif
#ifndef GPUCTL_COMMIT
#define GPUCTL_COMMIT "unknown"
#endif
#ifndef GPUCTL_BUILD_DATE
#define GPUCTL_BUILD_DATE "unknown"
#endif
#ifndef GPUCTL_CUDA_ARCHS /* kernels/CMakeLists.txt: "built for sm_80 sm_90" */
#define GPUCTL_CUDA_ARCHS "not built (no CUDA when gpuctl was built)"
#endif

static const struct cmd_entry commands[] = {
#define CMD(name, summary) { #name, cmd_##name, summary },
#include "cmd/commands.h"
#undef CMD
};

enum { OPT_GLOBAL_SIM, OPT_GLOBAL_OR_SIM, OPT_GLOBAL_DATA_DIR };
static const struct opt_spec global_opts[] = {
	[OPT_GLOBAL_SIM] = { "sim", 0, OPT_STRING, "NAME|FILE",
			     "use a simulated server (shipped NAME, or a JSON file); output says SIMULATED", NULL, 0, 0,
			     NULL },
	[OPT_GLOBAL_OR_SIM] = { "or-sim", 0, OPT_STRING, "NAME",
				"use the real GPUs if the driver finds any, else simulated server NAME", NULL, 0, 0, NULL },
	[OPT_GLOBAL_DATA_DIR] = { "data-dir", 0, OPT_STRING, "DIR", "where the shipped data files are", "built-in paths", 0,
				  0, NULL },
};

static void print_commands(FILE *out)
{
	fputs("commands:\n", out);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
}

static const struct cmd_help global_help = {
	.name = NULL,
	.usage = "[--sim NAME|FILE | --or-sim NAME] [--data-dir DIR] COMMAND [ARGS]\n"
		 "       gpuctl --version | --help | COMMAND [SUB] --help | help COMMAND [SUB]",
	.what = "GPU server toolkit: inventory, monitoring, health, benchmarks, planning, job pool.\n\n"
		"global options:",
	.opts = global_opts,
	.nopts = sizeof(global_opts) / sizeof(global_opts[0]),
	.more = print_commands,
	.notes = "Global options stand before the command or among its arguments, up to a \"--\".\n"
		 "environment: GPUCTL_SIM, GPUCTL_DATA_DIR\n",
	.exits = "0 ok, 1 warning, 2 failure, 64 usage, 65 bad data, 66 no input,\n"
		 "            69 unavailable (no driver/GPU), 70 internal, 74 I/O, 75 try again",
};

/* A reader that went away (a closed pipe) makes a write fail with EPIPE
 * instead of killing gpuctl (exit 141): the output is then lost, which is 74
 * like any other output error. A handler, not SIG_IGN, so that programs gpuctl
 * starts get SIGPIPE at its default again at exec. */
static volatile sig_atomic_t output_reader_gone;

static void on_sigpipe(int sig)
{
	(void)sig;
	output_reader_gone = 1;
}

/* The command's exit code, or 74 if its output could not all be written,
 * with one line saying why (none for a reader that went away: it no longer
 * wants the output, as `gpuctl info | head -1`). */
static int output_status(const struct cmd_ctx *ctx, int rc)
{
	errno = 0;
	if (fflush(stdout) == 0 && !ferror(stdout))
		return rc;
	int e = errno;
	if (e != EPIPE && !output_reader_gone)
		cmd_error(ctx, NULL, "cannot write the output: %s", e ? strerror(e) : "write error");
	return EXIT_IOERR;
}

/* Takes the global options out of argv[1..argc-1] (up to "--"), through
 * the option table; the rest stays in order for the command. Returns how many
 * words are left from argv[1] on, or -1 after a usage error (printed). */
static int take_global_options(int argc, char **argv, struct cmd_ctx *ctx)
{
	const char **slots[] = { [OPT_GLOBAL_SIM] = &ctx->sim, [OPT_GLOBAL_OR_SIM] = &ctx->or_sim,
				 [OPT_GLOBAL_DATA_DIR] = &ctx->data_dir };
	struct opt_parser p;
	struct opt_value v;
	int opt, kept = 0;
	opt_init(&p, argc, argv, global_help.opts, global_help.nopts);
	p.pass_through = true;
	while ((opt = opt_next(&p, &v)) != OPT_DONE) {
		if (opt == OPT_ERROR) {
			cmd_error(ctx, NULL, "%s", p.err);
			return -1;
		}
		if (opt == OPT_OPERAND)
			argv[1 + kept++] = (char *)v.text; /* never past what the parser has read */
		else
			*slots[opt] = v.text;
	}
	argv[1 + kept] = NULL;
	return kept;
}

int main(int argc, char **argv)
{
	struct cmd_ctx ctx = { .prog = "gpuctl", .out = stdout, .err = stderr };
	ctx.sim = getenv("GPUCTL_SIM");
	if (ctx.sim && !*ctx.sim)
		ctx.sim = NULL;
	ctx.data_dir = getenv("GPUCTL_DATA_DIR");
	struct sigaction pipe_action = { .sa_handler = on_sigpipe };
	sigemptyset(&pipe_action.sa_mask);
	sigaction(SIGPIPE, &pipe_action, NULL);

	int n = take_global_options(argc, argv, &ctx);
	if (n < 0)
		return EXIT_USAGE;
	char **args = argv + 1;
	if (n == 0) {
		help_print_cmd(stderr, &global_help);
		return EXIT_USAGE;
	}
	if (strcmp(args[0], "--help") == 0 || strcmp(args[0], "-h") == 0 || (strcmp(args[0], "help") == 0 && n == 1)) {
		help_print_cmd(stdout, &global_help);
		return output_status(&ctx, EXIT_OK);
	}
	/* gpuctl help COMMAND [SUB]: what gpuctl COMMAND [SUB] --help says */
	char *help_args[4];
	if (strcmp(args[0], "help") == 0) {
		if (n > 3) {
			cmd_error(&ctx, NULL, "'help' takes a command and a subcommand at most; see 'gpuctl --help'");
			return EXIT_USAGE;
		}
		for (int i = 1; i < n; i++)
			help_args[i - 1] = args[i];
		help_args[n - 1] = (char *)"--help";
		help_args[n] = NULL;
		args = help_args;
	}
	if (strcmp(args[0], "--version") == 0 || strcmp(args[0], "version") == 0) {
		char data[512];
		info_data_summary(ctx.data_dir, data, sizeof(data));
		printf("gpuctl %s (commit %s)\nbuilt: %s\nCUDA kernels module: %s\ndata: %s\n", GPUCTL_VERSION,
		       GPUCTL_COMMIT, GPUCTL_BUILD_DATE, GPUCTL_CUDA_ARCHS, data);
		return output_status(&ctx, EXIT_OK);
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		const struct cmd_entry *c = &commands[i];
		if (strcmp(c->name, args[0]) != 0)
			continue;
		/* a command that reads GPUs opens the backend itself (cmd_backend),
		 * after its options: --help and usage errors need no driver */
		int rc = c->fn(n, args, &ctx);
		if (ctx.be)
			gpu_backend_close(ctx.be);
		return output_status(&ctx, rc);
	}
	cmd_error(&ctx, NULL, "'%s' is not a gpuctl command; see 'gpuctl --help'", args[0]);
	return EXIT_USAGE;
}
