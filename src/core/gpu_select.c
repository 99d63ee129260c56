/* SPDX-License-Identifier: Apache-2.0 */
/* gpu_select.c - see gpu_select.h. */
#include "gpu_select.h"
#include "units.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define UUID_MIN_PREFIX 8 /* hex characters after "GPU-" for a prefix match */

uint64_t gpu_select_all(unsigned n)
{
	if (n >= 64)
		return ~(uint64_t)0;
	return ((uint64_t)1 << n) - 1;
}

/* Reads 1..maxdigits hex digits; returns the count read, 0 if none. */
static int read_hex(const char *s, unsigned maxdigits, unsigned *out)
{
	unsigned v = 0;
	unsigned i = 0;
	while (i < maxdigits && isxdigit((unsigned char)s[i])) {
		int c = tolower((unsigned char)s[i]);
		v = v * 16 + (unsigned)(isdigit(c) ? c - '0' : c - 'a' + 10);
		i++;
	}
	*out = v;
	return (int)i;
}

int gpu_busid_parse(const char *s, struct pci_addr *out)
{
	unsigned parts[4];
	unsigned nparts = 0;
	const char *p = s;
	if (!s || !*s)
		return -1;
	/* fields separated by ':' and then a final '.' */
	for (;;) {
		if (nparts == 4)
			return -1;
		int n = read_hex(p, 8, &parts[nparts]);
		if (n == 0)
			return -1;
		p += n;
		nparts++;
		if (*p == ':') {
			p++;
			continue;
		}
		break;
	}
	if (*p != '.' || nparts < 2 || nparts > 3)
		return -1;
	p++;
	unsigned fn;
	if (read_hex(p, 1, &fn) != 1 || p[1] != '\0')
		return -1;
	if (nparts == 3) {
		out->domain = parts[0];
		out->bus = parts[1];
		out->device = parts[2];
	} else {
		out->domain = 0;
		out->bus = parts[0];
		out->device = parts[1];
	}
	out->function = fn;
	if (out->bus > 0xff || out->device > 0x1f || out->function > 7)
		return -1;
	return 0;
}

