/* SPDX-License-Identifier: Apache-2.0 */
/* units.c - durations and byte sizes: one grammar (units.h, docs/units.md). */
#include "units.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define MAX_FRACTION_DIGITS 9

const char *units_quoted(const char *s, char out[41])
{
	size_t k = 0;
	for (; s && s[k] && k < 40; k++)
		out[k] = (unsigned char)s[k] < 0x20 || s[k] == 0x7f ? '?' : s[k];
	out[k] = '\0';
	return out;
}

/* A decimal number at *p: whole part, fraction digits as an integer and
 * their count. At least one digit; advances *p past it. */
struct number {
	uint64_t whole, fraction;
	unsigned fraction_digits;
};

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int read_number(const char **p, struct number *n)
{
	const char *s = *p;
	unsigned digits = 0;
	*n = (struct number){ 0, 0, 0 };
	for (; is_digit(*s); s++, digits++) {
		unsigned d = (unsigned)(*s - '0');
		if (n->whole > (UINT64_MAX - d) / 10)
			return -1;
		n->whole = n->whole * 10 + d;
	}
	if (*s == '.') {
		s++;
		for (; is_digit(*s); s++, digits++) {
			if (n->fraction_digits == MAX_FRACTION_DIGITS)
				return -1;
			n->fraction = n->fraction * 10 + (uint64_t)(*s - '0');
			n->fraction_digits++;
		}
	}
	if (!digits)
		return -1;
	*p = s;
	return 0;
}

/* n * unit, the fraction's part rounded down; -1 when it passes UINT64_MAX. */
static int scale(const struct number *n, uint64_t unit, uint64_t *out)
{
	uint64_t pow10 = 1;
	for (unsigned i = 0; i < n->fraction_digits; i++)
		pow10 *= 10;
	/* unit * fraction / pow10 without overflow: fraction < pow10 <= 1e9 */
	uint64_t part = unit / pow10 * n->fraction + unit % pow10 * n->fraction / pow10;
	if (unit && n->whole > (UINT64_MAX - part) / unit)
		return -1;
	*out = n->whole * unit + part;
	return 0;
}

static const struct {
	const char *name;
	uint64_t ns;
} duration_units[] = { /* largest first: a compound duration takes them in this order */
	{ "d", UNITS_NS_PER_DAY }, { "h", 3600ull * UNITS_NS_PER_S }, { "m", 60ull * UNITS_NS_PER_S },
	{ "s", UNITS_NS_PER_S },   { "ms", 1000000ull },               { "us", 1000ull },
	{ "ns", 1ull },
};
#define N_DURATION_UNITS (sizeof(duration_units) / sizeof(duration_units[0]))

#define DURATION_FORMS "e.g. 1.5s, 100ms, 2h, 1h30m; a number alone is seconds"

/* "duration 'x' out of range (10ms to 1h)": the bounds written as the grammar reads them. */
static int out_of_range(char *err, size_t errlen, const char *what, const char *s, uint64_t lo, uint64_t hi,
			void (*fmt)(uint64_t, char *, size_t))
{
	char q[41], lo_text[24], hi_text[24];
	fmt(lo, lo_text, sizeof(lo_text));
	fmt(hi, hi_text, sizeof(hi_text));
	snprintf(err, errlen, "%s '%s' out of range (%s to %s)", what, units_quoted(s, q), lo_text, hi_text);
	return -1;
}

int units_parse_duration(const char *s, uint64_t min_ns, uint64_t max_ns, uint64_t *ns, char *err, size_t errlen)
{
	char q[41];
	const char *p = s;
	uint64_t total = 0;
	size_t next_unit = 0; /* units from here on are smaller than the last one used */
	bool overflow = false;
	if (!s || !*s)
		goto bad;
	while (*p) {
		struct number n;
		if (read_number(&p, &n))
			goto bad;
		size_t len = 0;
		while ((p[len] >= 'a' && p[len] <= 'z'))
			len++;
		uint64_t unit = 0;
		if (len == 0) {
			if (p != s + strlen(s) || total || next_unit) /* "1h30": ambiguous */
				goto bad;
			unit = UNITS_NS_PER_S;
		} else {
			size_t u = next_unit;
			while (u < N_DURATION_UNITS &&
			       (strlen(duration_units[u].name) != len || strncmp(duration_units[u].name, p, len) != 0))
				u++;
			if (u == N_DURATION_UNITS)
				goto bad;
			unit = duration_units[u].ns;
			next_unit = u + 1;
			p += len;
		}
		uint64_t v;
		if (scale(&n, unit, &v) || v > UINT64_MAX - total)
			overflow = true;
		else
			total += v;
	}
	if (overflow || total < min_ns || total > max_ns)
		return out_of_range(err, errlen, "duration", s, min_ns, max_ns, units_fmt_duration);
	*ns = total;
	return 0;
bad:
	snprintf(err, errlen, "bad duration '%s' (" DURATION_FORMS ")", units_quoted(s, q));
	return -1;
}

