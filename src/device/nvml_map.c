/* SPDX-License-Identifier: Apache-2.0 */
/* nvml_map.c - see nvml_map.h. Pure functions only. */
#include "nvml_map.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "core/gpu_select.h"

enum val_status nvml_val_status(nvmlReturn_t rc)
{
	switch (rc) {
	case NVML_SUCCESS: return VAL_OK;
	case NVML_ERROR_NOT_SUPPORTED:
	case NVML_ERROR_FUNCTION_NOT_FOUND: return VAL_UNSUPPORTED;
	default: return VAL_ERROR;
	}
}

int nvml_errcode(nvmlReturn_t rc)
{
	switch (rc) {
	case NVML_SUCCESS: return GPU_OK;
	case NVML_ERROR_DRIVER_NOT_LOADED:
	case NVML_ERROR_LIBRARY_NOT_FOUND: return GPU_ENODRIVER;
	case NVML_ERROR_GPU_IS_LOST:
	case NVML_ERROR_GPU_NOT_FOUND: return GPU_ENODEV;
	case NVML_ERROR_NOT_SUPPORTED:
	case NVML_ERROR_FUNCTION_NOT_FOUND: return GPU_EUNSUPPORTED;
	case NVML_ERROR_INVALID_ARGUMENT: return GPU_EINVAL;
	case NVML_ERROR_TIMEOUT: return GPU_ETIMEOUT;
	default: return GPU_EIO;
	}
}

enum gpu_link_kind nvml_topo_level_kind(int level)
{
	switch (level) {
	case NVML_TOPOLOGY_INTERNAL: /* same board (dual-GPU cards): one switch at most */
	case NVML_TOPOLOGY_SINGLE: return LINK_PIX;
	case NVML_TOPOLOGY_MULTIPLE: return LINK_PXB;
	case NVML_TOPOLOGY_HOSTBRIDGE: return LINK_PHB;
	case NVML_TOPOLOGY_NODE: return LINK_NODE;
	case NVML_TOPOLOGY_SYSTEM: return LINK_SYS;
	default: return LINK_UNKNOWN;
	}
}

const char *nvml_arch_name(unsigned int arch)
{
	static const char *const names[] = { "Kepler", "Maxwell", "Pascal", "Volta", "Turing",
					     "Ampere", "Ada Lovelace", "Hopper", "Blackwell" };
	if (arch < NVML_DEVICE_ARCH_KEPLER || arch > NVML_DEVICE_ARCH_BLACKWELL)
		return NULL;
	return names[arch - NVML_DEVICE_ARCH_KEPLER];
}

unsigned nvml_cores_per_sm(unsigned cc_major, unsigned cc_minor)
{
	switch (cc_major) {
	case 6: return cc_minor == 0 ? 64 : 128; /* GP100 64, GP10x 128 */
	case 7: return 64;                       /* Volta, Turing */
	case 8: return cc_minor == 0 ? 64 : 128; /* GA100 64; GA10x, AD10x 128 */
	case 9: return 128;                      /* Hopper */
	case 10:
	case 12: return 128;                     /* Blackwell */
	default: return 0;
	}
}

void nvml_cuda_version_str(int v, char *out, size_t outlen)
{
	if (v < 0)
		v = 0;
	snprintf(out, outlen, "%d.%d", v / 1000, (v % 1000) / 10);
}

int nvml_cpu_mask_to_list(const unsigned long *mask, unsigned nwords, char *out, size_t outlen)
{
	const unsigned bits = (unsigned)(sizeof(unsigned long) * 8);
	unsigned total = nwords * bits;
	size_t len = 0;
	int rc = 0;
	if (outlen == 0)
		return -1;
	out[0] = '\0';
	for (unsigned i = 0; i < total;) {
		if (!(mask[i / bits] >> (i % bits) & 1UL)) {
			i++;
			continue;
		}
		unsigned j = i;
		while (j + 1 < total && (mask[(j + 1) / bits] >> ((j + 1) % bits) & 1UL))
			j++;
		char item[32];
		if (j == i)
			snprintf(item, sizeof(item), "%s%u", len ? "," : "", i);
		else
			snprintf(item, sizeof(item), "%s%u-%u", len ? "," : "", i, j);
		size_t n = strlen(item);
		if (len + n + 1 > outlen) {
			rc = -1;
			break;
		}
		memcpy(out + len, item, n + 1);
		len += n;
		i = j + 1;
	}
	return rc;
}

