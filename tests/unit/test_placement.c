/* SPDX-License-Identifier: Apache-2.0 */
/* test_placement.c - GPU set choice on the simulated servers' real topologies. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool/placement.h"
#include "device/snapshot.h"
#include "test_snap_util.h"

static void test_pair_scores(void **state)
{
	(void)state;
	struct gpu_link nv18 = { .kind = LINK_NVLINK, .nvlinks = 18, .pcie = LINK_SYS };
	struct gpu_link pix = { .kind = LINK_PIX, .pcie = LINK_PIX };
	struct gpu_link sys = { .kind = LINK_SYS, .pcie = LINK_SYS };
	assert_int_equal(topo_pair_score(&nv18), 1810);
	assert_true(topo_pair_score(&pix) > topo_pair_score(&sys));
	assert_true(topo_pcie_score(LINK_PIX) > topo_pcie_score(LINK_PXB));
	assert_true(topo_pcie_score(LINK_PXB) > topo_pcie_score(LINK_PHB));
	assert_true(topo_pcie_score(LINK_PHB) > topo_pcie_score(LINK_NODE));
	assert_true(topo_pcie_score(LINK_NODE) > topo_pcie_score(LINK_SYS));
}

/* 4x L40S: 0-1 share a PCIe switch; the second 1-GPU job must not split 2-3. */
static void test_l40s_keeps_pix_pair(void **state)
{
	(void)state;
	struct snapshot *s = sim_snapshot("l40sx4");
	assert_int_equal(s->n, 4);
	struct place_gpu g[4] = { 0 };
	struct place_request one = { .count = 1 };
	struct place_result r;
	assert_true(place_choose(s->n, s->link, g, &one, &r));
	unsigned first = r.gpu[0];
	g[first].busy = true;
	assert_true(place_choose(s->n, s->link, g, &one, &r));
	g[r.gpu[0]].busy = true;
	/* the two 1-GPU jobs left the PCIe-switch pair whole for a 2-GPU job */
	struct place_request pair = { .count = 2 };
	assert_true(place_choose(s->n, s->link, g, &pair, &r));
	assert_int_equal(s->link[r.gpu[0]][r.gpu[1]].pcie, LINK_PIX);

	struct place_gpu idle[4] = { 0 };
	struct place_request two = { .count = 2 };
	assert_true(place_choose(s->n, s->link, idle, &two, &r));
	assert_int_equal(s->link[r.gpu[0]][r.gpu[1]].pcie, LINK_PIX);

	struct place_request nv = { .count = 2, .need_nvlink = true };
	char why[160];
	assert_false(place_feasible(s->n, s->link, &nv, why, sizeof(why)));
	assert_non_null(strstr(why, "NVLink"));
	free(s);
}

/* 8x H200 on NVSwitch: any set is NV18; fragmentation never blocks an NVLink job. */
static void test_h200_nvlink_sets(void **state)
{
	(void)state;
	struct snapshot *s = sim_snapshot("h200x8");
	assert_int_equal(s->n, 8);
	struct place_gpu g[8] = { 0 };
	struct place_request four = { .count = 4, .need_nvlink = true };
	struct place_result r;
	assert_true(place_choose(s->n, s->link, g, &four, &r));
	assert_int_equal(r.count, 4);
	assert_int_equal(r.score, 6 * topo_pair_score(&s->link[0][1]));
	for (unsigned i = 0; i < 4; i++)
		g[r.gpu[i]].busy = true;
	assert_true(place_choose(s->n, s->link, g, &four, &r));
	for (unsigned i = 0; i < 4; i++)
		g[r.gpu[i]].busy = true;
	assert_false(place_choose(s->n, s->link, g, &four, &r));
	assert_string_equal(r.reason, "waiting for 4 NVLink-connected GPUs: GPUs 0-7 held by a pool job");
	free(s);
}

