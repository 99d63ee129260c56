/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cpu_cores.h - Slurm's core numbering of the host's CPUs (gres.conf's
 * Cores=, lstopo's Core L#): the distinct (package, core id) pairs of the
 * CPUs, numbered in that order, so both hyperthreads of a core share one index.
 */
#ifndef GPUCTL_SLURM_CPU_CORES_H
#define GPUCTL_SLURM_CPU_CORES_H

struct slurm_cpu_topo {
	int pkg, core; /* physical_package_id, core_id; -1: the CPU is absent or offline */
};

/* map[c] = the logical core index of CPU c (pure), -1 for an absent one. */
void slurm_core_map(const struct slurm_cpu_topo *cpus, unsigned n, int *map);

/* The map of this host's CPUs from sysfs under sys_root ("/sys":
 * devices/system/cpu/cpuN/topology/{physical_package_id,core_id}), for up to
 * SLURM_MAX_CPUS CPUs; *ncpu = the highest CPU id read + 1. Returns 0, or -1
 * when no CPU could be read. */
int slurm_host_cpu_cores(const char *sys_root, int *map, unsigned *ncpu);

#endif
