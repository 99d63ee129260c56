/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_models.c - libFuzzer target for the model presets parser (plan_presets_parse).
 * Any input gives presets or a one-line error; every model that parsed is planned
 * for training and serving without a crash. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct plan_presets p;
	char err[512];
	if (plan_presets_parse(&p, (const char *)data, size, err, sizeof(err)) == 0) {
		for (size_t i = 0; i < p.n && i < 16; i++) {
			const struct plan_model *m = &p.m[i];
			struct plan_train t;
			struct plan_mem o;
			plan_train_defaults(&t);
			t.seq = 128;
			plan_train_memory(m, &t, &o, err, sizeof(err));
			t.fw = FW_DEEPSPEED;
			t.zero = 3;
			t.dp = 8;
			plan_train_memory(m, &t, &o, err, sizeof(err));
			plan_max_micro_batch(m, &t, 80e9);
			plan_train_flops(m, &t, 1e9);
			struct plan_serve s;
			struct plan_serve_result r;
			plan_serve_defaults(&s);
			s.context = 256;
			plan_serve_compute(m, &s, NULL, 80e9, 100, &r, err, sizeof(err));
			plan_presets_find(&p, m->name);
		}
		plan_presets_free(&p);
	} else if (memchr(err, '\n', strnlen(err, sizeof(err)))) {
		abort(); /* errors are one line */
	}
	return 0;
}
