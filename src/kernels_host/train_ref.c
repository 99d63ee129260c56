/* SPDX-License-Identifier: Apache-2.0 */
/*
 * train_ref.c - presets, the CPU reference of the GPT-2 step, and the checks
 * (see train_ref.h). The reference follows kernels/gk_train.cu operation by
 * operation in double precision: LayerNorm (eps 1e-5), causal softmax
 * attention scaled by 1/sqrt(head size), tanh GELU, tied embeddings, mean
 * cross-entropy over the real vocabulary.
 */
#include "kernels_host/train_ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels_host/cpu_ref.h"

static const struct { const char *name; struct gk_train_cfg m; } presets[] = {
	{ "124M", { 50257, 50304, 1024, 12, 12, 768 } },
	{ "350M", { 50257, 50304, 1024, 24, 16, 1024 } },
	{ "774M", { 50257, 50304, 1024, 36, 20, 1280 } },
	{ "tiny", { 61, 64, 16, 2, 4, 32 } },
};

int ktrain_preset(const char *name, struct gk_train_cfg *m)
{
	for (size_t i = 0; name && i < sizeof presets / sizeof *presets; i++)
		if (strcmp(presets[i].name, name) == 0) {
			*m = presets[i].m;
			return 0;
		}
	return -1;
}

const char *ktrain_preset_names(void) { return "124M, 350M, 774M, tiny"; }

double ktrain_params(const struct gk_train_cfg *m)
{
	size_t sz[GK_TRAIN_NTENSORS];
	return (double)gk_train_param_sizes(m, sz) - (double)(m->vocab_pad - m->vocab) * m->channels;
}

double ktrain_flops_per_token(const struct gk_train_cfg *m, int seq)
{
	return 6.0 * ktrain_params(m) + 12.0 * m->layers * m->channels * (double)seq;
}

static const char *const tensor_names[GK_TRAIN_NTENSORS] = {
	"wte", "wpe", "ln1w", "ln1b", "qkvw", "qkvb", "attprojw", "attprojb",
	"ln2w", "ln2b", "fcw", "fcb", "fcprojw", "fcprojb", "lnfw", "lnfb",
};

const char *ktrain_tensor_name(int i) { return i >= 0 && i < GK_TRAIN_NTENSORS ? tensor_names[i] : "?"; }

void ktrain_make_params(const struct gk_train_cfg *m, float *params, unsigned long long seed)
{
	size_t sz[GK_TRAIN_NTENSORS], at = 0;
	gk_train_param_sizes(m, sz);
	uint64_t st = seed;
	for (int i = 0; i < GK_TRAIN_NTENSORS; i++) {
		bool scale = i == 2 || i == 8 || i == 14; /* ln1w, ln2w, lnfw */
		for (size_t j = 0; j < sz[i]; j++) {
			double u = kref_rand_unit(&st) * 2 - 1;
			params[at + j] = (float)(scale ? 1.0 + 0.2 * u : 0.1 * u);
		}
		if (i == 0) /* wte's padding rows */
			memset(params + (size_t)m->vocab * m->channels, 0, (size_t)(m->vocab_pad - m->vocab) * m->channels * sizeof(float));
		at += sz[i];
	}
}

void ktrain_make_tokens(int *tokens, int nseq, int seq, int vocab, unsigned long long seed)
{
	uint64_t st = seed;
	for (size_t i = 0; i < (size_t)nseq * (seq + 1); i++)
		tokens[i] = (int)(kref_rand_u64(&st) % (uint64_t)vocab);
}

/* ---- the reference, double precision ------------------------------------------------------ */
struct ref_dims { int N, S, C, V, L, NH, hs; };

/* y[n][o] = x[n] . W[o] + b[o] (+ add[n][o]) */
static void lin_fwd(double *y, const double *x, const double *W, const double *b, const double *add, int N, int IC, int OC)
{
	for (int n = 0; n < N; n++)
		for (int o = 0; o < OC; o++) {
			double s = b ? b[o] : 0;
			for (int i = 0; i < IC; i++)
				s += x[(size_t)n * IC + i] * W[(size_t)o * IC + i];
			y[(size_t)n * OC + o] = s + (add ? add[(size_t)n * OC + o] : 0);
		}
}

