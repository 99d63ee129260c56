/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_migreq.c - libFuzzer target for MIG request lists (plan_mig_parse) and the
 * layout search, on an H200-like GPU (7 compute, 8 memory slices). Any input gives
 * a layout, a reason, or a one-line error; a layout never overlaps. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct cat_mig_profile profs[] = {
		{ "1g.18gb", 1, 1, 18, 7, 16 }, { "1g.35gb", 1, 2, 35, 4, 26 }, { "2g.35gb", 2, 2, 35, 3, 32 },
		{ "3g.71gb", 3, 4, 71, 2, 60 }, { "4g.71gb", 4, 4, 71, 1, 64 }, { "7g.141gb", 7, 8, 141, 1, 132 },
	};
	struct cat_gpu g;
	memset(&g, 0, sizeof(g));
	snprintf(g.key, sizeof(g.key), "H200 SXM");
	g.mig_n = sizeof(profs) / sizeof(profs[0]);
	memcpy(g.mig, profs, sizeof(profs));
	char spec[600];
	size_t n = size < sizeof(spec) - 1 ? size : sizeof(spec) - 1;
	memcpy(spec, data, n);
	spec[n] = '\0';
	struct plan_mig_req reqs[PLAN_MIG_MAX];
	unsigned nreq;
	char err[512];
	if (plan_mig_parse(&g, spec, reqs, &nreq, err, sizeof(err)) == 0) {
		struct plan_mig_layout l;
		if (plan_mig_layout(&g, reqs, nreq, &l, err, sizeof(err)) == 0) {
			unsigned mem = 0, cmp = 0;
			for (unsigned i = 0; i < l.n; i++) {
				unsigned mm = ((1u << l.s[i].mem_size) - 1) << l.s[i].mem_start;
				unsigned cm = ((1u << l.s[i].cmp_size) - 1) << l.s[i].cmp_start;
				if ((mem & mm) || (cmp & cm) || l.s[i].mem_start + l.s[i].mem_size > 8)
					abort();
				mem |= mm;
				cmp |= cm;
			}
		}
	} else if (memchr(err, '\n', strnlen(err, sizeof(err)))) {
		abort();
	}
	return 0;
}
