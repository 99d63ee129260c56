/* SPDX-License-Identifier: Apache-2.0 */
/* test_sampler.c - the sampler driven through the simulated server (the real
 * backend path): every GPU sampled on its own thread, a lost GPU marked down
 * while the others go on, a hung call making only its GPU stale (and reads
 * never waiting on it), XID counts per code kept across a GPU's loss, static
 * facts re-read when a GPU comes back. Real time: intervals are short. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "device/sim.h"
#include "sampler/sampler.h"

#define MS 1000000ull

static uint64_t mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* The backend outlives each test function: a thread abandoned in a hung call
 * by sampler_stop() may still touch it until gpu_backend_close() wakes it. */
static struct gpu_backend *open_sim(const char *arg)
{
	struct gpu_backend *be = calloc(1, sizeof(*be));
	struct gpu_err err = { "" };
	if (gpu_backend_open(be, "sim", arg, &err) != GPU_OK)
		fail_msg("opening sim '%s': %s", arg, err.msg);
	return be;
}

static void close_sim(struct gpu_backend *be)
{
	gpu_backend_close(be);
	free(be);
}

static struct sampler *start(struct gpu_backend *be, uint64_t interval_ns, uint64_t stale_ns)
{
	struct sampler_config cfg;
	sampler_config_default(&cfg);
	cfg.interval_ns = interval_ns;
	cfg.stale_after_ns = stale_ns;
	struct sampler *s = NULL;
	struct gpu_err err = { "" };
	if (sampler_start(&s, be, &cfg, &err) != GPU_OK)
		fail_msg("sampler_start: %s", err.msg);
	return s;
}

/* Waits until pred(view) holds for GPU gpu, or fails after timeout_ms. */
static void wait_for(struct sampler *s, unsigned gpu, bool (*pred)(const struct gpu_view *), unsigned timeout_ms,
		     const char *what)
{
	struct gpu_view *v = gpu_view_new();
	uint64_t end = mono() + timeout_ms * MS;
	for (;;) {
		sampler_read_gpu(s, gpu, v);
		if (pred(v))
			break;
		if (mono() > end)
			fail_msg("GPU %u: %s did not happen within %u ms (up=%d, error '%s')", gpu, what, timeout_ms, v->up,
				 v->last_error);
		sleep_ms(10);
	}
	free(v);
}

static bool is_up(const struct gpu_view *v) { return v->up; }
static bool is_down(const struct gpu_view *v) { return !v->up; }

static void test_every_gpu_sampled(void **state)
{
	(void)state;
	struct gpu_backend *be = open_sim("h200x8,latency_us=100");
	struct sampler *s = start(be, 50 * MS, 0);
	assert_int_equal(sampler_gpu_count(s), 8);
	assert_true(sampler_wait_first(s, 10000 * MS));
	/* its own schedule keeps going: each GPU gets a second sample (polled,
	 * bounded: a loaded machine may take longer than a few intervals) */
	struct snapshot *sn = snapshot_new(GPU_MAX_GPUS);
	uint64_t end = mono() + 20000 * MS;
	for (;;) {
		sampler_read(s, sn);
		unsigned twice = 0;
		for (unsigned i = 0; i < sn->n; i++)
			twice += sn->gpu[i].samples >= 2;
		if (twice == 8 || mono() >= end)
			break;
		sleep_ms(10);
	}
	assert_int_equal(sn->n, 8);
	assert_true(sn->sys.simulated);
	for (unsigned i = 0; i < 8; i++) {
		const struct gpu_view *v = &sn->gpu[i];
		assert_true(v->up);
		assert_true(v->samples >= 2); /* its own schedule keeps going */
		assert_int_equal(v->errors, 0);
		assert_true(VAL_HAS(v->st.uuid));
		assert_true(VAL_HAS(v->s.power_mw));
		assert_true(v->s.power_mw.v > 50000 && v->s.power_mw.v < 1000000);
		assert_true(v->last_ok_ns <= sn->taken_ns);
	}
	/* a snapshot with room for fewer GPUs gets the first ones, nothing written past it (ASan) */
	struct snapshot *small = snapshot_new(3);
	assert_non_null(small);
	sampler_read(s, small);
	assert_int_equal(small->n, 3);
	assert_true(small->gpu[2].up);
	free(small);
	sampler_stop(s);
	close_sim(be);
	free(sn);
}

