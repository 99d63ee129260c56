/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_hfconfig.c - libFuzzer target for the Hugging Face config.json reader
 * (plan_hf_config_parse). Any input gives a valid model or a one-line error;
 * a model that parsed is planned for training and serving without a crash. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct plan_model m;
	char err[512];
	if (plan_hf_config_parse((const char *)data, size, &m, err, sizeof(err)) == 0) {
		if (!m.has_arch || plan_model_validate(&m, err, sizeof(err)) != 0)
			abort(); /* what it returns is a valid model */
		struct plan_train t;
		struct plan_mem o;
		plan_train_defaults(&t);
		t.seq = 128;
		plan_train_memory(&m, &t, &o, err, sizeof(err));
		plan_max_micro_batch(&m, &t, 80e9);
		struct plan_serve s;
		struct plan_serve_result r;
		plan_serve_defaults(&s);
		s.context = 256;
		plan_serve_compute(&m, &s, NULL, 80e9, 100, &r, err, sizeof(err));
	} else if (memchr(err, '\n', strnlen(err, sizeof(err)))) {
		abort(); /* errors are one line */
	}
	return 0;
}
