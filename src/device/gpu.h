/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpu.h - the device layer's contract: what gpuctl knows about a GPU server,
 * and the backend interface (NVML or the simulator) that produces it.
 *
 * Every value carries a status: present (VAL_OK), not supported by this
 * GPU/driver (VAL_UNSUPPORTED), or failed to read (VAL_ERROR). A zeroed
 * struct means "not read" (VAL_UNKNOWN). Nothing is ever a silent 0.
 * Units are in the field names (_mw milliwatts, _mj millijoules, _c degrees
 * Celsius, _mhz, _bytes, _pct percent, _ns nanoseconds, _kbps KiB/s).
 *
 * Backends return 0 on success or a negative GPU_E* code with a one-line
 * message in struct gpu_err; they never print and never exit.
 */
#ifndef GPUCTL_GPU_H
#define GPUCTL_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "core/mig_profile.h"
#include "device/gpu_fields.h"

enum val_status { VAL_UNKNOWN = 0, VAL_OK, VAL_UNSUPPORTED, VAL_ERROR };

typedef struct { uint64_t v; enum val_status st; } u64v;
typedef struct { int64_t v; enum val_status st; } i64v;
typedef struct { char s[96]; enum val_status st; } strv;
/* A PCI bus id ("00000000:18:00.0"; NVML's buffer for one is 32 bytes). Its
 * own type because a sample holds one per NVLink: 18 strv of 100 bytes were
 * a third of every sample that the sampler, its readers and the agent copy. */
#define GPU_BUS_ID_LEN 32
typedef struct { char s[GPU_BUS_ID_LEN]; enum val_status st; } busidv;

#define VAL_SET(field, value) do { (field).v = (value); (field).st = VAL_OK; } while (0)
#define VAL_MARK(field, status) do { (field).st = (status); } while (0)
#define VAL_HAS(field) ((field).st == VAL_OK)

/* Error codes returned by backends (negative). */
enum gpu_errcode {
	GPU_OK = 0,
	GPU_ENODRIVER = -1,    /* NVML library or driver not present */
	GPU_ENODEV = -2,       /* index out of range, or GPU lost (fallen off the bus) */
	GPU_EUNSUPPORTED = -3, /* whole call not supported */
	GPU_EIO = -4,          /* call failed */
	GPU_EINVAL = -5,       /* bad argument */
	GPU_EDATA = -6,        /* malformed data file */
	GPU_ETIMEOUT = -7,     /* call took too long */
	GPU_ENOMEM = -8,
};

struct gpu_err { char msg[256]; };

#define GPU_MAX_GPUS 64
#define GPU_MAX_NVLINKS 18
#define GPU_MAX_PROCS 64
#define GPU_MAX_MIG 16

/* Server-wide facts. */
struct gpu_system {
	bool simulated;           /* true for the sim backend: every output says SIMULATED */
	char backend[16];         /* "nvml" or "sim" */
	char server_name[96];     /* sim: the file's name field; nvml: hostname */
	strv hostname;
	strv driver_version;      /* e.g. "580.159.04" */
	strv cuda_driver_version; /* e.g. "13.0" */
	strv nvml_version;
	u64v fabric_manager_running; /* 1/0; unsupported where there is no NVSwitch */
	unsigned gpu_count;
};

enum gpu_compute_mode { COMPUTE_DEFAULT = 0, COMPUTE_EXCLUSIVE_THREAD = 1, COMPUTE_PROHIBITED = 2, COMPUTE_EXCLUSIVE_PROCESS = 3 };

/* What does not change while the driver is loaded. */
struct gpu_static {
	unsigned index;
	strv name;               /* "NVIDIA H200" as the driver names it */
	strv uuid;               /* "GPU-xxxxxxxx-..." */
	strv pci_bus_id;         /* "00000000:18:00.0" */
	strv serial;
	strv vbios_version;
	strv board_part_number;
	strv architecture;       /* "Hopper", "Ampere", ... */
	u64v cc_major, cc_minor; /* compute capability */
	u64v sm_count;
	u64v cuda_cores;
	u64v mem_total_bytes;
	u64v mem_bus_width_bits;
	u64v max_sm_clock_mhz, max_mem_clock_mhz;
	u64v power_limit_mw, power_default_limit_mw, power_max_limit_mw;
	u64v persistence_mode;   /* 1 on, 0 off */
	u64v compute_mode;       /* enum gpu_compute_mode */
	u64v ecc_mode;           /* current: 1 enabled, 0 disabled */
	u64v ecc_mode_pending;
	u64v mig_mode;           /* current: 1 enabled, 0 disabled */
	u64v mig_mode_pending;
	u64v pcie_gen_max, pcie_width_max;     /* what the device supports */
	u64v nvlink_count;       /* links the device has (active or not) */
	i64v numa_node;          /* -1 when the platform has no NUMA */
	strv cpu_affinity;       /* CPU list, "0-55,112-167" */
	strv catalog_model;      /* key in the GPU catalog ("H200 SXM"), if matched */
};

