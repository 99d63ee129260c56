/* SPDX-License-Identifier: Apache-2.0 */
/*
 * suite_multi.c - the suites over several GPUs: p2p (every ordered pair:
 * copy-engine and SM copies, the same transfer staged through host memory,
 * latency) and nccl (collectives over all selected GPUs, nccl-tests' algbw
 * and busbw).
 */
#include "suite_int.h"

#include <math.h>
#include <string.h>

#define MiB (1ull << 20)
#define GiB (1ull << 30)

static void skip_all(struct bench_ctx *c, const char *suite, const char *why)
{
	struct bench_result *r = bench_new(c, suite, "all", "", -1);
	if (!r)
		return;
	bench_result_fail(r, BS_SKIPPED, "%s", why);
	if (c->hooks->done)
		c->hooks->done(c->hooks->arg, r);
}

static void p2p_one(struct bench_ctx *c, int src, int dst, const char *test, int mode, bool bidir, uint64_t bytes)
{
	struct bench_result *r = bench_new(c, "p2p", test, bidir ? "bidir" : "uni", src);
	if (!r)
		return;
	r->peer = c->plan->gpu[dst];
	r->ngpus = 2;
	r->size_bytes = mode == GK_P2P_LATENCY ? 0 : bytes;
	if (c->plan->nvlinks[src][dst] >= 0)
		bench_result_add_aux(r, "nvlinks", c->plan->nvlinks[src][dst], "links");
	int slots[2] = { src, dst };
	if (c->hung[src] || c->hung[dst]) {
		bench_result_fail(r, BS_SKIPPED, "a GPU of this pair timed out in an earlier test");
		if (c->hooks->done)
			c->hooks->done(c->hooks->arg, r);
		return;
	}
	bench_tel_begin(c, slots, 2);
	struct gk_p2p_args a = { .c = bench_common(c, src), .peer = c->plan->cuda[dst], .mode = mode,
				 .bidirectional = bidir, .bytes = (size_t)bytes };
	struct gk_result g;
	memset(&g, 0, sizeof(g));
	int rc = c->api->p2p(&a, &g);
	bool lat = mode == GK_P2P_LATENCY;
	bench_finish(c, r, rc, &g, lat ? BM_LATENCY_NS : BM_BANDWIDTH, lat ? bench_latency_scale(rc, &g) : NAN, slots, 2);
}

void bench_suite_p2p(struct bench_ctx *c)
{
	static const uint64_t quick[] = { 1 * GiB };
	static const uint64_t full[] = { 1 * MiB, 16 * MiB, 256 * MiB, 1 * GiB };
	uint64_t sizes[BENCH_MAX_SIZES];
	unsigned n = c->plan->full ? bench_sizes(c, full, 4, sizes) : bench_sizes(c, quick, 1, sizes);
	unsigned ng = c->plan->ngpus;
	if (ng < 2) {
		skip_all(c, "p2p", "needs two GPUs (one selected)");
		return;
	}
	for (unsigned i = 0; i < ng; i++) {
		for (unsigned j = 0; j < ng; j++) {
			if (i == j)
				continue;
			for (unsigned s = 0; s < n; s++)
				p2p_one(c, (int)i, (int)j, "ce", GK_P2P_CE, false, sizes[s]);
			p2p_one(c, (int)i, (int)j, "sm", GK_P2P_SM, false, sizes[n - 1]);
			p2p_one(c, (int)i, (int)j, "host", GK_P2P_HOST_STAGED, false, sizes[n - 1]);
			if (i < j)
				p2p_one(c, (int)i, (int)j, "ce", GK_P2P_CE, true, sizes[n - 1]);
			p2p_one(c, (int)i, (int)j, "latency", GK_P2P_LATENCY, false, 0);
		}
	}
}

void bench_suite_nccl(struct bench_ctx *c)
{
	static const uint64_t quick[] = { 1 * MiB, 64 * MiB, 1 * GiB };
	static const uint64_t full[] = { 1 * MiB, 4 * MiB, 16 * MiB, 64 * MiB, 256 * MiB, 1 * GiB, 4 * GiB };
	static const int ops[] = { GK_ALL_REDUCE, GK_ALL_GATHER, GK_REDUCE_SCATTER, GK_BROADCAST, GK_ALL_TO_ALL };
	uint64_t sizes[BENCH_MAX_SIZES];
	unsigned n = c->plan->full ? bench_sizes(c, full, 7, sizes) : bench_sizes(c, quick, 3, sizes);
	unsigned ng = c->plan->ngpus;
	if (ng < 2) {
		skip_all(c, "nccl", "needs two GPUs (one selected)");
		return;
	}
	int slots[GK_MAX_DEVS];
	for (unsigned i = 0; i < ng; i++)
		slots[i] = (int)i;
	for (unsigned o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
		for (unsigned s = 0; s < n; s++) {
			struct bench_result *r = bench_new(c, "nccl", kmod_coll_name(ops[o]), "", -1);
			if (!r)
				return;
			r->ngpus = (int)ng;
			r->size_bytes = sizes[s];
			bool hung = false;
			for (unsigned i = 0; i < ng; i++)
				hung |= c->hung[i];
			if (hung) {
				bench_result_fail(r, BS_SKIPPED, "a GPU timed out in an earlier test");
				if (c->hooks->done)
					c->hooks->done(c->hooks->arg, r);
				continue;
			}
			bench_tel_begin(c, slots, ng);
			struct gk_nccl_args a = { .c = bench_common(c, -1), .op = ops[o], .ndevs = (int)ng,
						  .bytes = (size_t)sizes[s] };
			for (unsigned i = 0; i < ng; i++)
				a.devs[i] = c->plan->cuda[i];
			struct gk_result g;
			memset(&g, 0, sizeof(g));
			int rc = c->api->nccl(&a, &g);
			bench_finish(c, r, rc, &g, BM_BUSBW, kmod_busbw_factor(ops[o], (int)ng), slots, ng);
		}
	}
}
