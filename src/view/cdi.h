/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cdi.h - the Container Device Interface spec for the GPUs (docs/containers.md):
 * pure builder of the JSON podman, Docker, containerd and CRI-O read from
 * /etc/cdi, and the parser of `ldconfig -p` that finds the driver's libraries
 * the way the dynamic loader does. No I/O here: src/cmd/cdi.c gathers the
 * host's facts (nodes that exist, libraries, binaries) and calls these.
 */
#ifndef GPUCTL_CDI_H
#define GPUCTL_CDI_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "device/gpu.h"

#define CDI_VERSION "0.5.0"         /* the oldest version with hostPath; podman 4.3 reads it */
#define CDI_KIND "nvidia.com/gpu"
#define CDI_LIB_DIR "/usr/local/nvidia/lib64" /* on NVIDIA CUDA images' LD_LIBRARY_PATH */
#define CDI_BIN_DIR "/usr/local/nvidia/bin"   /* on their PATH */
#define CDI_MAX_FILES 32

struct cdi_mig {
	unsigned gi, ci;
	char uuid[96];            /* "MIG-..." */
	int gi_cap_minor;         /* nvidia-caps minor of gpuN/giG/access, -1 unknown */
	int ci_cap_minor;         /* of gpuN/giG/ciC/access, -1 unknown */
};

struct cdi_gpu {
	unsigned index;
	unsigned minor;           /* /dev/nvidia<minor> */
	char uuid[96];            /* "GPU-..." */
	unsigned nmig;
	struct cdi_mig mig[GPU_MAX_MIG];
};

struct cdi_file {
	char host_path[256];      /* the file on the host (symlinks resolved) */
	char name[96];            /* its name in the container: the soname, or the binary's name */
};

struct cdi_host {
	const char *dev_dir;      /* where the host's nodes are ("/dev"; a test's own dir) */
	/* the nodes every GPU device needs that exist on the host, names under
	 * dev_dir: "nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-modeset" */
	const char *common_nodes[8];
	unsigned ncommon;
	struct cdi_file libs[CDI_MAX_FILES];
	unsigned nlibs;
	struct cdi_file bins[CDI_MAX_FILES];
	unsigned nbins;
};

/* The spec: one device per GPU by index ("0") and by UUID, one per MIG
 * instance ("0:1" GPU index : the instance's place in its GPU's list, and by
 * MIG UUID), and "all"; the common nodes, libraries (ro into CDI_LIB_DIR),
 * binaries (ro into CDI_BIN_DIR) and the environment in containerEdits.
 * NULL with err set when there is no GPU or a name does not fit. */
json_t *cdi_spec_build(const struct cdi_host *h, const struct cdi_gpu *gpus, unsigned ngpus, char *err,
		       size_t errlen);

/* The driver's user-space libraries a CUDA (and NVML) program loads, by
 * soname; the first ones are required (libcuda, libnvidia-ml). */
extern const char *const cdi_driver_libs[];
extern const unsigned cdi_driver_libs_n;
extern const unsigned cdi_driver_libs_required;
extern const char *const cdi_driver_bins[];
extern const unsigned cdi_driver_bins_n;

/* In `ldconfig -p` text, the path of soname for this machine's arch tag
 * ("x86-64": the "(libc6,x86-64)" lines; "" matches lines with no arch, as
 * i386's "(libc6)"): the first such line, as the loader's cache lists its
 * preferred entry first. 1 found (path in out), 0 not, -1 when the path does
 * not fit. Lines that are not "\tNAME (TAGS) => PATH" are skipped. */
int cdi_ldconfig_find(const char *text, const char *soname, const char *arch, char *out, size_t outlen);

#endif
