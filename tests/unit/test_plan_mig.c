/* SPDX-License-Identifier: Apache-2.0 */
/* test_plan_mig.c - MIG placement rules against the catalog's published maxima, layouts
 * that fit, and the reason when none does. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/catalog.h"
#include "core/data_path.h"
#include "plan/plan.h"

static struct catalog cat;

static int load(void **state)
{
	(void)state;
	char err[256];
	return catalog_load_dir(&cat, getenv("GPUCTL_DATA_DIR"), err, sizeof(err));
}

static int unload(void **state)
{
	(void)state;
	catalog_free(&cat);
	return 0;
}

static const struct cat_gpu *gpu(const char *key)
{
	const struct cat_gpu *g = catalog_find(&cat, key);
	assert_non_null(g);
	return g;
}

static void test_placements_match_published_maxima(void **state)
{
	(void)state;
	unsigned checked = 0;
	for (size_t i = 0; i < cat.n; i++)
		for (unsigned k = 0; k < cat.gpus[i].mig_n; k++) {
			unsigned starts[16];
			unsigned n = plan_mig_placements(&cat.gpus[i], k, starts, 16);
			if (n != cat.gpus[i].mig[k].max_instances)
				print_error("%s %s: %u placements, catalog max %u\n", cat.gpus[i].key,
					    cat.gpus[i].mig[k].name, n, cat.gpus[i].mig[k].max_instances);
			assert_int_equal(n, cat.gpus[i].mig[k].max_instances);
			checked++;
		}
	assert_true(checked >= 30);
	/* A100 80GB, as `nvidia-smi mig -lgipp` lists: 3g at {0,4}, 2g at {0,2,4} */
	const struct cat_gpu *a = gpu("A100 SXM 80GB");
	unsigned starts[16];
	for (unsigned k = 0; k < a->mig_n; k++) {
		unsigned n = plan_mig_placements(a, k, starts, 16);
		if (strcmp(a->mig[k].name, "3g.40gb") == 0) {
			assert_int_equal(n, 2);
			assert_int_equal(starts[0], 0);
			assert_int_equal(starts[1], 4);
		}
		if (strcmp(a->mig[k].name, "2g.20gb") == 0) {
			assert_int_equal(n, 3);
			assert_int_equal(starts[2], 4);
		}
	}
}

