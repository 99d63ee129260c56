/* SPDX-License-Identifier: Apache-2.0 */
/* cpulist.c - Linux CPU lists (cpulist.h). */
#include "cpulist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A decimal number of at most 9 digits at *p; advances *p past it. */
static int parse_uint(const char **p, unsigned long *v)
{
	if (**p < '0' || **p > '9')
		return -1;
	char *end;
	*v = strtoul(*p, &end, 10);
	if (end - *p > 9)
		return -1;
	*p = end;
	return 0;
}

int cpulist_parse(const char *s, uint8_t *bits, unsigned ncpu, char *err, size_t errlen)
{
	if (ncpu > CPULIST_MAX_CPUS)
		ncpu = CPULIST_MAX_CPUS;
	if (bits)
		memset(bits, 0, (ncpu + 7) / 8);
	const char *p = s;
	if (!*p) {
		snprintf(err, errlen, "empty CPU list");
		return -1;
	}
	for (;;) {
		unsigned long a, b;
		if (parse_uint(&p, &a)) {
			snprintf(err, errlen, "bad CPU list '%.64s'", s);
			return -1;
		}
		b = a;
		if (*p == '-') {
			p++;
			if (parse_uint(&p, &b) || b < a) {
				snprintf(err, errlen, "bad CPU range in '%.64s'", s);
				return -1;
			}
		}
		if (b >= ncpu) {
			snprintf(err, errlen, "CPU %lu in '%.64s' is beyond the %u CPUs known", b, s, ncpu);
			return -1;
		}
		for (unsigned long c = a; bits && c <= b; c++)
			bits[c / 8] |= (uint8_t)(1u << (c % 8));
		if (*p == '\0')
			return 0;
		if (*p != ',') {
			snprintf(err, errlen, "bad CPU list '%.64s'", s);
			return -1;
		}
		p++;
	}
}