int nvml_busid_to_sysfs(const char *busid, char *out, size_t outlen)
{
	struct pci_addr a;
	if (gpu_busid_parse(busid, &a) != 0)
		return -1;
	int n = snprintf(out, outlen, "%04x:%02x:%02x.%x", a.domain, a.bus, a.device, a.function);
	return n < 0 || (size_t)n >= outlen ? -1 : 0;
}

bool nvml_busid_known(const char *busid)
{
	struct pci_addr a;
	/* the all-ones id fails the parse already (device 0xff > 0x1f) */
	return gpu_busid_parse(busid, &a) == 0 && a.domain != 0xffffffffu;
}

unsigned nvml_nvlink_generation(unsigned v)
{
	static const unsigned gen[] = { 0, 1, 2, 2, 3, 3, 4, 5 };
	return v <= NVML_NVLINK_VERSION_5_0 ? gen[v] : 0;
}

int nvml_first_bit(const unsigned long *mask, unsigned nwords)
{
	const unsigned bits = (unsigned)(sizeof(unsigned long) * 8);
	for (unsigned w = 0; w < nwords; w++)
		for (unsigned b = 0; b < bits; b++)
			if (mask[w] >> b & 1UL)
				return (int)(w * bits + b);
	return -1;
}

bool nvml_busid_equal(const char *a, const char *b)
{
	struct pci_addr x, y;
	if (gpu_busid_parse(a, &x) != 0 || gpu_busid_parse(b, &y) != 0)
		return false;
	return x.domain == y.domain && x.bus == y.bus && x.device == y.device && x.function == y.function;
}

int nvml_mig_profile_from_name(const char *name, char *out, size_t outlen)
{
	const char *p = strstr(name, " MIG ");
	if (!p || !p[5])
		return -1;
	snprintf(out, outlen, "%s", p + 5);
	return 0;
}

bool nvml_field_value_u64(const nvmlFieldValue_t *fv, uint64_t *out)
{
	switch (fv->valueType) {
	case NVML_VALUE_TYPE_UNSIGNED_INT: *out = fv->value.uiVal; return true;
	case NVML_VALUE_TYPE_UNSIGNED_LONG: *out = fv->value.ulVal; return true;
	case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG: *out = fv->value.ullVal; return true;
	case NVML_VALUE_TYPE_UNSIGNED_SHORT: *out = fv->value.usVal; return true;
	case NVML_VALUE_TYPE_SIGNED_INT:
		if (fv->value.siVal < 0)
			return false;
		*out = (uint64_t)fv->value.siVal;
		return true;
	case NVML_VALUE_TYPE_SIGNED_LONG_LONG:
		if (fv->value.sllVal < 0)
			return false;
		*out = (uint64_t)fv->value.sllVal;
		return true;
	case NVML_VALUE_TYPE_DOUBLE:
		if (!(fv->value.dVal >= 0))
			return false;
		*out = (uint64_t)(fv->value.dVal + 0.5);
		return true;
	default: return false;
	}
}

unsigned nvml_switch_links(const struct nvml_link_info *links, unsigned n)
{
	unsigned c = 0;
	for (unsigned i = 0; i < n; i++)
		if (links[i].active && links[i].to_switch)
			c++;
	return c;
}

unsigned nvml_count_peer_links(const struct nvml_link_info *links, unsigned n,
			       const char *peer_busid, unsigned peer_switch_links)
{
	unsigned direct = 0;
	for (unsigned i = 0; i < n; i++)
		if (links[i].active && !links[i].to_switch && links[i].remote_busid[0] &&
		    nvml_busid_equal(links[i].remote_busid, peer_busid))
			direct++;
	unsigned own = nvml_switch_links(links, n);
	unsigned via_switch = own < peer_switch_links ? own : peer_switch_links;
	return direct + via_switch;
}