/* Parses a decimal GPU index; -1 if s is not a plain number. */
static long parse_index(const char *s, size_t len)
{
	if (len == 0 || len > 6)
		return -1;
	long v = 0;
	for (size_t i = 0; i < len; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

static int match_uuid(const char *item, const struct gpu_ident *ids, unsigned n, uint64_t *mask,
		      char *err, size_t errlen)
{
	size_t len = strlen(item);
	int found = -1;
	bool short_match = false; /* a prefix under UUID_MIN_PREFIX that some GPU has */
	for (unsigned i = 0; ids && i < n; i++) {
		const char *u = ids[i].uuid;
		if (!u)
			continue;
		if (strcasecmp(u, item) == 0) {
			found = (int)i;
			break;
		}
		short_match |= len < 4 + UUID_MIN_PREFIX && strncasecmp(u, item, len) == 0;
		if (len >= 4 + UUID_MIN_PREFIX && strncasecmp(u, item, len) == 0) {
			if (found >= 0) {
				snprintf(err, errlen, "GPU UUID prefix '%s' matches more than one GPU", item);
				return -1;
			}
			found = (int)i;
		}
	}
	if (found < 0 && short_match) {
		snprintf(err, errlen, "GPU UUID prefix '%s' too short (at least %d hex digits after 'GPU-')", item,
			 UUID_MIN_PREFIX);
		return -1;
	}
	if (found < 0) {
		snprintf(err, errlen, "unknown GPU '%s'", item);
		return -1;
	}
	*mask |= (uint64_t)1 << found;
	return 0;
}

static int match_busid(const char *item, const struct gpu_ident *ids, unsigned n, uint64_t *mask,
		       char *err, size_t errlen)
{
	struct pci_addr want, have;
	if (gpu_busid_parse(item, &want) != 0) {
		snprintf(err, errlen, "unknown GPU '%s'", item);
		return -1;
	}
	for (unsigned i = 0; ids && i < n; i++) {
		if (!ids[i].bus_id || gpu_busid_parse(ids[i].bus_id, &have) != 0)
			continue;
		if (want.domain == have.domain && want.bus == have.bus && want.device == have.device &&
		    want.function == have.function) {
			*mask |= (uint64_t)1 << i;
			return 0;
		}
	}
	snprintf(err, errlen, "no GPU at bus id '%s'", item);
	return -1;
}

/* form_only: check the item's form only, not whether such a GPU is there
 * (n, ids and mask are not used) */
static int parse_item(const char *item, const struct gpu_ident *ids, unsigned n, bool form_only, uint64_t *mask,
		      char *err, size_t errlen)
{
	size_t len = strlen(item);
	if (len == 0) {
		snprintf(err, errlen, "empty item in GPU list");
		return -1;
	}
	if (strncasecmp(item, "GPU-", 4) == 0)
		return form_only ? 0 : match_uuid(item, ids, n, mask, err, errlen);
	if (strchr(item, ':')) {
		struct pci_addr a;
		if (!form_only)
			return match_busid(item, ids, n, mask, err, errlen);
		if (gpu_busid_parse(item, &a) == 0)
			return 0;
		snprintf(err, errlen, "unknown GPU '%s'", item);
		return -1;
	}

	const char *dash = strchr(item, '-');
	long lo, hi;
	if (dash) {
		lo = parse_index(item, (size_t)(dash - item));
		hi = parse_index(dash + 1, strlen(dash + 1));
		if (lo < 0 || hi < 0) {
			snprintf(err, errlen, "bad GPU range '%s'", item);
			return -1;
		}
		if (lo > hi) {
			snprintf(err, errlen, "bad GPU range '%s': start after end", item);
			return -1;
		}
	} else {
		lo = hi = parse_index(item, len);
		if (lo < 0) {
			snprintf(err, errlen, "unknown GPU '%s'", item);
			return -1;
		}
	}
	if (form_only)
		return 0;
	if ((unsigned long)hi >= n) {
		if (n == 0)
			snprintf(err, errlen, "GPU index %ld out of range: no GPU", hi);
		else
			snprintf(err, errlen, "GPU index %ld out of range (0-%u)", hi, n - 1);
		return -1;
	}
	for (long i = lo; i <= hi; i++)
		*mask |= (uint64_t)1 << i;
	return 0;
}

static int parse_list(const char *spec, const struct gpu_ident *ids, unsigned n, bool form_only,
		      uint64_t *mask, char *err, size_t errlen)
{
	char item[128];
	uint64_t m = 0;
	if (n > 64)
		n = 64;
	if (!spec || !*spec) {
		snprintf(err, errlen, "empty GPU list");
		return -1;
	}
	const char *p = spec;
	for (;;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		/* trim spaces around an item ("0, 1") */
		while (len && isspace((unsigned char)*p)) {
			p++;
			len--;
		}
		while (len && isspace((unsigned char)p[len - 1]))
			len--;
		if (len >= sizeof(item)) {
			snprintf(err, errlen, "GPU list item too long");
			return -1;
		}
		memcpy(item, p, len);
		item[len] = '\0';
		if (parse_item(item, ids, n, form_only, &m, err, errlen) != 0)
			return -1;
		if (!end)
			break;
		p = end + 1;
	}
	*mask = m;
	return 0;
}

int gpu_select_parse(const char *spec, const struct gpu_ident *ids, unsigned n,
		     uint64_t *mask, char *err, size_t errlen)
{
	return parse_list(spec, ids, n, false, mask, err, errlen);
}

int gpu_select_indexes(const char *spec, uint64_t *mask, char *err, size_t errlen)
{
	for (const char *c = spec; c && *c; c++) {
		if (!isdigit((unsigned char)*c) && !strchr(",- ", *c)) {
			char q[41];
			snprintf(err, errlen, "bad GPU list '%s' (indexes 0 to 63 and ranges, e.g. 0,2,5-7)",
				 units_quoted(spec, q));
			return -1;
		}
	}
	return parse_list(spec, NULL, 64, false, mask, err, errlen);
}

int gpu_select_check(const char *spec, char *err, size_t errlen)
{
	uint64_t unused;
	return parse_list(spec, NULL, 0, true, &unused, err, errlen);
}
