/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cpu_ref.h - input generators, multi-threaded CPU references and comparisons
 * for the kernels module's application proxies (SpMV, Lennard-Jones, BVH ray
 * traversal). The same algorithm as the GPU kernel, so "speed-up over the host
 * CPU" compares like with like. Used by `bench` (apps suite) and `diag`.
 *
 * No printing, no environment; the clock is passed in (kref_now_fn) so tests
 * can run without timing.
 */
#ifndef GPUCTL_CPU_REF_H
#define GPUCTL_CPU_REF_H

#include <stddef.h>
#include <stdint.h>

#include "kernels_host/kmod.h"

/* Deterministic RNG (splitmix64): same seed, same inputs on every machine. */
uint64_t kref_rand_u64(uint64_t *state);
double kref_rand_unit(uint64_t *state); /* [0, 1) */

/* ---- comparison ---------------------------------------------------------- */
/* Element i is a mismatch when |got-ref| > tol * (|ref| + floor); floor =
 * floor_frac * max|ref| keeps near-zero entries from failing on rounding. */
void kref_compare_f64(const double *got, const double *ref, size_t n, double tol,
		      double floor_frac, struct gk_verify *v);
void kref_compare_f32(const float *got, const float *ref, size_t n, double tol,
		      double floor_frac, struct gk_verify *v);

/* ---- SpMV on a CSR matrix (CFD-like: banded, nnz_per_row entries a row) --- */
struct kref_csr {
	int rows, cols;
	int64_t nnz;
	int64_t *row_ptr;
	int *col_idx;
	double *vals;
};
int kref_csr_make(struct kref_csr *m, int rows, int nnz_per_row, uint64_t seed);
void kref_csr_free(struct kref_csr *m);
void kref_spmv(const struct kref_csr *m, const double *x, double *y, int nthreads);

/* ---- Lennard-Jones force step, all pairs within the cut-off, periodic box --- */
/* Atoms on a jittered cubic lattice filling box (no overlaps): returns box edge. */
float kref_lj_positions(float *pos, int natoms, double density, uint64_t seed);
/* Forces into force[3n]; returns the total potential energy. */
double kref_lj(const float *pos, int natoms, float box, float cutoff, float epsilon, float sigma,
	       double *force, int nthreads);

/* ---- BVH ray traversal (closest hit, Moller-Trumbore) ---------------------- */
struct kref_scene {
	int ntris, nnodes, nrays;
	float *tris;               /* 9 per triangle, reordered into leaf order */
	struct gk_bvh_node *nodes; /* node 0 root; children adjacent (left, left + 1) */
	float *rays;               /* 6 per ray */
};
int kref_scene_make(struct kref_scene *s, int ntris, int nrays, uint64_t seed);
void kref_scene_free(struct kref_scene *s);
void kref_bvh_trace(const struct kref_scene *s, float *hit_t, int *hit_tri, int nthreads);
/* A ray mismatches when one side hits and the other misses, or both hit at a
 * distance differing by more than tol (relative). Returns mismatches. */
void kref_compare_hits(const float *got_t, const int *got_tri, const float *ref_t,
		       const int *ref_tri, int nrays, double tol, struct gk_verify *v);

/* ---- run a proxy on the GPU and the CPU, verify, fill the result ----------- */
typedef double (*kref_now_fn)(void); /* seconds, monotonic; NULL: no CPU timing */
struct kref_app_run {
	double cpu_ms;   /* CPU reference time (0 when now == NULL) */
	double gpu_ms;   /* median GPU sample */
};
/* Each returns the module's rc (GK_EVERIFY when the outputs differ) and fills r
 * (samples, flops/bytes, verify, aux "cpu_ms", "speedup") and out. */
int kref_run_spmv(const struct gk_api *api, const struct gk_common *c, int rows, int nnz_per_row,
		  int nthreads, kref_now_fn now, struct gk_result *r, struct kref_app_run *out);
int kref_run_lj(const struct gk_api *api, const struct gk_common *c, int natoms, int nthreads,
		kref_now_fn now, struct gk_result *r, struct kref_app_run *out);
int kref_run_bvh(const struct gk_api *api, const struct gk_common *c, int ntris, int nrays,
		 int nthreads, kref_now_fn now, struct gk_result *r, struct kref_app_run *out);

/* Append a named figure to r->aux (dropped when the GK_MAX_AUX slots are full). */
void kref_aux(struct gk_result *r, const char *name, double value, const char *unit);

/* Run fn(i, ctx) for i in [0, n) split over nthreads threads (<= 1: inline). */
void kref_parallel_for(int n, int nthreads, void (*fn)(int begin, int end, void *ctx), void *ctx);

#endif
