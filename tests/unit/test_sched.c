/* SPDX-License-Identifier: Apache-2.0 */
/* test_sched.c - queue order, backfill, per-user limits, dependencies, MIG. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "pool/sched.h"

#define S 1000000000ull

static struct gpu_link nvs[GPU_MAX_GPUS][GPU_MAX_GPUS]; /* 8 GPUs, all NV18 */

static int setup(void **state)
{
	(void)state;
	for (unsigned a = 0; a < 8; a++)
		for (unsigned b = 0; b < 8; b++) {
			nvs[a][b].kind = a == b ? LINK_SELF : LINK_NVLINK;
			nvs[a][b].nvlinks = a == b ? 0 : 18;
			nvs[a][b].pcie = a / 4 == b / 4 ? LINK_NODE : LINK_SYS;
		}
	return 0;
}

static void base(struct sched_input *in)
{
	memset(in, 0, sizeof(*in));
	in->now_ns = 100 * S;
	in->n = 8;
	in->link = nvs;
}

static struct sched_job job(uint64_t id, unsigned gpus, int prio, uint64_t submit_s, uint64_t limit_s)
{
	struct sched_job j = { .id = id, .priority = prio, .uid = 1000, .submit_ns = submit_s * S,
			       .time_limit_ns = limit_s * S };
	j.req.count = gpus;
	return j;
}

/* A job waiting for GPUs names who holds them: a pool job, a Slurm job the
 * pool recorded (by its Slurm id), a process the pool did not start, health. */
static void test_reason_names_holders(void **state)
{
	(void)state;
	struct sched_input in;
	base(&in);
	struct sched_running r[2] = {
		{ .id = 4, .uid = 7, .gpu_mask = 0x0f, .end_ns = UINT64_MAX, .mig_gpu = -1 },
		{ .id = 5, .uid = 8, .gpu_mask = 0x30, .end_ns = UINT64_MAX, .mig_gpu = -1, .slurm_job = 812 },
	};
	in.running = r;
	in.nrunning = 2;
	in.gpu[6].foreign = true;
	in.gpu[6].foreign_pid = 4242;
	in.gpu[7].unhealthy = true;
	struct sched_job p[1] = { job(9, 1, 0, 1, 0) };
	in.pending = p;
	in.npending = 1;
	struct sched_decision d[1];
	assert_int_equal(sched_pass(&in, d), 0);
	assert_string_equal(d[0].reason, "waiting for 1 free GPU: GPUs 0-3 held by pool job 4; GPUs 4-5 held by Slurm "
					 "job 812; GPU 6 runs process 4242, which the pool did not start; GPU 7 unhealthy");
}

static void test_priority_then_fifo(void **state)
{
	(void)state;
	struct sched_input in;
	base(&in);
	struct sched_job p[3] = { job(1, 4, 0, 1, 0), job(2, 4, 5, 2, 0), job(3, 4, 0, 0, 0) };
	in.pending = p;
	in.npending = 3;
	struct sched_decision d[3];
	assert_int_equal(sched_pass(&in, d), 2);
	assert_int_equal(d[0].job_id, 2); /* highest priority first */
	assert_true(d[0].start);
	assert_int_equal(d[1].job_id, 3); /* then the oldest */
	assert_true(d[1].start);
	assert_int_equal(d[2].job_id, 1);
	assert_false(d[2].start);
	/* the GPUs are named with the jobs that took them in this pass */
	assert_string_equal(d[2].reason, "waiting for 4 free GPUs: GPUs 0-3 held by pool job 2; GPUs 4-7 held by pool job 3");
}

/* Head needs 8 GPUs; 4 are held until t=200 s. A 2-GPU job of 50 s fits
 * before that and backfills; one of 500 s or without a limit must not. */
static void test_backfill_never_delays_head(void **state)
{
	(void)state;
	struct sched_input in;
	base(&in);
	struct sched_running r = { .id = 9, .uid = 7, .gpu_mask = 0x0f, .end_ns = 200 * S, .mig_gpu = -1 };
	in.running = &r;
	in.nrunning = 1;
	struct sched_job p[4] = { job(1, 8, 0, 1, 0), job(2, 2, 0, 2, 50), job(3, 2, 0, 3, 500), job(4, 1, 0, 4, 0) };
	in.pending = p;
	in.npending = 4;
	struct sched_decision d[4];
	assert_int_equal(sched_pass(&in, d), 1);
	assert_false(d[0].start);
	assert_int_equal(d[0].est_start_ns, 200 * S);
	assert_true(d[1].start);
	assert_true(d[1].backfilled);
	for (unsigned i = 0; i < d[1].place.count; i++)
		assert_true(d[1].place.gpu[i] >= 4);
	assert_false(d[2].start);
	assert_false(d[3].start);
	assert_string_equal(d[3].reason, "GPUs reserved for job 1, ahead in the queue");
}

/* A smaller head leaves GPUs outside its reservation to anyone. */
static void test_backfill_outside_reservation(void **state)
{
	(void)state;
	struct sched_input in;
	base(&in);
	struct sched_running r = { .id = 9, .uid = 7, .gpu_mask = 0x3f, .end_ns = 300 * S, .mig_gpu = -1 };
	in.running = &r;
	in.nrunning = 1;
	/* head wants 4: 2 free now + 4 at t=300 -> reserves 4 of them; 1-GPU job with no limit
	 * may use a free GPU the reservation does not include, if any */
	struct sched_job p[2] = { job(1, 4, 0, 1, 0), job(2, 1, 0, 2, 0) };
	in.pending = p;
	in.npending = 2;
	struct sched_decision d[2];
	sched_pass(&in, d);
	assert_false(d[0].start);
	assert_int_equal(d[0].est_start_ns, 300 * S);
	if (d[1].start) {
		/* it must not have taken a GPU the head will need */
		struct sched_running r2[2] = { r, { .id = 2, .uid = 1000, .gpu_mask = 1ull << d[1].place.gpu[0],
						    .end_ns = UINT64_MAX, .mig_gpu = -1 } };
		in.running = r2;
		in.nrunning = 2;
		in.pending = p;
		in.npending = 1;
		struct sched_decision d2[1];
		sched_pass(&in, d2);
		assert_int_equal(d2[0].est_start_ns, 300 * S);
	}
}

