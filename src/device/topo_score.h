/* SPDX-License-Identifier: Apache-2.0 */
/*
 * topo_score.h - how well two GPUs are connected, as one number (pure).
 *
 * Pair scores follow the idea of NVIDIA's go-gpuallocator: every NVLink
 * between two GPUs is worth far more than the best PCIe path, and PCIe paths
 * rank PIX > PXB > PHB > NODE > SYS. The pool's placement (pool/placement.h)
 * sums them over a set; `gpuctl slurm gres-conf` writes them as Links= rows,
 * so Slurm and the pool rank pairs the same way.
 */
#ifndef GPUCTL_TOPO_SCORE_H
#define GPUCTL_TOPO_SCORE_H

#include "device/gpu.h"

#define TOPO_NVLINK_SCORE 100 /* per NVLink between the two GPUs */

/* Score of the PCIe path alone (PIX 50 .. SYS 10, 0 unknown). */
unsigned topo_pcie_score(enum gpu_link_kind pcie);
/* Score of a pair: 100 x NVLinks + the PCIe path's score. */
unsigned topo_pair_score(const struct gpu_link *l);

#endif
