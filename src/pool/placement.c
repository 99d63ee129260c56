/* SPDX-License-Identifier: Apache-2.0 */
/* placement.c - see placement.h. */
#include "placement.h"

#include <stdio.h>
#include <string.h>

#define GIB (1024.0 * 1024.0 * 1024.0)

/* Above this many candidate sets, search greedily instead of exhaustively. */
#define EXHAUSTIVE_LIMIT 20000u

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

/* Why GPU g cannot be given to req now (true, with the words in out when
 * there is room), or false when it can. */
static bool gpu_cause(const struct place_gpu *g, const struct place_request *req, char *out, size_t len)
{
	char tmp[8];
	if (!out) {
		out = tmp;
		len = sizeof(tmp);
	}
	if (g->lost)
		snprintf(out, len, "not answering");
	else if (g->unhealthy)
		snprintf(out, len, "unhealthy");
	else if (g->mig_mode)
		snprintf(out, len, "in MIG mode");
	else if (g->foreign && g->foreign_pid)
		snprintf(out, len, "runs process %u, which the pool did not start", g->foreign_pid);
	else if (g->foreign)
		snprintf(out, len, "runs a process the pool did not start");
	else if (g->busy && g->held_by_slurm)
		snprintf(out, len, "held by Slurm job %llu", (unsigned long long)g->held_by_slurm);
	else if (g->busy && g->held_by_job)
		snprintf(out, len, "held by pool job %llu", (unsigned long long)g->held_by_job);
	else if (g->busy)
		snprintf(out, len, "held by a pool job");
	else if (req->mem_per_gpu && !g->mem_known)
		snprintf(out, len, "does not report its free memory");
	else if (req->mem_per_gpu && g->mem_free_bytes < req->mem_per_gpu)
		snprintf(out, len, "has %.1f GiB free", (double)g->mem_free_bytes / GIB);
	else
		return false;
	return true;
}

/* "waiting for 2 free GPUs: GPUs 0-3 held by pool job 12; GPU 5 unhealthy":
 * every allowed GPU that is not free, runs of GPUs with the same cause
 * together; the lead only when a GPU waits to be freed (busy, short of
 * memory) or the free ones lack NVLink (ncand of them are free). */
static void place_reason(unsigned n, const struct place_gpu *gpus, const struct place_request *req, unsigned ncand,
			 char *out, size_t len)
{
	char list[1024] = "", cause[120], next[120];
	size_t l = 0;
	bool transient = false;
	for (unsigned i = 0; i < n; i++) {
		bool allowed = !req->allowed_mask || (req->allowed_mask >> i & 1);
		if (!allowed || !gpu_cause(&gpus[i], req, cause, sizeof(cause)))
			continue;
		transient |= !gpus[i].lost && !gpus[i].unhealthy && !gpus[i].mig_mode && !gpus[i].foreign;
		unsigned last = i;
		while (last + 1 < n && (!req->allowed_mask || (req->allowed_mask >> (last + 1) & 1)) &&
		       gpu_cause(&gpus[last + 1], req, next, sizeof(next)) && strcmp(next, cause) == 0)
			last++;
		if (l < sizeof(list)) {
			if (last == i)
				l += (size_t)snprintf(list + l, sizeof(list) - l, "%sGPU %u %s", l ? "; " : "", i, cause);
			else
				l += (size_t)snprintf(list + l, sizeof(list) - l, "%sGPUs %u-%u %s", l ? "; " : "", i, last,
						      cause);
		}
		i = last;
	}
	char lead[96];
	bool nvlink = req->need_nvlink && req->count > 1;
	if (nvlink && ncand >= req->count)
		snprintf(lead, sizeof(lead), "waiting for %u NVLink-connected GPUs", req->count);
	else if (req->mem_per_gpu)
		snprintf(lead, sizeof(lead), "waiting for %u GPU%s with %.1f GiB free", req->count, req->count == 1 ? "" : "s",
			 (double)req->mem_per_gpu / GIB);
	else
		snprintf(lead, sizeof(lead), "waiting for %u%s GPU%s", req->count, nvlink ? " NVLink-connected" : " free",
			 req->count == 1 ? "" : "s");
	bool lead_too = !list[0] || transient || (nvlink && ncand >= req->count);
	const char *parts[3] = { lead_too ? lead : "", lead_too && list[0] ? ": " : "", list };
	size_t o = 0;
	bool cut = false;
	for (unsigned k = 0; k < 3 && len; k++) {
		size_t m = strlen(parts[k]);
		if (o + m + 1 > len) {
			m = len - 1 - o;
			cut = true;
		}
		memcpy(out + o, parts[k], m);
		o += m;
	}
	if (len)
		out[o] = '\0';
	if (cut && len > 4) /* say so */
		memcpy(out + len - 4, "...", 4);
}

bool place_possible(unsigned n, const struct gpu_link link[][GPU_MAX_GPUS], const struct place_gpu *gpus,
		    const struct place_request *req, char *reason, size_t reason_len)
{
	if (n > GPU_MAX_GPUS)
		n = GPU_MAX_GPUS;
	if (!place_feasible(n, link, req, reason, reason_len))
		return false;
	unsigned allowed = 0, mig = 0;
	uint64_t usable = 0, largest = 0;
	for (unsigned i = 0; i < n; i++) {
		if (req->allowed_mask && !(req->allowed_mask >> i & 1))
			continue;
		allowed++;
		if (gpus[i].mig_mode) {
			mig++;
			continue;
		}
		if (gpus[i].mem_total_bytes > largest)
			largest = gpus[i].mem_total_bytes;
		if (!req->mem_per_gpu || !gpus[i].mem_total_bytes || gpus[i].mem_total_bytes >= req->mem_per_gpu)
			usable |= 1ull << i;
	}
	unsigned nusable = (unsigned)__builtin_popcountll(usable);
	if (nusable >= req->count) {
		struct place_request r = *req;
		r.allowed_mask = usable;
		return place_feasible(n, link, &r, reason, reason_len);
	}
	if (allowed - mig < req->count)
		snprintf(reason, reason_len,
			 "asks for %u whole GPU%s but %u of the %u GPUs it may use %s in MIG mode (the pool gives those "
			 "out by slices only, --mig PROFILE, and never changes the MIG layout)",
			 req->count, req->count == 1 ? "" : "s", mig, allowed, mig == 1 ? "is" : "are");
	else
		snprintf(reason, reason_len,
			 "asks for %.1f GiB free on each of %u GPU%s but only %u GPU%s here %s that much memory in all "
			 "(the largest: %.1f GiB)",
			 (double)req->mem_per_gpu / GIB, req->count, req->count == 1 ? "" : "s", nusable,
			 nusable == 1 ? "" : "s", nusable == 1 ? "has" : "have", (double)largest / GIB);
	return false;
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
	for (unsigned i = 0; i < n; i++)
		if ((!req->allowed_mask || (req->allowed_mask >> i & 1)) && !gpu_cause(&gpus[i], req, NULL, 0))
			s.cand[s.ncand++] = i;
	if (search_sets(&s)) {
		out->count = s.k;
		memcpy(out->gpu, s.best, s.k * sizeof(unsigned));
		out->score = s.best_score;
		return true;
	}
	place_reason(n, gpus, req, s.ncand, out->reason, sizeof(out->reason));
	return false;
}