/* System facts the caller already read (cmd_backend) are taken, not asked of
 * the backend again; the sampler keeps its own copy. */
static void test_system_facts_given(void **state)
{
	(void)state;
	struct gpu_backend *be = open_sim("h200x8,latency_us=100");
	struct gpu_system *sys = calloc(1, sizeof(*sys));
	struct gpu_err err = { "" };
	assert_int_equal(be->ops->system_info(be, sys, &err), GPU_OK);
	snprintf(sys->driver_version.s, sizeof(sys->driver_version.s), "given-by-the-caller");
	struct sampler_config cfg;
	sampler_config_default(&cfg);
	cfg.interval_ns = 50 * MS;
	cfg.sys = sys;
	struct sampler *s = NULL;
	assert_int_equal(sampler_start(&s, be, &cfg, &err), GPU_OK);
	memset(sys, 0, sizeof(*sys)); /* the caller's copy may go */
	free(sys);
	assert_true(sampler_wait_first(s, 10000 * MS));
	struct snapshot *sn = snapshot_new(GPU_MAX_GPUS);
	sampler_read(s, sn);
	assert_string_equal(sn->sys.driver_version.s, "given-by-the-caller");
	assert_true(sn->sys.simulated);
	assert_int_equal(sn->sys.gpu_count, 8);
	sampler_stop(s);
	close_sim(be);
	free(sn);
}

/* The link matrix: every pair of the GPUs there are (NVLink on an HGX H200,
 * SELF on the diagonal); sampler_read fills those rows only, so the agent's
 * snapshots never touch the 64 KiB of a full GPU_MAX_GPUS matrix. */
static void test_links_of_the_gpus_there_are(void **state)
{
	(void)state;
	struct gpu_backend *be = open_sim("h200x8,latency_us=100");
	struct sampler *s = start(be, 50 * MS, 0);
	assert_true(sampler_wait_first(s, 10000 * MS));
	struct snapshot *sn = snapshot_new(GPU_MAX_GPUS);
	struct gpu_link sentinel = { .kind = LINK_SYS, .pcie = LINK_SYS };
	uint64_t end = mono() + 10000 * MS;
	for (;;) {
		sn->link[8][0] = sentinel;
		sn->link[GPU_MAX_GPUS - 1][GPU_MAX_GPUS - 1] = sentinel;
		sampler_read(s, sn);
		if (sn->link[0][7].kind != LINK_UNKNOWN && sn->link[7][6].kind != LINK_UNKNOWN)
			break;
		if (mono() > end)
			fail_msg("links not read within 10 s");
		sleep_ms(10);
	}
	for (unsigned a = 0; a < 8; a++)
		for (unsigned b = 0; b < 8; b++)
			assert_int_equal(sn->link[a][b].kind, a == b ? LINK_SELF : LINK_NVLINK);
	assert_int_equal(sn->link[8][0].kind, LINK_SYS);
	assert_int_equal(sn->link[GPU_MAX_GPUS - 1][GPU_MAX_GPUS - 1].kind, LINK_SYS);
	sampler_stop(s);
	close_sim(be);
	free(sn);
}

/* A backend clock that stands still: a GPU's sample never ages, so it is
 * never stale however late its thread runs on a loaded machine. */
static uint64_t frozen_ns;
static uint64_t frozen_clock(void *arg)
{
	(void)arg;
	return frozen_ns;
}

/* sampler_read packs the views' tables (issue 14 part 6): each view's
 * processes and MIG instances right after the view before's, so those in use
 * are one run at the start of the snapshot's room, and the rest of the room
 * (64 tables of 8 KiB at 64 GPUs) is never written, so never resident in the
 * agent's snapshot. */
