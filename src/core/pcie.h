/* SPDX-License-Identifier: Apache-2.0 */
/* pcie.h - PCIe link figures (pure). */
#ifndef GPUCTL_PCIE_H
#define GPUCTL_PCIE_H

/* PCIe bandwidth per direction in GB/s as marketed (x16 Gen5 = 64 GB/s:
 * 0.25, 0.5, 1, 2, 4, 8 GB/s per lane for Gen1..Gen6); NAN for unknown gen
 * or width 0. Bench's datasheet limits and diag's PCIe thresholds use it. */
double pcie_gbs(unsigned gen, unsigned width);

#endif
