/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cudaver.c - CUDA version parsing and the driver/CUDA comparison (cudaver.h).
 */
#include <stdio.h>
#include <string.h>

#include "cudaver.h"

/* Digits of s[0..len) -> *v (at most max). 0, or -1. */
static int number(const char *s, size_t len, unsigned max, unsigned *v)
{
	if (len == 0 || len > 4)
		return -1;
	unsigned n = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		n = n * 10 + (unsigned)(s[i] - '0');
	}
	if (n > max)
		return -1;
	*v = n;
	return 0;
}

/* s[0..len) as a version; the message shows at most 32 printable bytes of it. */
static int parse_n(const char *s, size_t len, unsigned *ver, char *err, size_t errlen)
{
	unsigned part[3] = { 0, 0, 0 }, max[3] = { CUDAVER_MAX_MAJOR, CUDAVER_MAX_MINOR, 9999 };
	size_t start = 0, nparts = 0;
	for (size_t i = 0; i <= len && nparts < 4; i++) {
		if (i < len && s[i] != '.')
			continue;
		if (nparts == 3 || number(s + start, i - start, max[nparts], &part[nparts]))
			goto bad;
		nparts++;
		start = i + 1;
	}
	if (nparts == 0 || nparts > 3)
		goto bad;
	*ver = part[0] * 1000 + part[1] * 10;
	return 0;
bad:;
	char shown[33];
	size_t n = len < 32 ? len : 32;
	for (size_t i = 0; i < n; i++)
		shown[i] = (unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f ? '?' : s[i];
	shown[n] = '\0';
	snprintf(err, errlen, "bad CUDA version '%s%s' (want MAJOR.MINOR, as 12.4)", shown, len > 32 ? "..." : "");
	return -1;
}

int cudaver_parse(const char *s, unsigned *ver, char *err, size_t errlen)
{
	return parse_n(s, strlen(s), ver, err, errlen);
}

int cudaver_from_require(const char *require, unsigned *ver, char *err, size_t errlen)
{
	static const char key[] = "cuda>=";
	const size_t klen = sizeof(key) - 1;
	for (const char *p = require; *p;) {
		size_t len = strcspn(p, " ,\t");
		if (len > klen && !memcmp(p, key, klen))
			return parse_n(p + klen, len - klen, ver, err, errlen) ? -1 : 1;
		if (len == klen && !memcmp(p, key, klen))
			return parse_n(p, 0, ver, err, errlen) ? -1 : 1;
		p += len;
		p += strspn(p, " ,\t");
	}
	return 0;
}

int cudaver_image_need(const char *require, const char *cuda_version, unsigned *need, char *err, size_t errlen)
{
	if (require && require[0]) {
		int r = cudaver_from_require(require, need, err, errlen);
		if (r != 0)
			return r;
	}
	if (cuda_version && cuda_version[0])
		return cudaver_parse(cuda_version, need, err, errlen) ? -1 : 1;
	return 0;
}

bool cudaver_ok(unsigned driver, unsigned need)
{
	return driver >= need;
}

void cudaver_format(unsigned ver, char *out, size_t outlen)
{
	snprintf(out, outlen, "%u.%u", ver / 1000, ver % 1000 / 10);
}
