/* SPDX-License-Identifier: Apache-2.0 */
/* info_data.h - where each data file comes from: `gpuctl info --data` and the
 * data line of `gpuctl --version` (core/data_path.h: the places, in order). */
#ifndef GPUCTL_INFO_DATA_H
#define GPUCTL_INFO_DATA_H

#include <stdbool.h>
#include <stddef.h>

#include "cmd.h"

/* Prints the places searched and, for every file of data/, the place it is read
 * from (--json: {"places": [...], "files": [...]}). Returns an exit code. */
int info_data_print(struct cmd_ctx *ctx, bool json);
/* One line: "12 files, all built in" or "12 files: 11 built in, 1 from /etc/gpuctl". */
void info_data_summary(const char *env_dir, char *out, size_t outlen);

#endif
