/* SPDX-License-Identifier: Apache-2.0 */
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

#include "core/catalog.h"
#include "gpu.h"
#include "nvml_api.h"
#include "nvml_map.h"

/* NVML calls made by this thread (each costs about its wall time in CPU on
 * an H200, so sample() counts them; see nvml_last_sample_calls). */
extern _Thread_local unsigned long nvml_thread_calls;

/* Calls an NVML entry point that this driver may lack. */
#define NVML_CALL(api, fn, ...) \
	((api)->fn ? (nvml_thread_calls++, (api)->fn(__VA_ARGS__)) : NVML_ERROR_FUNCTION_NOT_FOUND)

/* Metrics that nvmlDeviceGetFieldValues can deliver in one call (nvml_fields.c):
 * the field table's BATCH and FLAG rows (device/gpu_fields.h), FVS_F_<member>,
 * then per NVLink NVL_KINDS slots from FVS_NVL_BASE + link * NVL_KINDS. */
enum nvml_fv_slot {
#define FVS_TABLE_SLOT(member, group, unit, api_key, role, metric, type, labels, help, series, read, field, ...) \
	FVS_TABLE_SLOT_##read(member)
#define FVS_TABLE_SLOT_BATCH(member) FVS_F_##member,
#define FVS_TABLE_SLOT_FLAG(member) FVS_F_##member,
#define FVS_TABLE_SLOT_CODE(member)
	GPU_SAMPLE_FIELDS(FVS_TABLE_SLOT)
	FVS_NVL_BASE,
};
enum { NVL_STATE, NVL_REPLAY, NVL_RECOVERY, NVL_CRC_FLIT, NVL_CRC_DATA, NVL_KINDS };
#define FVS_COUNT (FVS_NVL_BASE + GPU_MAX_NVLINKS * NVL_KINDS)

/* How a slot is read on this GPU, learnt on the first samples. */
enum nvml_fv_route {
	FV_BATCH = 0, /* in the nvmlDeviceGetFieldValues batch */
	FV_CALL,      /* the batch does not deliver it: its own call */
	FV_NONE,      /* neither: "not supported", no call any more */
};

/* Two GPM sample buffers used in turn: the previous reading in
 * buf[cur ^ 1] once have_prev. For a MIG instance: its GI id, once used. */
struct nvml_gpm_pair {
	nvmlGpmSample_t buf[2];
	unsigned cur;
	bool have_prev;
	bool used;
	unsigned gi_id;
};

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
	/* nvmlDeviceGetFieldValues: off when the driver lacks it or refuses it */
	bool fv_off;
	bool fan_unsupported;              /* no fan (an H200): not asked again */
	unsigned char fv_route[FVS_COUNT]; /* enum nvml_fv_route */
	unsigned long last_sample_calls;   /* NVML calls of the last sample() */
	/* NVLink error counters that only their own call delivers (on an H200 the
	 * CRC counters of every link: 36 calls of 2.5 ms of CPU each), read at
	 * most every NVML_LINK_COUNTER_PERIOD_NS and served from here between */
	uint64_t link_own_read_ns;         /* when they were last read, 0 never */
	uint64_t link_own_val[GPU_MAX_NVLINKS * NVL_KINDS];
	nvmlReturn_t link_own_rc[GPU_MAX_NVLINKS * NVL_KINDS];
	bool link_own_have[GPU_MAX_NVLINKS * NVL_KINDS];
	/* GPM (nvml_gpm.c): learnt on the first GPM sample; two sample buffers
	 * for the GPU, and two for each MIG GPU instance read (by GI id). Only
	 * the thread that samples this GPU touches them. */
	enum { GPM_UNTRIED = 0, GPM_ON, GPM_OFF } gpm_state;
	struct nvml_gpm_pair gpm;
	struct nvml_gpm_pair gpm_mig[GPU_MAX_MIG];
};

