/* SPDX-License-Identifier: Apache-2.0 */
/* test_pool_placement.c - the pool's placement on the shipped simulated
 * servers' real topologies (read through the sim backend, as the agent
 * does): NVLink sets on 8x H200 and 8x A100, PCIe switch pairs and NUMA on
 * 4x L40S, health and foreign-process gating, and fragmentation after many
 * jobs come and go (sched_pass, as the scheduler thread runs it). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool/sched.h"
#include "device/snapshot.h"
#include "test_snap_util.h"

#define LINKS(s) ((const struct gpu_link(*)[GPU_MAX_GPUS])(s)->link)

static void test_h200_nvlink_and_gating(void **state)
{
	(void)state;
	struct snapshot *s = sim_snapshot("h200x8");
	assert_int_equal(s->n, 8);
	struct place_gpu g[GPU_MAX_GPUS] = { 0 };
	g[2].unhealthy = true;
	g[5].foreign = true;
	struct place_request r = { .count = 4, .need_nvlink = true };
	struct place_result out;
	assert_true(place_choose(8, LINKS(s), g, &r, &out));
	assert_int_equal(out.count, 4);
	for (unsigned i = 0; i < 4; i++) {
		assert_int_not_equal(out.gpu[i], 2);
		assert_int_not_equal(out.gpu[i], 5);
		for (unsigned k = i + 1; k < 4; k++)
			assert_int_equal(s->link[out.gpu[i]][out.gpu[k]].nvlinks, 18);
	}
	/* seven GPUs cannot be had while two are gated; the reason names both */
	r.count = 7;
	assert_false(place_choose(8, LINKS(s), g, &r, &out));
	assert_string_equal(out.reason, "GPU 2 unhealthy; GPU 5 runs a process the pool did not start");
	r.count = 9;
	assert_false(place_choose(8, LINKS(s), g, &r, &out));
	assert_non_null(strstr(out.reason, "this server has 8"));
	free(s);
}

static int pxb_partner(const struct snapshot *s, unsigned i)
{
	for (unsigned j = 0; j < s->n; j++)
		if (j != i && s->link[i][j].pcie == LINK_PXB)
			return (int)j;
	return -1;
}

static void test_a100_pairs(void **state)
{
	(void)state;
	struct snapshot *s = sim_snapshot("a100x8");
	struct place_gpu g[GPU_MAX_GPUS] = { 0 };
	struct place_request r = { .count = 2, .need_nvlink = true };
	struct place_result out;
	assert_true(place_choose(8, LINKS(s), g, &r, &out));
	/* every pair is NV12; the PCIe switch decides: the pair shares one */
	assert_int_equal(s->link[out.gpu[0]][out.gpu[1]].pcie, LINK_PXB);
	free(s);
}

static void test_l40s_pcie_numa(void **state)
{
	(void)state;
	struct snapshot *s = sim_snapshot("l40sx4");
	struct place_gpu g[GPU_MAX_GPUS] = { 0 };
	struct place_result out;
	struct place_request two = { .count = 2 }, one = { .count = 1 }, nv = { .count = 2, .need_nvlink = true };
	assert_true(place_choose(4, LINKS(s), g, &two, &out));
	assert_int_equal(out.gpu[0], 0); /* the PIX pair behind one switch */
	assert_int_equal(out.gpu[1], 1);
	/* one GPU: from the NODE pair, keeping the PIX pair whole for later */
	assert_true(place_choose(4, LINKS(s), g, &one, &out));
	assert_true(out.gpu[0] == 2 || out.gpu[0] == 3);
	/* with 0-1 taken a pair on NUMA node 1 (NODE), never across sockets */
	g[0].busy = g[1].busy = true;
	assert_true(place_choose(4, LINKS(s), g, &two, &out));
	assert_int_equal(out.gpu[0], 2);
	assert_int_equal(out.gpu[1], 3);
	char why[160];
	assert_false(place_feasible(4, LINKS(s), &nv, why, sizeof(why)));
	assert_non_null(strstr(why, "all connected by NVLink"));
	free(s);
}

/* Many 1- and 2-GPU jobs start and end on 8x A100; a 1-GPU job never breaks
 * a whole free PCIe-switch pair while a half-free one exists, and a 2-GPU
 * job gets a whole pair whenever one is free. */
static void test_a100_fragmentation(void **state)
{
	(void)state;
	struct snapshot *s = sim_snapshot("a100x8");
	int partner[8];
	for (unsigned i = 0; i < 8; i++) {
		partner[i] = pxb_partner(s, i);
		assert_true(partner[i] >= 0);
	}
	struct sched_running run[8];
	unsigned nrun = 0, checked1 = 0, checked2 = 0;
	uint64_t next_id = 1;
	srand(7);
	for (unsigned step = 0; step < 3000; step++) {
		if (nrun && (rand() % 3 == 0 || nrun >= 6)) { /* a job ends */
			unsigned k = (unsigned)rand() % nrun;
			run[k] = run[--nrun];
			continue;
		}
		struct sched_job j = { .id = next_id++, .submit_ns = step };
		j.req.count = rand() % 4 == 0 ? 2 : 1;
		struct sched_input in = { .now_ns = step, .n = 8, .link = LINKS(s), .pending = &j, .npending = 1,
					  .running = run, .nrunning = nrun };
		uint64_t busy = 0;
		for (unsigned k = 0; k < nrun; k++)
			busy |= run[k].gpu_mask;
		bool half_free = false, whole_free = false;
		for (unsigned i = 0; i < 8; i++)
			if (!(busy >> i & 1)) {
				if (busy >> partner[i] & 1)
					half_free = true;
				else
					whole_free = true;
			}
		struct sched_decision d;
		if (sched_pass(&in, &d) == 0)
			continue;
		uint64_t mask = 0;
		for (unsigned k = 0; k < d.place.count; k++)
			mask |= 1ull << d.place.gpu[k];
		assert_int_equal(mask & busy, 0);
		if (j.req.count == 1 && half_free) {
			assert_true(busy >> partner[d.place.gpu[0]] & 1);
			checked1++;
		}
		if (j.req.count == 2 && whole_free) {
			assert_int_equal(partner[d.place.gpu[0]], (int)d.place.gpu[1]);
			checked2++;
		}
		run[nrun++] = (struct sched_running){ .id = j.id, .gpu_mask = mask, .end_ns = UINT64_MAX, .mig_gpu = -1,
						      .mig_gi = -1 };
	}
	assert_true(checked1 > 100 && checked2 > 20); /* the properties were really exercised */
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_h200_nvlink_and_gating),
		cmocka_unit_test(test_a100_pairs),
		cmocka_unit_test(test_l40s_pcie_numa),
		cmocka_unit_test(test_a100_fragmentation),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
