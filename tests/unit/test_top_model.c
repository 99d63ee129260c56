/* SPDX-License-Identifier: Apache-2.0 */
/* test_top_model.c - gpuctl top's pure parts: layout for 1..64 GPUs and
 * terminal sizes, history ring, process list and sorting, text pieces,
 * /proc/self/stat parsing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view/top_model.h"

static void check_fits(unsigned n, unsigned rows, unsigned cols, const struct top_layout *L)
{
	assert_false(L->too_small);
	/* everything fits in the terminal, and a process list is always there */
	assert_int_equal(L->header_rows + L->gpu_rows + L->chart_rows + L->proc_rows + 1, rows);
	assert_true(L->proc_rows >= 4);
	if (L->kind == TOP_GRID) {
		assert_true(L->grid_cols * L->cell_width <= cols);
		if (!L->gpu_scroll)
			assert_true(L->grid_cols * L->gpu_rows >= n);
	} else {
		assert_int_equal(L->gpu_rows, (L->kind == TOP_PANELS ? 2 : 1) * n);
	}
}

static void test_layouts(void **state)
{
	(void)state;
	struct top_layout L;
	/* 8 GPUs on a big terminal: two-line panels with charts */
	top_layout_choose(8, 50, 160, true, &L);
	assert_int_equal(L.kind, TOP_PANELS);
	assert_true(L.chart_rows >= 5 && L.chart_rows <= 12);
	check_fits(8, 50, 160, &L);
	/* 8 GPUs on 80x24: one line each */
	top_layout_choose(8, 24, 80, true, &L);
	assert_int_equal(L.kind, TOP_LINES);
	check_fits(8, 24, 80, &L);
	/* 16 GPUs on 160x50: lines */
	top_layout_choose(16, 50, 160, true, &L);
	assert_int_equal(L.kind, TOP_LINES);
	check_fits(16, 50, 160, &L);
	/* 64 GPUs on 160x50: a grid of wide cells, 6 per row, no scrolling */
	top_layout_choose(64, 50, 160, true, &L);
	assert_int_equal(L.kind, TOP_GRID);
	assert_int_equal(L.cell_width, TOP_GRID_CELL);
	assert_int_equal(L.grid_cols, 6);
	assert_int_equal(L.gpu_rows, 11);
	assert_false(L.gpu_scroll);
	check_fits(64, 50, 160, &L);
	/* 64 GPUs on 80x24: narrow cells, still every GPU on screen */
	top_layout_choose(64, 24, 80, true, &L);
	assert_int_equal(L.kind, TOP_GRID);
	assert_int_equal(L.cell_width, TOP_GRID_CELL_NARROW);
	assert_false(L.gpu_scroll);
	check_fits(64, 24, 80, &L);
	/* 64 GPUs on 40x12: the GPU area scrolls but the process list stays */
	top_layout_choose(64, 12, 40, false, &L);
	assert_true(L.gpu_scroll);
	assert_int_equal(L.chart_rows, 0);
	check_fits(64, 12, 40, &L);
	/* no charts asked: none given */
	top_layout_choose(2, 50, 160, false, &L);
	assert_int_equal(L.chart_rows, 0);
	check_fits(2, 50, 160, &L);
	/* every size from the minimum up fits */
	for (unsigned n = 1; n <= 64; n *= 2)
		for (unsigned r = TOP_MIN_ROWS; r <= 60; r += 7)
			for (unsigned c = TOP_MIN_COLS; c <= 200; c += 37) {
				top_layout_choose(n, r, c, true, &L);
				check_fits(n, r, c, &L);
			}
	top_layout_choose(8, TOP_MIN_ROWS - 1, 80, true, &L);
	assert_true(L.too_small);
	top_layout_choose(8, 24, TOP_MIN_COLS - 1, true, &L);
	assert_true(L.too_small);
}

static void test_history(void **state)
{
	(void)state;
	struct top_hist *h = calloc(1, sizeof(*h));
	assert_true(isnan(top_hist_get(h, TOP_SER_UTIL, 0)));
	struct gpu_view v;
	memset(&v, 0, sizeof(v));
	v.up = true;
	VAL_SET(v.s.mem_used_bytes, 25);
	VAL_SET(v.s.mem_total_bytes, 100);
	VAL_SET(v.s.power_mw, 350000);
	VAL_SET(v.s.power_limit_mw, 700000);
	for (unsigned i = 0; i < TOP_HIST + 10; i++) {
		VAL_SET(v.s.util_gpu_pct, i % 101);
		top_hist_push_view(h, &v);
	}
	assert_int_equal(h->n, TOP_HIST);
	assert_true(top_hist_get(h, TOP_SER_UTIL, 0) == (float)((TOP_HIST + 9) % 101));
	assert_true(top_hist_get(h, TOP_SER_UTIL, 3) == (float)((TOP_HIST + 6) % 101));
	assert_true(top_hist_get(h, TOP_SER_MEM, 0) == 25.0f);
	assert_true(top_hist_get(h, TOP_SER_POWER, 0) == 50.0f);
	assert_true(isnan(top_hist_get(h, TOP_SER_UTIL, TOP_HIST)));
	/* unknown values and a down GPU are gaps, not zeros */
	VAL_MARK(v.s.util_gpu_pct, VAL_UNSUPPORTED);
	top_hist_push_view(h, &v);
	assert_true(isnan(top_hist_get(h, TOP_SER_UTIL, 0)));
	v.up = false;
	top_hist_push_view(h, &v);
	assert_true(isnan(top_hist_get(h, TOP_SER_MEM, 0)));
	free(h);
}

