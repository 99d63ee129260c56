/* SPDX-License-Identifier: Apache-2.0 */
/* leak.c - see leak.h. */
#include "leak.h"

#include <string.h>

void leak_params_default(struct leak_params *p)
{
	p->min_window_s = 300;
	p->min_rate = 1024.0 * 1024.0 / 60.0;
	p->min_growth = 256.0 * 1024 * 1024;
	p->min_rising_share = 0.8;
	p->min_samples = 5;
}

int leak_detect(const struct leak_sample *s, size_t n, const struct leak_params *p, struct leak_result *out)
{
	struct leak_params def;
	if (!p) {
		leak_params_default(&def);
		p = &def;
	}
	memset(out, 0, sizeof(*out));
	if (n == 0)
		return 0;
	for (size_t i = 1; i < n; i++)
		if (s[i].t_ns < s[i - 1].t_ns)
			return -1;
	out->window_s = (double)(s[n - 1].t_ns - s[0].t_ns) / 1e9;
	out->growth = (double)s[n - 1].bytes - (double)s[0].bytes;
	if (n < 2)
		return 0;
	/* least-squares slope over (t - t0) in seconds */
	double mt = 0, mb = 0;
	for (size_t i = 0; i < n; i++) {
		mt += (double)(s[i].t_ns - s[0].t_ns) / 1e9;
		mb += (double)s[i].bytes;
	}
	mt /= (double)n;
	mb /= (double)n;
	double sxy = 0, sxx = 0;
	size_t rising = 0;
	for (size_t i = 0; i < n; i++) {
		double dt = (double)(s[i].t_ns - s[0].t_ns) / 1e9 - mt;
		sxy += dt * ((double)s[i].bytes - mb);
		sxx += dt * dt;
		if (i > 0 && s[i].bytes >= s[i - 1].bytes)
			rising++;
	}
	out->rate = sxx > 0 ? sxy / sxx : 0;
	out->rising_share = (double)rising / (double)(n - 1);
	out->enough_data = n >= p->min_samples && out->window_s >= p->min_window_s;
	out->leaking = out->enough_data && out->rate >= p->min_rate && out->growth >= p->min_growth &&
		       out->rising_share >= p->min_rising_share;
	return 0;
}
