/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gk_selftest.c - main() of the device test program (see gk_driver.h).
 *   gk_selftest --module PATH [--check] [--timing] [--json FILE]
 * Exit 0 when every correctness check passed, 1 when one failed, 69 when no
 * module or GPU could be used.
 */
#include "gk_driver.h"

#include "core/stats.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

double drv_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct gk_common drv_common(const struct drv *d, int dev, int iters)
{
	struct gk_common c = { .device = dev, .warmup = 0, .iters = iters, .seed = 0 };
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	c.deadline_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + (uint64_t)(d->deadline_s * 1e9);
	c.seed = (uint64_t)ts.tv_nsec | 1; /* fresh inputs every run */
	return c;
}

double drv_median(const struct gk_result *r)
{
	struct stats st;
	return stats_compute(r->samples_ms, (size_t)r->nsamples, &st) == 0 ? st.median : 0;
}

void drv_expect(struct drv *d, const char *name, int ok, const struct gk_result *r, const char *why)
{
	d->checks++;
	if (!ok)
		d->failures++;
	printf("%-4s %-44s rc=%-3d n=%-3d verified=%d checked=%llu bad=%llu nan=%llu maxerr=%.3g %s%s%s\n",
	       ok ? "PASS" : "FAIL", name, r->rc, r->nsamples, r->verify.verified,
	       (unsigned long long)r->verify.checked, (unsigned long long)r->verify.mismatches,
	       (unsigned long long)r->verify.nans, r->verify.max_err, why ? why : "", r->err[0] ? " err: " : "", r->err);
	fflush(stdout);
}

void drv_json(struct drv *d, const char *name, const char *params, const struct gk_result *r, double rate,
	      const char *unit, double datasheet)
{
	if (!d->json)
		return;
	double mn = 1e30, mx = 0;
	for (int i = 0; i < r->nsamples; i++) {
		mn = r->samples_ms[i] < mn ? r->samples_ms[i] : mn;
		mx = r->samples_ms[i] > mx ? r->samples_ms[i] : mx;
	}
	fprintf(d->json, "{\"name\":\"%s\",\"params\":\"%s\",\"rc\":%d,\"samples\":%d,\"median_ms\":%.6g,\"min_ms\":%.6g,"
		"\"max_ms\":%.6g,\"bytes\":%.6g,\"flops\":%.6g,\"rate\":%.6g,\"unit\":\"%s\",\"datasheet\":%.6g,"
		"\"verified\":%s,\"mismatches\":%llu,\"nans\":%llu,\"max_err\":%.3g",
		name, params, r->rc, r->nsamples, drv_median(r), r->nsamples ? mn : 0, mx, r->bytes, r->flops, rate, unit,
		datasheet, r->verify.verified ? "true" : "false", (unsigned long long)r->verify.mismatches,
		(unsigned long long)r->verify.nans, r->verify.max_err);
	for (int i = 0; i < r->naux; i++)
		fprintf(d->json, ",\"%s\":%.6g", r->aux[i].name, r->aux[i].value);
	fprintf(d->json, ",\"err\":\"");
	for (const char *p = r->err; *p; p++)
		fputc(*p == '"' || *p == '\\' ? '\'' : *p, d->json);
	fprintf(d->json, "\"}\n");
	fflush(d->json);
}

int main(int argc, char **argv)
{
	const char *module = NULL, *json = NULL;
	int check = 0, timing = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--module") && i + 1 < argc)
			module = argv[++i];
		else if (!strcmp(argv[i], "--json") && i + 1 < argc)
			json = argv[++i];
		else if (!strcmp(argv[i], "--check"))
			check = 1;
		else if (!strcmp(argv[i], "--timing"))
			timing = 1;
		else {
			fprintf(stderr, "usage: gk_selftest --module PATH [--check] [--timing] [--json FILE]\n");
			return 64;
		}
	}
	if (!check && !timing)
		check = 1;
	struct kmod km;
	char err[512];
	if (kmod_open_default(&km, module, NULL, err, sizeof err) != KMOD_OK) {
		fprintf(stderr, "gk_selftest: %s\n", err);
		return 69;
	}
	struct drv d = { .api = km.api, .deadline_s = 120 };
	printf("module: %s (%s)\n", km.path, km.api->build_info);
	if (km.api->device_count(&d.ndev, err, sizeof err) != GK_OK || d.ndev < 1) {
		fprintf(stderr, "gk_selftest: no usable GPU: %s\n", err);
		kmod_close(&km);
		return 69;
	}
	for (int i = 0; i < d.ndev; i++) {
		struct gk_device_info in;
		if (km.api->device_info(i, &in) == GK_OK)
			printf("GPU %d: %s, cc %d.%d, %d SMs, L2 %d B, %llu B memory (%llu free), bus %d bit, %s, runtime %d driver %d\n",
			       i, in.name, in.cc_major, in.cc_minor, in.sm_count, in.l2_bytes,
			       (unsigned long long)in.mem_total_bytes, (unsigned long long)in.mem_free_bytes,
			       in.mem_bus_width_bits, in.pci_bus_id, in.runtime_version, in.driver_version);
		else
			printf("GPU %d: device_info failed: %s\n", i, in.err);
	}
	if (json)
		d.json = fopen(json, "w");
	if (check)
		drv_check_all(&d);
	if (timing)
		drv_timing_all(&d);
	printf("%d checks, %d failed\n", d.checks, d.failures);
	if (d.json)
		fclose(d.json);
	kmod_close(&km);
	return d.failures ? 1 : 0;
}
