/* SPDX-License-Identifier: Apache-2.0 */
/* cuda_map.c - see cuda_map.h. */
#include "kernels_host/cuda_map.h"

#include <string.h>

#include "core/gpu_select.h"

void cuda_map(const struct gk_api *api, int ncuda, const char *const *bus_ids, unsigned n, int *cuda)
{
	for (unsigned i = 0; i < n; i++)
		cuda[i] = -1;
	for (int d = 0; d < ncuda; d++) {
		struct gk_device_info di;
		struct pci_addr have, want;
		memset(&di, 0, sizeof(di));
		if (api->device_info(d, &di) != GK_OK || gpu_busid_parse(di.pci_bus_id, &have) != 0)
			continue;
		for (unsigned i = 0; i < n; i++)
			if (cuda[i] < 0 && bus_ids[i] && gpu_busid_parse(bus_ids[i], &want) == 0 &&
			    want.domain == have.domain && want.bus == have.bus && want.device == have.device &&
			    want.function == have.function)
				cuda[i] = d;
	}
}
