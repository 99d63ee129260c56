/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nic.h - RDMA NICs (/sys/class/infiniband) and how each reaches a GPU, as
 * `nvidia-smi topo -m` shows them (PIX, PXB, PHB, NODE, SYS).
 *
 * A device's place in the PCIe tree is its sysfs path below /sys/devices:
 * "pci0000:17/0000:17:00.0/0000:18:00.0/0000:19:00.0/0000:1a:00.0" is the
 * root complex (host bridge) pci0000:17, the bridges on the way down, and the
 * device last. nic_path_class() compares two such paths (pure, unit-tested);
 * nic_read_sysfs() and nic_gpu_path() read them under a sysfs root ("/sys",
 * or a fake tree in tests).
 */
#ifndef GPUCTL_NIC_H
#define GPUCTL_NIC_H

#include <stddef.h>
#include "device/gpu.h"

#define NIC_MAX 32
#define NIC_PATH_LEN 256

struct nic {
	char name[64];               /* "mlx5_0" */
	char pci_path[NIC_PATH_LEN]; /* below /sys/devices: "pci0000:17/.../0000:1b:00.0" */
	int numa_node;               /* -1: not known / no NUMA */
};

/* How devices at PCI paths a and b reach each other (paths as above; anything
 * before the "pci" root complex component, such as "/sys/devices/", is skipped):
 *  - different root complexes: LINK_NODE when numa_a == numa_b, else LINK_SYS;
 *  - same root complex, no bridge in common below it: LINK_PHB;
 *  - the path between them crosses at most 3 bridges (one PCIe switch: its
 *    downstream port, upstream port, downstream port; or one shared bridge):
 *    LINK_PIX; more: LINK_PXB.
 * LINK_UNKNOWN when a path is empty or has no root complex. */
enum gpu_link_kind nic_path_class(const char *a, int numa_a, const char *b, int numa_b);

/* The RDMA devices under root/class/infiniband that sit on PCI, in version
 * order of their names (mlx5_2 before mlx5_10), at most max. Returns the count (0 when the folder is missing: no
 * RDMA stack), or -1 with a one-line err. */
int nic_read_sysfs(const char *root, struct nic *out, unsigned max, char *err, size_t errlen);

/* The PCI path of bus id ("00000000:18:00.0", any case) under root:
 * root/bus/pci/devices/0000:18:00.0 resolved. Returns 0, or -1 (out = "")
 * when it cannot be read. */
int nic_gpu_path(const char *root, const char *bus_id, char *out, size_t n);

#endif
