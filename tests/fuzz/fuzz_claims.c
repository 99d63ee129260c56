/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_claims.c - libFuzzer target for the guide's claims file (claims_parse,
 * data/claims.json's reader). Any input gives claims or a one-line error, never a
 * crash; what parsed is evaluated on a small run holding a train row of each
 * kind the training claims read, and on no run. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench/claims.h"

static void add(struct bench_run *run, const char *suite, const char *test, const char *variant, int ngpus)
{
	struct bench_result *r = bench_run_add(run, suite, test, variant);
	if (!r)
		return;
	double ms[2] = { 1.0, 1.0 };
	r->ngpus = ngpus;
	r->m = 16;
	bench_result_set_samples(r, BM_TFLOPS, ms, 2, 0, 1e11, NAN);
	if (ngpus > 1)
		bench_result_add_aux(r, "scaling_pct", 90.0, "%");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct claims cl;
	static struct claim_eval ev[CLAIMS_MAX];
	char err[512];
	if (claims_parse(&cl, (const char *)data, size, err, sizeof(err)) != 0) {
		if (memchr(err, '\n', strnlen(err, sizeof(err))))
			abort(); /* errors are one line */
		return 0;
	}
	struct bench_run run;
	bench_run_init(&run);
	run.ngpus = 2;
	add(&run, "train", "124M", "bf16", 1);
	add(&run, "train", "124M", "fp32", 1);
	add(&run, "train", "124M", "bf16-dp2", 2);
	add(&run, "nccl", "all_reduce", "", 2);
	claims_evaluate(&cl, &run, NULL, ev);
	claims_evaluate(&cl, NULL, "no run", ev);
	bench_run_free(&run);
	return 0;
}
