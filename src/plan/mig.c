/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mig.c - MIG layout search: which GPU instances, at which slice positions, serve
 * a list of requests on one GPU model, or why none can.
 *
 * Placement rule (NVIDIA MIG user guide, "A100 MIG profiles" placement diagram, and
 * `nvidia-smi mig -lgipp`): a GPU has C compute slices (7 on A100/H100/H200/B200,
 * 4 on A30) and M memory slices (8, 4). A profile of g compute and m memory slices
 * starts at a memory-slice index that is a multiple of m, with start + m <= M and
 * start + g <= C; it occupies memory slices [start, start+m) and compute slices
 * [start, start+g). This gives A100's {0..6}:1 for 1g.10gb, {0,2,4,6}:2 for
 * 1g.20gb, {0,2,4}:2 for 2g, {0,4}:4 for 3g, {0}:4 for 4g and {0}:8 for 7g; the
 * placement counts equal each profile's published maximum (checked in the tests).
 * Instances may not overlap in memory or compute slices.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "plan.h"

static void gpu_slices(const struct cat_gpu *g, unsigned *c, unsigned *m)
{
	*c = *m = 0;
	for (unsigned i = 0; i < g->mig_n; i++) {
		if (g->mig[i].slices > *c)
			*c = g->mig[i].slices;
		if (g->mig[i].mem_slices > *m)
			*m = g->mig[i].mem_slices;
	}
}

unsigned plan_mig_placements(const struct cat_gpu *g, unsigned i, unsigned *starts, unsigned max)
{
	unsigned c, m, n = 0;
	gpu_slices(g, &c, &m);
	const struct cat_mig_profile *p = &g->mig[i];
	if (p->mem_slices == 0 || p->slices == 0)
		return 0;
	for (unsigned s = 0; s + p->mem_slices <= m && s + p->slices <= c; s += p->mem_slices)
		if (n < max)
			starts[n++] = s;
	return n;
}

static int find_profile(const struct cat_gpu *g, const char *name)
{
	for (unsigned i = 0; i < g->mig_n; i++)
		if (strcasecmp(g->mig[i].name, name) == 0)
			return (int)i;
	/* "3g": the profile with 3 compute slices and the least memory */
	char *end;
	unsigned long sl = strtoul(name, &end, 10);
	if (end != name && (*end == 'g' || *end == 'G') && end[1] == '\0') {
		int best = -1;
		for (unsigned i = 0; i < g->mig_n; i++)
			if (g->mig[i].slices == sl && (best < 0 || g->mig[i].mem_slices < g->mig[best].mem_slices))
				best = (int)i;
		return best;
	}
	return -1;
}

int plan_mig_parse(const struct cat_gpu *g, const char *spec, struct plan_mig_req *reqs, unsigned *nreq,
		   char *err, size_t errlen)
{
	*nreq = 0;
	if (g->mig_n == 0) {
		snprintf(err, errlen, "'%s' does not support MIG", g->key);
		return -1;
	}
	char buf[512];
	if (!spec || !*spec || strlen(spec) >= sizeof(buf)) {
		snprintf(err, errlen, "MIG request must be a list like 3x1g.18gb,1x3g.71gb");
		return -1;
	}
	snprintf(buf, sizeof(buf), "%s", spec);
	char *save = NULL;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		unsigned long count = 1;
		char *x = strchr(tok, 'x');
		char *name = tok;
		if (x && x != tok) {
			char *end;
			count = strtoul(tok, &end, 10);
			if (end != x || count == 0 || count > 64) {
				char q[64];
				plan_quote(q, sizeof(q), tok);
				snprintf(err, errlen, "bad MIG request '%s': count must be 1 to 64", q);
				return -1;
			}
			name = x + 1;
		}
		int i = find_profile(g, name);
		if (i < 0) {
			char q[64];
			plan_quote(q, sizeof(q), name);
			int n = snprintf(err, errlen, "unknown MIG profile '%s' for '%s' (profiles:", q, g->key);
			for (unsigned k = 0; k < g->mig_n && n > 0 && (size_t)n < errlen; k++)
				n += snprintf(err + n, errlen - (size_t)n, " %s", g->mig[k].name);
			if (n > 0 && (size_t)n < errlen)
				snprintf(err + n, errlen - (size_t)n, ")");
			return -1;
		}
		unsigned k;
		for (k = 0; k < *nreq; k++)
			if (strcmp(reqs[k].profile, g->mig[i].name) == 0)
				break;
		if (k == *nreq) {
			if (*nreq >= PLAN_MIG_MAX) {
				snprintf(err, errlen, "too many MIG requests (at most %d)", PLAN_MIG_MAX);
				return -1;
			}
			snprintf(reqs[k].profile, sizeof(reqs[k].profile), "%s", g->mig[i].name);
			reqs[k].count = 0;
			(*nreq)++;
		}
		reqs[k].count += (unsigned)count;
		if (reqs[k].count > 64) {
			snprintf(err, errlen, "bad MIG request: more than 64 instances of '%s'", reqs[k].profile);
			return -1;
		}
	}
	if (*nreq == 0) {
		snprintf(err, errlen, "MIG request must be a list like 3x1g.18gb,1x3g.71gb");
		return -1;
	}
	return 0;
}