/* Health and foreign processes gate placement, with the reason said. */
static void test_gating(void **state)
{
	(void)state;
	struct snapshot *s = sim_snapshot("a100x8");
	struct place_gpu g[8] = { 0 };
	for (unsigned i = 0; i < 8; i++) {
		g[i].mem_known = true;
		g[i].mem_free_bytes = 80ull << 30;
	}
	g[3].unhealthy = true;
	g[5].foreign = true;
	struct place_request all = { .count = 8 };
	struct place_result r;
	assert_false(place_choose(s->n, s->link, g, &all, &r));
	assert_string_equal(r.reason, "GPU 3 unhealthy; GPU 5 runs a process the pool did not start");
	g[5].foreign_pid = 4242; /* the process is named when known */
	assert_false(place_choose(s->n, s->link, g, &all, &r));
	assert_string_equal(r.reason, "GPU 3 unhealthy; GPU 5 runs process 4242, which the pool did not start");
	struct place_request six = { .count = 6 };
	assert_true(place_choose(s->n, s->link, g, &six, &r));
	for (unsigned i = 0; i < r.count; i++) {
		assert_int_not_equal(r.gpu[i], 3);
		assert_int_not_equal(r.gpu[i], 5);
	}
	/* memory requests are honoured */
	g[0].mem_free_bytes = 1ull << 30;
	struct place_request big = { .count = 6, .mem_per_gpu = 40ull << 30 };
	assert_false(place_choose(s->n, s->link, g, &big, &r));
	assert_string_equal(r.reason, "waiting for 6 GPUs with 40.0 GiB free: GPU 0 has 1.0 GiB free; GPU 3 unhealthy; "
				      "GPU 5 runs process 4242, which the pool did not start");
	/* a reason too long for its field is cut, and says so */
	struct place_gpu held[8] = { 0 };
	for (unsigned i = 0; i < 8; i++) {
		held[i].busy = true;
		held[i].held_by_job = 1000000 + i;
	}
	struct place_request one = { .count = 1 };
	assert_false(place_choose(s->n, s->link, held, &one, &r));
	assert_int_equal(strlen(r.reason), sizeof(r.reason) - 1);
	assert_string_equal(r.reason + sizeof(r.reason) - 4, "...");
	assert_memory_equal(r.reason, "waiting for 1 free GPU: GPU 0 held by pool job 1000000; GPU 1", 61);
	struct place_request five = { .count = 5, .mem_per_gpu = 40ull << 30 };
	assert_true(place_choose(s->n, s->link, g, &five, &r));
	for (unsigned i = 0; i < r.count; i++)
		assert_int_not_equal(r.gpu[i], 0);
	/* --gpu-ids restricts the candidates */
	struct place_gpu idle[8] = { 0 };
	struct place_request ids = { .count = 2, .allowed_mask = (1u << 6) | (1u << 7) };
	assert_true(place_choose(s->n, s->link, idle, &ids, &r));
	assert_int_equal(r.gpu[0], 6);
	assert_int_equal(r.gpu[1], 7);
	free(s);
}

/* A request no GPU of this server can ever meet is refused at submission,
 * saying why: GPUs in MIG mode are never whole, memory beyond any GPU's. */
