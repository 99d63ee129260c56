/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cpu_ref_bvh.c - the ray-tracing proxy's scene (a soup of small random
 * triangles in the unit cube, rays from a surrounding sphere aimed into it),
 * its BVH (median split on the longest centroid axis, up to 4 triangles a
 * leaf, children stored side by side), and the CPU traversal: the same
 * closest-hit stack walk and Moller-Trumbore test as gk_apps.cu, in the same
 * single-precision operations (the kernel is built without FMA contraction),
 * so both sides should agree ray for ray.
 */
#include "kernels_host/cpu_ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LEAF_MAX 4
#define STACK_MAX 64

struct build {
	struct kref_scene *s;
	const float *tris_in;
	float *cent;   /* 3 a triangle */
	int *idx;      /* triangle order, permuted into leaf order */
	int nnodes;
};

static float tri_v(const float *t, int v, int a) { return t[3 * v + a]; }

static void node_bounds(struct build *b, struct gk_bvh_node *nd, int first, int count)
{
	for (int a = 0; a < 3; a++) {
		nd->lo[a] = INFINITY;
		nd->hi[a] = -INFINITY;
	}
	for (int i = first; i < first + count; i++) {
		const float *t = b->tris_in + 9 * (size_t)b->idx[i];
		for (int v = 0; v < 3; v++)
			for (int a = 0; a < 3; a++) {
				float x = tri_v(t, v, a);
				if (x < nd->lo[a])
					nd->lo[a] = x;
				if (x > nd->hi[a])
					nd->hi[a] = x;
			}
	}
}

/* Quickselect: put the k-th smallest centroid (on axis) of idx[lo..hi) at k. */
static void select_kth(struct build *b, int lo, int hi, int k, int axis)
{
	while (hi - lo > 1) {
		float pivot = b->cent[3 * b->idx[(lo + hi) / 2] + axis];
		int i = lo, j = hi - 1;
		while (i <= j) {
			while (b->cent[3 * b->idx[i] + axis] < pivot)
				i++;
			while (b->cent[3 * b->idx[j] + axis] > pivot)
				j--;
			if (i <= j) {
				int x = b->idx[i];
				b->idx[i] = b->idx[j];
				b->idx[j] = x;
				i++;
				j--;
			}
		}
		if (k <= j)
			hi = j + 1;
		else if (k >= i)
			lo = i;
		else
			return;
	}
}

static void build_node(struct build *b, int ni, int first, int count)
{
	struct gk_bvh_node *nd = &b->s->nodes[ni];
	node_bounds(b, nd, first, count);
	if (count <= LEAF_MAX) {
		nd->left_or_first = first;
		nd->count = count;
		return;
	}
	float clo[3] = { INFINITY, INFINITY, INFINITY }, chi[3] = { -INFINITY, -INFINITY, -INFINITY };
	for (int i = first; i < first + count; i++)
		for (int a = 0; a < 3; a++) {
			float c = b->cent[3 * b->idx[i] + a];
			clo[a] = c < clo[a] ? c : clo[a];
			chi[a] = c > chi[a] ? c : chi[a];
		}
	int axis = 0;
	for (int a = 1; a < 3; a++)
		if (chi[a] - clo[a] > chi[axis] - clo[axis])
			axis = a;
	int half = count / 2;
	select_kth(b, first, first + count, first + half, axis);
	int left = b->nnodes;
	b->nnodes += 2;
	nd->left_or_first = left;
	nd->count = 0;
	build_node(b, left, first, half);
	build_node(b, left + 1, first + half, count - half);
}

int kref_scene_make(struct kref_scene *s, int ntris, int nrays, uint64_t seed)
{
	memset(s, 0, sizeof *s);
	if (ntris < 1 || nrays < 1)
		return -1;
	float *in = malloc(sizeof(float) * 9 * (size_t)ntris);
	struct build b = { .s = s, .tris_in = in };
	b.cent = malloc(sizeof(float) * 3 * (size_t)ntris);
	b.idx = malloc(sizeof(int) * (size_t)ntris);
	s->tris = malloc(sizeof(float) * 9 * (size_t)ntris);
	s->nodes = calloc(2 * (size_t)ntris, sizeof *s->nodes);
	s->rays = malloc(sizeof(float) * 6 * (size_t)nrays);
	if (!in || !b.cent || !b.idx || !s->tris || !s->nodes || !s->rays) {
		free(in);
		free(b.cent);
		free(b.idx);
		kref_scene_free(s);
		return -1;
	}
	uint64_t st = seed;
	/* triangle edge about 3 mean spacings: rays meet tens of boxes and a few triangles */
	double size = 3.0 / cbrt((double)ntris);
	for (int i = 0; i < ntris; i++) {
		float c[3];
		for (int a = 0; a < 3; a++)
			c[a] = (float)kref_rand_unit(&st);
		for (int v = 0; v < 3; v++)
			for (int a = 0; a < 3; a++)
				in[9 * (size_t)i + 3 * v + a] = c[a] + (float)(size * (kref_rand_unit(&st) - 0.5));
		for (int a = 0; a < 3; a++)
			b.cent[3 * i + a] = (in[9 * (size_t)i + a] + in[9 * (size_t)i + 3 + a] + in[9 * (size_t)i + 6 + a]) / 3;
		b.idx[i] = i;
	}
	b.nnodes = 1;
	build_node(&b, 0, 0, ntris);
	for (int i = 0; i < ntris; i++)
		memcpy(s->tris + 9 * (size_t)i, in + 9 * (size_t)b.idx[i], sizeof(float) * 9);
	s->ntris = ntris;
	s->nnodes = b.nnodes;
	for (int i = 0; i < nrays; i++) {
		/* origin on a sphere of radius 2 around the cube's centre, aimed at a point inside */
		double u = 2 * kref_rand_unit(&st) - 1, ph = 6.283185307179586 * kref_rand_unit(&st), rr = sqrt(1 - u * u);
		double o[3] = { 0.5 + 2 * rr * cos(ph), 0.5 + 2 * rr * sin(ph), 0.5 + 2 * u }, d[3], len = 0;
		for (int a = 0; a < 3; a++) {
			d[a] = kref_rand_unit(&st) - o[a];
			len += d[a] * d[a];
		}
		len = sqrt(len);
		for (int a = 0; a < 3; a++) {
			s->rays[6 * (size_t)i + a] = (float)o[a];
			s->rays[6 * (size_t)i + 3 + a] = (float)(d[a] / len);
		}
	}
	s->nrays = nrays;
	free(in);
	free(b.cent);
	free(b.idx);
	return 0;
}

