/* SPDX-License-Identifier: Apache-2.0 */
/* test_snapshot.c - the one-shot sweep: every GPU read, a hung GPU bounded,
 * system facts read once, a snapshot too small refused; a snapshot's memory
 * (device/snapshot.h): sized by its GPU count, dense views, their process and
 * MIG tables packed after them, copied up to what is in use. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sampler/sampler.h"

static void open_server(struct gpu_backend *be, const char *spec)
{
	char arg[512];
	const char *dir = getenv("GPUCTL_DATA_DIR");
	snprintf(arg, sizeof(arg), "%s%s%s", spec, dir ? ",data_dir=" : "", dir ? dir : "");
	struct gpu_err err = { "" };
	memset(be, 0, sizeof(*be));
	assert_int_equal(gpu_backend_open(be, "sim", arg, &err), GPU_OK);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_every_gpu_read(void **state)
{
	(void)state;
	struct gpu_backend be;
	open_server(&be, "a100x8");
	struct snapshot *s = snapshot_new(GPU_MAX_GPUS);
	struct gpu_err err = { "" };
	assert_int_equal(snapshot_take(&be, GPU_GRP_ALL, s, &err), GPU_OK);
	assert_int_equal(s->n, 8);
	for (unsigned i = 0; i < s->n; i++) {
		assert_true(s->gpu[i].up);
		assert_int_equal(s->gpu[i].st.index, i);
		assert_true(VAL_HAS(s->gpu[i].s.power_mw));
		assert_int_equal(s->link[i][i].kind, LINK_SELF);
		for (unsigned j = 0; j < s->n; j++)
			if (j != i)
				assert_int_equal(s->link[i][j].nvlinks, 12);
	}
	gpu_backend_close(&be);
	free(s);
}

/* GPU 2's calls block for 3 s; a 300 ms deadline returns with the other
 * GPUs read and GPU 2 down, and closing the backend afterwards is safe. */
static void test_hung_gpu_bounded(void **state)
{
	(void)state;
	struct gpu_backend be;
	open_server(&be, "h200x8,hang_gpu=2,hang_ms=3000");
	struct snapshot *s = snapshot_new(GPU_MAX_GPUS);
	struct gpu_err err = { "" };
	double t0 = now_s();
	assert_int_equal(snapshot_take_timeout(&be, GPU_GRP_BASIC, 300000000ull, s, &err), GPU_OK);
	double took = now_s() - t0;
	assert_true(took < 2.0);
	assert_false(s->gpu[2].up);
	assert_non_null(strstr(s->gpu[2].last_error, "no answer within 0.3 s"));
	for (unsigned i = 0; i < s->n; i++)
		if (i != 2)
			assert_true(s->gpu[i].up);
	gpu_backend_close(&be); /* wakes the hung call; the thread makes no further call */
	free(s);
}

/* A backend in front of an open sim backend (be->priv) that counts the
 * system_info calls; the sweep's other required calls go through to it. */
static unsigned system_info_calls;
static int counted_system_info(struct gpu_backend *be, struct gpu_system *out, struct gpu_err *err)
{
	struct gpu_backend *sim = be->priv;
	system_info_calls++;
	return sim->ops->system_info(sim, out, err);
}
static int fwd_static_info(struct gpu_backend *be, unsigned gpu, struct gpu_static *out, struct gpu_err *err)
{
	struct gpu_backend *sim = be->priv;
	return sim->ops->static_info(sim, gpu, out, err);
}
static int fwd_sample(struct gpu_backend *be, unsigned gpu, unsigned groups, struct gpu_sample *out,
		      struct gpu_err *err)
{
	struct gpu_backend *sim = be->priv;
	return sim->ops->sample(sim, gpu, groups, out, err);
}

/* A caller that read the system facts when it opened the backend hands them
 * in: the sweep copies them and does not ask the backend again; without them
 * it asks once. */
