/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sim.h - the simulated-server backend (gpu_backend_sim): its server
 * description, its fault table, and the C API tests use to inject faults.
 *
 * A server file (data/sim/<name>.json, docs/simulator.md) is parsed from a
 * buffer into struct sim_server (pure: no I/O, fuzzed), then resolved
 * against the GPU catalog. The backend turns it into values that move with
 * the backend clock (gpu_backend_now_ns) and the faults that are active.
 *
 * Faults come from three places that all end up in one table: the server
 * file ("faults": [...], start times relative to open), the run-time fault
 * file (faults=PATH, re-read when it changes; start times relative to when
 * it was read) and sim_inject() (relative to the call). All are safe while
 * other threads sample.
 */
#ifndef GPUCTL_SIM_H
#define GPUCTL_SIM_H

#include <stdbool.h>
#include <stdint.h>
#include "gpu.h"
#include "nic.h"

struct cat_gpu;
struct catalog;

enum sim_fault_kind {
	SIM_FAULT_NONE = 0,
	SIM_FAULT_ECC_UNCORRECTABLE, /* count, location: volatile+aggregate and by location */
	SIM_FAULT_ECC_CORRECTED,     /* count */
	SIM_FAULT_XID,               /* xid: delivered once through poll_events */
	SIM_FAULT_THERMAL,           /* temp_c (0 = slowdown + 3): HW/SW thermal bits, viol_thermal_ns */
	SIM_FAULT_POWER,             /* power capped at the limit: SW_POWER_CAP, viol_power_ns */
	SIM_FAULT_PCIE_DEGRADED,     /* gen, width (0 = max) below the maximum */
	SIM_FAULT_NVLINK_DOWN,       /* link (-1 = all) inactive */
	SIM_FAULT_NVLINK_ERRORS,     /* link (-1 = all), rate_per_s CRC flit errors, replay/recovery follow */
	SIM_FAULT_GPU_LOST,          /* every call for the GPU fails with GPU_ENODEV; XID 79 once */
	SIM_FAULT_REMAP_PENDING,     /* remap_pending = 1 while active; count rows added to remap_uncorrected */
	SIM_FAULT_REMAP_FAILURE,     /* remap_failure = 1 while active */
	SIM_FAULT_RETIRED_PAGES,     /* sbe, dbe pages retired; pending while active */
	SIM_FAULT_PERSISTENCE_OFF,   /* persistence_mode = 0 while active */
	SIM_FAULT_FOREIGN_PROCESS,   /* a process nobody scheduled: pid, name, user, mem_bytes */
	SIM_FAULT_HANG,              /* calls for the GPU block while active (up to hang_ms) */
	SIM_FAULT_KIND_COUNT
};

enum sim_mem_location { SIM_LOC_DRAM = 0, SIM_LOC_SRAM = 1 };

struct sim_fault {
	enum sim_fault_kind kind;
	unsigned gpu;
	double at_s;          /* start, seconds after the reference time (see above) */
	double duration_s;    /* 0: until cleared */
	uint64_t count;       /* ECC errors, remapped rows (0 = 1) */
	uint64_t xid;         /* SIM_FAULT_XID */
	enum sim_mem_location location;
	int link;             /* NVLink faults: link index, -1 = every link */
	double rate_per_s;    /* nvlink_errors: CRC flit errors per second (0 = 100) */
	unsigned gen, width;  /* pcie_degraded (0 = gen max - 1 / width max) */
	unsigned temp_c;      /* thermal */
	uint64_t sbe, dbe;    /* retired_pages */
	uint32_t pid;         /* foreign_process (0 = 4000000 + gpu) */
	char name[64], user[32];
	uint64_t mem_bytes;
};

/* The fault kind's JSON name ("ecc_uncorrectable") and back; KIND_NONE if unknown. */
const char *sim_fault_kind_name(enum sim_fault_kind k);
enum sim_fault_kind sim_fault_kind_parse(const char *name);

/* Adds a fault to a running sim backend, starting f->at_s seconds from now.
 * Returns a fault id (> 0), or a negative GPU_E* code with a message: not a
 * sim backend, GPU out of range, or a fault the modelled GPU cannot show
 * (retired pages on a GPU that remaps rows, NVLink faults without NVLink). */
int sim_inject(struct gpu_backend *be, const struct sim_fault *f, struct gpu_err *err);
/* Ends one injected fault (its lasting effects, such as counts, stay). */
int sim_clear(struct gpu_backend *be, int fault_id);
/* Ends every fault injected through sim_inject or the fault file. */
void sim_clear_all(struct gpu_backend *be);
/* The last problem with the run-time fault file ("" if none); 1 if there is one. */
int sim_fault_file_error(struct gpu_backend *be, char *buf, size_t len);
/* The server file's RDMA NICs ("nics") and each GPU's PCI path ("pci_path",
 * "" when not given) into gpu_path[GPU_MAX_GPUS]: the count, at most max;
 * -1 when be is not a sim backend. */
int sim_nics(struct gpu_backend *be, struct nic *out, unsigned max, char (*gpu_path)[NIC_PATH_LEN]);
/* How many events (XIDs) poll_events has delivered so far. */
uint64_t sim_events_delivered(struct gpu_backend *be);
/* How many times poll_events went to sleep so far (each wake-up starts one). */
uint64_t sim_event_waits(struct gpu_backend *be);

