/* SPDX-License-Identifier: Apache-2.0 */
/*
 * train_ref.h - the GPT-2 training step's host side: model presets, a CPU
 * reference of one forward and backward pass (double precision, the same
 * model as kernels/gk_train.cu), the checks that decide whether a training
 * run verified, and the two runs bench makes through the kernels module:
 *   ktrain_run_check: a tiny model's loss and EVERY parameter's gradient on
 *     the GPU against the CPU reference;
 *   ktrain_run: the real size, the same batch every step; verified when every
 *     loss is finite and the loss has fallen (ktrain_loss_falls).
 * No printing, no environment, no clock.
 */
#ifndef GPUCTL_TRAIN_REF_H
#define GPUCTL_TRAIN_REF_H

#include <stdbool.h>
#include <stddef.h>

#include "kernels_host/kmod.h"

/* "124M", "350M", "774M" (GPT-2 small, medium, large; vocab padded to 50304)
 * and "tiny" (the check's: vocab 61 padded to 64, 2 layers, 4 heads of 8).
 * Returns 0, or -1 for an unknown name. */
int ktrain_preset(const char *name, struct gk_train_cfg *m);
/* The names, comma-separated, for messages. */
const char *ktrain_preset_names(void);

/* Parameters counted as PyTorch counts them (no padding rows). */
double ktrain_params(const struct gk_train_cfg *m);
/* FLOPs of one token's forward and backward: 6 params + 12 layers channels seq. */
double ktrain_flops_per_token(const struct gk_train_cfg *m, int seq);

/* Deterministic inputs for the check: parameters (LayerNorm scales near 1,
 * everything else small and non-zero, padding rows of wte 0) and
 * nseq rows of seq + 1 tokens. */
void ktrain_make_params(const struct gk_train_cfg *m, float *params, unsigned long long seed);
void ktrain_make_tokens(int *tokens, int nseq, int seq, int vocab, unsigned long long seed);

/* CPU reference: mean cross-entropy over nseq x seq positions and its gradient
 * for every parameter (same layout as params). Returns the loss, or NAN when
 * out of memory. */
double ktrain_ref_grads(const struct gk_train_cfg *m, int nseq, int seq, const float *params, const int *tokens, float *grads);

/* Tolerances of the check, by precision (GK_FP32, GK_TF32, GK_BF16): a
 * tensor's gradient passes when max|got - ref| <= grad_tol * max|ref|; the
 * loss when |got - ref| <= loss_tol * |ref|. */
struct ktrain_tol { double grad_tol, loss_tol; };
struct ktrain_tol ktrain_tolerance(int prec);

/* Compares gradients tensor by tensor. v: checked = elements, mismatches =
 * tensors over tolerance, nans, max_err = the worst tensor's error (relative
 * to its max|ref|); worst = that tensor's index. */
void ktrain_compare_grads(const struct gk_train_cfg *m, const float *got, const float *ref, double tol, struct gk_verify *v,
			  int *worst);
const char *ktrain_tensor_name(int i);

/* The loss "falls" when the mean of the last 5 losses is under the first loss
 * by at least min_drop (nats) and every loss is finite. */
bool ktrain_loss_falls(const float *losses, int n, double min_drop);

struct ktrain_opts {
	struct gk_train_cfg m;
	int prec, batch, seq, grad_accum;
	float lr;
	int ndevs;                 /* 0: one GPU (c->device); >= 1: data parallel over devs[] */
	int devs[GK_MAX_DEVS];
};
void ktrain_opts_default(struct ktrain_opts *o); /* 124M, bf16, batch 16, seq 1024, lr 3e-4 */

/* Runs the tiny model's one step on the GPU and the CPU; r as the module
 * filled it, verify replaced by the comparison (GK_EVERIFY on a mismatch);
 * aux "loss_gpu", "loss_cpu", "grad_err" (worst tensor), "grad_tol". */
int ktrain_run_check(const struct gk_api *api, const struct gk_common *c, int prec, struct gk_result *r);
/* The timed run: warmup + timed steps of the same batch; losses[] gets each
 * step's loss (n_losses >= warmup + iters). verified = loss fell by 0.5 nats. */
int ktrain_run(const struct gk_api *api, const struct gk_common *c, const struct ktrain_opts *o, struct gk_result *r, float *losses,
	       int n_losses);

#endif
