/* SPDX-License-Identifier: Apache-2.0 */
/* suite.c - the plan, and what every suite runner shares (see suite.h). */
#include "suite_int.h"
#include "telemetry.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/units.h"

static const char *const suite_names[BENCH_NSUITES] = {
#define BENCH_SUITE_NAME(id, name) [BENCH_INDEX_##id] = #name,
	BENCH_SUITE_TABLE(BENCH_SUITE_NAME)
#undef BENCH_SUITE_NAME
};

const char *bench_suite_name(unsigned bit)
{
	for (unsigned i = 0; i < BENCH_NSUITES; i++)
		if (bit == 1u << i)
			return suite_names[i];
	return "?";
}

size_t bench_run_keep(struct bench_run *run, unsigned suites, bool by_gpu, uint64_t gpus)
{
	size_t k = 0;
	for (size_t i = 0; i < run->n; i++) {
		const struct bench_result *r = &run->r[i];
		unsigned bit = 0;
		for (unsigned j = 0; j < BENCH_NSUITES && !bit; j++)
			if (strcmp(r->suite, suite_names[j]) == 0)
				bit = 1u << j;
		bool keep = bit ? (suites & bit) != 0 : (suites & BENCH_ALL_SUITES) == BENCH_ALL_SUITES;
		if (keep && by_gpu)
			keep = (r->gpu >= 0 && r->gpu < 64 && (gpus >> r->gpu & 1u)) ||
			       (r->peer >= 0 && r->peer < 64 && (gpus >> r->peer & 1u));
		if (keep)
			run->r[k++] = *r;
	}
	run->n = k;
	return k;
}

int bench_suites_parse(const char *spec, unsigned *mask, char *err, size_t errlen)
{
	*mask = 0;
	if (!spec || !*spec) {
		snprintf(err, errlen, "no suite named");
		return -1;
	}
	const char *p = spec;
	for (;;) {
		size_t len = strcspn(p, ",");
		unsigned bit = 0;
		if (len == 3 && strncmp(p, "all", 3) == 0)
			bit = BENCH_ALL_SUITES;
		for (unsigned i = 0; i < BENCH_NSUITES && !bit; i++)
			if (strlen(suite_names[i]) == len && strncmp(p, suite_names[i], len) == 0)
				bit = 1u << i;
		if (!bit) {
			int at = snprintf(err, errlen, "unknown suite '%.*s' (", (int)len, p);
			for (unsigned i = 0; i < BENCH_NSUITES && at >= 0 && (size_t)at < errlen; i++)
				at += snprintf(err + at, errlen - (size_t)at, "%s, ", suite_names[i]);
			if (at >= 0 && (size_t)at < errlen)
				snprintf(err + at, errlen - (size_t)at, "all)");
			return -1;
		}
		*mask |= bit;
		if (!p[len])
			break;
		p += len + 1;
	}
	return 0;
}

void bench_plan_default(struct bench_plan *p)
{
	memset(p, 0, sizeof(*p));
	p->suites = BENCH_DEFAULT_SUITES;
	for (int i = 0; i < GK_MAX_DEVS; i++)
		for (int j = 0; j < GK_MAX_DEVS; j++)
			p->nvlinks[i][j] = -1;
	p->cpu_threads = 1;
}

int bench_sizes_parse(struct bench_plan *p, const char *spec, char *err, size_t errlen)
{
	char one[64];
	p->nsizes = 0;
	for (const char *s = spec; *s;) {
		size_t len = strcspn(s, ",");
		uint64_t v;
		char q[41];
		if (len >= sizeof(one)) {
			snprintf(err, errlen, "bad size '%s' (too long)", units_quoted(s, q));
			return -1;
		}
		snprintf(one, sizeof(one), "%.*s", (int)len, s);
		if (units_parse_size(one, 1, BENCH_MAX_SIZE, &v, err, errlen))
			return -1;
		if (p->nsizes >= BENCH_MAX_SIZES) {
			snprintf(err, errlen, "more than %d sizes", BENCH_MAX_SIZES);
			return -1;
		}
		p->sizes[p->nsizes++] = v;
		s += len + (s[len] == ',');
	}
	if (!p->nsizes) {
		snprintf(err, errlen, "no size given");
		return -1;
	}
	return 0;
}

struct gk_common bench_common(struct bench_ctx *c, int slot)
{
	const struct bench_plan *p = c->plan;
	struct gk_common g = { 0 };
	g.device = slot >= 0 ? p->cuda[slot] : 0;
	g.warmup = p->warmup;
	g.iters = p->iters > 0 ? p->iters : p->full ? 20 : GK_MIN_SAMPLES;
	double to = p->test_timeout_s > 0 ? p->test_timeout_s : 120.0;
	g.deadline_ns = c->hooks->now_ns(c->hooks->arg) + (uint64_t)(to * 1e9);
	g.seed = p->seed;
	return g;
}

struct bench_result *bench_new(struct bench_ctx *c, const char *suite, const char *test, const char *variant, int slot)
{
	struct bench_result *r = bench_run_add(c->run, suite, test, variant);
	if (!r) {
		c->oom = true;
		return NULL;
	}
	r->gpu = slot >= 0 ? c->plan->gpu[slot] : -1;
	return r;
}

struct bench_result *bench_start(struct bench_ctx *c, const char *suite, const char *test, const char *variant, int slot)
{
	struct bench_result *r = bench_new(c, suite, test, variant, slot);
	if (r && c->hung[slot]) {
		bench_result_fail(r, BS_SKIPPED, "GPU %d timed out in an earlier test", r->gpu);
		if (c->hooks->done)
			c->hooks->done(c->hooks->arg, r);
		return NULL;
	}
	if (r)
		bench_tel_begin(c, &slot, 1);
	return r;
}

