/* SPDX-License-Identifier: Apache-2.0 */
/* test_cpu_ref.c - the CPU references of the application proxies (what the GPU
 * results are judged by), their generators and the comparison helpers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels_host/cpu_ref.h"

static void test_rng_is_deterministic_and_in_range(void **state)
{
	(void)state;
	uint64_t a = 42, b = 42, c = 43;
	int differ = 0;
	for (int i = 0; i < 1000; i++) {
		uint64_t x = kref_rand_u64(&a), y = kref_rand_u64(&b), z = kref_rand_u64(&c);
		assert_true(x == y);
		differ += x != z;
		double u = kref_rand_unit(&a);
		(void)kref_rand_unit(&b);
		assert_true(u >= 0.0 && u < 1.0);
	}
	assert_true(differ > 990);
}

static void test_compare_counts_mismatches_and_nans(void **state)
{
	(void)state;
	double ref[5] = { 1.0, -2.0, 4.0, 1e-9, 8.0 };
	double got[5] = { 1.0, -2.0 * (1 + 1e-7), 4.1, 0.0, NAN };
	struct gk_verify v;
	kref_compare_f64(got, ref, 5, 1e-6, 1e-3, &v);
	assert_int_equal(v.checked, 5);
	assert_int_equal(v.nans, 1);
	assert_int_equal(v.mismatches, 1); /* 4.1 vs 4.0; the near-zero one is under the floor */
	assert_false(v.verified);
	assert_true(v.max_err > 0.02 && v.max_err < 0.03);
	float rf[3] = { 1.0f, 2.0f, 3.0f }, gf[3] = { 1.0f, 2.0f, 3.0f };
	kref_compare_f32(gf, rf, 3, 1e-6, 0, &v);
	assert_true(v.verified);
	assert_int_equal(v.mismatches, 0);
	kref_compare_f32(gf, rf, 0, 1e-6, 0, &v);
	assert_false(v.verified); /* nothing compared is no pass */
}

struct sum_ctx { int *hits; };

static void mark(int begin, int end, void *vctx)
{
	struct sum_ctx *c = vctx;
	for (int i = begin; i < end; i++)
		c->hits[i]++;
}

static void test_parallel_for_covers_each_index_once(void **state)
{
	(void)state;
	int hits[1001];
	for (int nt = 0; nt <= 9; nt += 3) {
		memset(hits, 0, sizeof hits);
		struct sum_ctx c = { hits };
		kref_parallel_for(1001, nt, mark, &c);
		for (int i = 0; i < 1001; i++)
			assert_int_equal(hits[i], 1);
	}
}

static void test_csr_matrix_and_spmv(void **state)
{
	(void)state;
	struct kref_csr m;
	assert_int_equal(kref_csr_make(&m, 1000, 27, 7), 0);
	assert_int_equal(m.nnz, 27000);
	assert_int_equal(m.row_ptr[1000], 27000);
	for (int64_t k = 0; k < m.nnz; k++) {
		assert_true(m.col_idx[k] >= 0 && m.col_idx[k] < 1000);
		assert_true(fabs(m.vals[k]) >= 0.0625 && fabs(m.vals[k]) <= 1.0);
	}
	assert_int_equal(m.col_idx[27 * 5], 5); /* the diagonal comes first in each row */
	double x[1000], y1[1000], y8[1000];
	for (int i = 0; i < 1000; i++)
		x[i] = 1.0 + i * 1e-3;
	kref_spmv(&m, x, y1, 1);
	kref_spmv(&m, x, y8, 8);
	for (int r = 0; r < 1000; r++) {
		double want = 0;
		for (int64_t k = m.row_ptr[r]; k < m.row_ptr[r + 1]; k++)
			want += m.vals[k] * x[m.col_idx[k]];
		assert_float_equal(y1[r], want, 1e-12);
		assert_float_equal(y8[r], want, 1e-12);
	}
	kref_csr_free(&m);
	assert_null(m.vals);
	assert_int_equal(kref_csr_make(&m, 10, 28, 1), -1);
	assert_int_equal(kref_csr_make(&m, 0, 27, 1), -1);
}

static void test_lj_two_atoms_match_the_formula(void **state)
{
	(void)state;
	float pos[6] = { 1.0f, 1.0f, 1.0f, 2.2f, 1.0f, 1.0f };
	double f[6];
	double e = kref_lj(pos, 2, 10.0f, 2.5f, 1.0f, 1.0f, f, 1);
	double r = (double)(2.2f - 1.0f), s6 = pow(1.0 / r, 6);
	assert_float_equal(e, 4 * s6 * (s6 - 1), 1e-6);
	double fmag = 24 * s6 * (2 * s6 - 1) / r; /* along x, repulsive when positive */
	assert_float_equal(f[0], -fmag, 1e-4 * fabs(fmag) + 1e-9);
	assert_float_equal(f[3], fmag, 1e-4 * fabs(fmag) + 1e-9);
	assert_float_equal(f[1], 0, 1e-12);
	/* periodic images: the same pair across the box edge */
	float wrap[6] = { 0.1f, 1.0f, 1.0f, 8.9f, 1.0f, 1.0f };
	double e2 = kref_lj(wrap, 2, 10.0f, 2.5f, 1.0f, 1.0f, f, 1);
	assert_float_equal(e2, e, 1e-4 * fabs(e));
	/* beyond the cut-off: nothing */
	float far[6] = { 1.0f, 1.0f, 1.0f, 4.0f, 1.0f, 1.0f };
	assert_float_equal(kref_lj(far, 2, 10.0f, 2.5f, 1.0f, 1.0f, f, 1), 0.0, 0);
}

