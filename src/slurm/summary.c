/* SPDX-License-Identifier: Apache-2.0 */
/* summary.c - one line of a job's GPU statistics (summary.h). */
#include "slurm/summary.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

int slurm_stats_summary(const json_t *job, char *out, size_t outlen)
{
	const json_t *acct = json_object_get(job, "accounting");
	if (!json_is_array(acct)) {
		snprintf(out, outlen, "gpuctl: no GPU statistics");
		return -1;
	}
	size_t n = json_array_size(acct), i;
	double gpu_s = 0, energy = 0, util = 0, util_peak = 0, mem_peak = 0;
	bool energy_ok = n > 0, util_ok = n > 0, mem_ok = n > 0;
	unsigned long long xids = 0;
	char xid_codes[96] = "", throttle[96] = "";
	const json_t *a;
	json_array_foreach(acct, i, a) {
		gpu_s += json_number_value(json_object_get(a, "gpu_seconds"));
		const json_t *e = json_object_get(a, "energy_j"), *ua = json_object_get(a, "util_avg_pct"),
			     *up = json_object_get(a, "util_peak_pct"), *mp = json_object_get(a, "mem_peak_bytes");
		energy_ok = energy_ok && json_is_number(e);
		energy += json_number_value(e);
		util_ok = util_ok && json_is_number(ua);
		util += json_number_value(ua);
		if (json_number_value(up) > util_peak)
			util_peak = json_number_value(up);
		mem_ok = mem_ok && json_is_number(mp);
		if (json_number_value(mp) > mem_peak)
			mem_peak = json_number_value(mp);
		const char *k;
		const json_t *v;
		json_object_foreach((json_t *)json_object_get(a, "xids"), k, v) {
			xids += (unsigned long long)json_integer_value(v);
			size_t l = strlen(xid_codes);
			if (!strstr(xid_codes, k) && l + strlen(k) + 2 < sizeof(xid_codes))
				snprintf(xid_codes + l, sizeof(xid_codes) - l, "%s%s", l ? "," : "", k);
		}
		const char *thr = json_string_value(json_object_get(a, "throttle_reasons"));
		if (thr && strcmp(thr, "none") != 0 && !throttle[0])
			snprintf(throttle, sizeof(throttle), "%s", thr);
	}
	char e[32] = "n/a", u[48] = "n/a", m[32] = "n/a", x[128] = "none";
	if (energy_ok)
		snprintf(e, sizeof(e), "%.1f J", energy);
	if (util_ok)
		snprintf(u, sizeof(u), "avg %.0f %% peak %.0f %%", util / (double)n, util_peak);
	if (mem_ok)
		snprintf(m, sizeof(m), "%.2f GiB", mem_peak / (1024.0 * 1024 * 1024));
	if (xids)
		snprintf(x, sizeof(x), "%llu (%s)", xids, xid_codes);
	snprintf(out, outlen, "gpuctl: %zu GPU%s, %.1f GPU-s, %s, util %s, mem peak %s, XIDs %s, throttle %s", n,
		 n == 1 ? "" : "s", gpu_s, e, u, m, x, throttle[0] ? throttle : "none");
	return 0;
}