/* Per-link NVLink state and error counters. */
struct gpu_nvlink {
	u64v active;             /* 1 up, 0 down */
	u64v version;
	busidv remote_pci_bus_id; /* peer GPU or NVSwitch */
	u64v crc_flit_errors, crc_data_errors, replay_errors, recovery_errors;
	u64v tx_bytes, rx_bytes; /* cumulative throughput counters, where supported */
};

/* Clock-event (throttle) reason bits, NVML's values. */
#define CLK_EVT_GPU_IDLE          0x1ULL
#define CLK_EVT_APP_CLOCKS        0x2ULL
#define CLK_EVT_SW_POWER_CAP      0x4ULL
#define CLK_EVT_HW_SLOWDOWN       0x8ULL
#define CLK_EVT_SYNC_BOOST        0x10ULL
#define CLK_EVT_SW_THERMAL        0x20ULL
#define CLK_EVT_HW_THERMAL        0x40ULL
#define CLK_EVT_HW_POWER_BRAKE    0x80ULL
#define CLK_EVT_DISPLAY_CLOCKS    0x100ULL

/* Metric groups a sampler may ask for (bitmask); slow ones can be skipped. */
#define GPU_GRP_BASIC    0x01u /* util, memory, temp, power, clocks, pstate, clock events */
#define GPU_GRP_ECC      0x02u /* ECC counters, remapped rows, retired pages */
#define GPU_GRP_PCIE     0x04u /* link gen/width, replays, throughput (slow on NVML: 20 ms) */
#define GPU_GRP_NVLINK   0x08u /* per-link state, version, remote end, throughput */
#define GPU_GRP_VIOL     0x10u /* violation (throttle) time counters */
#define GPU_GRP_ENERGY   0x20u /* the energy counter: 3.5 ms of CPU a read on an H200, so
			       * only for who needs it (accounting, bench), not for top */
#define GPU_GRP_NVLINK_ERR 0x40u /* per-link error counters (CRC, replay, recovery), with
			         * GPU_GRP_NVLINK: an H200 answers the CRC counters only
			         * one call each (36 of 2.5 ms), so not for top, which
			         * does not show them */
#define GPU_GRP_GPM      0x80u /* profiling metrics (NVML GPM, Hopper and later): SM activity,
			       * occupancy, tensor/DRAM/FP pipe activity, PCIe and NVLink
			       * bytes, each over the interval since the previous sample */
#define GPU_GRP_ALL      0xffu

/* One sampling of one GPU. */
struct gpu_sample {
	uint64_t timestamp_ns;   /* when it was taken (CLOCK_REALTIME) */
	uint64_t duration_ns;    /* how long the backend calls took */
	bool lost;               /* the GPU did not answer at all (fallen off the bus) */
	/* util_gpu_pct ... pcie_replays: one u64v per row of the field table */
#define GPU_SAMPLE_MEMBER(member, ...) u64v member;
	GPU_SAMPLE_FIELDS(GPU_SAMPLE_MEMBER)
#undef GPU_SAMPLE_MEMBER
	unsigned nvlink_n;       /* number of entries in nvlink[] */
	struct gpu_nvlink nvlink[GPU_MAX_NVLINKS];
	/* when nvlink[]'s error counters (CRC, replay, recovery) were read, where
	 * the backend served them from an earlier reading (NVML: the counters that
	 * need a call each, once a minute); 0: with this sample */
	uint64_t nvlink_err_read_ns;
};

struct gpu_process {
	uint32_t pid;
	uint32_t uid;            /* (uint32_t)-1 when unknown */
	char name[64];           /* comm */
	char user[32];
	u64v used_mem_bytes;
	char type;               /* 'C' compute, 'G' graphics */
	int mig_gi;              /* GPU instance id, -1 when not on a MIG slice */
};

/* How two GPUs reach each other, as nvidia-smi topo -m names it. */
enum gpu_link_kind { LINK_SELF = 0, LINK_NVLINK, LINK_PIX, LINK_PXB, LINK_PHB, LINK_NODE, LINK_SYS, LINK_UNKNOWN };

/* 4 bytes: a snapshot holds n x GPU_MAX_GPUS of them (64 KiB at 16 bytes each
 * for 64 GPUs, and the sampler as many again) */
