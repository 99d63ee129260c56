/* SPDX-License-Identifier: Apache-2.0 */
/* plan_cost.c - `gpuctl plan cost`: a job's cost per instance type and pricing model
 * from the price table, and the rent-versus-buy break-even (docs/plan.md). */
#include <math.h>
#include <string.h>
#include <strings.h>

#include "core/numfmt.h"
#include "core/table.h"
#include "plan_cmd.h"

static bool row_matches(const struct plan_price *r, const char *gpu_key, const char *instance)
{
	if (gpu_key && strcasecmp(r->gpu_model, gpu_key) != 0)
		return false;
	if (instance && !strcasestr(r->instance, instance))
		return false;
	return true;
}

static void money(char *b, size_t n, double v, const char *cur)
{
	if (isnan(v)) /* as --json's null: not offered */
		snprintf(b, n, "n/a");
	else if (!isfinite(v)) /* past what a double holds: the options' ranges keep it from happening */
		snprintf(b, n, "too large");
	else
		snprintf(b, n, "%.2f %s", v, cur);
}

/* gpus > 0: enough instances for that many GPUs; gpus < 0: -gpus instances. */
void plan_cost_table(struct pctx *p, const char *gpu_key, const char *instance, double gpus, double hours,
		     double spot_overhead, json_t *jarr)
{
	/* a job of `gpus` GPUs: the column of GPUs it leaves idle on the instances it is priced for */
	bool idle_col = gpus > 0;
	unsigned ncol = 10 + idle_col;
	struct table *tb = jarr ? NULL : table_new(ncol);
	if (tb) {
		const char *h[] = { "instance", "GPUs", "idle GPUs", "GPU model", "region", "price date", "on-demand",
				    "1-year", "3-year", "spot", "capacity block" };
		for (unsigned i = 0, c = 0; i < 11; i++) {
			if (i == 2 && !idle_col)
				continue;
			table_col(tb, c, h[i], i <= 2 || i >= 6 ? TABLE_RIGHT : TABLE_LEFT);
			c++;
		}
		table_col(tb, 0, "instance", TABLE_LEFT);
	}
	unsigned idle_max = 0, idle_of = 0;
	char date_lo[16] = "", date_hi[16] = "";
	size_t n = 0;
	for (size_t i = 0; i < p->prices.n; i++) {
		const struct plan_price *r = &p->prices.p[i];
		if (!row_matches(r, gpu_key, instance))
			continue;
		double inst = gpus > 0 ? ceil(gpus / r->gpus) : -gpus;
		unsigned idle = gpus > 0 ? (unsigned)(inst * r->gpus - gpus) : 0;
		if (idle > idle_max) {
			idle_max = idle;
			idle_of = r->gpus;
		}
		/* the oldest and newest dates (text sorts as time: "2023" < "2024-11-07" < "before ..." aside) */
		if (r->date[0] >= '0' && r->date[0] <= '9') {
			if (!date_lo[0] || strcmp(r->date, date_lo) < 0)
				snprintf(date_lo, sizeof(date_lo), "%s", r->date);
			if (strcmp(r->date, date_hi) > 0)
				snprintf(date_hi, sizeof(date_hi), "%s", r->date);
		}
		n++;
		if (jarr) {
			json_t *j = json_object();
			json_object_set_new(j, "instance", json_string(r->instance));
			json_object_set_new(j, "provider", json_string(r->provider));
			json_object_set_new(j, "gpu_model", json_string(r->gpu_model));
			json_object_set_new(j, "region", json_string(r->region));
			json_object_set_new(j, "instances", json_integer((json_int_t)inst));
			json_object_set_new(j, "gpus_per_instance", json_integer(r->gpus));
			json_object_set_new(j, "idle_gpus", json_integer(idle));
			json_num(j, "hours", hours);
			json_object_set_new(j, "currency", json_string(r->currency));
			json_num(j, "on_demand", plan_job_cost(r, PRICE_ON_DEMAND, inst, hours, spot_overhead));
			json_num(j, "reserved_1y", plan_job_cost(r, PRICE_1Y, inst, hours, spot_overhead));
			json_num(j, "reserved_3y", plan_job_cost(r, PRICE_3Y, inst, hours, spot_overhead));
			json_num(j, "spot", plan_job_cost(r, PRICE_SPOT, inst, hours, spot_overhead));
			json_num(j, "capacity_block", plan_job_cost(r, PRICE_CAPACITY_BLOCK, inst, hours, spot_overhead));
			json_num(j, "spot_overhead", spot_overhead);
			json_object_set_new(j, "source", json_string(r->source));
			json_object_set_new(j, "date", json_string(r->date));
			json_array_append_new(jarr, j);
			continue;
		}
		char b[48];
		table_row(tb);
		table_cell(tb, r->instance);
		table_cellf(tb, "%.0f x %u", inst, r->gpus);
		if (idle_col)
			table_cellf(tb, "%u", idle);
		table_cell(tb, r->gpu_model);
		table_cell(tb, r->region);
		table_cell(tb, r->date);
		for (int k = 0; k < PRICE_COUNT; k++) {
			money(b, sizeof(b), plan_job_cost(r, (enum plan_pricing)k, inst, hours, spot_overhead), r->currency);
			table_cell(tb, b);
		}
	}
	if (!tb)
		return;
	FILE *f = p->ctx->out;
	char nh[48];
	if (n == 0) {
		fprintf(f, "\nno price rows");
		if (gpu_key)
			fprintf(f, " for GPU '%s'", gpu_key);
		if (instance)
			fprintf(f, " matching instance '%s'", instance);
		fprintf(f, " (add your own with --prices FILE)\n");
	} else {
		fprintf(f, "\ncost of %s h (spot: +%.0f%% hours for interruptions; n/a = no such price in the table):\n",
			numfmt(nh, sizeof(nh), hours, 4), 100 * spot_overhead);
		table_print(tb, f);
		if (idle_max)
			fprintf(f, "a job of %s GPU%s is priced for whole instances: on one of %u GPUs, %u stay idle "
				   "(idle GPUs; unless another job uses them)\n",
				numfmt(nh, sizeof(nh), gpus, 6), gpus == 1 ? "" : "s", idle_of, idle_max);
		if (date_lo[0])
			fprintf(f, "prices as of %s%s%s (each row's price date); cloud prices change: add yours with "
				   "--prices FILE\n", date_lo, strcmp(date_lo, date_hi) ? " to " : "",
				strcmp(date_lo, date_hi) ? date_hi : "");
	}
	table_free(tb);
}

