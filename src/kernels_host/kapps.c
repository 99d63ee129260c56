/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kapps.c - run an application proxy on the GPU (through the module) and on
 * the CPU (cpu_ref.c), compare, and fill the result: the GPU time counts only
 * when the outputs agree (GK_EVERIFY otherwise). Used by bench and diag.
 */
#include "kernels_host/cpu_ref.h"

#include "core/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double median_ms(const struct gk_result *r)
{
	struct stats st;
	return stats_compute(r->samples_ms, (size_t)r->nsamples, &st) == 0 ? st.median : 0;
}

void kref_aux(struct gk_result *r, const char *name, double value, const char *unit)
{
	if (r->naux >= GK_MAX_AUX)
		return;
	struct gk_aux *a = &r->aux[r->naux++];
	snprintf(a->name, sizeof a->name, "%s", name);
	snprintf(a->unit, sizeof a->unit, "%s", unit);
	a->value = value;
}

/* Common tail: CPU time, speed-up, verdict. */
static int finish(struct gk_result *r, struct kref_app_run *out, double cpu_ms, const char *what)
{
	out->gpu_ms = median_ms(r);
	out->cpu_ms = cpu_ms;
	if (cpu_ms > 0) {
		kref_aux(r, "cpu_ms", cpu_ms, "ms");
		kref_aux(r, "speedup", out->gpu_ms > 0 ? cpu_ms / out->gpu_ms : 0, "x");
	}
	if (!r->verify.verified) {
		snprintf(r->err, sizeof r->err, "%s: %llu of %llu outputs differ from the CPU reference (max error %.3g), %llu NaN",
			 what, (unsigned long long)r->verify.mismatches, (unsigned long long)r->verify.checked,
			 r->verify.max_err, (unsigned long long)r->verify.nans);
		r->rc = GK_EVERIFY;
		return GK_EVERIFY;
	}
	return GK_OK;
}

static int oom(struct gk_result *r, const char *what)
{
	memset(r, 0, sizeof *r);
	snprintf(r->err, sizeof r->err, "%s: cannot allocate host memory for the inputs", what);
	r->rc = GK_ENOMEM;
	return GK_ENOMEM;
}

int kref_run_spmv(const struct gk_api *api, const struct gk_common *c, int rows, int nnz_per_row, int nthreads,
		  kref_now_fn now, struct gk_result *r, struct kref_app_run *out)
{
	memset(out, 0, sizeof *out);
	struct kref_csr m;
	if (kref_csr_make(&m, rows, nnz_per_row, c->seed ? c->seed : 1) != 0)
		return oom(r, "spmv");
	double *x = malloc(sizeof(double) * (size_t)rows), *y = malloc(sizeof(double) * (size_t)rows),
	       *yr = malloc(sizeof(double) * (size_t)rows);
	if (!x || !y || !yr) {
		free(x); free(y); free(yr);
		kref_csr_free(&m);
		return oom(r, "spmv");
	}
	uint64_t st = (c->seed ? c->seed : 1) + 99;
	for (int i = 0; i < rows; i++)
		x[i] = 0.0625 + 0.9375 * kref_rand_unit(&st);
	struct gk_spmv_args a = { .c = *c, .rows = rows, .cols = rows, .nnz = m.nnz, .row_ptr = m.row_ptr,
				  .col_idx = m.col_idx, .vals = m.vals, .x = x, .y = y };
	int rc = api->spmv(&a, r);
	if (rc == GK_OK) {
		double t0 = now ? now() : 0;
		kref_spmv(&m, x, yr, nthreads);
		double cpu_ms = now ? (now() - t0) * 1e3 : 0;
		kref_compare_f64(y, yr, (size_t)rows, 1e-10, 1e-3, &r->verify);
		rc = finish(r, out, cpu_ms, "spmv");
	}
	free(x); free(y); free(yr);
	kref_csr_free(&m);
	return rc;
}