/* dx = dy W (overwritten); dW += dy^T x; db += column sums of dy */
static void lin_bwd(double *dx, double *dW, double *db, const double *dy, const double *x, const double *W, int N, int IC, int OC)
{
	for (int n = 0; n < N; n++) {
		for (int i = 0; i < IC; i++)
			dx[(size_t)n * IC + i] = 0;
		for (int o = 0; o < OC; o++) {
			double g = dy[(size_t)n * OC + o];
			if (db)
				db[o] += g;
			for (int i = 0; i < IC; i++) {
				dx[(size_t)n * IC + i] += g * W[(size_t)o * IC + i];
				dW[(size_t)o * IC + i] += g * x[(size_t)n * IC + i];
			}
		}
	}
}

static void ln_fwd(double *y, double *mean, double *rstd, const double *x, const double *w, const double *b, int N, int C)
{
	for (int n = 0; n < N; n++) {
		const double *xr = x + (size_t)n * C;
		double m = 0, v = 0;
		for (int c = 0; c < C; c++)
			m += xr[c];
		m /= C;
		for (int c = 0; c < C; c++)
			v += (xr[c] - m) * (xr[c] - m);
		double rs = 1.0 / sqrt(v / C + 1e-5);
		for (int c = 0; c < C; c++)
			y[(size_t)n * C + c] = (xr[c] - m) * rs * w[c] + b[c];
		mean[n] = m;
		rstd[n] = rs;
	}
}

/* dx += ...; dw, db += ... */
static void ln_bwd(double *dx, double *dw, double *db, const double *dy, const double *x, const double *w, const double *mean,
		   const double *rstd, int N, int C)
{
	for (int n = 0; n < N; n++) {
		const double *xr = x + (size_t)n * C, *g = dy + (size_t)n * C;
		double a = 0, bs = 0;
		for (int c = 0; c < C; c++) {
			double nrm = (xr[c] - mean[n]) * rstd[n];
			a += w[c] * g[c];
			bs += w[c] * g[c] * nrm;
		}
		a /= C;
		bs /= C;
		for (int c = 0; c < C; c++) {
			double nrm = (xr[c] - mean[n]) * rstd[n];
			dw[c] += nrm * g[c];
			db[c] += g[c];
			dx[(size_t)n * C + c] += (w[c] * g[c] - a - nrm * bs) * rstd[n];
		}
	}
}

#define GELU_K 0.7978845608028654

static double gelu(double x) { return 0.5 * x * (1 + tanh(GELU_K * (x + 0.044715 * x * x * x))); }

static double gelu_grad(double x)
{
	double th = tanh(GELU_K * (x + 0.044715 * x * x * x));
	return 0.5 * (1 + th) + 0.5 * x * (1 - th * th) * GELU_K * (1 + 3 * 0.044715 * x * x);
}

/* att[b][h][t][u], y[n][C] from qkv[n][3C] */
static void attn_fwd(const struct ref_dims *d, double *y, double *att, const double *qkv)
{
	int S = d->S, C = d->C, hs = d->hs, B = d->N / S;
	double scale = 1.0 / sqrt(hs);
	for (int b = 0; b < B; b++)
		for (int h = 0; h < d->NH; h++)
			for (int t = 0; t < S; t++) {
				const double *q = qkv + ((size_t)b * S + t) * 3 * C + h * hs;
				double *a = att + (((size_t)b * d->NH + h) * S + t) * S, mx = -INFINITY, sum = 0;
				for (int u = 0; u < S; u++) {
					a[u] = 0;
					if (u > t)
						continue;
					const double *k = qkv + ((size_t)b * S + u) * 3 * C + C + h * hs;
					double s = 0;
					for (int i = 0; i < hs; i++)
						s += q[i] * k[i];
					a[u] = s * scale;
					mx = fmax(mx, a[u]);
				}
				for (int u = 0; u <= t; u++)
					sum += (a[u] = exp(a[u] - mx));
				for (int u = 0; u <= t; u++)
					a[u] /= sum;
				double *yo = y + ((size_t)b * S + t) * C + h * hs;
				for (int i = 0; i < hs; i++) {
					double s = 0;
					for (int u = 0; u <= t; u++)
						s += a[u] * qkv[((size_t)b * S + u) * 3 * C + 2 * C + h * hs + i];
					yo[i] = s;
				}
			}
}