/* How often the NVLink error counters without a field id are read (docs/metrics.md). */
#define NVML_LINK_COUNTER_PERIOD_NS (60ull * 1000000000ull)

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
	char data_dir[1024];      /* where to look for the catalog first ("" = built-in paths) */
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

/* What one read gathered: whether the GPU answered at all. */
struct rd {
	bool lost;
	nvmlReturn_t first_error;
	const char *first_what;
};
/* nvml_fields.c: record an answer; store it as a value or its status. */
void nvml_note(struct rd *rd, nvmlReturn_t r, const char *what);
void nvml_put_u64(struct rd *rd, u64v *f, nvmlReturn_t r, uint64_t v, const char *what);
void nvml_put_str(strv *f, nvmlReturn_t r, const char *s); /* no note: for reads outside a struct rd */

/* One metric to read: its slot and where its value goes. */
struct nvml_fv_want {
	unsigned slot;
	u64v *dst;
};
/* nvml_fields.c: reads the wanted metrics of one GPU with one
 * nvmlDeviceGetFieldValues call, and with their own calls those the batch
 * does not deliver (or all of them, where the driver lacks the batch).
 * The NVLink error counters are all read at one moment: when those that need
 * a call each are not due (NVML_LINK_COUNTER_PERIOD_NS), every one is served
 * from that reading, and its time is returned (0: they were read now). */
uint64_t nvml_fields_read(struct nvml_priv *p, unsigned gpu, nvmlDevice_t h, uint64_t now_ns, const struct nvml_fv_want *want,
		      unsigned n, struct rd *rd);

/* Test hook: NVML calls made by the last sample() of GPU gpu. */
unsigned long nvml_last_sample_calls(struct gpu_backend *be, unsigned gpu);

/* nvml_device.c */
int nvml_static_info(struct gpu_backend *be, unsigned gpu, struct gpu_static *out, struct gpu_err *err);
int nvml_sample(struct gpu_backend *be, unsigned gpu, unsigned groups, struct gpu_sample *out, struct gpu_err *err);
int nvml_processes(struct gpu_backend *be, unsigned gpu, struct gpu_process *out, unsigned max, unsigned *n, struct gpu_err *err);
int nvml_mig_instances(struct gpu_backend *be, unsigned gpu, struct gpu_mig *out, unsigned max, unsigned *n, struct gpu_err *err);
/* nvml_gpm.c: the profiling fields (GPU_GRP_GPM) of one GPU, between the
 * previous call's reading and this one's (the first: none yet, VAL_UNKNOWN);
 * "not supported" where the driver or the GPU has no GPM. */
void nvml_gpm_sample(struct nvml_priv *p, unsigned gpu, nvmlDevice_t h, struct gpu_sample *out);
/* nvml_gpm.c: the profiling figures of MIG instance list[i] of the GPU, its
 * GPU instance's (nvmlGpmMigSampleGet), as nvml_gpm_sample for the GPU; a
 * compute instance of a GPU instance already in list[0..i) gets its figures
 * (one reading per GPU instance and tick). */
void nvml_gpm_mig_sample(struct nvml_priv *p, unsigned gpu, nvmlDevice_t h, struct gpu_mig *list, unsigned i);
/* nvml_gpm.c: frees the buffers of the GPU instances not among seen[0..n)
 * (a complete instance list): one destroyed and created again starts over. */
void nvml_gpm_mig_prune(struct nvml_priv *p, unsigned gpu, const struct gpu_mig *seen, unsigned n);
/* frees the GPU's GPM sample buffers (at close) */
void nvml_gpm_free(struct nvml_priv *p, unsigned gpu);
/* nvml_topo.c */
int nvml_link(struct gpu_backend *be, unsigned a, unsigned b, struct gpu_link *out, struct gpu_err *err);
void nvml_affinity(struct nvml_priv *p, unsigned gpu, struct gpu_static *out);

#endif
