/* SPDX-License-Identifier: Apache-2.0 */
/* common.c - helpers shared by the commands: opening the backend (once, after
 * a command has checked its arguments: cmd_backend), errors. */
#include "cmd.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/abuf.h"
#include "core/table.h"
#include "device/sim.h"

void cmd_error(const struct cmd_ctx *ctx, const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (cmd)
		fprintf(ctx->err, "%s %s: ", ctx->prog, cmd);
	else
		fprintf(ctx->err, "%s: ", ctx->prog);
	text_vline(ctx->err, fmt, ap);
	va_end(ap);
}

void cmd_print_sim_banner(const struct cmd_ctx *ctx, FILE *out)
{
	char name[sizeof(ctx->sys.server_name)];
	if (ctx->sys.simulated)
		fprintf(out, "*** SIMULATED server '%s': not real hardware ***\n",
			term_clean(name, sizeof(name), ctx->sys.server_name));
}

int cmd_open_backend(struct cmd_ctx *ctx, struct gpu_backend *be)
{
	struct gpu_err err = { "" };
	int rc;
	if (ctx->sim) {
		/* the sim backend reads no environment: hand it the data directory
		 * (data_dir= goes last: it takes the rest of the string) */
		char sim_arg[4096];
		if (ctx->data_dir && *ctx->data_dir)
			snprintf(sim_arg, sizeof(sim_arg), "%s,data_dir=%s", ctx->sim, ctx->data_dir);
		else
			snprintf(sim_arg, sizeof(sim_arg), "%s", ctx->sim);
		rc = gpu_backend_open(be, "sim", sim_arg, &err);
		if (rc != GPU_OK) {
			cmd_error(ctx, NULL, "%s", err.msg);
			return rc == GPU_EDATA ? EXIT_DATAERR : rc == GPU_EINVAL ? EXIT_USAGE : EXIT_NOINPUT;
		}
		/* a run-time fault file that is not applied: before the command
		 * starts, not a PASS on a server without the faults meant */
		if (!ctx->fault_file_live && sim_fault_file_error(be, err.msg, sizeof(err.msg))) {
			cmd_error(ctx, NULL, "%s", err.msg);
			gpu_backend_close(be);
			return EXIT_DATAERR;
		}
	} else {
		char nvml_arg[4096] = "";
		if (ctx->data_dir && *ctx->data_dir)
			snprintf(nvml_arg, sizeof(nvml_arg), "data_dir=%s", ctx->data_dir);
		rc = gpu_backend_open(be, "nvml", nvml_arg[0] ? nvml_arg : NULL, &err);
		if (rc == GPU_OK && be->gpu_count == 0) {
			gpu_backend_close(be);
			rc = GPU_ENODEV;
			snprintf(err.msg, sizeof(err.msg), "the NVIDIA driver reports no GPU");
		}
		if (rc != GPU_OK && ctx->or_sim) {
			ctx->sim = ctx->or_sim;
			return cmd_open_backend(ctx, be);
		}
		if (rc != GPU_OK) {
			cmd_error(ctx, NULL, "%s (use --sim NAME to run on a simulated server)", err.msg);
			return EXIT_UNAVAILABLE;
		}
	}
	rc = be->ops->system_info(be, &ctx->sys, &err);
	if (rc != GPU_OK) {
		cmd_error(ctx, NULL, "cannot read system information: %s", err.msg);
		gpu_backend_close(be);
		return EXIT_UNAVAILABLE;
	}
	ctx->be = be;
	return EXIT_OK;
}

int cmd_backend(struct cmd_ctx *ctx)
{
	if (ctx->be)
		return EXIT_OK;
	return cmd_open_backend(ctx, &ctx->be_storage);
}
