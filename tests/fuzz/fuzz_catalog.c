/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_catalog.c - libFuzzer target for the GPU catalog parser (catalog_parse).
 * Any input must give either a catalog or a one-line error, never a crash. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/catalog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct catalog cat;
	char err[512];
	if (catalog_parse(&cat, (const char *)data, size, err, sizeof(err)) == 0) {
		/* exercise the lookups on whatever parsed */
		for (size_t i = 0; i < cat.n; i++) {
			catalog_find(&cat, cat.gpus[i].key);
			catalog_match(&cat, cat.gpus[i].vendor_name, cat.gpus[i].mem_bytes);
			if (cat.gpus[i].mig_n)
				catalog_mig_profile(&cat.gpus[i], cat.gpus[i].mig[0].name);
		}
		catalog_free(&cat);
	} else if (memchr(err, '\n', strnlen(err, sizeof(err)))) {
		abort(); /* errors are one line */
	}
	return 0;
}
