/* SPDX-License-Identifier: Apache-2.0 */
/* nic_sysfs.c - reading NICs and GPU PCI paths from sysfs: see nic.h. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/readfile.h"
#include "device/nic.h"

/* The part of the resolved path `link` below root's devices/ folder, in out.
 * Returns 0, or -1 when it cannot be resolved or is not a PCI device. */
static int pci_path_of(const char *root, const char *link, char *out, size_t n)
{
	char rroot[PATH_MAX], dev[PATH_MAX];
	out[0] = '\0';
	if (!realpath(root, rroot) || !realpath(link, dev))
		return -1;
	size_t rl = strlen(rroot);
	if (rl == 1) /* "/" */
		rl = 0;
	if (strncmp(dev, rroot, rl) != 0 || strncmp(dev + rl, "/devices/pci", 12) != 0)
		return -1;
	const char *p = dev + rl + strlen("/devices/");
	if (strlen(p) >= n)
		return -1;
	memcpy(out, p, strlen(p) + 1);
	return 0;
}

static int numa_of(const char *root, const char *pci_path)
{
	char path[PATH_MAX], err[160];
	if (snprintf(path, sizeof(path), "%s/devices/%s/numa_node", root, pci_path) >= (int)sizeof(path))
		return -1;
	char *buf = read_whole_file(path, 64, NULL, err, sizeof(err));
	if (!buf)
		return -1;
	char *end;
	long v = strtol(buf, &end, 10);
	bool ok = end != buf && (*end == '\0' || *end == '\n') && v >= 0 && v < 4096;
	free(buf);
	return ok ? (int)v : -1;
}

int nic_read_sysfs(const char *root, struct nic *out, unsigned max, char *err, size_t errlen)
{
	char dir[PATH_MAX];
	if (snprintf(dir, sizeof(dir), "%s/class/infiniband", root) >= (int)sizeof(dir)) {
		snprintf(err, errlen, "%s: path too long", root);
		return -1;
	}
	struct dirent **ents;
	int ne = scandir(dir, &ents, NULL, versionsort);
	if (ne < 0) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	unsigned n = 0;
	for (int i = 0; i < ne; i++) {
		const char *name = ents[i]->d_name;
		char link[PATH_MAX];
		if (name[0] != '.' && n < max && strlen(name) < sizeof(out[n].name) &&
		    snprintf(link, sizeof(link), "%s/%s/device", dir, name) < (int)sizeof(link) &&
		    pci_path_of(root, link, out[n].pci_path, sizeof(out[n].pci_path)) == 0) {
			memcpy(out[n].name, name, strlen(name) + 1);
			out[n].numa_node = numa_of(root, out[n].pci_path);
			n++;
		}
		free(ents[i]);
	}
	free(ents);
	return (int)n;
}

int nic_gpu_path(const char *root, const char *bus_id, char *out, size_t n)
{
	unsigned dom, bus, dev, fn;
	char link[PATH_MAX], tail;
	out[0] = '\0';
	if (sscanf(bus_id, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &tail) != 4 || dom > 0xffff || bus > 0xff ||
	    dev > 0x1f || fn > 7)
		return -1;
	if (snprintf(link, sizeof(link), "%s/bus/pci/devices/%04x:%02x:%02x.%x", root, dom, bus, dev, fn) >=
	    (int)sizeof(link))
		return -1;
	return pci_path_of(root, link, out, n);
}
