/* SPDX-License-Identifier: Apache-2.0 */
/* output.c - see output.h. */
#include "output.h"

#include <math.h>
#include <string.h>

#include "view/json_util.h"
#include "core/table.h"
#include "device/gpu.h"
#include "train_plan.h"

void bench_fmt_size(uint64_t bytes, char *out, size_t outlen)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	if (bytes == 0) {
		snprintf(out, outlen, "%s", "");
		return;
	}
	double v = (double)bytes;
	int u = 0;
	while (v >= 1024.0 && u < 4) {
		v /= 1024.0;
		u++;
	}
	if (v == floor(v))
		snprintf(out, outlen, "%.0f %s", v, units[u]);
	else
		snprintf(out, outlen, "%.3g %s", v, units[u]);
}

void bench_fmt_num(double v, char *out, size_t outlen)
{
	if (!isfinite(v))
		snprintf(out, outlen, "n/a");
	else if (fabs(v) >= 1000.0)
		snprintf(out, outlen, "%.0f", v);
	else if (fabs(v) >= 100.0)
		snprintf(out, outlen, "%.1f", v);
	else if (fabs(v) >= 1.0)
		snprintf(out, outlen, "%.2f", v);
	else
		snprintf(out, outlen, "%.3g", v);
}

void bench_fmt_work(const struct bench_result *r, char *out, size_t outlen)
{
	/* decimal units, as the rates are */
	static const char *const bu[] = { "B", "kB", "MB", "GB", "TB" };
	static const char *const fu[] = { "FLOP", "kFLOP", "MFLOP", "GFLOP", "TFLOP" };
	double v = r->flops > 0 ? r->flops : r->bytes;
	const char *const *u = r->flops > 0 ? fu : bu;
	char n[20]; /* 19 + " " + unit fits the 32-byte cells callers pass */
	if (!(v > 0)) {
		snprintf(out, outlen, "%s", "");
		return;
	}
	int k = 0;
	while (v >= 1000.0 && k < 4) {
		v /= 1000.0;
		k++;
	}
	bench_fmt_num(v, n, sizeof(n));
	snprintf(out, outlen, "%s %s", n, u[k]);
}

void bench_fmt_reasons(uint64_t bits, char *out, size_t outlen)
{
	/* idle is not a slowdown of a running test */
	clk_evt_describe(bits & ~CLK_EVT_GPU_IDLE, out, outlen);
}

void bench_fmt_label(const struct bench_result *r, char *out, size_t outlen)
{
	char size[24] = "";
	bench_fmt_size(r->size_bytes, size, sizeof(size));
	if (r->m)
		snprintf(size, sizeof(size), r->m == r->n && r->n == r->k ? "%u^3" : "%ux%ux%u", r->m, r->n, r->k);
	snprintf(out, outlen, "%s %s%s%s%s%s", r->suite, r->test, r->variant[0] ? " " : "", r->variant,
		 size[0] ? " " : "", size);
}

static void gpu_cell(struct table *t, const struct bench_result *r)
{
	if (r->peer >= 0)
		table_cellf(t, "%d->%d", r->gpu, r->peer);
	else if (r->gpu >= 0)
		table_cellf(t, "%d", r->gpu);
	else if (r->ngpus > 1)
		table_cellf(t, "all %d", r->ngpus);
	else
		table_cell(t, "host");
}

