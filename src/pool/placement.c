/* placement.c - see placement.h. */
#include "placement.h"

#include <stdio.h>
#include <string.h>

/* Above this many candidate sets, search greedily instead of exhaustively. */
#define EXHAUSTIVE_LIMIT 20000u

unsigned topo_pcie_score(enum gpu_link_kind pcie)
{
	switch (pcie) {
	case LINK_PIX: return 50;
	case LINK_PXB: return 40;
	case LINK_PHB: return 30;
	case LINK_NODE: return 20;
	case LINK_SYS: return 10;
	default: return 0;
	}
}

unsigned topo_pair_score(const struct gpu_link *l)
{
	return PLACE_NVLINK_SCORE * l->nvlinks + topo_pcie_score(l->pcie);
}

struct search {
	unsigned n, k;
	const struct gpu_link (*link)[GPU_MAX_GPUS];
	bool need_nvlink;
	unsigned cand[GPU_MAX_GPUS]; /* eligible GPU indexes */
	unsigned ncand;
	/* best so far */
	bool found;
	unsigned best[GPU_MAX_GPUS];
	unsigned best_score;
	unsigned best_left;          /* score of what the set leaves free */
	/* current */
	unsigned cur[GPU_MAX_GPUS];
};

static unsigned set_score(const struct search *s, const unsigned *set, unsigned k, bool *nvlink_ok)
{
	unsigned score = 0;
	bool ok = true;
	for (unsigned a = 0; a < k; a++)
		for (unsigned b = a + 1; b < k; b++) {
			const struct gpu_link *l = &s->link[set[a]][set[b]];
			score += topo_pair_score(l);
			if (l->nvlinks == 0)
				ok = false;
		}
	if (nvlink_ok)
		*nvlink_ok = ok;
	return score;
}

/* Pair scores among the candidates the set leaves free: a set that leaves
 * well-connected GPUs together is better for the next job. */
static unsigned left_score(const struct search *s, const unsigned *set, unsigned k)
{
	unsigned rest[GPU_MAX_GPUS], m = 0;
	for (unsigned i = 0; i < s->ncand; i++) {
		bool taken = false;
		for (unsigned j = 0; j < k; j++)
			if (set[j] == s->cand[i])
				taken = true;
		if (!taken)
			rest[m++] = s->cand[i];
	}
	return set_score(s, rest, m, NULL);
}

static void consider(struct search *s, const unsigned *set)
{
	bool nvlink_ok;
	unsigned score = set_score(s, set, s->k, &nvlink_ok);
	if (s->need_nvlink && s->k > 1 && !nvlink_ok)
		return;
	unsigned left = left_score(s, set, s->k);
	/* candidates are visited in lexicographic order, so ties keep the lowest indexes */
	if (!s->found || score > s->best_score || (score == s->best_score && left > s->best_left)) {
		s->found = true;
		s->best_score = score;
		s->best_left = left;
		memcpy(s->best, set, s->k * sizeof(unsigned));
	}
}

static void enumerate(struct search *s, unsigned depth, unsigned from)
{
	if (depth == s->k) {
		consider(s, s->cur);
		return;
	}
	for (unsigned i = from; i + (s->k - depth) <= s->ncand; i++) {
		s->cur[depth] = s->cand[i];
		enumerate(s, depth + 1, i + 1);
	}
}

/* Greedy for large servers: from each seed, add the GPU that adds most. */
static void greedy(struct search *s)
{
	for (unsigned seed = 0; seed < s->ncand; seed++) {
		unsigned set[GPU_MAX_GPUS], m = 1;
		bool used[GPU_MAX_GPUS] = { false };
		set[0] = s->cand[seed];
		used[seed] = true;
		while (m < s->k) {
			int pick = -1;
			unsigned pick_gain = 0;
			for (unsigned i = 0; i < s->ncand; i++) {
				if (used[i])
					continue;
				unsigned gain = 0;
				bool nv = true;
				for (unsigned j = 0; j < m; j++) {
					const struct gpu_link *l = &s->link[set[j]][s->cand[i]];
					gain += topo_pair_score(l);
					nv = nv && l->nvlinks > 0;
				}
				if (s->need_nvlink && !nv)
					continue;
				if (pick < 0 || gain > pick_gain) {
					pick = (int)i;
					pick_gain = gain;
				}
			}
			if (pick < 0)
				break;
			used[pick] = true;
			set[m++] = s->cand[pick];
		}
		if (m < s->k)
			continue;
		/* keep sets sorted so results are stable */
		for (unsigned a = 1; a < m; a++)
			for (unsigned b = a; b > 0 && set[b - 1] > set[b]; b--) {
				unsigned t = set[b];
				set[b] = set[b - 1];
				set[b - 1] = t;
			}
		consider(s, set);
	}
}

