/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pool_metrics.c - the pool's series in the agent's exposition: one set per
 * running job and GPU, labelled job, user and gpu (docs/pool.md, "Metrics").
 * All are gauges of the job so far; they disappear when the job ends (its
 * totals stay in `gpuctl jobs --history`).
 */
#include "pool_internal.h"

#include <string.h>

#include "core/abuf.h"

struct pm_desc {
	const char *name, *help;
};

static const struct pm_desc pm[] = {
	{ "gpuctl_pool_jobs", "jobs of the pool by state (pending, running)" },
	{ "gpuctl_job_gpu_seconds", "GPU-seconds of the running job so far, per GPU" },
	{ "gpuctl_job_energy_joules", "energy the job's GPU used since the job started (energy counter difference)" },
	{ "gpuctl_job_gpu_utilization_avg_ratio", "average GPU utilization during the job (0-1, as gpuctl_gpu_utilization_ratio)" },
	{ "gpuctl_job_gpu_utilization_peak_ratio", "peak GPU utilization during the job (0-1)" },
	{ "gpuctl_job_memory_used_avg_bytes", "average GPU memory used during the job (whole GPU)" },
	{ "gpuctl_job_memory_used_peak_bytes", "peak GPU memory used during the job (whole GPU)" },
	{ "gpuctl_job_throttle_seconds", "time the GPU was throttled during the job, by reason (power, thermal)" },
	{ "gpuctl_job_xids", "XID errors on the job's GPU during the job, by code" },
	{ "gpuctl_job_sm_active_avg_ratio", "average SM activity during the job (0-1, GPM, as gpuctl_gpu_sm_active_ratio)" },
	{ "gpuctl_job_tensor_active_avg_ratio", "average tensor pipe activity during the job (0-1, GPM)" },
	{ "gpuctl_job_dram_active_avg_ratio", "average DRAM activity during the job (0-1, GPM)" },
	{ "gpuctl_pool_job_idle_allocation",
	  "1 while the running job's GPUs' SM activity has stayed under pool_idle_threshold for pool_idle_window, else 0" },
};

#define PM_FIRST_GPM 9 /* the three GPM means, in enum acct_gpm's order */
#define PM_IDLE 12     /* the last: one series per job, not per GPU */
_Static_assert(PM_IDLE - PM_FIRST_GPM == ACCT_GPM_COUNT && PM_IDLE + 1 == sizeof(pm) / sizeof(pm[0]),
	       "the pool's metric families and their indexes disagree");

const char *pool_metric_name(size_t i)
{
	return i < sizeof(pm) / sizeof(pm[0]) ? pm[i].name : NULL;
}

static void header(struct abuf *b, const struct pm_desc *d)
{
	abuf_printf(b, "# HELP %s %s\n# TYPE %s gauge\n", d->name, d->help, d->name);
}

/* Label values: the user name comes from the password database; escape anyway,
 * and make it valid UTF-8 (the exposition formats require it). */
void pool_metrics_label_value(struct abuf *b, const char *raw)
{
	char clean[256];
	utf8_clean(clean, sizeof(clean), raw);
	for (const char *s = clean; *s; s++) {
		if (*s == '\\' || *s == '"')
			abuf_putc(b, '\\');
		if (*s == '\n') {
			abuf_puts(b, "\\n");
			continue;
		}
		abuf_putc(b, *s);
	}
}

static void series(struct abuf *b, const char *name, const struct pool_job *j, unsigned gpu, const char *extra_key,
		   const char *extra_value, double v)
{
	abuf_printf(b, "%s{job=\"%llu\",user=\"", name, (unsigned long long)j->id);
	pool_metrics_label_value(b, j->user);
	abuf_printf(b, "\",gpu=\"%u\"", gpu);
	uint64_t hpc_job = pool_slurm_job_id(j);
	if (hpc_job)
		abuf_printf(b, ",hpc_job=\"%llu\"", (unsigned long long)hpc_job);
	if (extra_key) {
		abuf_printf(b, ",%s=\"", extra_key);
		pool_metrics_label_value(b, extra_value);
		abuf_putc(b, '"');
	}
	abuf_printf(b, "} %.6g\n", v);
}