struct cost_opts {
	const char *gpu, *instance, *rent_pricing;
	double hours, gpus, instances, spot_overhead, rent;
	struct plan_buy buy;
};

enum {
	COST_HOURS = PLAN_OPT_FIRST_OWN, COST_GPUS, COST_INSTANCES, COST_GPU, COST_INSTANCE, COST_SPOT_OVERHEAD, COST_BUY,
	COST_POWER_KW, COST_PUE, COST_KWH_PRICE, COST_YEARS, COST_UTILIZATION, COST_OTHER_PER_YEAR, COST_RENT,
	COST_RENT_PRICING,
};
#define COST_NUM_SPEC(id, name, arg, help, def, lo, hi)                                                        \
	[id] = { name, 0, OPT_NUMBER, arg, help, def, OPT_MILLI(lo), OPT_MILLI(hi), NULL }
const struct opt_spec plan_cost_opts[] = {
	PLAN_COMMON_SPECS,
	[COST_HOURS] = { "hours", 0, OPT_HOURS, "H", "the job's hours: a number (1.5) or a duration (90m, 2h, 1d)", NULL,
			 0, OPT_MILLI(1e6), NULL },
	PLAN_COUNT_SPEC(COST_GPUS, "gpus", "enough instances for N GPUs", 1e6),
	PLAN_COUNT_SPEC(COST_INSTANCES, "instances", "instances (default 1)", 1e6),
	[COST_GPU] = { "gpu", 0, OPT_STRING, "KEY", "rows of this catalog GPU (gpu_model)", NULL, 0, 0, NULL },
	[COST_INSTANCE] = { "instance", 0, OPT_STRING, "TEXT", "rows whose instance holds TEXT (any case)", NULL, 0, 0,
			    NULL },
	COST_NUM_SPEC(COST_SPOT_OVERHEAD, "spot-overhead", "PCT", "hours added to spot jobs", "10", 0, 1000),
	COST_NUM_SPEC(COST_BUY, "buy", "PRICE", "rent against buy: the purchase price", NULL, 0, 1e9),
	COST_NUM_SPEC(COST_POWER_KW, "power-kw", "KW", "--buy: the server's average draw", NULL, 0, 1000),
	COST_NUM_SPEC(COST_PUE, "pue", "X", "--buy: power usage effectiveness", "1.4", 1, 10),
	COST_NUM_SPEC(COST_KWH_PRICE, "kwh-price", "P", "--buy: the price of a kWh", "0.10", 0, 100),
	COST_NUM_SPEC(COST_YEARS, "years", "Y", "--buy: years of use", "4", 0, 100),
	COST_NUM_SPEC(COST_UTILIZATION, "utilization", "PCT", "--buy: busy share of the hours", "80", 0, 100),
	COST_NUM_SPEC(COST_OTHER_PER_YEAR, "other-per-year", "X", "--buy: other costs per year", "0", 0, 1e9),
	COST_NUM_SPEC(COST_RENT, "rent", "RATE", "--buy: the rent per hour", "the one matching price row", 0, 1e6),
	[COST_RENT_PRICING] = { "rent-pricing", 0, OPT_STRING, "on-demand|1-year|3-year|spot|capacity-block", "--buy: the row's price",
				"on-demand", 0, 0, NULL },
};
const size_t plan_cost_nopts = sizeof(plan_cost_opts) / sizeof(plan_cost_opts[0]);