static void test_known_sys_not_read_again(void **state)
{
	(void)state;
	struct gpu_backend sim;
	open_server(&sim, "h200x8");
	const struct gpu_backend_ops ops = { .name = "counted", .system_info = counted_system_info,
					     .static_info = fwd_static_info, .sample = fwd_sample };
	struct gpu_backend be = { .ops = &ops, .priv = &sim, .gpu_count = sim.gpu_count };
	struct gpu_system sys;
	struct gpu_err err = { "" };
	system_info_calls = 0;
	assert_int_equal(be.ops->system_info(&be, &sys, &err), GPU_OK);
	snprintf(sys.server_name, sizeof(sys.server_name), "read-at-open");
	struct snapshot *s = snapshot_new(GPU_MAX_GPUS);
	assert_int_equal(snapshot_take_with_sys(&be, &sys, GPU_GRP_BASIC, 0, s, &err), GPU_OK);
	assert_int_equal(system_info_calls, 1);
	assert_string_equal(s->sys.server_name, "read-at-open");
	assert_true(s->sys.simulated);
	assert_int_equal(s->n, 8);
	assert_true(s->gpu[7].up);
	assert_int_equal(snapshot_take_with_sys(&be, NULL, GPU_GRP_BASIC, 0, s, &err), GPU_OK);
	assert_int_equal(system_info_calls, 2);
	assert_string_not_equal(s->sys.server_name, "read-at-open");
	gpu_backend_close(&sim);
	free(s);
}

static void test_too_small_refused(void **state)
{
	(void)state;
	struct gpu_backend be;
	open_server(&be, "h200x8");
	struct snapshot *s = snapshot_new(4);
	assert_non_null(s);
	struct gpu_err err = { "" };
	assert_int_equal(snapshot_take(&be, GPU_GRP_BASIC, s, &err), GPU_EINVAL);
	assert_non_null(strstr(err.msg, "room for 4 GPUs, 8 to read"));
	assert_int_equal(s->n, 0);
	assert_int_equal(s->cap, 4); /* its arrays kept */
	gpu_backend_close(&be);
	free(s);
}

static void test_sized_by_gpu_count(void **state)
{
	(void)state;
	struct snapshot *s8 = snapshot_new(8), *s0 = snapshot_new(0), *big = snapshot_new(1000);
	assert_non_null(s8);
	assert_non_null(s0);
	assert_non_null(big);
	assert_int_equal(s8->cap, 8);
	assert_int_equal(s0->cap, 1);
	assert_int_equal(big->cap, GPU_MAX_GPUS);
	/* the last view and the last link of each are writable (ASan checks the block's end) */
	s8->gpu[7].mig[GPU_MAX_MIG - 1].ci_id = 1;
	s8->link[7][GPU_MAX_GPUS - 1].nvlinks = 1;
	big->gpu[GPU_MAX_GPUS - 1].mig[GPU_MAX_MIG - 1].ci_id = 1;
	big->link[GPU_MAX_GPUS - 1][GPU_MAX_GPUS - 1].nvlinks = 1;
	assert_true((uintptr_t)s8->gpu % _Alignof(struct gpu_view) == 0);
	assert_true((uintptr_t)s8->link % _Alignof(struct gpu_link) == 0);
	assert_true((uintptr_t)s8->proc_room % _Alignof(struct gpu_process) == 0);
	assert_true((uintptr_t)s8->mig_room % _Alignof(struct gpu_mig) == 0);
	/* the views are dense: their tables are outside them (a view was 22 KB, 11 of them tables) */
	assert_true(sizeof(struct gpu_view) < 12 * 1024);
	/* a new view has its own part of the room: all GPU_MAX_PROCS entries writable */
	assert_ptr_equal(s8->gpu[0].procs, s8->proc_room);
	assert_ptr_equal(s8->gpu[7].procs, s8->proc_room + 7 * GPU_MAX_PROCS);
	assert_ptr_equal(s8->gpu[7].mig, s8->mig_room + 7 * GPU_MAX_MIG);
	s8->gpu[7].procs[GPU_MAX_PROCS - 1].pid = 1;
	big->gpu[GPU_MAX_GPUS - 1].procs[GPU_MAX_PROCS - 1].pid = 1;
	snapshot_free(s8);
	snapshot_free(s0);
	snapshot_free(big);
}

