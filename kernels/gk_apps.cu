/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gk_apps.cu - one proxy kernel per workload the guide names: CSR SpMV (CFD),
 * a cut-off Lennard-Jones force step (molecular dynamics) and BVH ray
 * traversal (rendering). The caller passes host inputs and gets the outputs
 * back; src/kernels_host/cpu_ref.c runs the same algorithm on the CPU and
 * compares (kref_run_*), so verify.verified stays false here.
 */
#include "gk_common.cuh"
#include "gk_entries.cuh"

#include <math.h>

/* ---- SpMV: 8 lanes a row, each striding over the row, then a shuffle sum ---- */
#define SPMV_LANES 8
__global__ void k_spmv(int rows, const int64_t *__restrict__ rp, const int *__restrict__ ci, const double *__restrict__ v,
		       const double *__restrict__ x, double *__restrict__ y)
{
	int row = (blockIdx.x * blockDim.x + threadIdx.x) / SPMV_LANES, lane = threadIdx.x % SPMV_LANES;
	double acc = 0;
	if (row < rows)
		for (int64_t k = rp[row] + lane; k < rp[row + 1]; k += SPMV_LANES) acc = fma(v[k], __ldg(x + ci[k]), acc);
#pragma unroll
	for (int o = SPMV_LANES / 2; o > 0; o /= 2) acc += __shfl_down_sync(0xffffffffu, acc, o, SPMV_LANES);
	if (row < rows && lane == 0) y[row] = acc;
}

struct spmv_ctx { const struct gk_spmv_args *a; int64_t *rp; int *ci; double *v, *x, *y; };

static int spmv_body(void *vctx, cudaStream_t s, struct gk_result *r)
{
	struct spmv_ctx *c = (struct spmv_ctx *)vctx;
	size_t threads = (size_t)c->a->rows * SPMV_LANES;
	k_spmv<<<(unsigned)((threads + 255) / 256), 256, 0, s>>>(c->a->rows, c->rp, c->ci, c->v, c->x, c->y);
	CKL();
	return GK_OK;
}

static int spmv_inner(const struct gk_spmv_args *a, struct gk_result *r, struct gk_track *t)
{
	CKR(gk_set_device(r, a->c.device));
	if (a->rows < 1 || a->cols < 1 || a->nnz < 1 || !a->row_ptr || !a->col_idx || !a->vals || !a->x || !a->y)
		return gk_fail(r, GK_EARG, "spmv needs rows, cols, nnz > 0 and all arrays");
	struct spmv_ctx c = { a, 0, 0, 0, 0, 0 };
	cudaStream_t s; cudaEvent_t e0, e1;
	CKR(gk_stream(t, r, &s));
	CKR(gk_event(t, r, &e0)); CKR(gk_event(t, r, &e1));
	CKR(gk_dmalloc(t, r, (void **)&c.rp, sizeof(int64_t) * (a->rows + 1)));
	CKR(gk_dmalloc(t, r, (void **)&c.ci, sizeof(int) * a->nnz));
	CKR(gk_dmalloc(t, r, (void **)&c.v, sizeof(double) * a->nnz));
	CKR(gk_dmalloc(t, r, (void **)&c.x, sizeof(double) * a->cols));
	CKR(gk_dmalloc(t, r, (void **)&c.y, sizeof(double) * a->rows));
	CK(cudaMemcpy(c.rp, a->row_ptr, sizeof(int64_t) * (a->rows + 1), cudaMemcpyHostToDevice));
	CK(cudaMemcpy(c.ci, a->col_idx, sizeof(int) * a->nnz, cudaMemcpyHostToDevice));
	CK(cudaMemcpy(c.v, a->vals, sizeof(double) * a->nnz, cudaMemcpyHostToDevice));
	CK(cudaMemcpy(c.x, a->x, sizeof(double) * a->cols, cudaMemcpyHostToDevice));
	CK(cudaMemset(c.y, 0xff, sizeof(double) * a->rows)); /* poison: NaN */
	CKR(gk_time_body(r, &a->c, 2, s, e0, e1, spmv_body, &c));
	CK(cudaMemcpy(a->y, c.y, sizeof(double) * a->rows, cudaMemcpyDeviceToHost));
	r->flops = 2.0 * a->nnz;
	r->bytes = (double)a->nnz * 12 + (double)(a->rows + 1) * 8 + (double)a->cols * 8 + (double)a->rows * 8;
	return GK_OK;
}