/* A long queue of few shapes behind a blocked head: the same answers as
 * one job alone would get (the pass remembers failures of a shape), and a
 * short job still backfills among thousands that cannot. */
static void test_long_queue(void **state)
{
	(void)state;
	struct sched_input in;
	base(&in);
	struct sched_running r = { .id = 1, .uid = 7, .gpu_mask = 0x3f, .end_ns = 300 * S, .mig_gpu = -1 };
	in.running = &r;
	in.nrunning = 1;
	enum { N = 5000 };
	struct sched_job *p = calloc(N, sizeof(*p));
	struct sched_decision *d = calloc(N, sizeof(*d));
	p[0] = job(2, 8, 0, 1, 0); /* the head: all 8 at t=300 s */
	for (unsigned i = 1; i < N; i++)
		p[i] = job(3 + i, 1 + i % 2, 0, 2 + i, 0);
	p[N - 1] = job(3 + N, 2, 0, 2 + N, 60); /* ends before t=300 s: may backfill */
	in.pending = p;
	in.npending = N;
	assert_int_equal(sched_pass(&in, d), 1);
	assert_int_equal(d[0].est_start_ns, 300 * S);
	for (unsigned i = 1; i < N - 1; i++) {
		assert_false(d[i].start);
		assert_string_equal(d[i].reason, "GPUs reserved for job 2, ahead in the queue");
	}
	assert_true(d[N - 1].start);
	assert_true(d[N - 1].backfilled);
	free(p);
	free(d);
}

static void test_user_limit(void **state)
{
	(void)state;
	struct sched_input in;
	base(&in);
	in.max_gpus_per_user = 4;
	struct sched_job p[3] = { job(1, 2, 0, 1, 0), job(2, 2, 0, 2, 0), job(3, 2, 0, 3, 0) };
	p[2].uid = 1000;
	in.pending = p;
	in.npending = 3;
	struct sched_decision d[3];
	assert_int_equal(sched_pass(&in, d), 2);
	assert_false(d[2].start);
	assert_string_equal(d[2].reason, "user limit of 4 GPUs reached");
	p[2].uid = 1001; /* another user is not limited by the first one's jobs */
	assert_int_equal(sched_pass(&in, d), 3);
}

static bool ended_1(uint64_t id, void *arg)
{
	(void)arg;
	return id == 1;
}

static void test_dependency(void **state)
{
	(void)state;
	struct sched_input in;
	base(&in);
	struct sched_job p[2] = { job(2, 1, 0, 1, 0), job(3, 1, 0, 2, 0) };
	p[0].after_job = 1;
	p[1].after_job = 5;
	in.pending = p;
	in.npending = 2;
	in.has_ended = ended_1;
	struct sched_decision d[2];
	assert_int_equal(sched_pass(&in, d), 1);
	assert_true(d[0].start);
	assert_false(d[1].start);
	assert_string_equal(d[1].reason, "waiting for job 5 to end");
}

static void test_mig_slices(void **state)
{
	(void)state;
	struct sched_input in;
	base(&in);
	in.n = 1;
	struct sched_mig mig[3] = { { 0, 1, "1g.10gb", "MIG-a" }, { 0, 2, "1g.10gb", "MIG-b" }, { 0, 3, "3g.40gb", "MIG-c" } };
	in.mig = mig;
	in.nmig = 3;
	struct sched_job p[4];
	for (unsigned i = 0; i < 4; i++) {
		p[i] = job(i + 1, 0, 0, i, 0);
		strcpy(p[i].mig_profile, i < 3 ? "1g.10gb" : "3g.40gb");
	}
	in.pending = p;
	in.npending = 4;
	struct sched_decision d[4];
	assert_int_equal(sched_pass(&in, d), 3);
	assert_int_equal(d[0].mig_index, 0);
	assert_int_equal(d[1].mig_index, 1);
	assert_false(d[2].start);
	assert_string_equal(d[2].reason, "waiting for a free MIG slice 1g.10gb");
	assert_int_equal(d[3].mig_index, 2);
	/* a whole-GPU job cannot take a GPU whose slices are in use */
	struct sched_running r = { .id = 1, .uid = 1000, .mig_gpu = 0, .mig_gi = 1, .end_ns = UINT64_MAX };
	in.running = &r;
	in.nrunning = 1;
	struct sched_job whole = job(9, 1, 0, 9, 0);
	in.pending = &whole;
	in.npending = 1;
	assert_int_equal(sched_pass(&in, d), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_priority_then_fifo),
		cmocka_unit_test(test_reason_names_holders),
		cmocka_unit_test(test_backfill_never_delays_head),
		cmocka_unit_test(test_backfill_outside_reservation),
		cmocka_unit_test(test_long_queue),
		cmocka_unit_test(test_user_limit),
		cmocka_unit_test(test_dependency),
		cmocka_unit_test(test_mig_slices),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
