/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cost.c - the price table (the JSON files under data/prices, or a user's file), the cost of a
 * job per instance type and pricing model, and the rent-versus-buy break-even.
 *
 * A price file: {"schema": "gpuctl-prices", "rows": [ {instance, provider, gpus,
 * gpu_model, region, on_demand, reserved_1y, reserved_3y, spot, currency, source,
 * date}, ... ]}. Every column must be present; a price may be null (not offered or
 * not known), never silently 0. Prices are per instance-hour. One optional column,
 * capacity_block (a block of time reserved and paid up front), null when absent.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"

static const char *const pricing_names[PRICE_COUNT] = { "on-demand", "1-year", "3-year", "spot", "capacity-block" };
const char *plan_pricing_name(enum plan_pricing p) { return p < PRICE_COUNT ? pricing_names[p] : "?"; }

static int get_str(json_t *row, size_t i, const char *key, char *out, size_t outlen, char *err, size_t errlen)
{
	json_t *v = json_object_get(row, key);
	if (!v) {
		snprintf(err, errlen, "prices: row %zu: missing column '%s'", i + 1, key);
		return -1;
	}
	if (!json_is_string(v) || json_string_length(v) >= outlen) {
		snprintf(err, errlen, "prices: row %zu: column '%s' must be a string of at most %zu characters",
			 i + 1, key, outlen - 1);
		return -1;
	}
	snprintf(out, outlen, "%s", json_string_value(v));
	return 0;
}

static int get_price(json_t *row, size_t i, const char *key, double *out, char *err, size_t errlen)
{
	json_t *v = json_object_get(row, key);
	if (!v) {
		snprintf(err, errlen, "prices: row %zu: missing column '%s'", i + 1, key);
		return -1;
	}
	if (json_is_null(v)) {
		*out = NAN;
		return 0;
	}
	if (!json_is_number(v) || !(json_number_value(v) >= 0) || !isfinite(json_number_value(v))) {
		snprintf(err, errlen, "prices: row %zu: column '%s' must be a non-negative number or null", i + 1, key);
		return -1;
	}
	*out = json_number_value(v);
	return 0;
}

static int parse_row(json_t *row, size_t i, struct plan_price *p, char *err, size_t errlen)
{
	memset(p, 0, sizeof(*p));
	if (!json_is_object(row)) {
		snprintf(err, errlen, "prices: row %zu is not an object", i + 1);
		return -1;
	}
	if (get_str(row, i, "instance", p->instance, sizeof(p->instance), err, errlen) ||
	    get_str(row, i, "provider", p->provider, sizeof(p->provider), err, errlen) ||
	    get_str(row, i, "gpu_model", p->gpu_model, sizeof(p->gpu_model), err, errlen) ||
	    get_str(row, i, "region", p->region, sizeof(p->region), err, errlen) ||
	    get_str(row, i, "currency", p->currency, sizeof(p->currency), err, errlen) ||
	    get_str(row, i, "source", p->source, sizeof(p->source), err, errlen) ||
	    get_str(row, i, "date", p->date, sizeof(p->date), err, errlen) ||
	    get_price(row, i, "on_demand", &p->on_demand, err, errlen) ||
	    get_price(row, i, "reserved_1y", &p->reserved_1y, err, errlen) ||
	    get_price(row, i, "reserved_3y", &p->reserved_3y, err, errlen) ||
	    get_price(row, i, "spot", &p->spot, err, errlen))
		return -1;
	p->capacity_block = NAN;
	if (json_object_get(row, "capacity_block") &&
	    get_price(row, i, "capacity_block", &p->capacity_block, err, errlen))
		return -1;
	json_t *g = json_object_get(row, "gpus");
	if (!g) {
		snprintf(err, errlen, "prices: row %zu: missing column 'gpus'", i + 1);
		return -1;
	}
	if (!json_is_integer(g) || json_integer_value(g) < 1 || json_integer_value(g) > 1024) {
		snprintf(err, errlen, "prices: row %zu: column 'gpus' must be an integer from 1 to 1024", i + 1);
		return -1;
	}
	p->gpus = (unsigned)json_integer_value(g);
	if (p->source[0] == '\0' || p->date[0] == '\0') {
		snprintf(err, errlen, "prices: row %zu: column '%s' must not be empty", i + 1,
			 p->source[0] ? "date" : "source");
		return -1;
	}
	return 0;
}

int plan_prices_parse(struct plan_prices *pr, const char *json, size_t len, char *err, size_t errlen)
{
	memset(pr, 0, sizeof(*pr));
	json_error_t je;
	json_t *root = json_loadb(json, len, 0, &je);
	if (!root) {
		char q[JSON_ERROR_TEXT_LENGTH];
		plan_quote(q, sizeof(q), je.text);
		snprintf(err, errlen, "prices: line %d: %s", je.line, q);
		return -1;
	}
	json_t *rows = json_object_get(root, "rows");
	if (!json_is_array(rows)) {
		snprintf(err, errlen, "prices: missing array 'rows'");
		json_decref(root);
		return -1;
	}
	size_t n = json_array_size(rows);
	pr->p = calloc(n ? n : 1, sizeof(*pr->p));
	if (!pr->p) {
		snprintf(err, errlen, "out of memory");
		json_decref(root);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		if (parse_row(json_array_get(rows, i), i, &pr->p[i], err, errlen)) {
			json_decref(root);
			plan_prices_free(pr);
			return -1;
		}
		pr->n++;
	}
	json_decref(root);
	return 0;
}

int plan_prices_append(struct plan_prices *dst, const struct plan_prices *src, char *err, size_t errlen)
{
	struct plan_price *np = realloc(dst->p, (dst->n + src->n + 1) * sizeof(*np));
	if (!np) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	dst->p = np;
	memcpy(dst->p + dst->n, src->p, src->n * sizeof(*np));
	dst->n += src->n;
	return 0;
}

void plan_prices_free(struct plan_prices *pr)
{
	free(pr->p);
	pr->p = NULL;
	pr->n = 0;
}

double plan_price_rate(const struct plan_price *p, enum plan_pricing k)
{
	switch (k) {
	case PRICE_ON_DEMAND: return p->on_demand;
	case PRICE_1Y: return p->reserved_1y;
	case PRICE_3Y: return p->reserved_3y;
	case PRICE_SPOT: return p->spot;
	case PRICE_CAPACITY_BLOCK: return p->capacity_block;
	default: return NAN;
	}
}

double plan_job_cost(const struct plan_price *p, enum plan_pricing k, double instances, double hours,
		     double spot_overhead)
{
	double rate = plan_price_rate(p, k);
	if (isnan(rate))
		return NAN;
	double h = k == PRICE_SPOT ? hours * (1 + spot_overhead) : hours;
	return rate * instances * h;
}

int plan_breakeven(const struct plan_buy *b, double rent_per_hour, struct plan_breakeven *o, char *err,
		   size_t errlen)
{
	memset(o, 0, sizeof(*o));
	const struct { const char *name; double v; bool positive; } in[] = {
		{ "purchase", b->purchase, true }, { "power", b->power_kw, false }, { "pue", b->pue, true },
		{ "kwh-price", b->kwh_price, false }, { "other-per-year", b->other_per_year, false },
		{ "years", b->years, true }, { "utilization", b->utilization, true }, { "rent", rent_per_hour, true },
	};
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++)
		if (!isfinite(in[i].v) || in[i].v < 0 || (in[i].positive && in[i].v == 0)) {
			snprintf(err, errlen, "%s must be %s", in[i].name, in[i].positive ? "positive" : "non-negative");
			return -1;
		}
	if (b->utilization > 1 || b->pue < 1) {
		snprintf(err, errlen, "%s", b->pue < 1 ? "pue must be at least 1" : "utilization must be at most 1");
		return -1;
	}
	double busy_per_year = 8760 * b->utilization;
	o->power_per_hour = b->power_kw * b->pue * b->kwh_price;
	double other_per_busy_hour = b->other_per_year / busy_per_year;
	o->rent_per_hour = rent_per_hour;
	o->own_per_hour = b->purchase / (b->years * busy_per_year) + o->power_per_hour + other_per_busy_hour;
	double margin = rent_per_hour - o->power_per_hour - other_per_busy_hour;
	o->breakeven_hours = margin > 0 ? b->purchase / margin : INFINITY;
	o->breakeven_months = o->breakeven_hours / (busy_per_year / 12);
	o->rent_total = rent_per_hour * busy_per_year * b->years;
	o->own_total = b->purchase + (o->power_per_hour * busy_per_year + b->other_per_year) * b->years;
	return 0;
}