static void add_proc(struct snapshot *s, unsigned g, uint32_t pid, const char *user, const char *name, uint64_t mem)
{
	struct gpu_view *v = &s->gpu[g];
	struct gpu_process *p = &v->procs[v->nproc++];
	p->pid = pid;
	snprintf(p->user, sizeof(p->user), "%s", user);
	snprintf(p->name, sizeof(p->name), "%s", name);
	if (mem)
		VAL_SET(p->used_mem_bytes, mem);
	else
		VAL_MARK(p->used_mem_bytes, VAL_UNSUPPORTED);
	p->type = 'C';
}

static void test_processes(void **state)
{
	(void)state;
	struct snapshot *s = snapshot_new(GPU_MAX_GPUS);
	s->n = 3;
	for (unsigned g = 0; g < 3; g++)
		s->gpu[g].up = true;
	add_proc(s, 0, 300, "carol", "train", 10);
	add_proc(s, 0, 100, "alice", "Python3", 30);
	add_proc(s, 1, 200, "bob", "vllm", 0);
	add_proc(s, 2, 400, "dave", "serve", 20);
	struct top_proc p[16];
	/* GPU 2 not selected */
	unsigned n = top_procs_collect(s, 0x3, p, 16);
	assert_int_equal(n, 3);
	top_procs_sort(p, n, TOP_SORT_MEM, false);
	assert_int_equal(p[0].pid, 100); /* largest first, unknown last */
	assert_int_equal(p[1].pid, 300);
	assert_int_equal(p[2].pid, 200);
	top_procs_sort(p, n, TOP_SORT_MEM, true);
	assert_int_equal(p[0].pid, 200);
	top_procs_sort(p, n, TOP_SORT_PID, false);
	assert_int_equal(p[0].pid, 100);
	assert_int_equal(p[2].pid, 300);
	top_procs_sort(p, n, TOP_SORT_NAME, false); /* case-insensitive */
	assert_string_equal(p[0].name, "Python3");
	assert_string_equal(p[1].name, "train");
	top_procs_sort(p, n, TOP_SORT_USER, true);
	assert_string_equal(p[0].user, "carol");
	/* a down GPU lists nothing; the limit is kept */
	s->gpu[0].up = false;
	assert_int_equal(top_procs_collect(s, 0x7, p, 16), 2);
	s->gpu[0].up = true;
	assert_int_equal(top_procs_collect(s, 0x7, p, 2), 2);
	assert_string_equal(top_sort_name(TOP_SORT_MEM), "memory");
	/* --user keeps that user's processes, in order; none or "" keeps all */
	n = top_procs_collect(s, 0x7, p, 16);
	top_procs_sort(p, n, TOP_SORT_PID, false);
	assert_int_equal(top_procs_filter_user(p, n, NULL), 4);
	assert_int_equal(top_procs_filter_user(p, n, ""), 4);
	assert_int_equal(top_procs_filter_user(p, n, "Alice"), 0); /* names are exact */
	assert_int_equal(top_procs_filter_user(p, n, "dave"), 1);
	assert_int_equal(p[0].pid, 400);
	free(s);
}

/* Batch mode's host side: CPU % of one core, runtime as ps writes it, the summary. */
static void test_host_pieces(void **state)
{
	(void)state;
	/* 150 ticks of 100 per second over 2 s: 75 % of one core; 4 cores' worth is 400 % */
	assert_true(fabs(top_cpu_pct(50, 200, 2.0, 100) - 75.0) < 1e-9);
	assert_true(fabs(top_cpu_pct(0, 800, 2.0, 100) - 400.0) < 1e-9);
	assert_true(isnan(top_cpu_pct(200, 50, 2.0, 100))); /* a new process with the old pid */
	assert_true(isnan(top_cpu_pct(0, 1, 0.0, 100)));
	assert_true(isnan(top_cpu_pct(0, 1, 1.0, 0)));
	/* started 1000 ticks (10 s) after boot, uptime 70 s: 60 s */
	assert_true(fabs(top_runtime_s(1000, 70.0, 100) - 60.0) < 1e-9);
	assert_true(isnan(top_runtime_s(100000, 70.0, 100)));
	char b[32];
	top_fmt_runtime(59.9, b, sizeof(b));
	assert_string_equal(b, "00:59");
	top_fmt_runtime(3599, b, sizeof(b));
	assert_string_equal(b, "59:59");
	top_fmt_runtime(3600 + 62, b, sizeof(b));
	assert_string_equal(b, "01:01:02");
	top_fmt_runtime(2 * 86400 + 3 * 3600 + 4 * 60 + 5, b, sizeof(b));
	assert_string_equal(b, "2-03:04:05");
	top_fmt_runtime(NAN, b, sizeof(b));
	assert_string_equal(b, "-");
	/* the summary: a down GPU counted apart, sums over those that report */
	struct snapshot *s = snapshot_new(GPU_MAX_GPUS);
	s->n = 3;
	for (unsigned g = 0; g < 3; g++) {
		s->gpu[g].up = g != 1;
		s->gpu[g].s.power_mw = (u64v){ 500000, VAL_OK };
		s->gpu[g].s.util_gpu_pct = (u64v){ 40 + 20 * g, VAL_OK };
	}
	unsigned shown[3] = { 0, 1, 2 };
	struct top_summary sum;
	top_summary_compute(s, shown, 3, &sum);
	assert_int_equal(sum.ngpus, 3);
	assert_int_equal(sum.down, 1);
	assert_true(fabs(sum.power_w - 1000.0) < 1e-9);
	assert_true(fabs(sum.util_pct - 60.0) < 1e-9); /* (40 + 80) / 2 */
	assert_true(isnan(sum.limit_w));
	assert_true(isnan(sum.mem_total));
	free(s);
}

