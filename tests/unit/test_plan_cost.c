/* SPDX-License-Identifier: Apache-2.0 */
/* test_plan_cost.c - the shipped price tables (every *.json in data/prices) parse, every row
 * names its source and date and a catalog GPU, and reproduce the guide's arithmetic (C10);
 * price-file errors name the column, spot overhead, rent-versus-buy break-even. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/catalog.h"
#include "core/data_path.h"
#include "plan/plan.h"
#include "plan/price_files.h"

static struct plan_prices shipped;
static size_t shipped_files;

/* The table `gpuctl plan cost` uses by default: every *.json file in data/prices. */
static int load(void **state)
{
	(void)state;
	char err[768];
	if (plan_prices_load_default(&shipped, getenv("GPUCTL_DATA_DIR"), &shipped_files, err, sizeof(err)) != PRICES_OK) {
		print_error("%s\n", err);
		return -1;
	}
	return 0;
}

static int unload(void **state)
{
	(void)state;
	plan_prices_free(&shipped);
	return 0;
}

static const struct plan_price *row(const char *instance)
{
	for (size_t i = 0; i < shipped.n; i++)
		if (strcmp(shipped.p[i].instance, instance) == 0)
			return &shipped.p[i];
	fail_msg("no price row '%s'", instance);
	return NULL;
}

static void test_guide_c10_arithmetic(void **state)
{
	(void)state;
	/* "1x V100: $0.93/h x 72 h = $66.96; 8x A100: $32.776/h x 12 h = $393.31" */
	const struct plan_price *v100 = row("guide-2023 1x V100"), *p4d = row("p4d.24xlarge (2023)");
	assert_float_equal(plan_job_cost(v100, PRICE_ON_DEMAND, 1, 72, 0), 66.96, 1e-9);
	assert_float_equal(round(plan_job_cost(p4d, PRICE_ON_DEMAND, 1, 12, 0) * 100) / 100, 393.31, 1e-9);
	assert_float_equal(plan_job_cost(p4d, PRICE_1Y, 1, 12, 0), 19.666 * 12, 1e-9);
	assert_int_equal(p4d->gpus, 8);
	assert_string_equal(p4d->gpu_model, "A100 SXM 40GB");
	/* the same 12 h at today's on-demand rate */
	assert_float_equal(plan_job_cost(row("p4d.24xlarge"), PRICE_ON_DEMAND, 1, 12, 0), 21.96 * 12, 1e-9);
	/* a price that is not known is NAN, never 0 */
	assert_true(isnan(plan_job_cost(v100, PRICE_SPOT, 1, 72, 0)));
}

static bool has_provider(const char *provider)
{
	for (size_t i = 0; i < shipped.n; i++)
		if (strcmp(shipped.p[i].provider, provider) == 0)
			return true;
	return false;
}

/* Every shipped row says where its prices come from and when, names a catalog GPU (so
 * --gpu finds it), and its known prices are positive and ordered the way commitments
 * and spot are sold: 3-year < 1-year < on-demand, spot < on-demand. */
static void test_shipped_rows_cited_and_consistent(void **state)
{
	(void)state;
	assert_int_equal(shipped_files, 3); /* aws.json, azure.json, gcp.json */
	assert_true(has_provider("aws") && has_provider("gcp") && has_provider("azure"));
	struct catalog cat;
	char err[256];
	assert_int_equal(catalog_load_default(&cat, err, sizeof(err)), 0);
	for (size_t i = 0; i < shipped.n; i++) {
		const struct plan_price *r = &shipped.p[i];
		if (!r->source[0] || !r->date[0] || !catalog_find(&cat, r->gpu_model) || r->gpus < 1)
			fail_msg("row '%s': source, date, catalog GPU '%s' or GPU count missing", r->instance, r->gpu_model);
		assert_string_equal(r->currency, "USD");
		/* every shipped row has its on-demand rate, or (a Capacity Block) that one only */
		bool block = strstr(r->instance, "Capacity Block") != NULL;
		assert_true(block ? isnan(r->on_demand) && r->capacity_block > 0 : r->on_demand > 0);
		if (block)
			continue;
		for (int k = PRICE_1Y; k < PRICE_COUNT; k++) {
			double v = plan_price_rate(r, (enum plan_pricing)k);
			if (!isnan(v) && !(v > 0 && v < r->on_demand))
				fail_msg("row '%s': %s rate %g not below on-demand %g", r->instance,
					 plan_pricing_name((enum plan_pricing)k), v, r->on_demand);
		}
		if (!isnan(r->reserved_1y) && !isnan(r->reserved_3y))
			assert_true(r->reserved_3y < r->reserved_1y);
	}
	catalog_free(&cat);
}