static void test_lj_lattice_obeys_newtons_third_law(void **state)
{
	(void)state;
	int n = 500;
	float *pos = malloc(sizeof(float) * 3 * n);
	double *f = malloc(sizeof(double) * 3 * n), *f4 = malloc(sizeof(double) * 3 * n);
	float box = kref_lj_positions(pos, n, 0.8, 3);
	assert_float_equal(box, cbrt(n / 0.8), 1e-4);
	for (int i = 0; i < 3 * n; i++)
		assert_true(pos[i] >= 0 && pos[i] < box);
	double e1 = kref_lj(pos, n, box, 2.5f, 1.0f, 1.0f, f, 1);
	double e4 = kref_lj(pos, n, box, 2.5f, 1.0f, 1.0f, f4, 4);
	assert_float_equal(e1, e4, 1e-9 * fabs(e1));
	double sum[3] = { 0, 0, 0 }, maxf = 0;
	for (int i = 0; i < n; i++)
		for (int a = 0; a < 3; a++) {
			sum[a] += f[3 * i + a];
			maxf = fmax(maxf, fabs(f[3 * i + a]));
			assert_float_equal(f[3 * i + a], f4[3 * i + a], 1e-9 * maxf + 1e-12);
		}
	assert_true(maxf > 0);
	for (int a = 0; a < 3; a++)
		assert_true(fabs(sum[a]) < 1e-6 * maxf * n);
	assert_true(e1 < 0); /* a liquid-density lattice is bound */
	free(pos);
	free(f);
	free(f4);
}

/* Brute force: every triangle for every ray, the same intersection test. */
static void brute(const struct kref_scene *s, float *t, int *id)
{
	struct kref_scene one = *s;
	struct gk_bvh_node root;
	for (int a = 0; a < 3; a++) {
		root.lo[a] = -10;
		root.hi[a] = 10;
	}
	root.left_or_first = 0;
	root.count = s->ntris; /* a single leaf holding everything */
	one.nodes = &root;
	one.nnodes = 1;
	kref_bvh_trace(&one, t, id, 1);
}

static void test_bvh_matches_brute_force(void **state)
{
	(void)state;
	struct kref_scene s;
	assert_int_equal(kref_scene_make(&s, 3000, 2000, 11), 0);
	assert_true(s.nnodes > 1 && s.nnodes < 2 * 3000);
	/* every triangle sits in exactly one leaf, leaves inside their bounds */
	int *seen = calloc(3000, sizeof(int));
	for (int i = 0; i < s.nnodes; i++) {
		const struct gk_bvh_node *nd = &s.nodes[i];
		if (nd->count == 0) {
			assert_true(nd->left_or_first > i && nd->left_or_first + 1 < s.nnodes);
			continue;
		}
		for (int k = 0; k < nd->count; k++) {
			seen[nd->left_or_first + k]++;
			for (int v = 0; v < 3; v++)
				for (int a = 0; a < 3; a++) {
					float x = s.tris[9 * (nd->left_or_first + k) + 3 * v + a];
					assert_true(x >= nd->lo[a] && x <= nd->hi[a]);
				}
		}
	}
	for (int i = 0; i < 3000; i++)
		assert_int_equal(seen[i], 1);
	free(seen);
	float *t = malloc(sizeof(float) * 2000), *tb = malloc(sizeof(float) * 2000);
	int *id = malloc(sizeof(int) * 2000), *idb = malloc(sizeof(int) * 2000);
	kref_bvh_trace(&s, t, id, 4);
	brute(&s, tb, idb);
	int hits = 0;
	for (int i = 0; i < 2000; i++) {
		assert_int_equal(id[i], idb[i]);
		if (id[i] >= 0) {
			hits++;
			assert_float_equal(t[i], tb[i], 0);
		} else {
			assert_true(isinf(t[i]));
		}
	}
	assert_true(hits > 200 && hits < 2000); /* the scene is neither empty nor a wall */
	struct gk_verify v;
	kref_compare_hits(t, id, tb, idb, 2000, 1e-6, &v);
	assert_true(v.verified);
	id[0] = id[0] >= 0 ? -1 : 0; /* one ray flips between hit and miss */
	t[1] *= 1.01f;
	kref_compare_hits(t, id, tb, idb, 2000, 1e-6, &v);
	assert_false(v.verified);
	assert_true(v.mismatches >= 1 && v.mismatches <= 2);
	free(t);
	free(tb);
	free(id);
	free(idb);
	kref_scene_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rng_is_deterministic_and_in_range),
		cmocka_unit_test(test_compare_counts_mismatches_and_nans),
		cmocka_unit_test(test_parallel_for_covers_each_index_once),
		cmocka_unit_test(test_csr_matrix_and_spmv),
		cmocka_unit_test(test_lj_two_atoms_match_the_formula),
		cmocka_unit_test(test_lj_lattice_obeys_newtons_third_law),
		cmocka_unit_test(test_bvh_matches_brute_force),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
