/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nvml_topo.c - how the GPUs of the nvml backend reach each other and the
 * CPUs: NVLink peers (counted per peer; on NVSwitch systems every switch link
 * reaches every peer), the PCIe path (nvmlDeviceGetTopologyCommonAncestor,
 * 17 ms a call on an H200), P2P support, CPU affinity (NVML) and the NUMA
 * node (sysfs, as nvidia-smi topo -m does).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvml_priv.h"

void nvml_links_ensure(struct nvml_priv *p, unsigned gpu)
{
	struct nvml_gpu *g = &p->gpu[gpu];
	struct nvml_api *api = &p->api;
	pthread_mutex_lock(&g->links_lock);
	if (g->links_read || !g->h) {
		pthread_mutex_unlock(&g->links_lock);
		return;
	}
	g->nlinks = 0;
	for (unsigned l = 0; l < GPU_MAX_NVLINKS; l++) {
		int state = 0;
		nvmlReturn_t r = NVML_CALL(api, DeviceGetNvLinkState, g->h, l, &state);
		/* links past the last one the device has answer "not supported" or "invalid argument" */
		if (r == NVML_ERROR_NOT_SUPPORTED || r == NVML_ERROR_INVALID_ARGUMENT ||
		    r == NVML_ERROR_FUNCTION_NOT_FOUND)
			break;
		struct nvml_link_info *li = &g->links[l];
		memset(li, 0, sizeof(*li));
		li->active = r == NVML_SUCCESS && state;
		unsigned int ver = 0;
		r = NVML_CALL(api, DeviceGetNvLinkVersion, g->h, l, &ver);
		if (r == NVML_SUCCESS && nvml_nvlink_generation(ver))
			VAL_SET(g->link_version[l], nvml_nvlink_generation(ver));
		else
			g->link_version[l].st = r == NVML_SUCCESS ? VAL_ERROR : nvml_val_status(r);
		nvmlPciInfo_t pci;
		memset(&pci, 0, sizeof(pci));
		/* a VM that hides the NVSwitches answers FFFFFFFF:FF:FF.0: unknown */
		if (NVML_CALL(api, DeviceGetNvLinkRemotePciInfo, g->h, l, &pci) == NVML_SUCCESS &&
		    nvml_busid_known(pci.busId))
			snprintf(li->remote_busid, sizeof(li->remote_busid), "%.31s", pci.busId);
		int type = -1;
		if (NVML_CALL(api, DeviceGetNvLinkRemoteDeviceType, g->h, l, &type) == NVML_SUCCESS) {
			li->to_switch = type == NVML_NVLINK_DEVICE_TYPE_SWITCH;
		} else if (li->remote_busid[0]) {
			/* older drivers: a remote end that is none of our GPUs is a switch */
			li->to_switch = true;
			for (unsigned k = 0; k < p->n; k++)
				if (p->gpu[k].busid[0] && nvml_busid_equal(p->gpu[k].busid, li->remote_busid))
					li->to_switch = false;
		}
		g->nlinks = l + 1;
	}
	g->links_read = true;
	pthread_mutex_unlock(&g->links_lock);
}

