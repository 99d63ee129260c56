/* SPDX-License-Identifier: Apache-2.0 */
/* nic_class.c - nic_path_class() (pure): see nic.h. */
#include <string.h>

#include "device/nic.h"

#define MAX_DEPTH 32

struct comp {
	const char *s;
	size_t len;
};

/* Splits the path from its "pci" root complex component on; returns the
 * number of components, 0 when there is none or it is too deep. */
static unsigned split(const char *p, struct comp *c)
{
	const char *s = p;
	while (s && *s && strncmp(s, "pci", 3) != 0) {
		s = strchr(s, '/');
		if (s)
			s++;
	}
	if (!s || !*s)
		return 0;
	unsigned n = 0;
	while (*s) {
		const char *e = strchr(s, '/');
		size_t len = e ? (size_t)(e - s) : strlen(s);
		if (len) {
			if (n == MAX_DEPTH)
				return 0;
			c[n].s = s;
			c[n++].len = len;
		}
		if (!e)
			break;
		s = e + 1;
	}
	return n;
}

static bool same(const struct comp *a, const struct comp *b)
{
	return a->len == b->len && memcmp(a->s, b->s, a->len) == 0;
}

enum gpu_link_kind nic_path_class(const char *a, int numa_a, const char *b, int numa_b)
{
	struct comp ca[MAX_DEPTH], cb[MAX_DEPTH];
	unsigned na = a ? split(a, ca) : 0, nb = b ? split(b, cb) : 0;
	if (na < 2 || nb < 2) /* a root complex and a device at least */
		return LINK_UNKNOWN;
	if (!same(&ca[0], &cb[0]))
		return numa_a == numa_b ? LINK_NODE : LINK_SYS;
	/* bridges: components 1 .. n-2; count those both paths go through */
	unsigned common = 0;
	while (1 + common < na - 1 && 1 + common < nb - 1 && same(&ca[1 + common], &cb[1 + common]))
		common++;
	if (common == 0)
		return LINK_PHB;
	unsigned bridges = (na - 2 - common) + (nb - 2 - common) + 1;
	return bridges <= 3 ? LINK_PIX : LINK_PXB;
}