void bench_tel_begin(struct bench_ctx *c, const int *slots, unsigned n)
{
	int gpus[GK_MAX_DEVS];
	if (!c->hooks->tel_begin)
		return;
	for (unsigned i = 0; i < n && i < GK_MAX_DEVS; i++)
		gpus[i] = c->plan->gpu[slots[i]];
	c->hooks->tel_begin(c->hooks->arg, gpus, n);
}

int bench_finish(struct bench_ctx *c, struct bench_result *r, int rc, const struct gk_result *g,
		 enum bench_metric metric, double scale, const int *slots, unsigned nslots)
{
	if (c->hooks->tel_end)
		c->hooks->tel_end(c->hooks->arg, r);
	for (int i = 0; g && i < g->naux && i < GK_MAX_AUX; i++)
		bench_result_add_aux(r, g->aux[i].name, g->aux[i].value, g->aux[i].unit);
	if (g) {
		r->verified = g->verify.verified;
		r->max_err = g->verify.checked ? g->verify.max_err : NAN;
	}
	if (rc == GK_OK && g && !g->verify.verified) {
		/* a time only counts once its result was checked */
		rc = GK_EVERIFY;
	}
	if (rc == GK_OK) {
		bench_result_set_samples(r, metric, g->samples_ms, (unsigned)(g->nsamples > 0 ? g->nsamples : 0),
					 g->bytes, g->flops, scale);
		r->gflops_per_watt = bench_gflops_per_watt(r);
	} else if (rc == GK_EUNSUPPORTED) {
		bench_result_fail(r, BS_SKIPPED, "%s", g && g->err[0] ? g->err : "not supported here");
	} else if (rc == GK_EVERIFY) {
		char of[48] = "";
		if (g && g->verify.checked)
			snprintf(of, sizeof(of), " of %llu", (unsigned long long)g->verify.checked);
		bench_result_fail(r, BS_FAILED, "verification failed: %llu%s values off, %llu NaN%s%s",
				  g ? (unsigned long long)g->verify.mismatches : 0ULL, of,
				  g ? (unsigned long long)g->verify.nans : 0ULL, g && g->err[0] ? ": " : "", g ? g->err : "");
	} else {
		bench_result_fail(r, BS_FAILED, "%s: %s", kmod_rc_name(rc), g && g->err[0] ? g->err : "no detail");
		if (rc == GK_ETIMEOUT || rc == KGUARD_EHUNG)
			for (unsigned i = 0; i < nslots; i++)
				c->hung[slots[i]] = true;
	}
	if (c->hooks->done)
		c->hooks->done(c->hooks->arg, r);
	return rc;
}

double bench_latency_scale(int rc, const struct gk_result *g)
{
	double lat = NAN, loads = NAN;
	for (int i = 0; i < g->naux && i < GK_MAX_AUX; i++) {
		if (strcmp(g->aux[i].name, "latency_ns") == 0)
			lat = g->aux[i].value;
		if (strcmp(g->aux[i].name, "loads") == 0)
			loads = g->aux[i].value;
	}
	if (rc == GK_OK && loads > 0) /* ns per ms of sample = 1e6 / loads per sample */
		return 1e6 / loads;
	struct stats st;
	if (rc != GK_OK || stats_compute(g->samples_ms, (size_t)(g->nsamples > 0 ? g->nsamples : 0), &st) != 0 ||
	    !(st.median > 0))
		return NAN;
	return lat / st.median;
}

unsigned bench_sizes(const struct bench_ctx *c, const uint64_t *dflt, unsigned ndflt, uint64_t *out)
{
	const struct bench_plan *p = c->plan;
	const uint64_t *src = p->nsizes ? p->sizes : dflt;
	unsigned n = p->nsizes ? p->nsizes : ndflt;
	for (unsigned i = 0; i < n; i++)
		out[i] = src[i];
	return n;
}

int bench_run_plan(const struct gk_api *api, const struct bench_plan *plan, const struct bench_hooks *hooks,
		   struct bench_run *run, char *err, size_t errlen)
{
	if (!api || !plan || !hooks || !hooks->now_ns || !run) {
		snprintf(err, errlen, "internal error: incomplete benchmark plan");
		return -1;
	}
	if (plan->ngpus == 0 || plan->ngpus > GK_MAX_DEVS) {
		snprintf(err, errlen, "no GPU selected");
		return -1;
	}
	struct bench_ctx c = { .api = api, .plan = plan, .hooks = hooks, .run = run };
	static void (*const runners[BENCH_NSUITES])(struct bench_ctx *) = {
#define BENCH_SUITE_RUNNER(id, name) [BENCH_INDEX_##id] = bench_suite_##name,
		BENCH_SUITE_TABLE(BENCH_SUITE_RUNNER)
#undef BENCH_SUITE_RUNNER
	};
	/* host first: it measures the CPU side while the GPUs are idle */
	if (plan->suites & BENCH_HOST)
		bench_suite_host(&c);
	for (unsigned i = 0; i < BENCH_NSUITES && !c.oom; i++)
		if ((plan->suites & (1u << i)) && (1u << i) != BENCH_HOST)
			runners[i](&c);
	if (c.oom) {
		snprintf(err, errlen, "out of memory for results");
		return -1;
	}
	return 0;
}
