/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cpu_ref.c - RNG, threading, comparisons, and the SpMV and Lennard-Jones CPU
 * references (see cpu_ref.h). The float arithmetic of the Lennard-Jones pair
 * geometry is written as the GPU kernel does it (gk_apps.cu is built without
 * FMA contraction) so the cut-off decisions agree pair for pair.
 */
#include "kernels_host/cpu_ref.h"

#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

uint64_t kref_rand_u64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

double kref_rand_unit(uint64_t *state) { return (double)(kref_rand_u64(state) >> 11) * (1.0 / 9007199254740992.0); }

/* A value in [-1, -1/16] U [1/16, 1]: random and never near zero. */
static double rand_nonzero(uint64_t *st)
{
	double m = 0.0625 + 0.9375 * kref_rand_unit(st);
	return (kref_rand_u64(st) & 1) ? -m : m;
}

/* ---- threads ------------------------------------------------------------------ */
struct pf_job { int begin, end; void (*fn)(int, int, void *); void *ctx; };

static void *pf_run(void *p)
{
	struct pf_job *j = p;
	j->fn(j->begin, j->end, j->ctx);
	return NULL;
}

void kref_parallel_for(int n, int nthreads, void (*fn)(int begin, int end, void *ctx), void *ctx)
{
	if (n <= 0)
		return;
	if (nthreads > n)
		nthreads = n;
	if (nthreads > 256)
		nthreads = 256;
	if (nthreads <= 1) {
		fn(0, n, ctx);
		return;
	}
	pthread_t th[256];
	bool started[256] = { false };
	struct pf_job jobs[256];
	for (int t = 0; t < nthreads; t++)
		jobs[t] = (struct pf_job){ (int)((long long)n * t / nthreads), (int)((long long)n * (t + 1) / nthreads), fn, ctx };
	for (int t = 1; t < nthreads; t++)
		started[t] = pthread_create(&th[t], NULL, pf_run, &jobs[t]) == 0;
	fn(jobs[0].begin, jobs[0].end, ctx);
	for (int t = 1; t < nthreads; t++) {
		if (started[t])
			pthread_join(th[t], NULL);
		else /* could not start a thread: do its share here */
			fn(jobs[t].begin, jobs[t].end, ctx);
	}
}

/* ---- comparisons ------------------------------------------------------------------ */
static void compare_generic(size_t n, double tol, double floor_frac, struct gk_verify *v,
			    double (*got)(size_t, const void *), double (*ref)(size_t, const void *),
			    const void *g, const void *r)
{
	double maxref = 0;
	for (size_t i = 0; i < n; i++) {
		double x = fabs(ref(i, r));
		if (x > maxref)
			maxref = x;
	}
	double floor = floor_frac * maxref, maxe = 0;
	uint64_t bad = 0, nans = 0;
	for (size_t i = 0; i < n; i++) {
		double x = got(i, g), y = ref(i, r);
		if (!isfinite(x)) {
			nans++;
			continue;
		}
		double e = fabs(x - y) / (fabs(y) + floor + 1e-300);
		if (e > maxe)
			maxe = e;
		if (e > tol)
			bad++;
	}
	v->checked = n;
	v->mismatches = bad;
	v->nans = nans;
	v->max_err = maxe;
	v->verified = bad == 0 && nans == 0 && n > 0;
}

static double at_f64(size_t i, const void *p) { return ((const double *)p)[i]; }
static double at_f32(size_t i, const void *p) { return ((const float *)p)[i]; }

void kref_compare_f64(const double *got, const double *ref, size_t n, double tol, double floor_frac, struct gk_verify *v)
{
	compare_generic(n, tol, floor_frac, v, at_f64, at_f64, got, ref);
}

void kref_compare_f32(const float *got, const float *ref, size_t n, double tol, double floor_frac, struct gk_verify *v)
{
	compare_generic(n, tol, floor_frac, v, at_f32, at_f32, got, ref);
}

/* ---- SpMV ----------------------------------------------------------------------------- */
/* Row r of a 27-point stencil on a periodic nx^3 grid (rows need not be a cube:
 * columns wrap modulo rows), taking the first nnz_per_row stencil offsets. */
struct csr_gen { struct kref_csr *m; int k; int64_t off[27]; uint64_t seed; };

static void csr_fill(int begin, int end, void *vctx)
{
	struct csr_gen *g = vctx;
	for (int r = begin; r < end; r++) {
		uint64_t st = g->seed ^ ((uint64_t)r * 0x9e3779b97f4a7c15ull);
		int64_t base = (int64_t)r * g->k;
		for (int j = 0; j < g->k; j++) {
			int64_t c = ((int64_t)r + g->off[j]) % g->m->rows;
			if (c < 0)
				c += g->m->rows;
			g->m->col_idx[base + j] = (int)c;
			g->m->vals[base + j] = rand_nonzero(&st);
		}
	}
}