static void print_results_table(const struct bench_run *run, FILE *out)
{
	static const char *const hdr[] = { "suite", "test", "variant", "GPU", "size", "median", "min", "max",
					   "spread", "counted", "datasheet", "ratio", "status" };
	enum { NCOL = sizeof(hdr) / sizeof(hdr[0]) };
	struct table *t = table_new(NCOL);
	if (!t)
		return;
	for (unsigned c = 0; c < NCOL; c++)
		table_col(t, c, hdr[c], c >= 5 && c <= 9 ? TABLE_RIGHT : TABLE_LEFT);
	table_col(t, 11, hdr[11], TABLE_RIGHT);
	for (size_t i = 0; i < run->n; i++) {
		const struct bench_result *r = &run->r[i];
		char a[32], b[32], c[32], size[24];
		table_row(t);
		table_cell(t, r->suite);
		table_cell(t, r->test);
		table_cell(t, r->variant);
		gpu_cell(t, r);
		bench_fmt_size(r->size_bytes, size, sizeof(size));
		if (r->m)
			snprintf(size, sizeof(size), r->m == r->n && r->n == r->k ? "%u^3" : "%ux%ux%u", r->m, r->n, r->k);
		table_cell(t, size);
		if (r->status == BS_FAILED || r->status == BS_SKIPPED) {
			for (int k = 0; k < 7; k++)
				table_cell(t, "");
			table_cellf(t, "%s: %s", bench_status_name(r->status), r->message);
			continue;
		}
		bench_fmt_num(r->value.median, a, sizeof(a));
		table_cellf(t, "%s %s", a, r->unit);
		bench_fmt_num(r->value.min, a, sizeof(a));
		bench_fmt_num(r->value.max, b, sizeof(b));
		table_cell(t, a);
		table_cell(t, b);
		if (isfinite(r->value.spread_pct))
			table_cellf(t, "%.1f%%", r->value.spread_pct);
		else
			table_cell(t, "n/a");
		bench_fmt_work(r, c, sizeof(c));
		table_cell(t, c);
		if (isfinite(r->limit)) {
			bench_fmt_num(r->limit, a, sizeof(a));
			table_cellf(t, "%s %s", a, r->unit);
			table_cellf(t, "%.2f", r->ratio);
		} else {
			table_cell(t, "n/a");
			table_cell(t, "n/a");
		}
		if (r->status == BS_LOW && r->message[0])
			table_cellf(t, "LOW: %s", r->message);
		else if (r->status == BS_LOW)
			table_cellf(t, "LOW (< %.2f)", r->min_ratio);
		else
			table_cell(t, r->verified ? "ok" : "ok (unverified)");
	}
	table_print(t, out);
	table_free(t);
}

/* The profiling means (NVML GPM), "93/15/88/16 %"; "n/a" for a GPU without GPM. */
static void gpm_cell(struct table *t, const struct bench_telemetry *x)
{
	char buf[64] = "";
	size_t len = 0;
	bool any = false;
	for (unsigned k = 0; k < BENCH_TEL_NGPM; k++) {
		any |= isfinite(x->gpm_pct[k]);
		if (isfinite(x->gpm_pct[k]))
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%.0f", k ? "/" : "", x->gpm_pct[k]);
		else
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s-", k ? "/" : "");
	}
	if (any)
		table_cellf(t, "%s %%", buf);
	else
		table_cell(t, "n/a");
}

static void print_telemetry_table(const struct bench_run *run, FILE *out)
{
	size_t with = 0;
	for (size_t i = 0; i < run->n; i++)
		with += run->r[i].tel.samples > 0;
	if (!with) {
		fprintf(out, "\ntelemetry: none recorded during the tests\n");
		return;
	}
	static const char *const hdr[] = { "suite", "test", "variant", "GPU", "SM clock", "power avg",
					   "power max", "temp max", "energy", "GFLOP/s/W", "SM act/occ/tensor/DRAM",
					   "energy from", "clock events" };
	enum { NCOL = sizeof(hdr) / sizeof(hdr[0]) };
	struct table *t = table_new(NCOL);
	if (!t)
		return;
	for (unsigned c = 0; c < NCOL; c++)
		table_col(t, c, hdr[c], c >= 4 && c <= 10 ? TABLE_RIGHT : TABLE_LEFT);
	for (size_t i = 0; i < run->n; i++) {
		const struct bench_result *r = &run->r[i];
		const struct bench_telemetry *x = &r->tel;
		char a[32], reasons[128];
		if (r->status == BS_SKIPPED)
			continue; /* nothing ran */
		table_row(t);
		table_cell(t, r->suite);
		table_cell(t, r->test);
		table_cell(t, r->variant);
		gpu_cell(t, r);
		if (isfinite(x->sm_clock_mhz_min))
			table_cellf(t, "%.0f-%.0f MHz", x->sm_clock_mhz_min, x->sm_clock_mhz_max);
		else
			table_cell(t, "n/a");
		bench_fmt_num(x->power_w_avg, a, sizeof(a));
		table_cellf(t, "%s W", a);
		bench_fmt_num(x->power_w_max, a, sizeof(a));
		table_cellf(t, "%s W", a);
		if (isfinite(x->temp_c_max))
			table_cellf(t, "%.0f °C", x->temp_c_max);
		else
			table_cell(t, "n/a");
		bench_fmt_num(x->energy_j, a, sizeof(a));
		table_cellf(t, "%s J", a);
		bench_fmt_num(r->gflops_per_watt, a, sizeof(a));
		table_cell(t, a);
		gpm_cell(t, x);
		table_cell(t, x->energy_from[0] ? x->energy_from : "no telemetry recorded");
		bench_fmt_reasons(x->clock_event_reasons, reasons, sizeof(reasons));
		table_cell(t, reasons);
	}
	fprintf(out, "\ntelemetry during each test (sampled by NVML):\n");
	table_print(t, out);
	table_free(t);
}