struct gpu_link {
	enum gpu_link_kind kind : 8; /* best path; LINK_NVLINK when nvlinks > 0 */
	unsigned nvlinks : 15;       /* number of NVLinks between the two (NV#; at most GPU_MAX_NVLINKS) */
	enum gpu_link_kind pcie : 8; /* the PCIe path, whatever NVLink says */
	bool p2p_supported : 1;      /* P2P read/write possible */
};
_Static_assert(sizeof(struct gpu_link) == 4, "a GPU pair's link in 4 bytes");

/* The profiling figures a MIG instance has, by the names of gpu_sample's
 * members for the GPU: X(member) each. */
#define GPU_MIG_PROF_FIELDS(X) \
	X(prof_sm_active_pct) X(prof_sm_occupancy_pct) X(prof_tensor_active_pct) X(prof_dram_active_pct) \
	X(prof_fp64_active_pct) X(prof_fp32_active_pct) X(prof_fp16_active_pct) X(prof_pcie_tx_kbps) \
	X(prof_pcie_rx_kbps) X(prof_nvlink_tx_kbps) X(prof_nvlink_rx_kbps)
#define GPU_MIG_PROF_MEMBER(member) u64v member;

struct gpu_mig {
	unsigned gi_id, ci_id;
	char profile[MIG_PROFILE_LEN]; /* "1g.18gb" */
	char uuid[96];           /* "MIG-..." */
	u64v mem_total_bytes, mem_used_bytes;
	u64v sm_count;
	/* the instance's profiling figures (GPM between this reading and the
	 * previous one, as the GPU's prof_* in struct gpu_sample): n/a where the
	 * driver or the GPU has no GPM for MIG instances, and on the first reading */
	GPU_MIG_PROF_FIELDS(GPU_MIG_PROF_MEMBER)
};

enum gpu_event_kind { EVT_XID = 1, EVT_ECC_SBE, EVT_ECC_DBE, EVT_PSTATE, EVT_CLOCK };

struct gpu_event {
	enum gpu_event_kind kind;
	unsigned gpu;            /* index */
	uint64_t xid;            /* XID code for EVT_XID */
	uint64_t timestamp_ns;
	char detail[128];
};

struct gpu_backend;

/* The backend operations table (the nvtop pattern). All take the backend
 * instance; calls for different GPUs may come from different threads at once
 * and must be safe; calls for one GPU come from one thread at a time. */
struct gpu_backend_ops {
	const char *name;
	/* arg: nvml: NULL; sim: a shipped server name or a file path */
	int (*open)(struct gpu_backend *be, const char *arg, struct gpu_err *err);
	void (*close)(struct gpu_backend *be);
	int (*system_info)(struct gpu_backend *be, struct gpu_system *out, struct gpu_err *err);
	int (*static_info)(struct gpu_backend *be, unsigned gpu, struct gpu_static *out, struct gpu_err *err);
	int (*sample)(struct gpu_backend *be, unsigned gpu, unsigned groups, struct gpu_sample *out, struct gpu_err *err);
	int (*processes)(struct gpu_backend *be, unsigned gpu, struct gpu_process *out, unsigned max, unsigned *n, struct gpu_err *err);
	int (*link)(struct gpu_backend *be, unsigned a, unsigned b, struct gpu_link *out, struct gpu_err *err);
	int (*mig_instances)(struct gpu_backend *be, unsigned gpu, struct gpu_mig *out, unsigned max, unsigned *n, struct gpu_err *err);
	/* Waits up to timeout_ms for events on any GPU; *n may be 0. */
	int (*poll_events)(struct gpu_backend *be, unsigned timeout_ms, struct gpu_event *out, unsigned max, unsigned *n, struct gpu_err *err);
};

struct gpu_backend {
	const struct gpu_backend_ops *ops;
	void *priv;
	unsigned gpu_count;      /* set by open() */
	/* Clock source: tests and the simulator pass time in. NULL = CLOCK_REALTIME. */
	uint64_t (*now_ns)(void *clock_arg);
	void *clock_arg;
};

extern const struct gpu_backend_ops gpu_backend_nvml;
extern const struct gpu_backend_ops gpu_backend_sim;

/* backend.c: open "nvml" or "sim:<arg>"; returns GPU_* code. */
int gpu_backend_open(struct gpu_backend *be, const char *which, const char *arg, struct gpu_err *err);
void gpu_backend_close(struct gpu_backend *be);
uint64_t gpu_backend_now_ns(const struct gpu_backend *be);

const char *gpu_link_kind_name(enum gpu_link_kind k); /* "PIX", "NV" ... */
const char *val_status_name(enum val_status st);      /* "ok", "not supported", "error" */
void gpu_err_set(struct gpu_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