int units_is_bare_number(const char *s)
{
	struct number n;
	const char *p = s;
	return s && read_number(&p, &n) == 0 && *p == '\0';
}

int units_parse_seconds(const char *s, const char *what, uint64_t min_s, uint64_t max_s, uint64_t *seconds, char *err,
			size_t errlen)
{
	char q[41], why[200];
	uint64_t ns;
	if (units_is_bare_number(s) && strspn(s, "0.") != strlen(s)) {
		units_quoted(s, q);
		snprintf(err, errlen, "bad %s '%s': a number alone is ambiguous here; write %sm or %ss", what, q, q, q);
		return -1;
	}
	uint64_t lo = min_s > UINT64_MAX / UNITS_NS_PER_S ? UINT64_MAX : min_s * UNITS_NS_PER_S;
	uint64_t hi = max_s > UINT64_MAX / UNITS_NS_PER_S ? UINT64_MAX : max_s * UNITS_NS_PER_S;
	if (units_parse_duration(s, lo, hi, &ns, why, sizeof(why))) {
		snprintf(err, errlen, "%s", why);
		return -1;
	}
	if (ns % UNITS_NS_PER_S) {
		snprintf(err, errlen, "bad %s '%s' (whole seconds here, e.g. 90s, 30m, 2h)", what, units_quoted(s, q));
		return -1;
	}
	*seconds = ns / UNITS_NS_PER_S;
	return 0;
}

static const char size_prefixes[] = "KMGTP"; /* 1024^1 .. 1024^5 */

int units_parse_length(const char *s, uint64_t min, uint64_t max, uint64_t *n, char *err, size_t errlen)
{
	char q[41];
	const char *p = s;
	struct number num;
	unsigned power = 0;
	if (!s || read_number(&p, &num))
		goto bad;
	if (*p == 'k' || *p == 'K')
		power = 1, p++;
	else if (*p == 'm' || *p == 'M')
		power = 2, p++;
	if (*p)
		goto bad;
	uint64_t v, unit = 1ull << (10 * power), pow10 = 1;
	for (unsigned i = 0; i < num.fraction_digits; i++)
		pow10 *= 10;
	if (unit * num.fraction % pow10) /* a fraction of a token: "1.5" is no length, "1.5k" (1536) is */
		goto bad;
	if (scale(&num, unit, &v))
		return out_of_range(err, errlen, "length", s, min, max, units_fmt_size);
	if (v < min || v > max)
		return out_of_range(err, errlen, "length", s, min, max, units_fmt_size);
	*n = v;
	return 0;
bad:
	snprintf(err, errlen, "bad length '%s' (whole tokens, e.g. 2048, 4k = 4096, 128k = 131072: K and M are powers "
		 "of 1024)", units_quoted(s, q));
	return -1;
}

int units_parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *bytes, char *err, size_t errlen)
{
	char q[41];
	const char *p = s;
	struct number n;
	if (!s || read_number(&p, &n))
		goto bad;
	unsigned power = 0;
	if (*p) {
		char up = *p >= 'a' && *p <= 'z' ? (char)(*p - 'a' + 'A') : *p;
		const char *prefix = strchr(size_prefixes, up);
		if (prefix && up) {
			power = (unsigned)(prefix - size_prefixes) + 1;
			p++;
			if (*p == 'i' && p[1] == 'B')
				p += 2;
			else if (*p == 'B')
				p++;
		} else if (*p == 'B') {
			p++;
		}
	}
	if (*p)
		goto bad;
	uint64_t v;
	if (scale(&n, 1ull << (10 * power), &v) || v < min || v > max)
		return out_of_range(err, errlen, "size", s, min, max, units_fmt_size);
	*bytes = v;
	return 0;
bad:
	snprintf(err, errlen, "bad size '%s' (e.g. 4K, 512M, 1.5G, 40GB: K, M, G, T, P are powers of 1024)",
		 units_quoted(s, q));
	return -1;
}

void units_fmt_duration(uint64_t ns, char *out, size_t outlen)
{
	size_t u = 0;
	while (u + 1 < N_DURATION_UNITS && (ns == 0 || ns % duration_units[u].ns != 0))
		u++;
	if (ns == 0)
		u = 3; /* "0s" */
	snprintf(out, outlen, "%llu%s", (unsigned long long)(ns / duration_units[u].ns), duration_units[u].name);
}

void units_fmt_size(uint64_t bytes, char *out, size_t outlen)
{
	unsigned power = 0;
	while (power < sizeof(size_prefixes) - 1 && bytes && bytes % (1ull << (10 * (power + 1))) == 0)
		power++;
	if (power)
		snprintf(out, outlen, "%llu%c", (unsigned long long)(bytes >> (10 * power)), size_prefixes[power - 1]);
	else
		snprintf(out, outlen, "%llu", (unsigned long long)bytes);
}
