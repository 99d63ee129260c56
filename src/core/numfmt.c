/* SPDX-License-Identifier: Apache-2.0 */
/* numfmt.c - numbers for people, without e-notation (numfmt.h). */
#include "numfmt.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* m in [0, 1e6) with sig significant digits, trailing zeros (and a bare point) dropped */
static void plain(char *out, size_t outlen, double m, int sig)
{
	int mag = m == 0 ? 0 : (int)floor(log10(fabs(m)));
	int dec = sig - 1 - mag;
	if (dec < 0)
		dec = 0;
	snprintf(out, outlen, "%.*f", dec, m);
	if (strchr(out, '.')) {
		size_t n = strlen(out);
		while (n && out[n - 1] == '0')
			out[--n] = '\0';
		if (n && out[n - 1] == '.')
			out[--n] = '\0';
	}
	if (strcmp(out, "-0") == 0)
		snprintf(out, outlen, "0");
}

char *numfmt(char *out, size_t outlen, double v, int sig)
{
	if (!outlen)
		return out;
	if (sig < 1)
		sig = 1;
	if (sig > 9)
		sig = 9;
	if (isnan(v)) {
		snprintf(out, outlen, "n/a");
		return out;
	}
	if (isinf(v)) {
		snprintf(out, outlen, "%s", v < 0 ? "-inf" : "inf");
		return out;
	}
	double a = fabs(v);
	char m[64];
	/* round first: 999999.7 with 4 digits is 1M, not "1000000" */
	if (a > 0) {
		double scale = pow(10.0, floor(log10(a)) - (sig - 1));
		a = round(a / scale) * scale;
	}
	const char *sign = v < 0 ? "-" : "";
	static const struct { double f; const char *s; } sfx[] = { { 1e12, "T" }, { 1e9, "B" }, { 1e6, "M" } };
	if (a < 1e6) {
		plain(m, sizeof(m), a, sig);
		snprintf(out, outlen, "%s%s", strcmp(m, "0") ? sign : "", m);
		return out;
	}
	if (a < 1e16) {
		for (size_t i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++)
			if (a >= sfx[i].f) {
				plain(m, sizeof(m), a / sfx[i].f, sig);
				snprintf(out, outlen, "%s%s%s", sign, m, sfx[i].s);
				return out;
			}
	}
	int e = (int)floor(log10(a));
	plain(m, sizeof(m), a / pow(10.0, e), sig);
	snprintf(out, outlen, "%s%s x 10^%d", sign, m, e);
	return out;
}