struct search {
	const struct cat_gpu *g;
	unsigned n, prof[PLAN_MIG_MAX];
	unsigned start[PLAN_MIG_MAX];
	unsigned mem_used, cmp_used; /* bit masks */
};

static unsigned mask(unsigned start, unsigned len) { return ((1u << len) - 1) << start; }

static bool place(struct search *s, unsigned k)
{
	if (k == s->n)
		return true;
	const struct cat_mig_profile *p = &s->g->mig[s->prof[k]];
	unsigned starts[16], ns = plan_mig_placements(s->g, s->prof[k], starts, 16);
	for (unsigned j = 0; j < ns; j++) {
		/* same profile as the previous instance: keep positions increasing (no repeats) */
		if (k > 0 && s->prof[k - 1] == s->prof[k] && starts[j] <= s->start[k - 1])
			continue;
		unsigned mm = mask(starts[j], p->mem_slices), cm = mask(starts[j], p->slices);
		if ((s->mem_used & mm) || (s->cmp_used & cm))
			continue;
		s->mem_used |= mm;
		s->cmp_used |= cm;
		s->start[k] = starts[j];
		if (place(s, k + 1))
			return true;
		s->mem_used &= ~mm;
		s->cmp_used &= ~cm;
	}
	return false;
}

int plan_mig_layout(const struct cat_gpu *g, const struct plan_mig_req *reqs, unsigned nreq,
		    struct plan_mig_layout *out, char *why, size_t whylen)
{
	memset(out, 0, sizeof(*out));
	unsigned c, m, need_c = 0, need_m = 0, total = 0;
	gpu_slices(g, &c, &m);
	struct search s = { .g = g };
	for (unsigned r = 0; r < nreq; r++) {
		int i = find_profile(g, reqs[r].profile);
		if (i < 0) {
			snprintf(why, whylen, "unknown MIG profile '%s' for '%s'", reqs[r].profile, g->key);
			return -1;
		}
		const struct cat_mig_profile *p = &g->mig[i];
		if (reqs[r].count > p->max_instances) {
			snprintf(why, whylen, "%u x %s asked, at most %u fit on one %s", reqs[r].count, p->name,
				 p->max_instances, g->key);
			return -1;
		}
		need_c += reqs[r].count * p->slices;
		need_m += reqs[r].count * p->mem_slices;
		total += reqs[r].count;
	}
	if (need_c > c) {
		snprintf(why, whylen, "%u compute slices asked, %s has %u", need_c, g->key, c);
		return -1;
	}
	if (need_m > m) {
		snprintf(why, whylen, "%u memory slices asked, %s has %u", need_m, g->key, m);
		return -1;
	}
	if (total > PLAN_MIG_MAX) {
		snprintf(why, whylen, "%u instances asked, at most %d", total, PLAN_MIG_MAX);
		return -1;
	}
	/* largest first: the big profiles have the fewest positions */
	for (unsigned r = 0; r < nreq; r++)
		for (unsigned k = 0; k < reqs[r].count; k++)
			s.prof[s.n++] = (unsigned)find_profile(g, reqs[r].profile);
	for (unsigned a = 1; a < s.n; a++)
		for (unsigned b = a; b > 0; b--) {
			const struct cat_mig_profile *x = &g->mig[s.prof[b - 1]], *y = &g->mig[s.prof[b]];
			bool swap = y->mem_slices > x->mem_slices ||
				    (y->mem_slices == x->mem_slices && y->slices > x->slices) ||
				    (y->mem_slices == x->mem_slices && y->slices == x->slices && s.prof[b] < s.prof[b - 1]);
			if (!swap)
				break;
			unsigned t = s.prof[b];
			s.prof[b] = s.prof[b - 1];
			s.prof[b - 1] = t;
		}
	if (!place(&s, 0)) {
		snprintf(why, whylen,
			 "the slices add up (%u/%u compute, %u/%u memory) but no placement fits: "
			 "profiles may only start at fixed slice positions",
			 need_c, c, need_m, m);
		return -1;
	}
	out->n = s.n;
	for (unsigned k = 0; k < s.n; k++) {
		const struct cat_mig_profile *p = &g->mig[s.prof[k]];
		snprintf(out->s[k].profile, sizeof(out->s[k].profile), "%s", p->name);
		out->s[k].mem_start = s.start[k];
		out->s[k].mem_size = p->mem_slices;
		out->s[k].cmp_start = s.start[k];
		out->s[k].cmp_size = p->slices;
	}
	return 0;
}

int plan_mig_cgi(const struct plan_mig_layout *l, char *out, size_t outlen)
{
	size_t at = 0;
	if (!outlen)
		return -1;
	out[0] = '\0';
	for (unsigned k = 0; k < l->n; k++) {
		int w = snprintf(out + at, outlen - at, "%s%s:%u", k ? "," : "", l->s[k].profile, l->s[k].mem_start);
		if (w < 0 || (size_t)w >= outlen - at)
			return -1;
		at += (size_t)w;
	}
	return (int)at;
}
