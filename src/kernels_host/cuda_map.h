/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cuda_map.h - the one map from NVML's GPUs to CUDA's ordinals (CUDA orders
 * devices its own way, and CUDA_VISIBLE_DEVICES hides some; results and
 * telemetry use NVML's index), by PCI address: what bench and diag use.
 */
#ifndef GPUCTL_KERNELS_HOST_CUDA_MAP_H
#define GPUCTL_KERNELS_HOST_CUDA_MAP_H

#include "gpuctl_kernels.h"

/* cuda[i] = the CUDA ordinal (0..ncuda-1, api->device_info's) of the GPU at
 * PCI address bus_ids[i], or -1: no such device, a NULL or unreadable address. */
void cuda_map(const struct gk_api *api, int ncuda, const char *const *bus_ids, unsigned n, int *cuda);

#endif
