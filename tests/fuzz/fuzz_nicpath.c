/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_nicpath.c - nic_path_class() (src/device/nic_class.c) on arbitrary
 * bytes: the input is two PCI paths separated by a newline (and two NUMA
 * nodes from its first bytes): no crash; the class is one of PIX, PXB, PHB,
 * NODE, SYS or unknown; it does not depend on the order of the two; a path
 * against itself is never NODE or SYS. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "device/nic.h"

static void valid(enum gpu_link_kind k)
{
	if (k != LINK_PIX && k != LINK_PXB && k != LINK_PHB && k != LINK_NODE && k != LINK_SYS && k != LINK_UNKNOWN)
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char s[1024];
	size_t n = size < sizeof(s) - 1 ? size : sizeof(s) - 1;
	memcpy(s, data, n);
	s[n] = '\0';
	int na = n > 0 ? (int)(data[0] % 4) - 1 : 0, nb = n > 1 ? (int)(data[1] % 4) - 1 : 0;
	char *b = strchr(s, '\n');
	if (b)
		*b++ = '\0';
	else
		b = s;
	enum gpu_link_kind ab = nic_path_class(s, na, b, nb), ba = nic_path_class(b, nb, s, na);
	valid(ab);
	if (ab != ba)
		__builtin_trap();
	enum gpu_link_kind aa = nic_path_class(s, na, s, na);
	valid(aa);
	if (aa == LINK_NODE || aa == LINK_SYS)
		__builtin_trap();
	return 0;
}
