/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_fleet.c - the fleet sweep's readers: fleet.json (`gpuctl slurm sweep
 * --compare`) and a node's result document. The first byte picks the reader;
 * what is read is analysed, written back, reported and compared. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slurm/fleet.h"

static void exercise(struct fleet *f)
{
	(void)fleet_analyze(f);
	json_t *j = fleet_to_json(f);
	json_decref(j);
	FILE *null = fopen("/dev/null", "w");
	if (null) {
		fleet_write_text(f, null);
		fleet_write_html(f, null);
		fclose(null);
	}
	char out[1024], reason[SLURM_REASON_LEN];
	(void)fleet_compare(f, f, out, sizeof(out));
	for (size_t i = 0; i < f->n; i++)
		(void)fleet_drain_reason(f, i, reason, sizeof(reason));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 65536)
		return 0;
	const char *text = (const char *)data + 1;
	char err[256];
	struct fleet f;
	if (data[0] % 2 == 0) {
		if (fleet_from_json(&f, text, size - 1, err, sizeof(err)) == 0) {
			exercise(&f);
			fleet_free(&f);
		}
		return 0;
	}
	fleet_init(&f, "health", FLEET_DEFAULT_THRESHOLD_PCT);
	(void)fleet_add_result(&f, "n1", text, size - 1, err, sizeof(err));
	(void)fleet_add_result(&f, "n2", text, size - 1, err, sizeof(err));
	exercise(&f);
	fleet_free(&f);
	return 0;
}