int gk_spmv(const struct gk_spmv_args *a, struct gk_result *r) { GK_ENTRY(r, spmv_inner(a, r, GK_T)); }

/* ---- Lennard-Jones: a thread an atom, all other atoms streamed through shared memory ---- */
#define LJ_TILE 256
__global__ void k_lj(int n, const float *__restrict__ pos, float box, float rc2, float eps, float sig2, float *force,
		     double *energy, unsigned long long *pairs)
{
	__shared__ float sp[LJ_TILE * 3];
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	float xi = 0, yi = 0, zi = 0, fx = 0, fy = 0, fz = 0, en = 0, inv = 1.0f / box;
	unsigned long long np = 0;
	if (i < n) { xi = pos[3 * i]; yi = pos[3 * i + 1]; zi = pos[3 * i + 2]; }
	for (int j0 = 0; j0 < n; j0 += LJ_TILE) {
		int j = j0 + threadIdx.x;
		__syncthreads();
		if (j < n) { sp[3 * threadIdx.x] = pos[3 * j]; sp[3 * threadIdx.x + 1] = pos[3 * j + 1]; sp[3 * threadIdx.x + 2] = pos[3 * j + 2]; }
		__syncthreads();
		int m = n - j0 < LJ_TILE ? n - j0 : LJ_TILE;
		for (int k = 0; k < m; k++) {
			float dx = xi - sp[3 * k], dy = yi - sp[3 * k + 1], dz = zi - sp[3 * k + 2];
			dx -= box * rintf(dx * inv); dy -= box * rintf(dy * inv); dz -= box * rintf(dz * inv);
			float r2 = dx * dx + dy * dy + dz * dz;
			if (r2 < rc2 && j0 + k != i) {
				float s2 = sig2 / r2, s6 = s2 * s2 * s2;
				float f = 24.0f * eps * s6 * (2.0f * s6 - 1.0f) / r2;
				fx += f * dx; fy += f * dy; fz += f * dz;
				en += 2.0f * eps * s6 * (s6 - 1.0f); /* half of 4 eps (s12 - s6): each pair is seen twice */
				np++;
			}
		}
	}
	if (i < n) {
		force[3 * i] = fx; force[3 * i + 1] = fy; force[3 * i + 2] = fz;
		atomicAdd(energy, (double)en);
		atomicAdd(pairs, np);
	}
}

struct lj_ctx { const struct gk_lj_args *a; float *pos, *f; double *en; unsigned long long *pairs; };

static int lj_body(void *vctx, cudaStream_t s, struct gk_result *r)
{
	struct lj_ctx *c = (struct lj_ctx *)vctx;
	const struct gk_lj_args *a = c->a;
	CK(cudaMemsetAsync(c->en, 0, sizeof(double) + sizeof(unsigned long long), s));
	k_lj<<<(a->natoms + LJ_TILE - 1) / LJ_TILE, LJ_TILE, 0, s>>>(a->natoms, c->pos, a->box, a->cutoff * a->cutoff, a->epsilon,
								      a->sigma * a->sigma, c->f, c->en, c->pairs);
	CKL();
	return GK_OK;
}

