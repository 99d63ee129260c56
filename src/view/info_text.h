/* SPDX-License-Identifier: Apache-2.0 */
/*
 * info_text.h - `gpuctl info`'s text (docs/info.md): the header line, the
 * table of every GPU with its MIG devices, processes and read errors, and -q's
 * everything known of each GPU, grouped like nvidia-smi -q. The command
 * (cmd/info.c) parses, takes the snapshot and picks one.
 */
#ifndef GPUCTL_VIEW_INFO_TEXT_H
#define GPUCTL_VIEW_INFO_TEXT_H

#include <stdint.h>
#include <stdio.h>

#include "device/snapshot.h"

/* "host H  driver D  CUDA C  NVML N  8 GPUs  fabric manager running", then a blank line. */
void info_text_header(FILE *out, const struct snapshot *snap);
/* The table of the GPUs in mask, then their MIG devices, processes and read errors. */
void info_text_table(FILE *out, const struct snapshot *snap, uint64_t mask);
/* -q: every section of each GPU in mask. */
void info_text_detail(FILE *out, const struct snapshot *snap, uint64_t mask);

#endif