static void test_views_tables_packed(void **state)
{
	(void)state;
	struct gpu_backend *be = open_sim("h200x8,latency_us=100");
	frozen_ns = gpu_backend_now_ns(be);
	be->now_ns = frozen_clock; /* every view is up: the test is about where the tables go */
	struct sampler *s = start(be, 50 * MS, 0);
	assert_true(sampler_wait_first(s, 10000 * MS));
	struct snapshot *sn = snapshot_new(GPU_MAX_GPUS);
	size_t proc_room = (size_t)sn->cap * GPU_MAX_PROCS, mig_room = (size_t)sn->cap * GPU_MAX_MIG;
	/* what sampler_read does not write stays poisoned */
	memset(sn->proc_room, 0xa5, proc_room * sizeof(sn->proc_room[0]));
	memset(sn->mig_room, 0xa5, mig_room * sizeof(sn->mig_room[0]));
	sampler_read(s, sn);
	unsigned with_procs = 0;
	size_t procs = 0, migs = 0;
	for (unsigned i = 0; i < sn->n; i++) {
		const struct gpu_view *v = &sn->gpu[i];
		assert_true(v->up);
		assert_true(v->nproc <= GPU_MAX_PROCS);
		assert_true(v->nmig <= GPU_MAX_MIG);
		assert_ptr_equal(v->procs, sn->proc_room + procs);
		assert_ptr_equal(v->mig, sn->mig_room + migs);
		with_procs += v->nproc > 0;
		for (unsigned k = 0; k < v->nproc; k++)
			assert_true(v->procs[k].pid != 0xa5a5a5a5u && v->procs[k].pid != 0);
		procs += v->nproc;
		migs += v->nmig;
	}
	const unsigned char *rest = (const unsigned char *)(sn->proc_room + procs);
	for (size_t b = 0; b < (proc_room - procs) * sizeof(sn->proc_room[0]); b++)
		assert_int_equal(rest[b], 0xa5);
	rest = (const unsigned char *)(sn->mig_room + migs);
	for (size_t b = 0; b < (mig_room - migs) * sizeof(sn->mig_room[0]); b++)
		assert_int_equal(rest[b], 0xa5);
	assert_true(with_procs > 1); /* the simulated server runs processes on several GPUs */
	sampler_stop(s);
	close_sim(be);
	free(sn);
}

static void test_lost_gpu_is_down_others_served(void **state)
{
	(void)state;
	struct gpu_backend *be = open_sim("h200x8,latency_us=100");
	struct sampler *s = start(be, 40 * MS, 0);
	assert_true(sampler_wait_first(s, 10000 * MS));
	struct gpu_err err = { "" };
	struct sim_fault f = { .kind = SIM_FAULT_GPU_LOST, .gpu = 3 };
	int id = sim_inject(be, &f, &err);
	assert_true(id > 0);
	wait_for(s, 3, is_down, 20000, "going down");
	struct gpu_view *v = gpu_view_new();
	sampler_read_gpu(s, 3, v);
	assert_false(v->up);
	assert_true(v->s.lost);
	assert_non_null(strstr(v->last_error, "fallen off the bus"));
	uint64_t errors = v->errors;
	assert_true(errors >= 1);
	/* the others keep being sampled */
	struct gpu_view *w = gpu_view_new();
	sampler_read_gpu(s, 5, w);
	uint64_t before = w->samples, end = mono() + 20000 * MS; /* a bound, not a guess of speed */
	do {
		sleep_ms(10);
		sampler_read_gpu(s, 5, w);
	} while (w->samples <= before && mono() < end);
	assert_true(w->up);
	assert_true(w->samples > before);
	/* it comes back */
	assert_int_equal(sim_clear(be, id), 0);
	wait_for(s, 3, is_up, 20000, "coming back");
	sampler_read_gpu(s, 3, v);
	assert_true(VAL_HAS(v->s.power_mw));
	assert_string_equal(v->last_error, "");
	sampler_stop(s);
	close_sim(be);
	free(v);
	free(w);
}

/* Lost before the sampler's first look: no static facts; once back, they are read. */
static void test_static_read_when_gpu_returns(void **state)
{
	(void)state;
	struct gpu_backend *be = open_sim("h200x8,latency_us=100");
	struct gpu_err err = { "" };
	struct sim_fault f = { .kind = SIM_FAULT_GPU_LOST, .gpu = 6 };
	int id = sim_inject(be, &f, &err);
	assert_true(id > 0);
	struct sampler *s = start(be, 40 * MS, 0);
	assert_true(sampler_wait_first(s, 10000 * MS));
	struct gpu_view *v = gpu_view_new();
	sampler_read_gpu(s, 6, v);
	assert_false(v->up);
	assert_false(VAL_HAS(v->st.uuid));
	assert_int_equal(sim_clear(be, id), 0);
	wait_for(s, 6, is_up, 20000, "coming back");
	sampler_read_gpu(s, 6, v);
	assert_true(VAL_HAS(v->st.uuid));
	assert_true(VAL_HAS(v->st.pci_bus_id));
	sampler_stop(s);
	close_sim(be);
	free(v);
}

