/*
 * nvml_priv.h - state shared by the nvml backend's files:
 *   nvml.c         loading the library, open/close, system info, XID events
 *   nvml_device.c  static facts, samples, processes, MIG instances
 *   nvml_topo.c    GPU-to-GPU links, NVLink peers, CPU and NUMA affinity
 * Private to src/device/nvml*.c.
 */
#ifndef GPUCTL_NVML_PRIV_H
#define GPUCTL_NVML_PRIV_H

#include <pthread.h>
#include <stdbool.h>

#include "../core/catalog.h"
#include "gpu.h"
#include "nvml_api.h"
#include "nvml_map.h"

/* Calls an NVML entry point that this driver may lack. */
#define NVML_CALL(api, fn, ...) ((api)->fn ? (api)->fn(__VA_ARGS__) : NVML_ERROR_FUNCTION_NOT_FOUND)

struct nvml_gpu {
	nvmlDevice_t h;
	nvmlReturn_t handle_rc;   /* why h is NULL */
	char busid[32];           /* from nvmlDeviceGetPciInfo at open, "" if unknown */
	/* NVLink facts that do not change while the driver is loaded, read once
	 * (under links_lock) by whichever caller needs them first. */
	pthread_mutex_t links_lock;
	bool links_read;
	bool nvlink_api;          /* nvmlDeviceGetNvLinkState exists and answered for link 0 */
	unsigned nlinks;
	struct nvml_link_info links[GPU_MAX_NVLINKS];
	u64v link_version[GPU_MAX_NVLINKS];
	/* temperature thresholds, read with the first sample */
	bool thresholds_read;
	u64v temp_slowdown_c, temp_shutdown_c;
};

struct nvml_priv {
	struct nvml_api api;
	unsigned n;
	struct nvml_gpu gpu[GPU_MAX_GPUS];
	pthread_mutex_t lock;     /* guards the event set and the catalog below */
	nvmlEventSet_t evset;
	bool ev_tried;
	nvmlReturn_t ev_rc;
	bool cat_tried, cat_ok;
	struct catalog cat;
};

static inline struct nvml_priv *nvml_priv_of(struct gpu_backend *be)
{
	return (struct nvml_priv *)be->priv;
}

/* nvml.c, test hook: opens the nvml backend over a given entry-point table
 * instead of the library (tests/unit/test_nvml_backend.c drives the real
 * backend code through a fake NVML). The table must have the required entries. */
int nvml_open_with_api(struct gpu_backend *be, const struct nvml_api *api, struct gpu_err *err);
/* nvml.c: a one-line message for a failed call on GPU gpu. */
void nvml_call_error(struct nvml_priv *p, struct gpu_err *err, unsigned gpu, const char *what, nvmlReturn_t rc);
/* nvml_topo.c: reads the NVLink cache of one GPU once. */
void nvml_links_ensure(struct nvml_priv *p, unsigned gpu);

/* nvml_device.c */
int nvml_static_info(struct gpu_backend *be, unsigned gpu, struct gpu_static *out, struct gpu_err *err);
int nvml_sample(struct gpu_backend *be, unsigned gpu, unsigned groups, struct gpu_sample *out, struct gpu_err *err);
int nvml_processes(struct gpu_backend *be, unsigned gpu, struct gpu_process *out, unsigned max, unsigned *n, struct gpu_err *err);
int nvml_mig_instances(struct gpu_backend *be, unsigned gpu, struct gpu_mig *out, unsigned max, unsigned *n, struct gpu_err *err);
/* nvml_topo.c */
int nvml_link(struct gpu_backend *be, unsigned a, unsigned b, struct gpu_link *out, struct gpu_err *err);
void nvml_affinity(struct nvml_priv *p, unsigned gpu, struct gpu_static *out);

#endif