static void test_possible(void **state)
{
	(void)state;
	struct snapshot *s = sim_snapshot("a100x8");
	struct place_gpu g[8] = { 0 };
	for (unsigned i = 0; i < 8; i++)
		g[i].mem_total_bytes = 80ull << 30;
	g[0].busy = g[1].unhealthy = g[2].foreign = true; /* now, not forever */
	char why[300];
	struct place_request eight = { .count = 8, .mem_per_gpu = 80ull << 30 };
	assert_true(place_possible(8, s->link, g, &eight, why, sizeof(why)));
	struct place_request too_big = { .count = 1, .mem_per_gpu = 200ull << 30 };
	assert_false(place_possible(8, s->link, g, &too_big, why, sizeof(why)));
	assert_string_equal(why, "asks for 200.0 GiB free on each of 1 GPU but only 0 GPUs here have that much memory "
				 "in all (the largest: 80.0 GiB)");
	g[6].mig_mode = g[7].mig_mode = true;
	struct place_request seven = { .count = 7 };
	assert_false(place_possible(8, s->link, g, &seven, why, sizeof(why)));
	assert_string_equal(why, "asks for 7 whole GPUs but 2 of the 8 GPUs it may use are in MIG mode (the pool gives "
				 "those out by slices only, --mig PROFILE, and never changes the MIG layout)");
	struct place_request six = { .count = 6 }, on7 = { .count = 1, .allowed_mask = 1u << 7 };
	assert_true(place_possible(8, s->link, g, &six, why, sizeof(why)));
	assert_false(place_possible(8, s->link, g, &on7, why, sizeof(why)));
	assert_non_null(strstr(why, "1 of the 1 GPUs it may use is in MIG mode"));
	struct place_request nine = { .count = 9 };
	assert_false(place_possible(8, s->link, g, &nine, why, sizeof(why)));
	assert_string_equal(why, "asks for 9 GPUs; this server has 8");
	free(s);
}

/* Hand-made DGX-1-like hybrid cube mesh: two quads, few cross links. */
static void test_prefers_dense_quads(void **state)
{
	(void)state;
	static struct gpu_link link[GPU_MAX_GPUS][GPU_MAX_GPUS];
	memset(link, 0, sizeof(link));
	for (unsigned a = 0; a < 8; a++)
		for (unsigned b = 0; b < 8; b++) {
			link[a][b].pcie = a / 4 == b / 4 ? LINK_NODE : LINK_SYS;
			link[a][b].kind = a == b ? LINK_SELF : link[a][b].pcie;
			if (a != b && a / 4 == b / 4)
				link[a][b].nvlinks = (a % 2 == b % 2) ? 2 : 1;
			if (a != b && a % 4 == b % 4)
				link[a][b].nvlinks = 1;
			if (link[a][b].nvlinks)
				link[a][b].kind = LINK_NVLINK;
		}
	struct place_gpu g[8] = { 0 };
	struct place_request four = { .count = 4 };
	struct place_result r;
	assert_true(place_choose(8, link, g, &four, &r));
	/* a whole quad: all within one half */
	for (unsigned i = 1; i < 4; i++)
		assert_int_equal(r.gpu[i] / 4, r.gpu[0] / 4);
	/* a 2-GPU job takes a double-linked pair */
	struct place_request two = { .count = 2 };
	assert_true(place_choose(8, link, g, &two, &r));
	assert_int_equal(link[r.gpu[0]][r.gpu[1]].nvlinks, 2);
}

/* 64 GPUs: the greedy path still returns a connected, valid set quickly. */
static void test_large_server(void **state)
{
	(void)state;
	static struct gpu_link link[GPU_MAX_GPUS][GPU_MAX_GPUS];
	memset(link, 0, sizeof(link));
	for (unsigned a = 0; a < 64; a++)
		for (unsigned b = 0; b < 64; b++) {
			link[a][b].pcie = a / 8 == b / 8 ? LINK_PIX : LINK_SYS;
			link[a][b].nvlinks = (a != b && a / 8 == b / 8) ? 18 : 0;
		}
	struct place_gpu g[64] = { 0 };
	g[0].busy = true;
	struct place_request eight = { .count = 8, .need_nvlink = true };
	struct place_result r;
	assert_true(place_choose(64, link, g, &eight, &r));
	for (unsigned i = 0; i < 8; i++)
		assert_int_equal(r.gpu[i] / 8, r.gpu[0] / 8);
	assert_int_not_equal(r.gpu[0] / 8, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pair_scores),
		cmocka_unit_test(test_l40s_keeps_pix_pair),
		cmocka_unit_test(test_h200_nvlink_sets),
		cmocka_unit_test(test_gating),
		cmocka_unit_test(test_possible),
		cmocka_unit_test(test_prefers_dense_quads),
		cmocka_unit_test(test_large_server),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