/* ---- The server description (parsed from JSON, before the catalog) ---- */

#define SIM_MAX_NUMA 8
#define SIM_MAX_PROCS 16
#define SIM_MAX_LOAD_STEPS 16
#define SIM_MAX_FAULTS 64
#define SIM_MAX_SWITCHES 8

struct sim_proc_desc {
	uint32_t pid, uid;
	char name[64], user[32];
	uint64_t mem_bytes;
	double leak_bytes_per_s; /* memory grows at this rate until the GPU is full */
	char type;               /* 'C' or 'G' */
	int mig_gi;              /* -1 when not on a MIG instance */
};

struct sim_load_step { double t_s, util_pct; };

/* What a GPU runs, for the profiling (GPM) model (sim_gpm.c): each sets the
 * load when the file gives none, and how SM, tensor and DRAM activity follow
 * it. SIM_WL_NONE: a generic mix. */
enum sim_workload { SIM_WL_NONE = 0, SIM_WL_GEMM, SIM_WL_MEMORY, SIM_WL_IDLE, SIM_WL_STARVED, SIM_WL_COUNT };
/* "gemm", "memory-bound", "idle-allocated", "dataloader-starved": the enum, or -1 */
int sim_workload_parse(const char *name);
const char *sim_workload_name(enum sim_workload w);

/* A MIG instance; workload: what runs on it (SIM_WL_NONE: the GPU's load
 * while a process is on it, else idle), for its profiling figures. */
struct sim_mig_desc { char profile[MIG_PROFILE_LEN]; unsigned gi_id, ci_id; char uuid[48]; enum sim_workload workload; };

/* A per-GPU feature setting: the model's default, or forced on/off. */
enum sim_tri { SIM_DEFAULT = 0, SIM_YES, SIM_NO };

struct sim_gpu_desc {
	char model[32];          /* catalog key */
	char bus_id[32], uuid[48], serial[32], vbios[32], board_part[32];
	char pci_path[NIC_PATH_LEN]; /* below /sys/devices, for the NIC cells; "": not modelled */
	int numa_node;           /* -1: none */
	double power_limit_w;    /* 0: the catalog TDP */
	enum sim_tri persistence, ecc, mig, fan;
	double idle_power_w, idle_temp_c, load_temp_c; /* 0: model defaults */
	unsigned temp_slowdown_c, temp_shutdown_c;      /* 0: model defaults */
	unsigned nload;
	struct sim_load_step load[SIM_MAX_LOAD_STEPS]; /* step function of time */
	double load_period_s;    /* > 0: the schedule repeats */
	enum sim_workload workload;
	unsigned nmig;
	struct sim_mig_desc mig_inst[GPU_MAX_MIG];
	unsigned nproc;
	struct sim_proc_desc procs[SIM_MAX_PROCS];
};

struct sim_numa_desc { int id; char cpus[96]; };

struct sim_server {
	char name[96], hostname[96];
	char driver[32], cuda[16], nvml[32];
	enum sim_tri fabric_manager;  /* SIM_DEFAULT: not supported (no NVSwitch) */
	unsigned nswitch;
	char switches[SIM_MAX_SWITCHES][32]; /* NVSwitch PCI bus ids */
	unsigned nnuma;
	struct sim_numa_desc numa[SIM_MAX_NUMA];
	unsigned ngpu;
	struct sim_gpu_desc gpu[GPU_MAX_GPUS];
	/* topology: nvlinks[a][b] links between a and b; pcie[a][b] the PCIe path
	 * (LINK_UNKNOWN: derive from NUMA nodes) */
	unsigned nvlinks[GPU_MAX_GPUS][GPU_MAX_GPUS];
	enum gpu_link_kind pcie[GPU_MAX_GPUS][GPU_MAX_GPUS];
	bool p2p_pcie;                /* P2P allowed over PCIe (false on GeForce) */
	unsigned nnic;                /* RDMA NICs ("nics") */
	struct nic nic[NIC_MAX];
	uint64_t latency_us;
	uint64_t seed;
	unsigned nfault;
	struct sim_fault faults[SIM_MAX_FAULTS];
};

/* Parses a server description from JSON bytes. `origin` names the source in
 * messages ("data/sim/h200x8.json"). Returns 0, or GPU_EDATA with a one-line
 * message naming the origin and the field. The result is malloc'd. */
int sim_server_parse(const char *buf, size_t len, const char *origin, struct sim_server **out,
		     struct gpu_err *err);
/* Checks models against the catalog and fills what the file left out
 * (UUIDs, serials, bus ids). Returns 0 or GPU_EDATA. */
int sim_server_resolve(struct sim_server *srv, const struct catalog *cat, const char *origin,
		       struct gpu_err *err);
/* Parses a fault list (the fault file, or a server file's "faults") from JSON
 * bytes: {"faults": [...]} or a bare array. Returns the count (>= 0) or GPU_EDATA. */
int sim_faults_parse(const char *buf, size_t len, const char *origin, struct sim_fault *out,
		     unsigned max, struct gpu_err *err);

#endif
