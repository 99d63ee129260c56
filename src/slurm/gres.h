/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gres.h - Slurm's gres.conf for a node, from a snapshot (pure, no I/O).
 *
 * Debian's Slurm 22.05 has no NVML plugin (no AutoDetect=nvml), so gpuctl
 * writes what AutoDetect would: one line per GPU
 *   Name=gpu Type=nvidia_h200 File=/dev/nvidia0 Cores=0-55 Links=-1,18,0,0
 * where Links is the GPU's row of the NVLink matrix (-1 for itself, the
 * NVLink count to each other GPU, 0 for none; gres.conf(5)), one
 * MultipleFiles= line per MIG instance, and the slurm.conf fragment
 *   NodeName=n1 Gres=gpu:nvidia_h200:8
 * The Links values are topo_pair_score() / TOPO_NVLINK_SCORE, so Slurm and
 * the pool rank GPU pairs the same way (tests/unit/test_slurm_gres.c).
 */
#ifndef GPUCTL_SLURM_GRES_H
#define GPUCTL_SLURM_GRES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/abuf.h"
#include "device/gpu.h"

struct snapshot;

#define SLURM_MAX_CPUS 4096
#define SLURM_TYPE_LEN 64

struct slurm_gres_opts {
	const char *dev_dir;     /* where the device files are ("/dev"; a test cluster's own directory) */
	const char *node;        /* NodeName= of the lines and the fragment; NULL or "": none in gres.conf, "HOST" in the fragment */
	const char *type;        /* Type= for every GPU; NULL: from the GPU's name as AutoDetect writes it */
	/* Logical core index (Slurm's Cores= numbering, lstopo's Core L#) of each
	 * OS CPU id; NULL: CPU ids are taken as core indexes. -1: CPU unknown. */
	const int *cpu_core;
	unsigned ncpu;
};

/* "NVIDIA H200" -> "nvidia_h200" (lower case, runs of anything but [a-z0-9.]
 * as one '_'), as Slurm's AutoDetect names GPU types. */
void slurm_gres_type_name(const char *gpu_name, char *out, size_t outlen);

/* True if name can stand as NodeName= in gres.conf and slurm.conf: a host
 * name or a Slurm host list ("gpu[01-04]"), up to 255 characters of letters,
 * digits, '.', '-', '_', '[', ']' and ','; nothing that would end the
 * key=value (space, '=', '#', a line end), and no leading '-' (an option). */
bool slurm_node_name_ok(const char *name);
/* True if name is one node that gpuctl may hand to scontrol: as
 * slurm_node_name_ok, but no host list ('[', ']', ',') and not "ALL" (every
 * node to scontrol). Every node name from outside (a sweep's result file,
 * sinfo, --node, $SLURMD_NODENAME) is checked with it. */
bool slurm_host_name_ok(const char *name);

/* Cores= value for a GPU's CPU affinity list: the logical cores of those
 * CPUs as ranges ("0-27,56-83"). 0, or -1 with a message. */
int slurm_gres_cores(const char *cpulist, const struct slurm_gres_opts *o, char *out, size_t outlen, char *err,
		     size_t errlen);

/* MIG device minors as the NVIDIA driver numbers them
 * (/proc/driver/nvidia-caps/mig-minors): config 1, monitor 2, then per GPU
 * 15 GPU instances of 1 + 8 compute instances each. */
unsigned slurm_mig_gi_minor(unsigned gpu, unsigned gi);
unsigned slurm_mig_ci_minor(unsigned gpu, unsigned gi, unsigned ci);

/* Writes the gres.conf lines (and, with fragment, "# slurm.conf:" and the
 * NodeName line after them) for every GPU of the snapshot into out.
 * GPUs that are down get a comment instead of a line. 0, or -1 with a
 * message (memory, an unreadable CPU list). */
int slurm_gres_conf(const struct snapshot *snap, const struct slurm_gres_opts *o, struct abuf *out, char *err,
		    size_t errlen);
/* Only the slurm.conf fragment: "NodeName=n1 Gres=gpu:nvidia_h200:8". */
int slurm_gres_node_line(const struct snapshot *snap, const struct slurm_gres_opts *o, struct abuf *out, char *err,
			 size_t errlen);
/* What `gpuctl slurm gres-conf` prints: a header naming the node (o->node,
 * else server; "(SIMULATED server)" when simulated), slurm_gres_conf's lines
 * and, with fragment, the slurm.conf line as a comment. 0, or -1 with err. */
int slurm_gres_conf_file(const struct snapshot *snap, const struct slurm_gres_opts *o, const char *server,
			 bool simulated, bool fragment, struct abuf *out, char *err, size_t errlen);

#endif
