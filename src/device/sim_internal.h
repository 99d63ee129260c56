/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sim_internal.h - what sim.c (the backend plumbing: options, locking,
 * latency, hangs, the fault file, events) and sim_model.c (what the
 * simulated GPUs report at a given time) share. Not for use outside
 * src/device/sim*.c: tests use sim.h.
 */
#ifndef GPUCTL_SIM_INTERNAL_H
#define GPUCTL_SIM_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/catalog.h"
#include "sim.h"

/* What the modelled GPU supports, from its catalog entry and the file. */
struct sim_caps {
	bool geforce;        /* consumer card: no ECC, no violation counters */
	bool fan;            /* actively cooled (workstation/GeForce) */
	bool ecc_supported, ecc_on;
	bool hbm;            /* memory temperature readable */
	bool remap;          /* row remapping (Ampere and later with ECC) */
	bool retired_pages;  /* page retirement (Volta/Turing with ECC) */
	bool mig_capable, mig_on;
	bool viol;           /* violation (throttle) time counters */
	bool gpm;            /* profiling metrics (GPM): Hopper and later, MIG off */
	bool gpm_mig;        /* the same per MIG instance: Hopper and later, MIG on */
	unsigned nvlinks;    /* links the GPU has and uses; 0: NVLink not supported */
};

struct sim_gpu {
	const struct sim_gpu_desc *d;
	const struct cat_gpu *cat;
	struct sim_caps caps;
	uint64_t power_limit_mw;
	double idle_w, idle_temp_c, load_temp_c;
	unsigned slowdown_c, shutdown_c;
	/* NVLink wiring: link k goes to peer link_peer[k] (a GPU index), or to
	 * NVSwitch link_switch[k] when link_peer[k] < 0. */
	int link_peer[GPU_MAX_NVLINKS];
	int link_switch[GPU_MAX_NVLINKS];
};

enum sim_fault_origin { SIM_FROM_SERVER = 0, SIM_FROM_FILE, SIM_FROM_API };

struct sim_fault_rec {
	struct sim_fault f;
	int id;
	enum sim_fault_origin origin;
	uint64_t start_ns, end_ns; /* active in [start, end); end UINT64_MAX: until cleared */
	bool delivered;            /* its XID event went out */
};

struct sim_state {
	struct sim_server *srv;
	struct catalog cat;
	struct sim_gpu gpu[GPU_MAX_GPUS];
	unsigned ngpu;
	uint64_t t0_ns;            /* backend clock at open */
	bool frozen;               /* time_s=N: the model is read at t = N s, whatever the clock */
	double frozen_s;
	uint64_t latency_us, seed, hang_ms;
	int hang_gpu;              /* -1: none */
	char origin[256];          /* the server file, for messages */

	pthread_mutex_t lock;      /* guards everything below */
	pthread_cond_t cond;       /* faults changed, a call left, closing */
	struct sim_fault_rec *faults;
	unsigned nfaults, capfaults;
	int next_id;
	char fault_path[1024];     /* "" when no fault file */
	bool fault_seen;           /* the file existed at the last look */
	dev_t fault_dev;
	ino_t fault_ino;
	off_t fault_size;
	struct timespec fault_mtime;
	char fault_err[256];
	unsigned inflight;         /* calls in progress (close waits for 0) */
	bool closing;
	uint64_t delivered;
	/* poll_events waits on this one (CLOCK_MONOTONIC), not on cond, which every
	 * finished call signals: woken only when an event may be due sooner */
	pthread_cond_t events_cond;
	uint64_t event_waits;      /* times poll_events went to sleep (tests) */
};

/* sim_parse.c */
int sim_server_replicate(struct sim_server *srv, unsigned n, struct gpu_err *err);
/* Derives capabilities and wiring for every GPU; 0 or GPU_EDATA. */
int sim_state_build(struct sim_state *st, struct gpu_err *err);
/* Whether the modelled GPU can show the fault; 0 or GPU_EUNSUPPORTED/EINVAL. */
int sim_fault_check(const struct sim_state *st, const struct sim_fault *f, struct gpu_err *err);
/* The run-time fault file's text (buf, len bytes; empty: no faults) parsed,
 * checked against the server and, when every fault is good, made the file's
 * faults from now_ns on (the previous ones end). Returns 0, or < 0 with a
 * one-line message naming st->fault_path, the previous faults kept. Lock held. */
int sim_fault_file_apply(struct sim_state *st, const char *buf, size_t len, uint64_t now_ns, struct gpu_err *err);

/* sim_model.c: all called with st->lock held; pure functions of state and time. */
const struct sim_fault_rec *sim_find_active(const struct sim_state *st, unsigned gpu,
					    enum sim_fault_kind kind, uint64_t now_ns);
void sim_model_system(const struct sim_state *st, struct gpu_system *out);
void sim_model_static(const struct sim_state *st, unsigned gpu, uint64_t now_ns, struct gpu_static *out);
void sim_model_sample(const struct sim_state *st, unsigned gpu, unsigned groups, uint64_t now_ns,
		      struct gpu_sample *out);
unsigned sim_model_processes(const struct sim_state *st, unsigned gpu, uint64_t now_ns,
			     struct gpu_process *out, unsigned max);
void sim_model_link(const struct sim_state *st, unsigned a, unsigned b, uint64_t now_ns, struct gpu_link *out);
unsigned sim_model_mig(const struct sim_state *st, unsigned gpu, uint64_t now_ns, struct gpu_mig *out, unsigned max);

/* Deterministic helpers shared by the parser (generated ids) and the model. */
uint64_t sim_hash(uint64_t a, uint64_t b, uint64_t c, uint64_t d);

/* sim_gpm.c: the profiling (GPM) model. One value of metric m of a GPU whose
 * utilization (nvidia-smi's, with its noise) is util percent: "not supported"
 * unless caps.gpm. The byte rates are KiB/s. */
enum sim_gpm_metric {
	SIM_GPM_SM_ACTIVE, SIM_GPM_SM_OCCUPANCY, SIM_GPM_TENSOR, SIM_GPM_DRAM, SIM_GPM_FP64, SIM_GPM_FP32,
	SIM_GPM_FP16, SIM_GPM_PCIE_TX, SIM_GPM_PCIE_RX, SIM_GPM_NVLINK_TX, SIM_GPM_NVLINK_RX, SIM_GPM_COUNT
};
struct sim_gpu;
u64v sim_gpm_value(const struct sim_gpu *g, double util, enum sim_gpm_metric m);
/* The profiling figures of MIG instance md of g (n/a unless caps.gpm_mig;
 * the link rates n/a: the links are the GPU's); gpu_util: the GPU's load,
 * busy: a process runs on the instance. */
void sim_gpm_mig(const struct sim_gpu *g, const struct sim_mig_desc *md, double gpu_util, bool busy, struct gpu_mig *o);
/* The load of a workload when the file gives none (percent). */
double sim_workload_default_load(enum sim_workload w);

#endif