/* dqkv (overwritten) from dy */
static void attn_bwd(const struct ref_dims *d, double *dqkv, const double *dy, const double *att, const double *qkv)
{
	int S = d->S, C = d->C, hs = d->hs, B = d->N / S;
	double scale = 1.0 / sqrt(hs), *da = malloc(sizeof(double) * (size_t)S);
	memset(dqkv, 0, sizeof(double) * (size_t)d->N * 3 * C);
	if (!da)
		return;
	for (int b = 0; b < B; b++)
		for (int h = 0; h < d->NH; h++)
			for (int t = 0; t < S; t++) {
				const double *a = att + (((size_t)b * d->NH + h) * S + t) * S, *g = dy + ((size_t)b * S + t) * C + h * hs;
				double dot = 0;
				for (int u = 0; u <= t; u++) {
					const double *v = qkv + ((size_t)b * S + u) * 3 * C + 2 * C + h * hs;
					double *dv = dqkv + ((size_t)b * S + u) * 3 * C + 2 * C + h * hs;
					da[u] = 0;
					for (int i = 0; i < hs; i++) {
						da[u] += g[i] * v[i];
						dv[i] += a[u] * g[i];
					}
					dot += a[u] * da[u];
				}
				const double *q = qkv + ((size_t)b * S + t) * 3 * C + h * hs;
				double *dq = dqkv + ((size_t)b * S + t) * 3 * C + h * hs;
				for (int u = 0; u <= t; u++) {
					double ds = a[u] * (da[u] - dot) * scale;
					const double *k = qkv + ((size_t)b * S + u) * 3 * C + C + h * hs;
					double *dk = dqkv + ((size_t)b * S + u) * 3 * C + C + h * hs;
					for (int i = 0; i < hs; i++) {
						dq[i] += ds * k[i];
						dk[i] += ds * q[i];
					}
				}
			}
	free(da);
}

