/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_rules.c - libFuzzer target for the health rules file and XID catalog
 * parsers (src/health/rules.c). The first byte picks the parser; a parsed
 * rule set is then evaluated on an empty snapshot to exercise the engine. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "health/health.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct health_rules r;
	static struct snapshot *snap;
	static struct health_report rep;
	char err[256];
	if (size == 0)
		return 0;
	memset(&r, 0, sizeof(r));
	const char *text = (const char *)data + 1;
	if (data[0] & 1) {
		if (health_xids_parse(&r, text, size - 1, err, sizeof(err)) != 0 && err[0] == '\0')
			abort(); /* an error always comes with a message */
		return 0;
	}
	if (health_rules_parse(&r, text, size - 1, err, sizeof(err)) != 0) {
		if (err[0] == '\0')
			abort();
		return 0;
	}
	if (!snap && !(snap = snapshot_new(1)))
		abort();
	snapshot_clear(snap);
	snap->n = 1;
	snap->gpu[0].up = true;
	if (health_evaluate(&r, snap, snap, NULL, &rep, err, sizeof(err)) != 0)
		abort();
	return 0;
}
