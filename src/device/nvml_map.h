/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nvml_map.h - pure translations from what NVML returns to gpu.h's model:
 * return codes to value status and error codes, topology levels to the
 * nvidia-smi names, NVLink peer counting, CPU masks to lists, bus ids to
 * sysfs names, architecture names. No NVML call and no I/O here, so all of
 * it is unit-tested without a GPU (tests/unit/test_nvml_map.c).
 */
#ifndef GPUCTL_NVML_MAP_H
#define GPUCTL_NVML_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpu.h"
#include "nvml_api.h"

/* NVML_SUCCESS -> VAL_OK; NOT_SUPPORTED / FUNCTION_NOT_FOUND -> VAL_UNSUPPORTED;
 * anything else (GPU lost, no permission, unknown...) -> VAL_ERROR. */
enum val_status nvml_val_status(nvmlReturn_t rc);
/* The GPU_E* code for a failed NVML call. */
int nvml_errcode(nvmlReturn_t rc);
/* nvmlGpuTopologyLevel_t -> LINK_PIX..LINK_SYS (LINK_UNKNOWN for other values). */
enum gpu_link_kind nvml_topo_level_kind(int level);
/* nvmlDeviceArchitecture_t -> "Hopper"; NULL if unknown. */
const char *nvml_arch_name(unsigned int arch);
/* CUDA cores per SM by compute capability (NVML gives cores, not SMs); 0 if unknown. */
unsigned nvml_cores_per_sm(unsigned cc_major, unsigned cc_minor);
/* 13000 -> "13.0", 12040 -> "12.4". */
void nvml_cuda_version_str(int v, char *out, size_t outlen);
/* CPU bit mask (as nvmlDeviceGetCpuAffinity fills it) -> "0-55,112-167".
 * Returns 0, or -1 if out is too small (out then holds a truncated list). */
int nvml_cpu_mask_to_list(const unsigned long *mask, unsigned nwords, char *out, size_t outlen);
/* "00000000:18:00.0" -> "0000:18:00.0" (sysfs spelling, lower case). -1 if malformed. */
int nvml_busid_to_sysfs(const char *busid, char *out, size_t outlen);
/* False for "" and for the all-ones id a VM answers for a hidden NVSwitch
 * ("FFFFFFFF:FF:FF.0"). */
bool nvml_busid_known(const char *busid);
/* nvmlNvlinkVersion_t (1 = 1.0, 2 = 2.0, 3 = 2.2, 4 = 3.0, 5 = 3.1, 6 = 4.0,
 * 7 = 5.0) -> the NVLink generation (1..5); 0 if unknown. */
unsigned nvml_nvlink_generation(unsigned v);
/* Lowest bit set in a node mask (nvmlDeviceGetMemoryAffinity); -1 if none. */
int nvml_first_bit(const unsigned long *mask, unsigned nwords);
/* Same PCI function, whatever the domain width or case. */
bool nvml_busid_equal(const char *a, const char *b);
/* "NVIDIA H100 PCIe MIG 1g.10gb" -> "1g.10gb"; -1 if no " MIG " in the name. */
int nvml_mig_profile_from_name(const char *name, char *out, size_t outlen);
/* A field value as an unsigned integer; false if its type is not numeric or negative. */
bool nvml_field_value_u64(const nvmlFieldValue_t *fv, uint64_t *out);

/* What one NVLink of a GPU leads to (cached once per GPU by the backend). */
struct nvml_link_info {
	bool active;
	bool to_switch;          /* remote end is an NVSwitch */
	char remote_busid[32];   /* remote PCI bus id, "" when unknown */
};
/* Active links of a GPU that lead to the GPU at peer_busid. On NVSwitch
 * systems every link to a switch reaches every peer that also has switch
 * links, so then the count is min(own switch links, peer_switch_links). */
unsigned nvml_count_peer_links(const struct nvml_link_info *links, unsigned n,
			       const char *peer_busid, unsigned peer_switch_links);
/* Active links of a GPU that lead to an NVSwitch. */
unsigned nvml_switch_links(const struct nvml_link_info *links, unsigned n);

/* Test hook: the library name dlopen'ed by the nvml backend (NULL restores
 * "libnvidia-ml.so.1"). For tests only; not thread-safe. */
void nvml_set_library_name(const char *name);

#endif