static void test_layout_that_fits(void **state)
{
	(void)state;
	const struct cat_gpu *g = gpu("H200 SXM");
	struct plan_mig_req r[PLAN_MIG_MAX];
	unsigned n;
	char err[256];
	struct plan_mig_layout l;
	assert_int_equal(plan_mig_parse(g, "3x1g.18gb,1x3g.71gb", r, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 2);
	assert_int_equal(plan_mig_layout(g, r, n, &l, err, sizeof(err)), 0);
	assert_int_equal(l.n, 4);
	/* the 3g goes first; no two instances share a memory or compute slice */
	assert_string_equal(l.s[0].profile, "3g.71gb");
	unsigned mem = 0, cmp = 0;
	for (unsigned i = 0; i < l.n; i++) {
		unsigned mm = ((1u << l.s[i].mem_size) - 1) << l.s[i].mem_start;
		unsigned cm = ((1u << l.s[i].cmp_size) - 1) << l.s[i].cmp_start;
		assert_int_equal(mem & mm, 0);
		assert_int_equal(cmp & cm, 0);
		mem |= mm;
		cmp |= cm;
	}
	/* the guide's claim C11: one GPU splits into up to 7 instances */
	assert_int_equal(plan_mig_parse(g, "7x1g", r, &n, err, sizeof(err)), 0);
	assert_int_equal(plan_mig_layout(g, r, n, &l, err, sizeof(err)), 0);
	assert_int_equal(l.n, 7);
	/* 4g + 3g use the whole GPU */
	assert_int_equal(plan_mig_parse(g, "4g.71gb,3g.71gb", r, &n, err, sizeof(err)), 0);
	assert_int_equal(plan_mig_layout(g, r, n, &l, err, sizeof(err)), 0);
	/* 2g + 2g + 3g: the 3g must take position 4 */
	assert_int_equal(plan_mig_parse(g, "2x2g.35gb,3g.71gb", r, &n, err, sizeof(err)), 0);
	assert_int_equal(plan_mig_layout(g, r, n, &l, err, sizeof(err)), 0);
	assert_int_equal(l.s[0].mem_start, 4);
	/* the nvidia-smi argument: each instance as profile:start, in the layout's order */
	char cgi[256];
	int len = plan_mig_cgi(&l, cgi, sizeof(cgi));
	assert_int_equal(len, (int)strlen(cgi));
	assert_string_equal(cgi, "3g.71gb:4,2g.35gb:0,2g.35gb:2");
	assert_int_equal(plan_mig_cgi(&l, cgi, 12), -1); /* too small: refused, not cut */
	l.n = 0;
	assert_int_equal(plan_mig_cgi(&l, cgi, sizeof(cgi)), 0);
	assert_string_equal(cgi, "");
}

static void test_why_none_fits(void **state)
{
	(void)state;
	const struct cat_gpu *g = gpu("H200 SXM");
	struct plan_mig_req r[PLAN_MIG_MAX];
	unsigned n;
	char err[256];
	struct plan_mig_layout l;
	assert_int_equal(plan_mig_parse(g, "8x1g.18gb", r, &n, err, sizeof(err)), 0);
	assert_int_equal(plan_mig_layout(g, r, n, &l, err, sizeof(err)), -1);
	assert_string_equal(err, "8 x 1g.18gb asked, at most 7 fit on one H200 SXM");
	assert_int_equal(plan_mig_parse(g, "2x3g.71gb,1x1g.18gb", r, &n, err, sizeof(err)), 0);
	assert_int_equal(plan_mig_layout(g, r, n, &l, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "9 memory slices asked"));
	assert_int_equal(plan_mig_parse(g, "4g.71gb,2x2g.35gb", r, &n, err, sizeof(err)), 0);
	assert_int_equal(plan_mig_layout(g, r, n, &l, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "8 compute slices asked"));
	/* a GPU whose slices add up but whose positions do not: 4 compute and 8 memory
	 * slices; two 2-slice-memory instances (starts 0, 2) leave no 1-slice position */
	struct cat_gpu syn;
	memset(&syn, 0, sizeof(syn));
	snprintf(syn.key, sizeof(syn.key), "synthetic");
	syn.mig_n = 3;
	struct cat_mig_profile p0 = { "1g.2m", 1, 2, 2, 2, 1 }, p1 = { "1g.1m", 1, 1, 1, 4, 1 },
			       p2 = { "4g.8m", 4, 8, 8, 1, 4 };
	syn.mig[0] = p0;
	syn.mig[1] = p1;
	syn.mig[2] = p2;
	assert_int_equal(plan_mig_parse(&syn, "2x1g.2m,2x1g.1m", r, &n, err, sizeof(err)), 0);
	assert_int_equal(plan_mig_layout(&syn, r, n, &l, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "no placement fits"));
}

static void test_request_parse_errors(void **state)
{
	(void)state;
	struct plan_mig_req r[PLAN_MIG_MAX];
	unsigned n;
	char err[256];
	assert_int_equal(plan_mig_parse(gpu("H200 SXM"), "2x5g", r, &n, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "unknown MIG profile '5g' for 'H200 SXM'"));
	assert_non_null(strstr(err, "1g.18gb"));
	assert_int_equal(plan_mig_parse(gpu("H200 SXM"), "0x1g", r, &n, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "count"));
	assert_int_equal(plan_mig_parse(gpu("H200 SXM"), "", r, &n, err, sizeof(err)), -1);
	assert_int_equal(plan_mig_parse(gpu("L40S"), "1x1g", r, &n, err, sizeof(err)), -1);
	assert_string_equal(err, "'L40S' does not support MIG");
	/* "1g" picks the smallest 1g profile; repeats add up */
	assert_int_equal(plan_mig_parse(gpu("A100 SXM 80GB"), "1g,2x1g", r, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 1);
	assert_string_equal(r[0].profile, "1g.10gb");
	assert_int_equal(r[0].count, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_placements_match_published_maxima),
		cmocka_unit_test(test_layout_that_fits),
		cmocka_unit_test(test_why_none_fits),
		cmocka_unit_test(test_request_parse_errors),
	};
	return cmocka_run_group_tests(tests, load, unload);
}