static int cost_take(struct pctx *p, int opt, const struct opt_value *v, void *arg)
{
	struct cost_opts *o = arg;
	char flag[40];
	opt_spelling(&plan_cost_opts[opt], flag, sizeof(flag));
	/* numbers: where each goes, its scale (percentages to fractions) and whether 0 is allowed */
	const struct { double *dst; double scale; bool zero_ok; } nums[] = {
		[COST_HOURS] = { &o->hours, 1, false },
		[COST_SPOT_OVERHEAD] = { &o->spot_overhead, 0.01, true },
		[COST_BUY] = { &o->buy.purchase, 1, false },
		[COST_POWER_KW] = { &o->buy.power_kw, 1, true },
		[COST_PUE] = { &o->buy.pue, 1, false },
		[COST_KWH_PRICE] = { &o->buy.kwh_price, 1, true },
		[COST_YEARS] = { &o->buy.years, 1, false },
		[COST_UTILIZATION] = { &o->buy.utilization, 0.01, false },
		[COST_OTHER_PER_YEAR] = { &o->buy.other_per_year, 1, true },
		[COST_RENT] = { &o->rent, 1, false },
	};
	switch (opt) {
	case COST_GPUS: return pwhole(p, flag, v, &o->gpus, false);
	case COST_INSTANCES: return pwhole(p, flag, v, &o->instances, false);
	case COST_GPU: o->gpu = v->text; return 0;
	case COST_INSTANCE: o->instance = v->text; return 0;
	case COST_RENT_PRICING: o->rent_pricing = v->text; return 0;
	}
	if (opt < 0 || (size_t)opt >= sizeof(nums) / sizeof(nums[0]) || !nums[opt].dst)
		return 0;
	if (pnum(p, flag, v, nums[opt].dst, nums[opt].zero_ok))
		return -1;
	*nums[opt].dst *= nums[opt].scale;
	return 0;
}