static void test_copy_what_is_in_use(void **state)
{
	(void)state;
	struct snapshot *a = snapshot_new(2), *b = snapshot_new(2), *small = snapshot_new(1);
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(small);
	a->n = 2;
	a->taken_ns = 42;
	a->gpu[1].nproc = 1;
	a->gpu[1].procs[0].pid = 7;
	a->gpu[1].procs[1].pid = 8; /* past nproc: not copied */
	a->gpu[1].s.temp_c.v = 61;
	a->link[1][0].kind = LINK_NVLINK;
	assert_int_equal(snapshot_copy(small, a), -1);
	assert_int_equal(small->n, 0);
	assert_int_equal(snapshot_copy(b, a), 0);
	assert_int_equal(b->n, 2);
	assert_int_equal(b->taken_ns, 42);
	assert_ptr_not_equal(b->gpu, a->gpu);
	assert_int_equal(b->gpu[1].procs[0].pid, 7);
	assert_int_equal(b->gpu[1].procs[1].pid, 0);
	/* packed: GPU 0 has no process, GPU 1's come first in b's room */
	assert_ptr_equal(b->gpu[1].procs, b->proc_room);
	assert_ptr_equal(b->gpu[1].mig, b->mig_room);
	assert_int_equal(b->gpu[1].s.temp_c.v, 61);
	assert_int_equal(b->link[1][0].kind, LINK_NVLINK);
	snapshot_clear(b);
	assert_int_equal(b->n, 0);
	assert_int_equal(b->cap, 2);
	assert_int_equal(b->gpu[1].procs[0].pid, 0);
	assert_int_equal(b->link[1][0].kind, 0);
	assert_ptr_equal(b->gpu[1].procs, b->proc_room + GPU_MAX_PROCS); /* its own part again */
	assert_int_equal(b->proc_room[0].pid, 0); /* the entry in use was cleared */
	free(a);
	free(b);
	free(small);
}

/* A fill places each view's tables after the one before (their counts); a
 * view whose predecessor points elsewhere (not placed by this fill) falls
 * back to its own part, never further: every view keeps room for
 * GPU_MAX_PROCS entries inside the snapshot (ASan checks the block's end). */
static void test_tables_placed_packed(void **state)
{
	(void)state;
	struct snapshot *s = snapshot_new(4);
	assert_non_null(s);
	snapshot_place_tables(s, 0);
	s->gpu[0].nproc = 3;
	s->gpu[0].nmig = 2;
	snapshot_place_tables(s, 1);
	assert_ptr_equal(s->gpu[1].procs, s->proc_room + 3);
	assert_ptr_equal(s->gpu[1].mig, s->mig_room + 2);
	s->gpu[1].nproc = GPU_MAX_PROCS + 5; /* more than a table holds: counted as GPU_MAX_PROCS */
	snapshot_place_tables(s, 2);
	assert_ptr_equal(s->gpu[2].procs, s->proc_room + 3 + GPU_MAX_PROCS);
	assert_ptr_equal(s->gpu[2].mig, s->mig_room + 2);
	/* a predecessor outside the room: GPU 3 at its own part */
	struct gpu_view *alone = gpu_view_new();
	assert_non_null(alone);
	s->gpu[2].procs = alone->procs;
	s->gpu[2].mig = NULL;
	snapshot_place_tables(s, 3);
	assert_ptr_equal(s->gpu[3].procs, s->proc_room + 3 * GPU_MAX_PROCS);
	assert_ptr_equal(s->gpu[3].mig, s->mig_room + 3 * GPU_MAX_MIG);
	s->gpu[3].procs[GPU_MAX_PROCS - 1].pid = 9; /* the room's last entry */
	snapshot_place_tables(s, 4); /* past cap: nothing */
	/* a view on its own has room for full tables; a copy into one without tables copies none */
	alone->procs[GPU_MAX_PROCS - 1].pid = 1;
	alone->mig[GPU_MAX_MIG - 1].ci_id = 1;
	struct gpu_view bare;
	memset(&bare, 0, sizeof(bare));
	alone->nproc = 2;
	alone->nmig = 1;
	snapshot_copy_view(&bare, alone);
	assert_int_equal(bare.nproc, 0);
	assert_int_equal(bare.nmig, 0);
	free(alone);
	free(s);
}

/* A snapshot in caller-owned arrays: each view points at its own part of the
 * caller's room, and a copy into it packs as snapshot_new's does. */