int nvml_link(struct gpu_backend *be, unsigned a, unsigned b, struct gpu_link *out, struct gpu_err *err)
{
	struct nvml_priv *p = nvml_priv_of(be);
	struct nvml_api *api = &p->api;
	memset(out, 0, sizeof(*out));
	out->kind = LINK_UNKNOWN;
	out->pcie = LINK_UNKNOWN;
	if (a >= p->n || b >= p->n) {
		gpu_err_set(err, "no GPU %u (the driver reports %u)", a >= p->n ? a : b, p->n);
		return GPU_ENODEV;
	}
	if (a == b) {
		out->kind = out->pcie = LINK_SELF;
		out->p2p_supported = true;
		return GPU_OK;
	}
	struct nvml_gpu *ga = &p->gpu[a], *gb = &p->gpu[b];
	if (!ga->h || !gb->h) {
		unsigned bad = ga->h ? b : a;
		nvml_call_error(p, err, bad, "cannot get its handle", p->gpu[bad].handle_rc);
		return nvml_errcode(p->gpu[bad].handle_rc);
	}
	nvml_links_ensure(p, a);
	nvml_links_ensure(p, b);
	out->nvlinks = nvml_count_peer_links(ga->links, ga->nlinks, gb->busid,
					     nvml_switch_links(gb->links, gb->nlinks));

	int level = -1;
	nvmlReturn_t r = NVML_CALL(api, DeviceGetTopologyCommonAncestor, ga->h, gb->h, &level);
	if (r == NVML_SUCCESS)
		out->pcie = nvml_topo_level_kind(level);
	else if (r == NVML_ERROR_GPU_IS_LOST) {
		nvml_call_error(p, err, a, "topology", r);
		return GPU_ENODEV;
	}

	int st = -1;
	bool nvlink_p2p = NVML_CALL(api, DeviceGetP2PStatus, ga->h, gb->h, NVML_P2P_CAPS_INDEX_NVLINK, &st) ==
			  NVML_SUCCESS && st == NVML_P2P_STATUS_OK;
	st = -1;
	bool read_p2p = NVML_CALL(api, DeviceGetP2PStatus, ga->h, gb->h, NVML_P2P_CAPS_INDEX_READ, &st) ==
			NVML_SUCCESS && st == NVML_P2P_STATUS_OK;
	out->p2p_supported = nvlink_p2p || read_p2p;
	/* NVLink P2P works but no link was traced to the peer (a VM that hides the
	 * switches): the GPU's active links serve it. */
	if (nvlink_p2p && out->nvlinks == 0) {
		for (unsigned l = 0; l < ga->nlinks; l++)
			if (ga->links[l].active)
				out->nvlinks++;
	}
	out->kind = out->nvlinks > 0 ? LINK_NVLINK : out->pcie;
	return GPU_OK;
}

/* numa_node of a PCI device from sysfs; -2 if unreadable. */
static long read_numa_node(const char *busid)
{
	char sys[32], path[128], line[32];
	if (nvml_busid_to_sysfs(busid, sys, sizeof(sys)) != 0)
		return -2;
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/numa_node", sys);
	FILE *f = fopen(path, "r");
	if (!f)
		return -2;
	long v = -2;
	if (fgets(line, sizeof(line), f))
		v = strtol(line, NULL, 10);
	fclose(f);
	return v;
}

void nvml_affinity(struct nvml_priv *p, unsigned gpu, struct gpu_static *out)
{
	struct nvml_gpu *g = &p->gpu[gpu];
	struct nvml_api *api = &p->api;
	enum { NWORDS = 1024 / (8 * sizeof(unsigned long)) }; /* up to 1024 CPUs */
	unsigned long mask[NWORDS];
	memset(mask, 0, sizeof(mask));
	nvmlReturn_t r = NVML_CALL(api, DeviceGetCpuAffinityWithinScope, g->h, NWORDS, mask, NVML_AFFINITY_SCOPE_NODE);
	if (r == NVML_ERROR_FUNCTION_NOT_FOUND || r == NVML_ERROR_NOT_SUPPORTED) {
		memset(mask, 0, sizeof(mask));
		r = NVML_CALL(api, DeviceGetCpuAffinity, g->h, NWORDS, mask);
	}
	if (r == NVML_SUCCESS) {
		nvml_cpu_mask_to_list(mask, NWORDS, out->cpu_affinity.s, sizeof(out->cpu_affinity.s));
		out->cpu_affinity.st = out->cpu_affinity.s[0] ? VAL_OK : VAL_UNSUPPORTED;
	} else {
		out->cpu_affinity.st = nvml_val_status(r);
	}
	/* the node NVML names closest (as nvidia-smi topo -m shows it), else sysfs */
	long node = -2;
	memset(mask, 0, sizeof(mask));
	if (NVML_CALL(api, DeviceGetMemoryAffinity, g->h, NWORDS, mask, NVML_AFFINITY_SCOPE_NODE) == NVML_SUCCESS)
		node = nvml_first_bit(mask, NWORDS);
	if (node < 0 && g->busid[0])
		node = read_numa_node(g->busid);
	if (node >= -1)
		VAL_SET(out->numa_node, node);
	else
		out->numa_node.st = VAL_UNSUPPORTED;
}