void bench_print_text(const struct bench_run *run, FILE *out)
{
	const char *model = run->ngpus && run->gpu[0].catalog_model[0] ? run->gpu[0].catalog_model : "not in catalog";
	/* a results file read back (--results) says anything: one clean line */
	text_line(out, "gpuctl bench (%s): %u GPU%s, %s (%s), driver %s, CUDA %s, host %s, %s",
		  run->mode[0] ? run->mode : "custom", run->ngpus, run->ngpus == 1 ? "" : "s",
		  run->ngpus ? run->gpu[0].name : "?", model, run->driver_version[0] ? run->driver_version : "?",
		  run->cuda_version[0] ? run->cuda_version : "?", run->host[0] ? run->host : "?",
		  run->started_utc[0] ? run->started_utc : "time unknown");
	fprintf(out, "medians of device-event-timed samples; ratio = median / datasheet; GB = 1e9 bytes\n\n");
	print_results_table(run, out);
	bench_print_train(run, out);
	print_telemetry_table(run, out);
	size_t c[BS_STATUS_COUNT];
	bench_count_status(run, c);
	fprintf(out, "\n%zu results: %zu ok, %zu under threshold, %zu failed, %zu skipped", run->n, c[BS_OK],
		c[BS_LOW], c[BS_FAILED], c[BS_SKIPPED]);
	if (isfinite(run->duration_s))
		fprintf(out, " (%.1f s)", run->duration_s);
	fputc('\n', out);
}

static void csv_str(FILE *out, const char *s)
{
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

static void csv_num(FILE *out, double v)
{
	if (isfinite(v))
		fprintf(out, "%.10g", v);
}

void bench_print_csv(const struct bench_run *run, FILE *out)
{
	fputs("suite,test,variant,gpu,peer,ngpus,size_bytes,m,n,k,metric,unit,median,min,max,spread_pct,samples,"
	      "bytes,flops,limit,ratio,min_ratio,status,verified,algbw_gbs,sm_clock_mhz_min,power_w_avg,"
	      "temp_c_max,energy_j,clock_event_reasons,gflops_per_watt,message,energy_from\n",
	      out);
	for (size_t i = 0; i < run->n; i++) {
		const struct bench_result *r = &run->r[i];
		csv_str(out, r->suite);
		fputc(',', out);
		csv_str(out, r->test);
		fputc(',', out);
		csv_str(out, r->variant);
		fprintf(out, ",%d,%d,%d,%llu,%u,%u,%u,%s,", r->gpu, r->peer, r->ngpus, (unsigned long long)r->size_bytes,
			r->m, r->n, r->k, bench_metric_name(r->metric));
		csv_str(out, r->unit);
		const double nums[] = { r->value.median, r->value.min, r->value.max, r->value.spread_pct };
		for (size_t k = 0; k < 4; k++) {
			fputc(',', out);
			csv_num(out, nums[k]);
		}
		fprintf(out, ",%u,", r->nsamples);
		csv_num(out, r->bytes);
		fputc(',', out);
		csv_num(out, r->flops);
		fputc(',', out);
		csv_num(out, r->limit);
		fputc(',', out);
		csv_num(out, r->ratio);
		fputc(',', out);
		csv_num(out, r->min_ratio);
		fprintf(out, ",%s,%s,", bench_status_name(r->status), r->verified ? "true" : "false");
		const double more[] = { r->algbw_gbs, r->tel.sm_clock_mhz_min, r->tel.power_w_avg, r->tel.temp_c_max,
					r->tel.energy_j };
		for (size_t k = 0; k < 5; k++) {
			csv_num(out, more[k]);
			fputc(',', out);
		}
		if (r->tel.samples)
			fprintf(out, "%llu", (unsigned long long)r->tel.clock_event_reasons);
		fputc(',', out);
		csv_num(out, r->gflops_per_watt);
		fputc(',', out);
		csv_str(out, r->message);
		fputc(',', out);
		csv_str(out, r->tel.energy_from);
		fputc('\n', out);
	}
}