/* a3-highgpu-8g (8x H100, us-central1) has all four rates: 100 h on each, spot with 10%
 * more hours, from the rates in data/prices/gcp.json. */
static void test_row_with_all_four_rates(void **state)
{
	(void)state;
	const struct plan_price *a3 = row("a3-highgpu-8g");
	assert_int_equal(a3->gpus, 8);
	assert_string_equal(a3->gpu_model, "H100 SXM");
	assert_float_equal(plan_job_cost(a3, PRICE_ON_DEMAND, 1, 100, 0.1), 8849.0, 1e-6);
	assert_float_equal(plan_job_cost(a3, PRICE_1Y, 1, 100, 0.1), 6138.3672, 1e-6);
	assert_float_equal(plan_job_cost(a3, PRICE_3Y, 1, 100, 0.1), 3886.4381, 1e-6);
	assert_float_equal(plan_job_cost(a3, PRICE_SPOT, 1, 100, 0.1), 35.59301 * 110, 1e-6);
	/* a rate the source does not give stays unknown, not 0 */
	assert_true(isnan(plan_price_rate(row("a2-ultragpu-8g"), PRICE_1Y)));
	assert_true(isnan(plan_price_rate(row("Standard_ND96isr_H100_v5"), PRICE_SPOT)));
}

static void test_spot_overhead_adds_hours(void **state)
{
	(void)state;
	struct plan_price p = { .gpus = 8, .on_demand = 10, .reserved_1y = NAN, .reserved_3y = NAN, .spot = 4 };
	assert_float_equal(plan_job_cost(&p, PRICE_SPOT, 2, 100, 0.15), 4 * 2 * 115, 1e-9);
	assert_float_equal(plan_job_cost(&p, PRICE_ON_DEMAND, 2, 100, 0.15), 10 * 2 * 100, 1e-9);
	assert_true(isnan(plan_job_cost(&p, PRICE_3Y, 1, 1, 0)));
}