double ktrain_ref_grads(const struct gk_train_cfg *m, int nseq, int seq, const float *params, const int *tokens, float *grads)
{
	struct ref_dims d = { nseq * seq, seq, m->channels, m->vocab, m->layers, m->heads, m->channels / m->heads };
	size_t sz[GK_TRAIN_NTENSORS], off[GK_TRAIN_NTENSORS], np = gk_train_param_sizes(m, sz), N = d.N, C = d.C, L = d.L;
	for (int i = 0, at = 0; i < GK_TRAIN_NTENSORS; at += (int)sz[i], i++)
		off[i] = (size_t)at;
	size_t per_layer = N * C * 8 + N * 3 * C + N * 4 * C * 2 + (size_t)nseq * d.NH * seq * seq + 4 * N;
	size_t total = 2 * np + (L + 1) * N * C + L * per_layer + N * C + 2 * N + N * (size_t)d.V + 6 * N * 4 * C;
	double *mem = calloc(total, sizeof(double));
	if (!mem)
		return NAN;
	double *P = mem, *G = P + np, *at = G + np;
#define TAKE(n) (at += (n), at - (n))
	for (size_t i = 0; i < np; i++)
		P[i] = params[i];
	double *res = TAKE((L + 1) * N * C), *lnf = TAKE(N * C), *lnfm = TAKE(N), *lnfr = TAKE(N), *logits = TAKE(N * d.V);
	double *ln1 = TAKE(L * N * C), *qkv = TAKE(L * N * 3 * C), *atty = TAKE(L * N * C), *res2 = TAKE(L * N * C);
	double *ln2 = TAKE(L * N * C), *fch = TAKE(L * N * 4 * C), *gel = TAKE(L * N * 4 * C);
	double *att = TAKE(L * (size_t)nseq * d.NH * seq * seq), *stats = TAKE(L * 4 * N);
	double *dres = TAKE(N * C), *d1 = TAKE(N * 4 * C), *d2 = TAKE(N * 4 * C), *d3 = TAKE(N * 4 * C);
#undef TAKE
	/* forward */
	for (size_t n = 0; n < N; n++) {
		int tok = tokens[(n / seq) * (seq + 1) + n % seq];
		for (size_t c = 0; c < C; c++)
			res[n * C + c] = P[off[0] + (size_t)tok * C + c] + P[off[1] + (n % seq) * C + c];
	}
	for (size_t l = 0; l < L; l++) {
		double *st = stats + l * 4 * N, *x = res + l * N * C;
		ln_fwd(ln1 + l * N * C, st, st + N, x, P + off[2] + l * C, P + off[3] + l * C, d.N, d.C);
		lin_fwd(qkv + l * N * 3 * C, ln1 + l * N * C, P + off[4] + l * 3 * C * C, P + off[5] + l * 3 * C, NULL, d.N, d.C, 3 * d.C);
		attn_fwd(&d, atty + l * N * C, att + l * (size_t)nseq * d.NH * seq * seq, qkv + l * N * 3 * C);
		lin_fwd(res2 + l * N * C, atty + l * N * C, P + off[6] + l * C * C, P + off[7] + l * C, x, d.N, d.C, d.C);
		ln_fwd(ln2 + l * N * C, st + 2 * N, st + 3 * N, res2 + l * N * C, P + off[8] + l * C, P + off[9] + l * C, d.N, d.C);
		lin_fwd(fch + l * N * 4 * C, ln2 + l * N * C, P + off[10] + l * 4 * C * C, P + off[11] + l * 4 * C, NULL, d.N, d.C, 4 * d.C);
		for (size_t i = 0; i < N * 4 * C; i++)
			gel[l * N * 4 * C + i] = gelu(fch[l * N * 4 * C + i]);
		lin_fwd(x + N * C, gel + l * N * 4 * C, P + off[12] + l * C * 4 * C, P + off[13] + l * C, res2 + l * N * C, d.N, 4 * d.C, d.C);
	}
	ln_fwd(lnf, lnfm, lnfr, res + L * N * C, P + off[14], P + off[15], d.N, d.C);
	lin_fwd(logits, lnf, P + off[0], NULL, NULL, d.N, d.C, d.V); /* the first V rows of wte */
	double loss = 0;
	for (size_t n = 0; n < N; n++) {
		double *z = logits + n * d.V, mx = -INFINITY, sum = 0;
		int tgt = tokens[(n / seq) * (seq + 1) + n % seq + 1];
		for (int v = 0; v < d.V; v++)
			mx = fmax(mx, z[v]);
		for (int v = 0; v < d.V; v++)
			sum += exp(z[v] - mx);
		loss += log(sum) + mx - z[tgt];
		for (int v = 0; v < d.V; v++) /* logits become their gradient */
			z[v] = (exp(z[v] - mx) / sum - (v == tgt)) / (double)N;
	}
	loss /= (double)N;
	/* backward */
	lin_bwd(d1, G + off[0], NULL, logits, lnf, P + off[0], d.N, d.C, d.V);
	ln_bwd(dres, G + off[14], G + off[15], d1, res + L * N * C, P + off[14], lnfm, lnfr, d.N, d.C);
	for (size_t l = L; l-- > 0;) {
		double *st = stats + l * 4 * N;
		lin_bwd(d1, G + off[12] + l * C * 4 * C, G + off[13] + l * C, dres, gel + l * N * 4 * C, P + off[12] + l * C * 4 * C,
			d.N, 4 * d.C, d.C);
		for (size_t i = 0; i < N * 4 * C; i++)
			d1[i] *= gelu_grad(fch[l * N * 4 * C + i]);
		lin_bwd(d2, G + off[10] + l * 4 * C * C, G + off[11] + l * 4 * C, d1, ln2 + l * N * C, P + off[10] + l * 4 * C * C, d.N,
			d.C, 4 * d.C);
		ln_bwd(dres, G + off[8] + l * C, G + off[9] + l * C, d2, res2 + l * N * C, P + off[8] + l * C, st + 2 * N, st + 3 * N,
		       d.N, d.C);
		lin_bwd(d2, G + off[6] + l * C * C, G + off[7] + l * C, dres, atty + l * N * C, P + off[6] + l * C * C, d.N, d.C, d.C);
		attn_bwd(&d, d3, d2, att + l * (size_t)nseq * d.NH * seq * seq, qkv + l * N * 3 * C);
		lin_bwd(d1, G + off[4] + l * 3 * C * C, G + off[5] + l * 3 * C, d3, ln1 + l * N * C, P + off[4] + l * 3 * C * C, d.N,
			d.C, 3 * d.C);
		ln_bwd(dres, G + off[2] + l * C, G + off[3] + l * C, d1, res + l * N * C, P + off[2] + l * C, st, st + N, d.N, d.C);
	}
	for (size_t n = 0; n < N; n++) {
		int tok = tokens[(n / seq) * (seq + 1) + n % seq];
		for (size_t c = 0; c < C; c++) {
			G[off[0] + (size_t)tok * C + c] += dres[n * C + c];
			G[off[1] + (n % seq) * C + c] += dres[n * C + c];
		}
	}
	for (size_t i = 0; i < np; i++)
		grads[i] = (float)G[i];
	free(mem);
	return loss;
}

