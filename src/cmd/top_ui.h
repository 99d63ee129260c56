/* SPDX-License-Identifier: Apache-2.0 */
/*
 * top_ui.h - the state of the `gpuctl top` screen, shared by top.c (options,
 * the refresh loop, keys) and top_draw.c (ncurses drawing). What to show is
 * decided by core/top_model; this is only the terminal side.
 */
#ifndef GPUCTL_TOP_UI_H
#define GPUCTL_TOP_UI_H

#include <stdbool.h>
#include <stdint.h>

#include "cmd.h"
#include "top_watch.h"
#include "view/top_model.h"

#define TOP_MAX_PROCS (GPU_MAX_GPUS * GPU_MAX_PROCS)

enum top_mode { TOP_MODE_NORMAL, TOP_MODE_PICK_SIGNAL, TOP_MODE_CONFIRM };

struct top_ui {
	struct cmd_ctx *ctx;
	struct watch w;
	struct snapshot *prev;       /* the snapshot before w.snap, for rates */
	bool have_prev;
	uint64_t interval_ns;
	unsigned nshown;             /* GPUs selected with -i */
	unsigned shown[GPU_MAX_GPUS];/* their indexes */
	struct top_hist *hist;       /* per GPU index */
	struct top_proc *procs;
	unsigned nproc;
	unsigned proc_sel, proc_top; /* selected row, first row on screen */
	uint32_t sel_pid;            /* the selected process, kept across refreshes */
	unsigned sel_pid_gpu;
	unsigned gpu_sel;            /* position in shown[] of the GPU the chart follows */
	enum top_sort sort;
	bool reverse;
	bool help, charts, utf8, color;
	enum top_mode mode;
	int kill_sig;
	struct top_proc kill_target;
	char msg[192];               /* last action's result, on the bottom line */
	unsigned proc_rows_shown;    /* set by the last draw: process rows on screen */
	const char *user;            /* --user: only this user's processes (NULL: all) */
};

void top_draw(struct top_ui *ui);
/* New data: the snapshot before kept for rates, the new one read, history
 * recorded, the processes listed (--user applied) and sorted (top.c). */
void top_refresh(struct top_ui *ui);
/* Batch mode (top_batch.c): `iterations` frames of plain text on the
 * context's output (0: until interrupted); an exit code. */
int top_batch(struct top_ui *ui, long iterations);
/* "SIGTERM" for the signals top offers, "signal N" otherwise. */
const char *top_signal_name(int sig);

#endif