static void test_price_file_errors_name_the_column(void **state)
{
	(void)state;
	struct plan_prices p;
	char err[256];
	const char *missing = "{\"rows\":[{\"instance\":\"x\",\"provider\":\"p\",\"gpus\":1,\"gpu_model\":\"H100 SXM\","
			      "\"region\":\"r\",\"on_demand\":1,\"reserved_1y\":null,\"reserved_3y\":null,"
			      "\"currency\":\"USD\",\"source\":\"s\",\"date\":\"2025\"}]}";
	assert_int_equal(plan_prices_parse(&p, missing, strlen(missing), err, sizeof(err)), -1);
	assert_string_equal(err, "prices: row 1: missing column 'spot'");
	const char *neg = "{\"rows\":[{\"instance\":\"x\",\"provider\":\"p\",\"gpus\":1,\"gpu_model\":\"H100 SXM\","
			  "\"region\":\"r\",\"on_demand\":-1,\"reserved_1y\":null,\"reserved_3y\":null,\"spot\":null,"
			  "\"currency\":\"USD\",\"source\":\"s\",\"date\":\"2025\"}]}";
	assert_int_equal(plan_prices_parse(&p, neg, strlen(neg), err, sizeof(err)), -1);
	assert_non_null(strstr(err, "'on_demand'"));
	const char *gpus = "{\"rows\":[{\"instance\":\"x\",\"provider\":\"p\",\"gpus\":0,\"gpu_model\":\"H100 SXM\","
			   "\"region\":\"r\",\"on_demand\":1,\"reserved_1y\":null,\"reserved_3y\":null,\"spot\":null,"
			   "\"currency\":\"USD\",\"source\":\"s\",\"date\":\"2025\"}]}";
	assert_int_equal(plan_prices_parse(&p, gpus, strlen(gpus), err, sizeof(err)), -1);
	assert_non_null(strstr(err, "'gpus'"));
	const char *nosrc = "{\"rows\":[{\"instance\":\"x\",\"provider\":\"p\",\"gpus\":1,\"gpu_model\":\"H100 SXM\","
			    "\"region\":\"r\",\"on_demand\":1,\"reserved_1y\":null,\"reserved_3y\":null,\"spot\":null,"
			    "\"currency\":\"USD\",\"source\":\"\",\"date\":\"2025\"}]}";
	assert_int_equal(plan_prices_parse(&p, nosrc, strlen(nosrc), err, sizeof(err)), -1);
	assert_non_null(strstr(err, "'source'"));
	assert_int_equal(plan_prices_parse(&p, "[]", 2, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "rows"));
	struct plan_prices extra;
	const char *ok = "{\"rows\":[{\"instance\":\"mine\",\"provider\":\"p\",\"gpus\":8,\"gpu_model\":\"H200 SXM\","
			 "\"region\":\"r\",\"on_demand\":30,\"reserved_1y\":20,\"reserved_3y\":15,\"spot\":12,"
			 "\"currency\":\"EUR\",\"source\":\"contract\",\"date\":\"2026-11\"}]}";
	assert_int_equal(plan_prices_parse(&extra, ok, strlen(ok), err, sizeof(err)), 0);
	struct plan_prices all = { 0 };
	assert_int_equal(plan_prices_append(&all, &shipped, err, sizeof(err)), 0);
	assert_int_equal(plan_prices_append(&all, &extra, err, sizeof(err)), 0);
	assert_int_equal(all.n, shipped.n + 1);
	assert_string_equal(all.p[all.n - 1].currency, "EUR");
	assert_float_equal(plan_price_rate(&all.p[all.n - 1], PRICE_3Y), 15, 0);
	plan_prices_free(&all);
	plan_prices_free(&extra);
}

static void test_breakeven(void **state)
{
	(void)state;
	struct plan_buy b = { .purchase = 300000, .power_kw = 10, .pue = 1.5, .kwh_price = 0.2,
			      .other_per_year = 8760, .years = 4, .utilization = 1 };
	struct plan_breakeven o;
	char err[160];
	assert_int_equal(plan_breakeven(&b, 33, &o, err, sizeof(err)), 0);
	/* power 10 kW x 1.5 x 0.2 = 3 $/h; other 1 $/h; margin 33 - 4 = 29 $/h */
	assert_float_equal(o.power_per_hour, 3, 1e-12);
	assert_float_equal(o.breakeven_hours, 300000 / 29.0, 1e-9);
	assert_float_equal(o.breakeven_months, 300000 / 29.0 / 730, 1e-9);
	assert_float_equal(o.own_per_hour, 300000 / (4 * 8760.0) + 4, 1e-9);
	assert_float_equal(o.rent_total, 33 * 8760 * 4.0, 1e-6);
	assert_float_equal(o.own_total, 300000 + 4 * 8760 * 4.0, 1e-6);
	/* half the hours busy: the same busy hours, twice the calendar months */
	b.utilization = 0.5;
	b.other_per_year = 0;
	assert_int_equal(plan_breakeven(&b, 33, &o, err, sizeof(err)), 0);
	assert_float_equal(o.breakeven_months, 300000 / 30.0 / 365, 1e-9);
	/* renting cheaper than the power bill: never breaks even */
	assert_int_equal(plan_breakeven(&b, 2, &o, err, sizeof(err)), 0);
	assert_true(isinf(o.breakeven_hours));
	b.pue = 0.5;
	assert_int_equal(plan_breakeven(&b, 33, &o, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "pue"));
	b.pue = 1.2;
	b.purchase = -1;
	assert_int_equal(plan_breakeven(&b, 33, &o, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "purchase"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_guide_c10_arithmetic),
		cmocka_unit_test(test_shipped_rows_cited_and_consistent),
		cmocka_unit_test(test_row_with_all_four_rates),
		cmocka_unit_test(test_spot_overhead_adds_hours),
		cmocka_unit_test(test_price_file_errors_name_the_column),
		cmocka_unit_test(test_breakeven),
	};
	return cmocka_run_group_tests(tests, load, unload);
}
