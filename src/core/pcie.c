/* SPDX-License-Identifier: Apache-2.0 */
/* pcie.c - see pcie.h. */
#include "core/pcie.h"

#include <math.h>

double pcie_gbs(unsigned gen, unsigned width)
{
	static const double per_lane[] = { 0, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0 };
	if (gen == 0 || gen >= sizeof(per_lane) / sizeof(per_lane[0]) || width == 0)
		return NAN;
	return per_lane[gen] * (double)width;
}
