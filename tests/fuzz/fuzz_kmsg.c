/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_kmsg.c - the kernel-log XID line parser on arbitrary bytes, one record per line. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "agent/kmsg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data, *e = s + size;
	while (s < e) {
		const char *nl = memchr(s, '\n', (size_t)(e - s));
		size_t n = nl ? (size_t)(nl - s) : (size_t)(e - s);
		struct kmsg_xid x;
		if (kmsg_parse_xid(s, n, &x) == 1) {
			if (x.pci_bus > 0xff || x.pci_dev > 0xff || x.xid > 999999 || strlen(x.detail) >= sizeof(x.detail))
				__builtin_trap();
		}
		s += n + (nl ? 1 : 0);
	}
	return 0;
}