static int breakeven(struct pctx *p, struct cost_opts *o, json_t *root)
{
	double rent = o->rent;
	const char *cur = "USD", *what = "--rent";
	enum plan_pricing kind = PRICE_ON_DEMAND;
	if (o->rent_pricing) {
		int k;
		for (k = 0; k < PRICE_COUNT && strcmp(o->rent_pricing, plan_pricing_name((enum plan_pricing)k)); k++)
			;
		if (k == PRICE_COUNT) {
			perr(p, "--rent-pricing must be on-demand, 1-year, 3-year, spot or capacity-block, not '%s'", o->rent_pricing);
			return EXIT_USAGE;
		}
		kind = (enum plan_pricing)k;
	}
	if (!(rent > 0)) {
		const struct plan_price *hit = NULL;
		size_t n = 0;
		for (size_t i = 0; i < p->prices.n; i++)
			if (row_matches(&p->prices.p[i], o->gpu, o->instance) && !isnan(plan_price_rate(&p->prices.p[i], kind))) {
				hit = hit ? hit : &p->prices.p[i];
				n++;
			}
		if (n != 1) {
			perr(p, "break-even needs one rent: --rent RATE, or --instance/--gpu matching one price row with a %s "
				"price (%zu match)", plan_pricing_name(kind), n);
			return EXIT_USAGE;
		}
		rent = plan_price_rate(hit, kind);
		cur = hit->currency;
		what = hit->instance;
	}
	struct plan_breakeven b;
	char err[256];
	if (plan_breakeven(&o->buy, rent, &b, err, sizeof(err))) {
		perr(p, "%s", err);
		return EXIT_USAGE;
	}
	if (root) {
		json_t *j = json_object();
		json_num(j, "purchase", o->buy.purchase);
		json_num(j, "power_kw", o->buy.power_kw);
		json_num(j, "pue", o->buy.pue);
		json_num(j, "kwh_price", o->buy.kwh_price);
		json_num(j, "other_per_year", o->buy.other_per_year);
		json_num(j, "years", o->buy.years);
		json_num(j, "utilization", o->buy.utilization);
		json_object_set_new(j, "rent_from", json_string(what));
		json_num(j, "rent_per_hour", rent);
		json_num(j, "power_per_hour", b.power_per_hour);
		json_num(j, "own_per_busy_hour", b.own_per_hour);
		json_num(j, "breakeven_busy_hours", b.breakeven_hours);
		json_num(j, "breakeven_months", b.breakeven_months);
		json_num(j, "rent_total", b.rent_total);
		json_num(j, "own_total", b.own_total);
		json_object_set_new(j, "currency", json_string(cur));
		json_object_set_new(root, "breakeven", j);
		return EXIT_OK;
	}
	FILE *f = p->ctx->out;
	fprintf(f, "\nrent vs buy: rent %.3f %s/h (%s, %s) vs buying for %.0f %s\n", rent, cur, what,
		o->rent > 0 ? "given" : plan_pricing_name(kind), o->buy.purchase, cur);
	fprintf(f, "  power %.2f kW x PUE %.2f x %.3f %s/kWh = %.3f %s per busy hour; other costs %.0f %s/year\n",
		o->buy.power_kw, o->buy.pue, o->buy.kwh_price, cur, b.power_per_hour, cur, o->buy.other_per_year, cur);
	fprintf(f, "  owning costs %.3f %s per busy hour over %.1f years at %.0f%% utilization\n", b.own_per_hour, cur,
		o->buy.years, 100 * o->buy.utilization);
	if (isinf(b.breakeven_hours))
		fprintf(f, "  break-even: never (renting costs less than running the server)\n");
	else
		fprintf(f, "  break-even after %.0f busy hours = %.1f months at %.0f%% utilization\n", b.breakeven_hours,
			b.breakeven_months, 100 * o->buy.utilization);
	fprintf(f, "  over %.1f years: renting %.0f %s, owning %.0f %s\n", o->buy.years, b.rent_total, cur, b.own_total, cur);
	return EXIT_OK;
}

int plan_cost_cmd(struct pctx *p, int argc, char **argv)
{
	struct cost_opts o = { .spot_overhead = 0.10,
			       .buy = { .pue = 1.4, .kwh_price = 0.10, .years = 4, .utilization = 0.8 } };
	int rc = plan_read_options(p, argc, argv, cost_take, &o);
	if (rc)
		return rc;
	if (!(o.hours > 0) && !(o.buy.purchase > 0)) {
		perr(p, "give --hours H (job cost) and/or --buy PRICE (rent-vs-buy break-even)");
		return EXIT_USAGE;
	}
	if (o.gpus > 0 && o.instances > 0) {
		perr(p, "give --gpus or --instances, not both");
		return EXIT_USAGE;
	}
	if (o.buy.purchase > 0 && !(o.buy.power_kw > 0)) {
		perr(p, "--buy needs --power-kw (the server's average draw)");
		return EXIT_USAGE;
	}
	if ((rc = plan_load_prices(p)))
		return rc;
	if (o.gpu) {
		if ((rc = plan_load_catalog(p)))
			return rc;
		const struct cat_gpu *g = plan_gpu(p, o.gpu);
		if (!g)
			return EXIT_USAGE;
		o.gpu = g->key;
	}
	double gpus = o.gpus > 0 ? o.gpus : -(o.instances > 0 ? o.instances : 1);
	json_t *root = p->json ? json_object() : NULL;
	if (root)
		json_object_set_new(root, "command", json_string("plan cost"));
	if (o.hours > 0) {
		json_t *arr = root ? json_array() : NULL;
		plan_cost_table(p, o.gpu, o.instance, gpus, o.hours, o.spot_overhead, arr);
		if (root)
			json_object_set_new(root, "cost", arr);
	}
	if (o.buy.purchase > 0 && (rc = breakeven(p, &o, root))) {
		json_decref(root);
		return rc;
	}
	if (root) {
		json_dumpf(root, p->ctx->out, JSON_INDENT(1) | JSON_REAL_PRECISION(10));
		fputc('\n', p->ctx->out);
		json_decref(root);
	} else if (p->explain) {
		fprintf(p->ctx->out,
			"\nHow this was computed: cost = hourly rate x instances x hours (spot: x (1 + overhead), the "
			"share of hours redone after interruptions); instances = ceil(GPUs / GPUs per instance). "
			"Break-even busy hours = purchase / (rent - power x PUE x kWh price - other costs per busy hour). "
			"Rates come from every data/prices/*.json (every row with its source and date) and --prices FILE.\n");
	}
	return EXIT_OK;
}