int kref_run_lj(const struct gk_api *api, const struct gk_common *c, int natoms, int nthreads, kref_now_fn now,
		struct gk_result *r, struct kref_app_run *out)
{
	memset(out, 0, sizeof *out);
	float *pos = malloc(sizeof(float) * 3 * (size_t)natoms), *f = malloc(sizeof(float) * 3 * (size_t)natoms);
	double *fr = malloc(sizeof(double) * 3 * (size_t)natoms), *fg = malloc(sizeof(double) * 3 * (size_t)natoms);
	if (!pos || !f || !fr || !fg || natoms < 2) {
		free(pos); free(f); free(fr); free(fg);
		return oom(r, "lj");
	}
	float box = kref_lj_positions(pos, natoms, 0.8, c->seed ? c->seed : 1);
	float cutoff = 2.5f < box / 2 ? 2.5f : box / 2;
	double energy = 0;
	struct gk_lj_args a = { .c = *c, .natoms = natoms, .pos = pos, .box = box, .cutoff = cutoff, .epsilon = 1.0f,
				.sigma = 1.0f, .force = f, .energy = &energy };
	int rc = api->lj(&a, r);
	if (rc == GK_OK) {
		double t0 = now ? now() : 0;
		double eref = kref_lj(pos, natoms, box, cutoff, 1.0f, 1.0f, fr, nthreads);
		double cpu_ms = now ? (now() - t0) * 1e3 : 0;
		for (size_t i = 0; i < 3 * (size_t)natoms; i++)
			fg[i] = f[i];
		/* float accumulation on the GPU against double here: forces are sums of large
		 * terms of both signs, so compare relative to a floor of 1e-3 of the largest */
		kref_compare_f64(fg, fr, 3 * (size_t)natoms, 1e-3, 1e-3, &r->verify);
		double erel = fabs(energy - eref) / (fabs(eref) + 1e-300);
		kref_aux(r, "energy_rel_err", erel, "ratio");
		if (erel > 1e-4) {
			r->verify.mismatches++;
			r->verify.verified = false;
		}
		rc = finish(r, out, cpu_ms, "lj");
	}
	free(pos); free(f); free(fr); free(fg);
	return rc;
}

int kref_run_bvh(const struct gk_api *api, const struct gk_common *c, int ntris, int nrays, int nthreads, kref_now_fn now,
		 struct gk_result *r, struct kref_app_run *out)
{
	memset(out, 0, sizeof *out);
	struct kref_scene s;
	if (kref_scene_make(&s, ntris, nrays, c->seed ? c->seed : 1) != 0)
		return oom(r, "bvh");
	float *t = malloc(sizeof(float) * (size_t)nrays), *tr = malloc(sizeof(float) * (size_t)nrays);
	int *id = malloc(sizeof(int) * (size_t)nrays), *idr = malloc(sizeof(int) * (size_t)nrays);
	if (!t || !tr || !id || !idr) {
		free(t); free(tr); free(id); free(idr);
		kref_scene_free(&s);
		return oom(r, "bvh");
	}
	struct gk_bvh_args a = { .c = *c, .nnodes = s.nnodes, .ntris = s.ntris, .nrays = s.nrays, .nodes = s.nodes,
				 .tris = s.tris, .rays = s.rays, .hit_t = t, .hit_tri = id };
	int rc = api->bvh(&a, r);
	if (rc == GK_OK) {
		double t0 = now ? now() : 0;
		kref_bvh_trace(&s, tr, idr, nthreads);
		double cpu_ms = now ? (now() - t0) * 1e3 : 0;
		kref_compare_hits(t, id, tr, idr, nrays, 1e-5, &r->verify);
		int hits = 0;
		for (int i = 0; i < nrays; i++)
			hits += idr[i] >= 0;
		kref_aux(r, "hit_share", (double)hits / nrays, "ratio");
		rc = finish(r, out, cpu_ms, "bvh");
	}
	free(t); free(tr); free(id); free(idr);
	kref_scene_free(&s);
	return rc;
}