/* ---- checks ------------------------------------------------------------------------------------ */
struct ktrain_tol ktrain_tolerance(int prec)
{
	switch (prec) {
	case GK_FP32: return (struct ktrain_tol){ 1e-3, 1e-5 };
	case GK_TF32: return (struct ktrain_tol){ 3e-2, 1e-3 };
	default: return (struct ktrain_tol){ 8e-2, 1e-2 }; /* bf16 activations: 8 bits of mantissa through 2 layers */
	}
}

void ktrain_compare_grads(const struct gk_train_cfg *m, const float *got, const float *ref, double tol, struct gk_verify *v,
			  int *worst)
{
	size_t sz[GK_TRAIN_NTENSORS], at = 0;
	gk_train_param_sizes(m, sz);
	memset(v, 0, sizeof *v);
	*worst = -1;
	for (int i = 0; i < GK_TRAIN_NTENSORS; i++) {
		double mx = 0, err = 0;
		for (size_t j = 0; j < sz[i]; j++)
			mx = fmax(mx, fabs(ref[at + j]));
		for (size_t j = 0; j < sz[i]; j++) {
			if (!isfinite(got[at + j])) {
				v->nans++;
				continue;
			}
			err = fmax(err, fabs((double)got[at + j] - ref[at + j]));
		}
		double rel = mx > 0 ? err / mx : err;
		if (rel > tol || !(mx > 0))
			v->mismatches++; /* a gradient that is all zero checks nothing: a failure too */
		if (*worst < 0 || rel > v->max_err) {
			v->max_err = rel;
			*worst = i;
		}
		v->checked += sz[i];
		at += sz[i];
	}
	v->verified = v->mismatches == 0 && v->nans == 0;
}

bool ktrain_loss_falls(const float *losses, int n, double min_drop)
{
	if (n < 6)
		return false;
	double tail = 0;
	for (int i = 0; i < n; i++)
		if (!isfinite(losses[i]))
			return false;
	for (int i = n - 5; i < n; i++)
		tail += losses[i] / 5.0;
	return losses[0] - tail >= min_drop;
}

void ktrain_opts_default(struct ktrain_opts *o)
{
	memset(o, 0, sizeof *o);
	ktrain_preset("124M", &o->m);
	o->prec = GK_BF16;
	o->batch = 16;
	o->seq = 1024;
	o->grad_accum = 1;
	o->lr = 3e-4f;
}
