/* SPDX-License-Identifier: Apache-2.0 */
/* common_gpus.c - for commands that read every GPU once (info, topo, ...):
 * a heap snapshot and the -i/--id selection. See cmd.h. */
#include <stdlib.h>

#include "cmd.h"
#include "core/gpu_select.h"
#include "sampler/sampler.h"

struct snapshot *cmd_take_snapshot(struct cmd_ctx *ctx, const char *cmd, unsigned groups, int *rc)
{
	struct gpu_err err = { "" };
	*rc = cmd_backend(ctx);
	if (*rc != EXIT_OK)
		return NULL;
	struct snapshot *snap = snapshot_new(ctx->be->gpu_count);
	if (!snap) {
		cmd_error(ctx, cmd, "out of memory");
		*rc = EXIT_SOFTWARE;
		return NULL;
	}
	/* the system facts were read when the backend opened: not twice */
	int r = snapshot_take_with_sys(ctx->be, &ctx->sys, groups, 0, snap, &err);
	if (r != GPU_OK) {
		cmd_error(ctx, cmd, "%s", err.msg);
		free(snap);
		*rc = r == GPU_ENODRIVER || r == GPU_ENODEV ? EXIT_UNAVAILABLE : EXIT_SOFTWARE;
		return NULL;
	}
	*rc = EXIT_OK;
	return snap;
}

int cmd_check_gpu_spec(const struct cmd_ctx *ctx, const char *cmd, const char *spec)
{
	char msg[160];
	if (spec && gpu_select_check(spec, msg, sizeof(msg)) != 0) {
		cmd_error(ctx, cmd, "%s", msg);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

int cmd_select_gpus(const struct cmd_ctx *ctx, const char *cmd, const struct snapshot *snap,
		    const char *spec, uint64_t *mask)
{
	struct gpu_ident ids[GPU_MAX_GPUS];
	char msg[160];
	if (!spec) {
		*mask = gpu_select_all(snap->n);
		return EXIT_OK;
	}
	for (unsigned i = 0; i < snap->n; i++) {
		const struct gpu_static *st = &snap->gpu[i].st;
		ids[i].uuid = VAL_HAS(st->uuid) ? st->uuid.s : NULL;
		ids[i].bus_id = VAL_HAS(st->pci_bus_id) ? st->pci_bus_id.s : NULL;
	}
	if (gpu_select_parse(spec, ids, snap->n, mask, msg, sizeof(msg)) != 0) {
		cmd_error(ctx, cmd, "%s", msg);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}