static int lj_inner(const struct gk_lj_args *a, struct gk_result *r, struct gk_track *t)
{
	CKR(gk_set_device(r, a->c.device));
	if (a->natoms < 2 || !a->pos || !a->force || !a->energy || !(a->box > 0) || !(a->cutoff > 0) || a->cutoff > a->box / 2)
		return gk_fail(r, GK_EARG, "lj needs >= 2 atoms, all arrays, and 0 < cutoff <= box/2");
	struct lj_ctx c = { a, 0, 0, 0, 0 };
	cudaStream_t s; cudaEvent_t e0, e1;
	CKR(gk_stream(t, r, &s));
	CKR(gk_event(t, r, &e0)); CKR(gk_event(t, r, &e1));
	size_t pb = sizeof(float) * 3 * a->natoms;
	CKR(gk_dmalloc(t, r, (void **)&c.pos, pb));
	CKR(gk_dmalloc(t, r, (void **)&c.f, pb));
	CKR(gk_dmalloc(t, r, (void **)&c.en, sizeof(double) + sizeof(unsigned long long)));
	c.pairs = (unsigned long long *)(c.en + 1);
	CK(cudaMemcpy(c.pos, a->pos, pb, cudaMemcpyHostToDevice));
	CK(cudaMemset(c.f, 0xff, pb));
	CKR(gk_time_body(r, &a->c, 1, s, e0, e1, lj_body, &c));
	unsigned long long np = 0;
	CK(cudaMemcpy(a->force, c.f, pb, cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(a->energy, c.en, sizeof(double), cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(&np, c.pairs, sizeof np, cudaMemcpyDeviceToHost));
	double n = a->natoms;
	/* counted: 12 flops a pair distance (with minimum image), 16 more a pair in the cut-off */
	r->flops = 12.0 * n * (n - 1) + 16.0 * (double)np;
	gk_aux(r, "pairs", (double)np / 2, "count");
	return GK_OK;
}

int gk_lj(const struct gk_lj_args *a, struct gk_result *r) { GK_ENTRY(r, lj_inner(a, r, GK_T)); }

/* ---- BVH: a thread a ray, a stack of node indices, closest hit ---- */
#define BVH_STACK 64
__device__ static bool hit_box(const struct gk_bvh_node *nd, const float *o, const float *inv, float tmax)
{
	float t0 = 0, t1 = tmax;
#pragma unroll
	for (int a = 0; a < 3; a++) {
		float ta = (nd->lo[a] - o[a]) * inv[a], tb = (nd->hi[a] - o[a]) * inv[a];
		t0 = fmaxf(t0, fminf(ta, tb));
		t1 = fminf(t1, fmaxf(ta, tb));
	}
	return t0 <= t1;
}

__device__ static float hit_tri(const float *v, const float *o, const float *d)
{
	float e1[3] = { v[3] - v[0], v[4] - v[1], v[5] - v[2] }, e2[3] = { v[6] - v[0], v[7] - v[1], v[8] - v[2] };
	float p[3] = { d[1] * e2[2] - d[2] * e2[1], d[2] * e2[0] - d[0] * e2[2], d[0] * e2[1] - d[1] * e2[0] };
	float det = e1[0] * p[0] + e1[1] * p[1] + e1[2] * p[2];
	if (fabsf(det) < 1e-12f) return INFINITY;
	float id = 1.0f / det, s[3] = { o[0] - v[0], o[1] - v[1], o[2] - v[2] };
	float u = (s[0] * p[0] + s[1] * p[1] + s[2] * p[2]) * id;
	if (u < 0 || u > 1) return INFINITY;
	float q[3] = { s[1] * e1[2] - s[2] * e1[1], s[2] * e1[0] - s[0] * e1[2], s[0] * e1[1] - s[1] * e1[0] };
	float w = (d[0] * q[0] + d[1] * q[1] + d[2] * q[2]) * id;
	if (w < 0 || u + w > 1) return INFINITY;
	float tt = (e2[0] * q[0] + e2[1] * q[1] + e2[2] * q[2]) * id;
	return tt > 1e-6f ? tt : INFINITY;
}

__global__ void k_bvh(int nrays, const struct gk_bvh_node *__restrict__ nodes, const float *__restrict__ tris,
		      const float *__restrict__ rays, float *hit_t, int *hit_id)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= nrays) return;
	float o[3] = { rays[6 * i], rays[6 * i + 1], rays[6 * i + 2] }, d[3] = { rays[6 * i + 3], rays[6 * i + 4], rays[6 * i + 5] };
	float inv[3] = { 1.0f / d[0], 1.0f / d[1], 1.0f / d[2] };
	float best = INFINITY;
	int besti = -1, stack[BVH_STACK], sp = 0;
	stack[sp++] = 0;
	while (sp > 0) {
		const struct gk_bvh_node *nd = &nodes[stack[--sp]];
		if (!hit_box(nd, o, inv, best)) continue;
		if (nd->count > 0) {
			for (int k = 0; k < nd->count; k++) {
				int ti = nd->left_or_first + k;
				float tt = hit_tri(tris + 9 * (size_t)ti, o, d);
				if (tt < best) { best = tt; besti = ti; }
			}
		} else if (sp + 2 <= BVH_STACK) {
			stack[sp++] = nd->left_or_first + 1;
			stack[sp++] = nd->left_or_first;
		}
	}
	hit_t[i] = best;
	hit_id[i] = besti;
}