int kref_csr_make(struct kref_csr *m, int rows, int nnz_per_row, uint64_t seed)
{
	memset(m, 0, sizeof *m);
	if (rows < 1 || nnz_per_row < 1 || nnz_per_row > 27)
		return -1;
	m->rows = m->cols = rows;
	m->nnz = (int64_t)rows * nnz_per_row;
	m->row_ptr = malloc(sizeof(int64_t) * ((size_t)rows + 1));
	m->col_idx = malloc(sizeof(int) * (size_t)m->nnz);
	m->vals = malloc(sizeof(double) * (size_t)m->nnz);
	if (!m->row_ptr || !m->col_idx || !m->vals) {
		kref_csr_free(m);
		return -1;
	}
	for (int r = 0; r <= rows; r++)
		m->row_ptr[r] = (int64_t)r * nnz_per_row;
	int64_t nx = (int64_t)cbrt((double)rows);
	if (nx < 1)
		nx = 1;
	struct csr_gen g = { .m = m, .k = nnz_per_row, .seed = seed };
	int n = 0;
	g.off[n++] = 0; /* the diagonal first */
	for (int dz = -1; dz <= 1; dz++)
		for (int dy = -1; dy <= 1; dy++)
			for (int dx = -1; dx <= 1; dx++)
				if (dx || dy || dz)
					g.off[n++] = dx + dy * nx + dz * nx * nx;
	kref_parallel_for(rows, 8, csr_fill, &g);
	return 0;
}

void kref_csr_free(struct kref_csr *m)
{
	free(m->row_ptr);
	free(m->col_idx);
	free(m->vals);
	memset(m, 0, sizeof *m);
}

struct spmv_job { const struct kref_csr *m; const double *x; double *y; };

static void spmv_rows(int begin, int end, void *vctx)
{
	struct spmv_job *j = vctx;
	for (int r = begin; r < end; r++) {
		double acc = 0;
		for (int64_t k = j->m->row_ptr[r]; k < j->m->row_ptr[r + 1]; k++)
			acc += j->m->vals[k] * j->x[j->m->col_idx[k]];
		j->y[r] = acc;
	}
}

void kref_spmv(const struct kref_csr *m, const double *x, double *y, int nthreads)
{
	struct spmv_job j = { m, x, y };
	kref_parallel_for(m->rows, nthreads, spmv_rows, &j);
}

/* ---- Lennard-Jones ---------------------------------------------------------------------- */
float kref_lj_positions(float *pos, int natoms, double density, uint64_t seed)
{
	double box = cbrt(natoms / density);
	int m = (int)ceil(cbrt((double)natoms));
	double a = box / m;
	uint64_t st = seed;
	for (int i = 0; i < natoms; i++) {
		int ix = i % m, iy = (i / m) % m, iz = i / (m * m);
		pos[3 * i] = (float)((ix + 0.5 + 0.2 * (kref_rand_unit(&st) - 0.5)) * a);
		pos[3 * i + 1] = (float)((iy + 0.5 + 0.2 * (kref_rand_unit(&st) - 0.5)) * a);
		pos[3 * i + 2] = (float)((iz + 0.5 + 0.2 * (kref_rand_unit(&st) - 0.5)) * a);
	}
	return (float)box;
}

struct lj_job {
	const float *pos;
	int n;
	float box, rc2, eps, sig2;
	double *force, *energy_part; /* one energy partial a thread range start */
};

static void lj_atoms(int begin, int end, void *vctx)
{
	struct lj_job *j = vctx;
	float box = j->box, inv = 1.0f / box;
	double en = 0;
	for (int i = begin; i < end; i++) {
		float xi = j->pos[3 * i], yi = j->pos[3 * i + 1], zi = j->pos[3 * i + 2];
		double fx = 0, fy = 0, fz = 0;
		for (int k = 0; k < j->n; k++) {
			float dx = xi - j->pos[3 * k], dy = yi - j->pos[3 * k + 1], dz = zi - j->pos[3 * k + 2];
			dx -= box * rintf(dx * inv);
			dy -= box * rintf(dy * inv);
			dz -= box * rintf(dz * inv);
			float r2 = dx * dx + dy * dy + dz * dz;
			if (r2 < j->rc2 && k != i) {
				double s2 = j->sig2 / (double)r2, s6 = s2 * s2 * s2;
				double f = 24.0 * j->eps * s6 * (2.0 * s6 - 1.0) / r2;
				fx += f * dx;
				fy += f * dy;
				fz += f * dz;
				en += 2.0 * j->eps * s6 * (s6 - 1.0);
			}
		}
		j->force[3 * i] = fx;
		j->force[3 * i + 1] = fy;
		j->force[3 * i + 2] = fz;
	}
	j->energy_part[begin] = en;
}

double kref_lj(const float *pos, int natoms, float box, float cutoff, float epsilon, float sigma, double *force, int nthreads)
{
	double *part = calloc((size_t)natoms, sizeof *part);
	if (!part)
		return NAN;
	struct lj_job j = { pos, natoms, box, cutoff * cutoff, epsilon, sigma * sigma, force, part };
	kref_parallel_for(natoms, nthreads, lj_atoms, &j);
	double e = 0;
	for (int i = 0; i < natoms; i++)
		e += part[i];
	free(part);
	return e;
}
