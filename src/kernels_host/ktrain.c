/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ktrain.c - the two training runs through the kernels module (see
 * train_ref.h): the tiny model's step against the CPU reference, and the
 * timed run whose loss must fall. Used by `bench -s train` and the GPU tests.
 */
#include "kernels_host/train_ref.h"

#include "kernels_host/cpu_ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(struct gk_result *r, int rc, const char *msg)
{
	snprintf(r->err, sizeof r->err, "%s", msg);
	r->rc = rc;
	return rc;
}

#define CHECK_SEQS 2

int ktrain_run_check(const struct gk_api *api, const struct gk_common *c, int prec, struct gk_result *r)
{
	memset(r, 0, sizeof *r);
	if (!api->train)
		return fail(r, GK_EUNSUPPORTED, "the kernels module has no training step (rebuild it)");
	struct gk_train_cfg m;
	ktrain_preset("tiny", &m);
	size_t sz[GK_TRAIN_NTENSORS], np = gk_train_param_sizes(&m, sz);
	int seq = m.max_seq;
	float *params = malloc(np * sizeof(float)), *got = malloc(np * sizeof(float)), *ref = malloc(np * sizeof(float));
	int *tokens = malloc(sizeof(int) * CHECK_SEQS * (size_t)(seq + 1));
	int rc = GK_ENOMEM;
	if (!params || !got || !ref || !tokens) {
		fail(r, GK_ENOMEM, "train check: cannot allocate host memory");
		goto out;
	}
	unsigned long long seed = c->seed ? c->seed : 1;
	ktrain_make_params(&m, params, seed);
	ktrain_make_tokens(tokens, CHECK_SEQS, seq, m.vocab, seed + 1);
	float loss_gpu = NAN;
	struct gk_train_args a = { .c = *c, .m = m, .prec = prec, .batch = CHECK_SEQS, .seq = seq, .grad_accum = 1,
				   .lr = 1e-3f, .beta1 = 0.9f, .beta2 = 0.95f, .eps = 1e-8f, .weight_decay = 0.1f,
				   .params_in = params, .tokens_in = tokens, .grads_out = got, .losses_out = &loss_gpu };
	rc = api->train(&a, r);
	if (rc != GK_OK)
		goto out;
	double loss_cpu = ktrain_ref_grads(&m, CHECK_SEQS, seq, params, tokens, ref);
	if (isnan(loss_cpu)) {
		rc = fail(r, GK_ENOMEM, "train check: cannot allocate the CPU reference");
		goto out;
	}
	struct ktrain_tol tol = ktrain_tolerance(prec);
	int worst = -1;
	ktrain_compare_grads(&m, got, ref, tol.grad_tol, &r->verify, &worst);
	r->naux = 0; /* the module's memory figures mean nothing for the tiny model */
	double lerr = fabs(loss_gpu - loss_cpu) / fabs(loss_cpu);
	kref_aux(r, "loss_gpu", loss_gpu, "nats");
	kref_aux(r, "loss_cpu", loss_cpu, "nats");
	kref_aux(r, "loss_err", lerr, "ratio");
	kref_aux(r, "grad_err", r->verify.max_err, "ratio");
	kref_aux(r, "grad_tol", tol.grad_tol, "ratio");
	if (!(lerr <= tol.loss_tol)) {
		r->verify.verified = false;
		r->verify.mismatches++;
	}
	if (!r->verify.verified) {
		snprintf(r->err, sizeof r->err,
			 "train check: loss %.6g vs CPU %.6g (error %.2g, tolerance %.2g); %llu of 16 gradient tensors over %.2g "
			 "(worst %s: %.3g), %llu NaN", loss_gpu, loss_cpu, lerr, tol.loss_tol,
			 (unsigned long long)r->verify.mismatches, tol.grad_tol, ktrain_tensor_name(worst), r->verify.max_err,
			 (unsigned long long)r->verify.nans);
		rc = r->rc = GK_EVERIFY;
	}
out:
	free(params); free(got); free(ref); free(tokens);
	return rc;
}

/* The loss of the repeated batch must fall by this much (nats) over the run. */
#define TRAIN_MIN_DROP 0.5

int ktrain_run(const struct gk_api *api, const struct gk_common *c, const struct ktrain_opts *o, struct gk_result *r, float *losses,
	       int n_losses)
{
	memset(r, 0, sizeof *r);
	if (!api->train)
		return fail(r, GK_EUNSUPPORTED, "the kernels module has no training step (rebuild it)");
	int warm = c->warmup > 0 ? c->warmup : 3, iters = c->iters < GK_MIN_SAMPLES ? GK_MIN_SAMPLES : c->iters;
	if (iters > GK_MAX_SAMPLES)
		iters = GK_MAX_SAMPLES;
	if (n_losses < warm + iters)
		return fail(r, GK_EARG, "train: the losses buffer is shorter than the steps");
	struct gk_train_args a = { .c = *c, .m = o->m, .prec = o->prec, .batch = o->batch, .seq = o->seq,
				   .grad_accum = o->grad_accum, .lr = o->lr, .beta1 = 0.9f, .beta2 = 0.95f, .eps = 1e-8f,
				   .weight_decay = 0.1f, .losses_out = losses, .ndevs = o->ndevs };
	memcpy(a.devs, o->devs, sizeof(a.devs));
	a.c.warmup = warm;
	a.c.iters = iters;
	int rc = api->train(&a, r);
	if (rc != GK_OK)
		return rc;
	int n = warm + iters;
	kref_aux(r, "loss_first", losses[0], "nats");
	kref_aux(r, "loss_last", losses[n - 1], "nats");
	r->verify.verified = ktrain_loss_falls(losses, n, TRAIN_MIN_DROP);
	r->verify.max_err = NAN;
	if (!r->verify.verified) {
		snprintf(r->err, sizeof r->err, "train: the loss of the repeated batch did not fall by %.1f over %d steps (%.4g -> %.4g)%s",
			 TRAIN_MIN_DROP, n, losses[0], losses[n - 1], r->verify.nans ? ", NaN or Inf losses" : "");
		rc = r->rc = GK_EVERIFY;
	}
	return rc;
}