static void test_hung_call_goes_stale_alone(void **state)
{
	(void)state;
	struct gpu_backend *be = open_sim("h200x8,latency_us=100");
	struct sampler *s = start(be, 40 * MS, 500 * MS);
	assert_true(sampler_wait_first(s, 10000 * MS));
	wait_for(s, 2, is_up, 20000, "first sample");
	struct gpu_err err = { "" };
	struct sim_fault f = { .kind = SIM_FAULT_HANG, .gpu = 2, .duration_s = 4 };
	assert_true(sim_inject(be, &f, &err) > 0);
	wait_for(s, 2, is_down, 20000, "going stale");
	struct snapshot *sn = snapshot_new(GPU_MAX_GPUS);
	uint64_t t0 = mono();
	sampler_read(s, sn);
	uint64_t took = mono() - t0;
	/* a read copies under short locks: it never waits for the (4 s) hung call */
	assert_true(took < 250 * MS);
	assert_false(sn->gpu[2].up);
	assert_non_null(strstr(sn->gpu[2].last_error, "stale"));
	/* the others are still sampled while GPU 2 hangs */
	for (unsigned i = 0; i < 8; i++)
		if (i != 2)
			wait_for(s, i, is_up, 20000, "staying up during another GPU's hang");
	sampler_read(s, sn);
	assert_false(sn->gpu[2].up);
	/* the hang ends: the GPU is up again */
	wait_for(s, 2, is_up, 20000, "recovering");
	sampler_stop(s);
	close_sim(be);
	free(sn);
}

static bool has_xid79x2_48(const struct gpu_view *v)
{
	bool a = false, b = false;
	for (unsigned k = 0; k < v->nxid; k++) {
		a |= v->xid[k].code == 79 && v->xid[k].count == 2;
		b |= v->xid[k].code == 48 && v->xid[k].count == 1;
	}
	return a && b;
}

static uint64_t xid_count(const struct gpu_view *v, uint64_t code)
{
	for (unsigned k = 0; k < v->nxid; k++)
		if (v->xid[k].code == code)
			return v->xid[k].count;
	return 0;
}

static void test_xid_counted_and_kept(void **state)
{
	(void)state;
	struct gpu_backend *be = open_sim("h200x8,latency_us=100");
	struct sampler *s = start(be, 40 * MS, 0);
	assert_true(sampler_wait_first(s, 10000 * MS));
	struct gpu_err err = { "" };
	struct sim_fault x79 = { .kind = SIM_FAULT_XID, .gpu = 1, .xid = 79 };
	struct sim_fault x48 = { .kind = SIM_FAULT_XID, .gpu = 1, .xid = 48 };
	assert_true(sim_inject(be, &x79, &err) > 0);
	assert_true(sim_inject(be, &x79, &err) > 0);
	assert_true(sim_inject(be, &x48, &err) > 0);
	wait_for(s, 1, has_xid79x2_48, 20000, "XIDs 79 x2 and 48 counted");
	struct gpu_view *v = gpu_view_new();
	sampler_read_gpu(s, 1, v);
	for (unsigned k = 0; k < v->nxid; k++)
		assert_true(v->xid[k].last_ns > 0);
	sampler_read_gpu(s, 0, v);
	assert_int_equal(v->nxid, 0);

	/* the kernel log saw the same two 79s: still 2; a third only it saw: 3 */
	sampler_note_xid(s, 1, 79, 1, XID_SRC_KERNEL_LOG);
	sampler_note_xid(s, 1, 79, 1, XID_SRC_KERNEL_LOG);
	sampler_read_gpu(s, 1, v);
	assert_int_equal(xid_count(v, 79), 2);
	sampler_note_xid(s, 1, 79, 1, XID_SRC_KERNEL_LOG);
	sampler_read_gpu(s, 1, v);
	assert_int_equal(xid_count(v, 79), 3);

	/* the GPU goes away and comes back: its counts stay */
	struct sim_fault lost = { .kind = SIM_FAULT_GPU_LOST, .gpu = 1 };
	int id = sim_inject(be, &lost, &err);
	assert_true(id > 0);
	wait_for(s, 1, is_down, 20000, "going down");
	assert_int_equal(sim_clear(be, id), 0);
	wait_for(s, 1, is_up, 20000, "coming back");
	sampler_read_gpu(s, 1, v);
	assert_true(xid_count(v, 79) >= 3);
	assert_int_equal(xid_count(v, 48), 1);
	/* out-of-range GPUs and sources are ignored, not a crash */
	sampler_note_xid(s, 99, 79, 1, XID_SRC_KERNEL_LOG);
	sampler_stop(s);
	close_sim(be);
	free(v);
}

