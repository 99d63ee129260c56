/* SPDX-License-Identifier: Apache-2.0 */
/* topo_score.c - see topo_score.h. */
#include "device/topo_score.h"

unsigned topo_pcie_score(enum gpu_link_kind pcie)
{
	switch (pcie) {
	case LINK_PIX: return 50;
	case LINK_PXB: return 40;
	case LINK_PHB: return 30;
	case LINK_NODE: return 20;
	case LINK_SYS: return 10;
	default: return 0;
	}
}

unsigned topo_pair_score(const struct gpu_link *l)
{
	return TOPO_NVLINK_SCORE * l->nvlinks + topo_pcie_score(l->pcie);
}