static void test_pieces(void **state)
{
	(void)state;
	char b[64];
	top_bar(b, sizeof(b), 10, 0.5);
	assert_string_equal(b, "|||||     ");
	top_bar(b, sizeof(b), 4, 2.0);
	assert_string_equal(b, "||||");
	top_bar(b, sizeof(b), 4, NAN);
	assert_string_equal(b, "    ");
	top_bar(b, 4, 10, 1.0); /* never past the buffer */
	assert_string_equal(b, "|||");
	/* a 4-row chart at 50%: bottom two rows full, top two empty */
	assert_int_equal(top_chart_eighths(50, 3, 4), 8);
	assert_int_equal(top_chart_eighths(50, 2, 4), 8);
	assert_int_equal(top_chart_eighths(50, 1, 4), 0);
	assert_int_equal(top_chart_eighths(100, 0, 4), 8);
	assert_int_equal(top_chart_eighths(12.5f, 3, 4), 4);
	assert_int_equal(top_chart_eighths(NAN, 3, 4), 0);
	assert_int_equal(top_chart_eighths(0, 3, 4), 0);
	top_fmt_bytes(4ull << 20, b, sizeof(b));
	assert_string_equal(b, "4.0M");
	top_fmt_bytes(143771ull << 20, b, sizeof(b));
	assert_string_equal(b, "140G");
	top_fmt_bytes(512ull << 20, b, sizeof(b));
	assert_string_equal(b, "512M");
	top_fmt_rate(0.1, b, sizeof(b));
	assert_string_equal(b, "0M");
	top_fmt_rate(850, b, sizeof(b));
	assert_string_equal(b, "850M");
	top_fmt_rate(106943, b, sizeof(b));
	assert_string_equal(b, "107G");
	top_fmt_rate(12500, b, sizeof(b));
	assert_string_equal(b, "12.5G");
	top_fmt_rate(NAN, b, sizeof(b));
	assert_string_equal(b, "-");
	struct gpu_static st;
	memset(&st, 0, sizeof(st));
	top_model_name(&st, b, sizeof(b));
	assert_string_equal(b, "?");
	snprintf(st.name.s, sizeof(st.name.s), "NVIDIA GeForce RTX 4090");
	st.name.st = VAL_OK;
	top_model_name(&st, b, sizeof(b));
	assert_string_equal(b, "RTX 4090"); /* vendor words dropped */
	snprintf(st.catalog_model.s, sizeof(st.catalog_model.s), "H200 SXM");
	st.catalog_model.st = VAL_OK;
	top_model_name(&st, b, sizeof(b));
	assert_string_equal(b, "H200 SXM"); /* the catalog's key wins */
}

/* What top samples: everything it shows, nothing it does not (on an H200 the
 * NVLink error counters alone were most of top's CPU). */
static void test_sampler_groups(void **state)
{
	(void)state;
	unsigned g = top_sampler_groups();
	unsigned shown = GPU_GRP_BASIC | GPU_GRP_ECC | GPU_GRP_PCIE | GPU_GRP_NVLINK;
	assert_int_equal(g & shown, shown);
	assert_int_equal(g & GPU_GRP_ENERGY, 0);
	assert_int_equal(g & GPU_GRP_VIOL, 0);
	assert_int_equal(g & GPU_GRP_NVLINK_ERR, 0);
	assert_int_equal(g & ~GPU_GRP_ALL, 0);
	/* the slow groups about every 5 s */
	assert_int_equal(top_slow_every(1000000000ull), 5);
	assert_int_equal(top_slow_every(500000000ull), 10);
	assert_int_equal(top_slow_every(2000000000ull), 2);
	assert_int_equal(top_slow_every(5000000000ull), 1);
	assert_int_equal(top_slow_every(60000000000ull), 1);
	assert_int_equal(top_slow_every(0), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sampler_groups),
		cmocka_unit_test(test_layouts),
		cmocka_unit_test(test_history),
		cmocka_unit_test(test_processes),
		cmocka_unit_test(test_pieces),
		cmocka_unit_test(test_host_pieces),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
