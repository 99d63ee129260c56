/* SPDX-License-Identifier: Apache-2.0 */
/* test_snap_util.h - one basic snapshot of a simulated server, for the unit
 * tests of code that works on snapshots (placement, Slurm gres). */
#ifndef GPUCTL_TEST_SNAP_UTIL_H
#define GPUCTL_TEST_SNAP_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>

#include "device/gpu.h"
#include "sampler/sampler.h"

/* Takes a GPU_GRP_BASIC snapshot of sim server (a shipped name or a file
 * path), with $GPUCTL_DATA_DIR as its data_dir when set. Free it with free(). */
static inline struct snapshot *sim_snapshot(const char *server)
{
	char arg[1024];
	const char *dir = getenv("GPUCTL_DATA_DIR");
	if (snprintf(arg, sizeof(arg), "%s%s%s", server, dir ? ",data_dir=" : "", dir ? dir : "") >= (int)sizeof(arg))
		fail_msg("sim %s: name and data_dir too long", server);
	struct gpu_backend be = { 0 };
	struct gpu_err err = { "" };
	if (gpu_backend_open(&be, "sim", arg, &err) != GPU_OK)
		fail_msg("sim %s: %s", server, err.msg);
	struct snapshot *snap = snapshot_new(GPU_MAX_GPUS);
	assert_non_null(snap);
	assert_int_equal(snapshot_take(&be, GPU_GRP_BASIC, snap, &err), GPU_OK);
	gpu_backend_close(&be);
	return snap;
}

#endif