void pool_metrics_append(struct pool *p, struct abuf *out, bool openmetrics)
{
	if (!p || out->oom)
		return;
	bool had_eof = false;
	if (openmetrics && out->len >= 6 && memcmp(out->p + out->len - 6, "# EOF\n", 6) == 0) {
		out->len -= 6;
		out->p[out->len] = '\0';
		had_eof = true;
	}
	pthread_mutex_lock(&p->mu);
	unsigned pending, running;
	pool_count(p, &pending, &running);
	header(out, &pm[0]);
	abuf_printf(out, "%s{state=\"pending\"} %u\n%s{state=\"running\"} %u\n", pm[0].name, pending, pm[0].name,
		    running);
	uint64_t now = pool_now(p);
	for (size_t d = 1; d < PM_IDLE; d++) {
		bool headed = false;
		for (size_t i = 0; i < p->njobs; i++) {
			const struct pool_job *j = p->jobs[i];
			if (j->state != JOB_RUNNING)
				continue;
			uint64_t wall = now > j->start_ns ? now - j->start_ns : 0;
			for (unsigned g = 0; g < j->acct.n; g++) {
				struct acct_summary s;
				acct_summarize(&j->acct, g, wall, &s);
				if (!headed) {
					header(out, &pm[d]);
					headed = true;
				}
				switch (d) {
				case 1: series(out, pm[d].name, j, s.gpu, NULL, NULL, s.gpu_seconds); break;
				case 2: if (s.energy_ok) series(out, pm[d].name, j, s.gpu, NULL, NULL, s.energy_j); break;
				case 3: if (s.util_ok) series(out, pm[d].name, j, s.gpu, NULL, NULL, s.util_avg_pct / 100.0); break;
				case 4: if (s.util_ok) series(out, pm[d].name, j, s.gpu, NULL, NULL, s.util_peak_pct / 100.0); break;
				case 5: if (s.mem_ok) series(out, pm[d].name, j, s.gpu, NULL, NULL, s.mem_avg_bytes); break;
				case 6: if (s.mem_ok) series(out, pm[d].name, j, s.gpu, NULL, NULL, s.mem_peak_bytes); break;
				case 7:
					if (s.viol_ok) {
						series(out, pm[d].name, j, s.gpu, "reason", "power", s.throttle_power_s);
						series(out, pm[d].name, j, s.gpu, "reason", "thermal", s.throttle_thermal_s);
					}
					break;
				case 8:
					for (unsigned k = 0; k < s.nxid; k++) {
						char code[24];
						snprintf(code, sizeof(code), "%llu", (unsigned long long)s.xid[k].code);
						series(out, pm[d].name, j, s.gpu, "xid", code, (double)s.xid[k].count);
					}
					break;
				default:
					if (s.gpm_ok[d - PM_FIRST_GPM])
						series(out, pm[d].name, j, s.gpu, NULL, NULL, s.gpm_avg_pct[d - PM_FIRST_GPM] / 100.0);
					break;
				}
			}
		}
	}
	/* one series per running job (not per GPU): the job holds its GPUs idle */
	bool headed = false;
	for (size_t i = 0; i < p->njobs; i++) {
		const struct pool_job *j = p->jobs[i];
		if (j->state != JOB_RUNNING)
			continue;
		if (!headed)
			header(out, &pm[PM_IDLE]);
		headed = true;
		abuf_printf(out, "%s{job=\"%llu\",user=\"", pm[PM_IDLE].name, (unsigned long long)j->id);
		pool_metrics_label_value(out, j->user);
		abuf_putc(out, '"');
		if (pool_slurm_job_id(j))
			abuf_printf(out, ",hpc_job=\"%llu\"", (unsigned long long)pool_slurm_job_id(j));
		abuf_printf(out, "} %d\n", j->idle.flagged ? 1 : 0);
	}
	pthread_mutex_unlock(&p->mu);
	if (had_eof)
		abuf_puts(out, "# EOF\n");
}