static double combinations(unsigned n, unsigned k)
{
	double c = 1;
	for (unsigned i = 0; i < k; i++)
		c = c * (n - i) / (i + 1);
	return c;
}

static bool search_sets(struct search *s)
{
	if (s->k > s->ncand)
		return false;
	if (combinations(s->ncand, s->k) <= EXHAUSTIVE_LIMIT)
		enumerate(s, 0, 0);
	else
		greedy(s);
	return s->found;
}

static void init_search(struct search *s, unsigned n, const struct gpu_link link[][GPU_MAX_GPUS],
			const struct place_request *req)
{
	memset(s, 0, sizeof(*s));
	s->n = n;
	s->k = req->count;
	s->link = link;
	s->need_nvlink = req->need_nvlink;
}

bool place_feasible(unsigned n, const struct gpu_link link[][GPU_MAX_GPUS], const struct place_request *req,
		    char *reason, size_t reason_len)
{
	if (req->count == 0 || req->count > n) {
		snprintf(reason, reason_len, "asks for %u GPUs; this server has %u", req->count, n);
		return false;
	}
	struct search s;
	init_search(&s, n, link, req);
	for (unsigned i = 0; i < n; i++)
		if (!req->allowed_mask || (req->allowed_mask >> i & 1))
			s.cand[s.ncand++] = i;
	if (!search_sets(&s)) {
		snprintf(reason, reason_len, "this server has no %s%u GPUs%s", req->need_nvlink ? "set of " : "",
			 req->count, req->need_nvlink ? " all connected by NVLink" : " among those allowed");
		return false;
	}
	return true;
}

bool place_choose(unsigned n, const struct gpu_link link[][GPU_MAX_GPUS], const struct place_gpu *gpus,
		  const struct place_request *req, struct place_result *out)
{
	memset(out, 0, sizeof(*out));
	if (n > GPU_MAX_GPUS)
		n = GPU_MAX_GPUS;
	if (!place_feasible(n, link, req, out->reason, sizeof(out->reason)))
		return false;

	struct search s;
	init_search(&s, n, link, req);
	unsigned unhealthy = 0, foreign = 0, lowmem = 0;
	int first_unhealthy = -1, first_foreign = -1;
	for (unsigned i = 0; i < n; i++) {
		const struct place_gpu *g = &gpus[i];
		if (req->allowed_mask && !(req->allowed_mask >> i & 1))
			continue;
		if (g->unhealthy || g->lost) {
			unhealthy++;
			if (first_unhealthy < 0)
				first_unhealthy = (int)i;
		} else if (g->foreign) {
			foreign++;
			if (first_foreign < 0)
				first_foreign = (int)i;
		} else if (g->busy) {
			continue;
		} else if (req->mem_per_gpu && (!g->mem_known || g->mem_free_bytes < req->mem_per_gpu)) {
			lowmem++;
		} else {
			s.cand[s.ncand++] = i;
		}
	}
	if (search_sets(&s)) {
		out->count = s.k;
		memcpy(out->gpu, s.best, s.k * sizeof(unsigned));
		out->score = s.best_score;
		return true;
	}
	/* Say the most useful reason: when free GPUs would suffice but for
	 * unhealthy, foreign or full ones, name the first of those; else the job
	 * simply waits for GPUs to be released. */
	bool blockers_matter = s.ncand + unhealthy + foreign + lowmem >= req->count;
	if (blockers_matter && first_unhealthy >= 0)
		snprintf(out->reason, sizeof(out->reason), "GPU %d unhealthy", first_unhealthy);
	else if (blockers_matter && first_foreign >= 0)
		snprintf(out->reason, sizeof(out->reason), "GPU %d runs a process the pool did not start", first_foreign);
	else if (blockers_matter && lowmem)
		snprintf(out->reason, sizeof(out->reason), "waiting for %u GPUs with %.1f GiB free", req->count,
			 (double)req->mem_per_gpu / (1024.0 * 1024 * 1024));
	else
		snprintf(out->reason, sizeof(out->reason), "waiting for %u%s GPU%s", req->count,
			 req->need_nvlink && req->count > 1 ? " NVLink-connected" : " free",
			 req->count == 1 ? "" : "s");
	return false;
}