/* The slow groups (ECC, PCIe, NVLink, violation counters) read every third
 * tick still show their last values in between: every field, not a chosen
 * few. On a simulated server frozen at one instant (time_s) every reading
 * gives the same values, so a tick that carried the slow groups must equal a
 * tick that read them, byte for byte but for when and how long it was read; a
 * field the carry forgot would be "not read" there. (The sim clears a sample
 * before filling it and samples are copied whole, so padding compares equal.) */
static void blank_timing(struct gpu_sample *smp)
{
	smp->timestamp_ns = 0;
	smp->duration_ns = 0;
}

static void test_slow_group_values_carried(void **state)
{
	(void)state;
	struct gpu_backend *be = open_sim("h200x8,latency_us=100,time_s=100");
	struct sampler_config cfg;
	sampler_config_default(&cfg);
	cfg.interval_ns = 30 * MS;
	cfg.slow_group_every = 3;
	struct sampler *s = NULL;
	struct gpu_err err = { "" };
	assert_int_equal(sampler_start(&s, be, &cfg, &err), GPU_OK);
	assert_true(sampler_wait_first(s, 10000 * MS));
	struct gpu_view *v = gpu_view_new();
	struct gpu_sample *read = calloc(1, sizeof(*read)), *carried = calloc(1, sizeof(*carried));
	bool have_read = false, have_carried = false;
	uint64_t end = mono() + 20000 * MS; /* a bound, not a guess: both come within a few ticks */
	while (!(have_read && have_carried) && mono() < end) {
		sampler_read_gpu(s, 0, v);
		assert_true(v->up);
		if (sampler_slow_read_ns(v) < v->s.timestamp_ns) {
			*carried = v->s;
			have_carried = true;
		} else {
			*read = v->s;
			have_read = true;
		}
		sleep_ms(7);
	}
	if (!have_read || !have_carried)
		fail_msg("in 20 s: a tick that read the slow groups %s, one that carried them %s", have_read ? "seen" : "not seen",
			 have_carried ? "seen" : "not seen");
	/* every field of the field table's slow groups: read (so that equal cannot
	 * mean both missing; "not supported" is an answer), and the same carried */
	unsigned slow_fields = 0;
#define CHECK_CARRIED(member, group, ...) \
	if (GPU_GRP_##group & SAMPLER_SLOW_GROUPS) { \
		slow_fields++; \
		if (read->member.st == VAL_UNKNOWN || read->member.st == VAL_ERROR) \
			fail_msg("%s: not read on a tick that read the slow groups", #member); \
		if (carried->member.st != read->member.st || carried->member.v != read->member.v) \
			fail_msg("%s: carried as %s %llu, read as %s %llu", #member, val_status_name(carried->member.st), \
				 (unsigned long long)carried->member.v, val_status_name(read->member.st), \
				 (unsigned long long)read->member.v); \
	}
	GPU_SAMPLE_FIELDS(CHECK_CARRIED)
#undef CHECK_CARRIED
	assert_true(slow_fields >= 24); /* ECC, PCIe and the violation counters */
	assert_true(VAL_HAS(read->pcie_gen) && VAL_HAS(read->ecc_vol_uncorrected) && VAL_HAS(read->viol_reliability_ns));
	assert_int_equal(read->nvlink_n, 18);
	assert_true(VAL_HAS(read->nvlink[17].active) && VAL_HAS(read->nvlink[17].crc_flit_errors));
	blank_timing(read);
	blank_timing(carried);
	if (memcmp(read, carried, sizeof(*read)) != 0) {
		const unsigned char *a = (const unsigned char *)read, *b = (const unsigned char *)carried;
		size_t at = 0;
		while (a[at] == b[at])
			at++;
		fail_msg("a carried tick differs from a read one at byte %zu of struct gpu_sample (nvlink[] starts at %zu)",
			 at, offsetof(struct gpu_sample, nvlink));
	}
	sampler_stop(s);
	close_sim(be);
	free(v);
	free(read);
	free(carried);
}

/* The rate of a counter read every slow_every-th tick, from what a reader
 * gets at each tick: between the two real readings (sampler_rate_base) it is
 * the counter's rate, 2000/s, at every tick. With the slow groups read every
 * 5th tick the ticks in between carry the reading (a rate over one tick was 0
 * there and 5x at the reading tick); read every tick, the same rate. */
static void check_steady_rate(unsigned slow_every)
{
	struct gpu_backend *be = open_sim("h200x8,latency_us=100");
	struct sim_fault f = { .kind = SIM_FAULT_NVLINK_ERRORS, .gpu = 0, .link = 0, .rate_per_s = 2000 };
	struct gpu_err err = { "" };
	assert_true(sim_inject(be, &f, &err) > 0);
	struct sampler_config cfg;
	sampler_config_default(&cfg);
	cfg.interval_ns = 20 * MS;
	cfg.slow_group_every = slow_every;
	struct sampler *s = NULL;
	assert_int_equal(sampler_start(&s, be, &cfg, &err), GPU_OK);
	assert_true(sampler_wait_first(s, 10000 * MS));
	struct gpu_view *v = gpu_view_new(), *prev = calloc(1, sizeof(*prev));
	unsigned ticks = 0, carried = 0;
	uint64_t end = mono() + 20000 * MS;
	while (ticks < 15 && mono() < end) {
		sampler_read_gpu(s, 0, v);
		if (!v->up || v->s.timestamp_ns == prev->s.timestamp_ns) {
			sleep_ms(5);
			continue;
		}
		/* the CRC counter's base (the links' error counters have their own),
		 * and the rate base of every other slow counter: the same reading */
		double dt_s, base_dt_s;
		struct nvlink_err_counts errs[GPU_MAX_NVLINKS];
		struct gpu_rate_base room;
		int links = sampler_nvlink_err_base(v, prev, errs, &dt_s);
		const struct gpu_rate_base *base = sampler_rate_base(v, prev, &room, &base_dt_s);
		assert_true((links > 0) == (base != NULL));
		if (base) {
			double rate = (double)(v->s.nvlink[0].crc_flit_errors.v - errs[0].crc_flit.v) / dt_s;
			if (rate < 1800 || rate > 2200)
				fail_msg("slow groups every %u: tick %u: %.0f/s over %.3f s, want 2000/s", slow_every, ticks,
					 rate, dt_s);
			assert_true(fabs(base_dt_s - dt_s) < 1e-9);
			assert_int_equal(base->nvlink_n, v->s.nvlink_n);
			ticks++;
		}
		carried += sampler_slow_read_ns(v) < v->s.timestamp_ns;
		*prev = *v;
	}
	assert_int_equal(ticks, 15);
	if (slow_every > 1)
		assert_true(carried > 0); /* the case the rate must survive did occur */
	else
		assert_int_equal(carried, 0);
	sampler_stop(s);
	close_sim(be);
	free(v);
	free(prev);
}

static void test_rates_between_real_readings(void **state)
{
	(void)state;
	check_steady_rate(5);
	check_steady_rate(1);
}

/* A backend that, like NVML for the counters that need a call each, reads a
 * link's CRC counter only every 10th sample and serves that reading between
 * (nvlink_err_read_ns): the counter grows 2000/s of its own clock. */
static unsigned cached_calls;
static uint64_t cached_read_ns;

static int cached_static(struct gpu_backend *be, unsigned gpu, struct gpu_static *out, struct gpu_err *err)
{
	(void)be;
	(void)err;
	memset(out, 0, sizeof(*out));
	out->index = gpu;
	return GPU_OK;
}

static int cached_sample(struct gpu_backend *be, unsigned gpu, unsigned groups, struct gpu_sample *out,
			 struct gpu_err *err)
{
	(void)gpu;
	(void)groups;
	(void)err;
	memset(out, 0, sizeof(*out));
	out->timestamp_ns = gpu_backend_now_ns(be);
	if (cached_calls++ % 10 == 0)
		cached_read_ns = out->timestamp_ns;
	else
		out->nvlink_err_read_ns = cached_read_ns;
	out->nvlink_n = 1;
	VAL_SET(out->nvlink[0].crc_flit_errors, cached_read_ns / 500000); /* 2000 per second */
	return GPU_OK;
}

static const struct gpu_backend_ops cached_ops = { .name = "cached", .static_info = cached_static,
						   .sample = cached_sample };

/* The rate of the CRC counters between their own two readings at every tick
 * (over one tick it was 0 for nine ticks and ten times the rate at the tenth). */
static void test_nvlink_rate_between_their_readings(void **state)
{
	(void)state;
	struct gpu_backend be = { .ops = &cached_ops, .gpu_count = 1 };
	struct sampler_config cfg;
	sampler_config_default(&cfg);
	cfg.interval_ns = 10 * MS;
	cfg.processes = cfg.events = false;
	struct sampler *s = NULL;
	struct gpu_err err = { "" };
	assert_int_equal(sampler_start(&s, &be, &cfg, &err), GPU_OK);
	struct gpu_view *v = gpu_view_new();
	unsigned ticks = 0;
	uint64_t last = 0, end = mono() + 20000 * MS;
	while (ticks < 25 && mono() < end) {
		sampler_read_gpu(s, 0, v);
		if (!v->up || v->s.timestamp_ns == last) {
			sleep_ms(2);
			continue;
		}
		last = v->s.timestamp_ns;
		struct nvlink_err_counts base[GPU_MAX_NVLINKS];
		double dt_s;
		if (sampler_nvlink_err_base(v, NULL, base, &dt_s) < 1)
			continue; /* one reading of the counters so far */
		double rate = (double)(v->s.nvlink[0].crc_flit_errors.v - base[0].crc_flit.v) / dt_s;
		if (rate < 1990 || rate > 2010)
			fail_msg("tick %u: %.0f/s over %.3f s, want 2000/s", ticks, rate, dt_s);
		ticks++;
	}
	assert_int_equal(ticks, 25);
	sampler_stop(s);
	free(v);
}

/* A GPU hung from the start: its first sample never comes, stop() still returns. */
static void test_stop_with_hung_gpu(void **state)
{
	(void)state;
	struct gpu_backend *be = open_sim("h200x8,latency_us=100,hang_gpu=4");
	struct sampler *s = start(be, 40 * MS, 200 * MS);
	assert_false(sampler_wait_first(s, 600 * MS));
	sleep_ms(300);
	struct gpu_view *v = gpu_view_new();
	sampler_read_gpu(s, 4, v);
	assert_false(v->up);
	assert_non_null(strstr(v->last_error, "has not returned"));
	wait_for(s, 3, is_up, 20000, "up next to a hung GPU");
	uint64_t t0 = mono();
	sampler_stop(s);
	assert_true(mono() - t0 < 10000 * MS);
	close_sim(be);
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_gpu_sampled),
		cmocka_unit_test(test_system_facts_given),
		cmocka_unit_test(test_links_of_the_gpus_there_are),
		cmocka_unit_test(test_views_tables_packed),
		cmocka_unit_test(test_lost_gpu_is_down_others_served),
		cmocka_unit_test(test_static_read_when_gpu_returns),
		cmocka_unit_test(test_hung_call_goes_stale_alone),
		cmocka_unit_test(test_xid_counted_and_kept),
		cmocka_unit_test(test_slow_group_values_carried),
		cmocka_unit_test(test_rates_between_real_readings),
		cmocka_unit_test(test_nvlink_rate_between_their_readings),
		cmocka_unit_test(test_stop_with_hung_gpu),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