static void test_attach_caller_arrays(void **state)
{
	(void)state;
	struct arrays {
		struct gpu_view views[GPU_MAX_GPUS];
		struct gpu_link links[GPU_MAX_GPUS][GPU_MAX_GPUS];
		struct snapshot_tables tables;
	} *a = calloc(1, sizeof(*a));
	assert_non_null(a);
	struct snapshot s;
	snapshot_attach(&s, a->views, a->links, &a->tables, GPU_MAX_GPUS);
	assert_int_equal(s.cap, GPU_MAX_GPUS);
	assert_ptr_equal(s.gpu[5].procs, &a->tables.procs[5 * GPU_MAX_PROCS]);
	assert_ptr_equal(s.gpu[5].mig, &a->tables.mig[5 * GPU_MAX_MIG]);
	struct snapshot *src = snapshot_new(3);
	assert_non_null(src);
	src->n = 3;
	src->gpu[0].nproc = 1;
	src->gpu[0].procs[0].pid = 10;
	src->gpu[2].nproc = 2;
	src->gpu[2].procs[0].pid = 20;
	src->gpu[2].procs[1].pid = 21;
	src->gpu[2].nmig = 1;
	src->gpu[2].mig[0].gi_id = 4;
	assert_int_equal(snapshot_copy(&s, src), 0);
	assert_ptr_equal(s.gpu[2].procs, &a->tables.procs[1]);
	assert_int_equal(a->tables.procs[0].pid, 10);
	assert_int_equal(a->tables.procs[1].pid, 20);
	assert_int_equal(a->tables.procs[2].pid, 21);
	assert_int_equal(s.gpu[2].mig[0].gi_id, 4);
	assert_ptr_equal(s.gpu[2].mig, &a->tables.mig[0]);
	free(src);
	free(a);
}

/* A rate base holds a sample's time, every field of the table (read back by
 * the field's offset in struct gpu_sample, as moncol's rate columns name it)
 * and the links' byte counters; an offset that is no field reads unknown. */
static void test_rate_base_of_sample(void **state)
{
	(void)state;
	struct gpu_sample *smp = calloc(1, sizeof(*smp));
	struct gpu_rate_base *b = malloc(sizeof(*b));
	assert_non_null(smp);
	assert_non_null(b);
	memset(b, 0xa5, sizeof(*b));
	smp->timestamp_ns = 123;
	smp->lost = true;
	uint64_t k = 1;
#define SET_FIELD(member, ...) VAL_SET(smp->member, 1000 + k++);
	GPU_SAMPLE_FIELDS(SET_FIELD)
#undef SET_FIELD
	VAL_MARK(smp->pcie_replays, VAL_ERROR);
	smp->nvlink_n = 3;
	for (unsigned l = 0; l < 3; l++) {
		VAL_SET(smp->nvlink[l].tx_bytes, 10 * l + 1);
		VAL_SET(smp->nvlink[l].rx_bytes, 10 * l + 2);
	}
	gpu_rate_base_set(b, smp);
	assert_int_equal(b->timestamp_ns, 123);
	assert_true(b->lost);
	unsigned fields = 0;
#define CHECK_FIELD(member, ...) \
	do { \
		u64v got = gpu_rate_base_field(b, offsetof(struct gpu_sample, member)); \
		assert_int_equal(got.st, smp->member.st); \
		assert_int_equal(got.v, smp->member.v); \
		assert_int_equal(b->member.v, smp->member.v); \
		fields++; \
	} while (0);
	GPU_SAMPLE_FIELDS(CHECK_FIELD)
#undef CHECK_FIELD
	assert_int_equal(fields, k - 1);
	assert_int_equal(gpu_rate_base_field(b, offsetof(struct gpu_sample, pcie_replays)).st, VAL_ERROR);
	assert_int_equal(b->nvlink_n, 3);
	assert_int_equal(b->nvlink[2].tx_bytes.v, 21);
	assert_int_equal(b->nvlink[2].rx_bytes.v, 22);
	assert_int_equal(gpu_rate_base_field(b, offsetof(struct gpu_sample, nvlink)).st, VAL_UNKNOWN);
	assert_int_equal(gpu_rate_base_field(b, offsetof(struct gpu_sample, timestamp_ns)).st, VAL_UNKNOWN);
	/* and it is much smaller than the sample it stands for */
	assert_true(sizeof(*b) * 2 < sizeof(*smp));
	free(b);
	free(smp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_gpu_read),
		cmocka_unit_test(test_hung_gpu_bounded),
		cmocka_unit_test(test_known_sys_not_read_again),
		cmocka_unit_test(test_too_small_refused),
		cmocka_unit_test(test_sized_by_gpu_count),
		cmocka_unit_test(test_copy_what_is_in_use),
		cmocka_unit_test(test_tables_placed_packed),
		cmocka_unit_test(test_attach_caller_arrays),
		cmocka_unit_test(test_rate_base_of_sample),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
