/* SPDX-License-Identifier: Apache-2.0 */
/* fit.c - the fewest GPUs a training job fits on, and what would make a job
 * that does not fit one GPU fit (plan.h, "What would make it fit"). */
#include "plan.h"

#include <stdio.h>
#include <string.h>

unsigned plan_min_gpus(const struct plan_model *m, const struct plan_train *t, double mem)
{
	struct plan_train tt = *t;
	struct plan_mem o;
	char err[160];
	unsigned max_dp = (tt.fw == FW_DEEPSPEED && tt.zero) ? 4096 : 1;
	for (unsigned dp = 1; dp <= max_dp; dp++) {
		tt.dp = dp;
		if (plan_train_memory(m, &tt, &o, err, sizeof(err)) == 0 && o.total <= mem)
			return dp * tt.tp * tt.pp;
	}
	return 0;
}

static void add(struct plan_fit_hint *out, unsigned *n, unsigned max, const char *what, const char *flags,
		unsigned mb, unsigned gpus)
{
	if (*n >= max)
		return;
	struct plan_fit_hint *h = &out[(*n)++];
	snprintf(h->what, sizeof(h->what), "%s", what);
	snprintf(h->flags, sizeof(h->flags), "%s", flags);
	h->micro_batch = mb;
	h->gpus = gpus;
}

unsigned plan_fit_hints(const struct plan_model *m, const struct plan_train *t, double mem, struct plan_fit_hint *out,
			unsigned max)
{
	unsigned n = 0, mb;
	struct plan_train a = *t, c = *t, ac;
	bool can8 = t->optim == OPT_ADAMW || t->optim == OPT_ADAMW_FUSED;
	a.optim = OPT_ADAM8BIT;
	c.ckpt = CKPT_FULL;
	ac = a;
	ac.ckpt = CKPT_FULL;
	if (can8 && (mb = plan_max_micro_batch(m, &a, mem)) > 0)
		add(out, &n, max, "8-bit optimizer states", "--optimizer adam8bit", mb, 1);
	if (t->ckpt != CKPT_FULL && (mb = plan_max_micro_batch(m, &c, mem)) > 0)
		add(out, &n, max, "full activation checkpointing", "--checkpointing full", mb, 1);
	if (can8 && t->ckpt != CKPT_FULL && n == 0 && (mb = plan_max_micro_batch(m, &ac, mem)) > 0)
		add(out, &n, max, "both: 8-bit optimizer states and full checkpointing",
		    "--optimizer adam8bit --checkpointing full", mb, 1);
	/* more GPUs: the model states sharded over them (ZeRO-3, as FSDP's full sharding) */
	struct plan_train z = *t;
	z.fw = FW_DEEPSPEED;
	z.zero = 3;
	z.offload = OFFLOAD_NONE;
	z.pure16 = false;
	if (z.prec == PREC_FP8 && t->fw != FW_DEEPSPEED)
		z.prec = PREC_BF16;
	z.micro_batch = 1;
	unsigned g = plan_min_gpus(m, &z, mem);
	if (g) {
		z.dp = g / (z.tp * z.pp) ? g / (z.tp * z.pp) : 1;
		char flags[96];
		snprintf(flags, sizeof(flags), "--framework deepspeed --zero 3 --dp %u", z.dp);
		char what[96];
		snprintf(what, sizeof(what), "ZeRO-3 (or FSDP) shards over %u GPUs", g);
		add(out, &n, max, what, flags, plan_max_micro_batch(m, &z, mem), g);
	}
	return n;
}