void kref_scene_free(struct kref_scene *s)
{
	free(s->tris);
	free(s->nodes);
	free(s->rays);
	memset(s, 0, sizeof *s);
}

static int hit_box(const struct gk_bvh_node *nd, const float *o, const float *inv, float tmax)
{
	float t0 = 0, t1 = tmax;
	for (int a = 0; a < 3; a++) {
		float ta = (nd->lo[a] - o[a]) * inv[a], tb = (nd->hi[a] - o[a]) * inv[a];
		t0 = fmaxf(t0, fminf(ta, tb));
		t1 = fminf(t1, fmaxf(ta, tb));
	}
	return t0 <= t1;
}

static float hit_tri(const float *v, const float *o, const float *d)
{
	float e1[3] = { v[3] - v[0], v[4] - v[1], v[5] - v[2] }, e2[3] = { v[6] - v[0], v[7] - v[1], v[8] - v[2] };
	float p[3] = { d[1] * e2[2] - d[2] * e2[1], d[2] * e2[0] - d[0] * e2[2], d[0] * e2[1] - d[1] * e2[0] };
	float det = e1[0] * p[0] + e1[1] * p[1] + e1[2] * p[2];
	if (fabsf(det) < 1e-12f)
		return INFINITY;
	float id = 1.0f / det, s[3] = { o[0] - v[0], o[1] - v[1], o[2] - v[2] };
	float u = (s[0] * p[0] + s[1] * p[1] + s[2] * p[2]) * id;
	if (u < 0 || u > 1)
		return INFINITY;
	float q[3] = { s[1] * e1[2] - s[2] * e1[1], s[2] * e1[0] - s[0] * e1[2], s[0] * e1[1] - s[1] * e1[0] };
	float w = (d[0] * q[0] + d[1] * q[1] + d[2] * q[2]) * id;
	if (w < 0 || u + w > 1)
		return INFINITY;
	float tt = (e2[0] * q[0] + e2[1] * q[1] + e2[2] * q[2]) * id;
	return tt > 1e-6f ? tt : INFINITY;
}

struct trace_job { const struct kref_scene *s; float *t; int *id; };

static void trace_rays(int begin, int end, void *vctx)
{
	struct trace_job *j = vctx;
	const struct kref_scene *s = j->s;
	for (int i = begin; i < end; i++) {
		const float *o = s->rays + 6 * (size_t)i, *d = o + 3;
		float inv[3] = { 1.0f / d[0], 1.0f / d[1], 1.0f / d[2] };
		float best = INFINITY;
		int besti = -1, stack[STACK_MAX], sp = 0;
		stack[sp++] = 0;
		while (sp > 0) {
			const struct gk_bvh_node *nd = &s->nodes[stack[--sp]];
			if (!hit_box(nd, o, inv, best))
				continue;
			if (nd->count > 0) {
				for (int k = 0; k < nd->count; k++) {
					int ti = nd->left_or_first + k;
					float tt = hit_tri(s->tris + 9 * (size_t)ti, o, d);
					if (tt < best) {
						best = tt;
						besti = ti;
					}
				}
			} else if (sp + 2 <= STACK_MAX) {
				stack[sp++] = nd->left_or_first + 1;
				stack[sp++] = nd->left_or_first;
			}
		}
		j->t[i] = best;
		j->id[i] = besti;
	}
}

void kref_bvh_trace(const struct kref_scene *s, float *hit_t, int *hit_tri_out, int nthreads)
{
	struct trace_job j = { s, hit_t, hit_tri_out };
	kref_parallel_for(s->nrays, nthreads, trace_rays, &j);
}

void kref_compare_hits(const float *got_t, const int *got_tri, const float *ref_t, const int *ref_tri, int nrays, double tol,
		       struct gk_verify *v)
{
	uint64_t bad = 0, nans = 0;
	double maxe = 0;
	for (int i = 0; i < nrays; i++) {
		if (isnan(got_t[i])) {
			nans++;
			continue;
		}
		bool gh = got_tri[i] >= 0, rh = ref_tri[i] >= 0;
		if (gh != rh) {
			bad++;
			continue;
		}
		if (!gh)
			continue;
		double e = fabs((double)got_t[i] - ref_t[i]) / fabs((double)ref_t[i]);
		if (e > maxe)
			maxe = e;
		if (e > tol)
			bad++;
	}
	v->checked = (uint64_t)nrays;
	v->mismatches = bad;
	v->nans = nans;
	v->max_err = maxe;
	v->verified = bad == 0 && nans == 0 && nrays > 0;
}