struct bvh_ctx { const struct gk_bvh_args *a; struct gk_bvh_node *nodes; float *tris, *rays, *t; int *id; };

static int bvh_body(void *vctx, cudaStream_t s, struct gk_result *r)
{
	struct bvh_ctx *c = (struct bvh_ctx *)vctx;
	k_bvh<<<(c->a->nrays + 127) / 128, 128, 0, s>>>(c->a->nrays, c->nodes, c->tris, c->rays, c->t, c->id);
	CKL();
	return GK_OK;
}

static int bvh_inner(const struct gk_bvh_args *a, struct gk_result *r, struct gk_track *t)
{
	CKR(gk_set_device(r, a->c.device));
	if (a->nnodes < 1 || a->ntris < 1 || a->nrays < 1 || !a->nodes || !a->tris || !a->rays || !a->hit_t || !a->hit_tri)
		return gk_fail(r, GK_EARG, "bvh needs nodes, triangles, rays and output arrays");
	struct bvh_ctx c = { a, 0, 0, 0, 0, 0 };
	cudaStream_t s; cudaEvent_t e0, e1;
	CKR(gk_stream(t, r, &s));
	CKR(gk_event(t, r, &e0)); CKR(gk_event(t, r, &e1));
	CKR(gk_dmalloc(t, r, (void **)&c.nodes, sizeof(struct gk_bvh_node) * a->nnodes));
	CKR(gk_dmalloc(t, r, (void **)&c.tris, sizeof(float) * 9 * a->ntris));
	CKR(gk_dmalloc(t, r, (void **)&c.rays, sizeof(float) * 6 * a->nrays));
	CKR(gk_dmalloc(t, r, (void **)&c.t, sizeof(float) * a->nrays));
	CKR(gk_dmalloc(t, r, (void **)&c.id, sizeof(int) * a->nrays));
	CK(cudaMemcpy(c.nodes, a->nodes, sizeof(struct gk_bvh_node) * a->nnodes, cudaMemcpyHostToDevice));
	CK(cudaMemcpy(c.tris, a->tris, sizeof(float) * 9 * a->ntris, cudaMemcpyHostToDevice));
	CK(cudaMemcpy(c.rays, a->rays, sizeof(float) * 6 * a->nrays, cudaMemcpyHostToDevice));
	CK(cudaMemset(c.id, 0xff, sizeof(int) * a->nrays));
	CKR(gk_time_body(r, &a->c, 1, s, e0, e1, bvh_body, &c));
	CK(cudaMemcpy(a->hit_t, c.t, sizeof(float) * a->nrays, cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(a->hit_tri, c.id, sizeof(int) * a->nrays, cudaMemcpyDeviceToHost));
	double med = gk_median(r->samples_ms, r->nsamples);
	gk_aux(r, "rays_per_s", med > 0 ? a->nrays / (med * 1e-3) : 0, "1/s");
	return GK_OK;
}

int gk_bvh(const struct gk_bvh_args *a, struct gk_result *r) { GK_ENTRY(r, bvh_inner(a, r, GK_T)); }
