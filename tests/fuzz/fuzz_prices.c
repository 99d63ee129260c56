/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_prices.c - libFuzzer target for the price-table parser (plan_prices_parse).
 * Any input gives a table or a one-line error, never a crash; the costs of what
 * parsed are computed for every pricing model. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct plan_prices pr;
	char err[512];
	if (plan_prices_parse(&pr, (const char *)data, size, err, sizeof(err)) == 0) {
		for (size_t i = 0; i < pr.n; i++) {
			for (int k = 0; k < PRICE_COUNT; k++) {
				double c = plan_job_cost(&pr.p[i], (enum plan_pricing)k, 2, 12.5, 0.1);
				if (!isnan(c) && c < 0)
					abort(); /* prices are validated non-negative */
			}
			struct plan_buy b = { .purchase = 1e5, .power_kw = 5, .pue = 1.3, .kwh_price = 0.1,
					      .years = 3, .utilization = 0.5 };
			struct plan_breakeven o;
			if (!isnan(pr.p[i].on_demand) && pr.p[i].on_demand > 0)
				plan_breakeven(&b, pr.p[i].on_demand, &o, err, sizeof(err));
		}
		plan_prices_free(&pr);
	} else if (memchr(err, '\n', strnlen(err, sizeof(err)))) {
		abort(); /* errors are one line */
	}
	return 0;
}
