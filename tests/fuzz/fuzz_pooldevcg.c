/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_pooldevcg.c - the device-limiting parsers (src/pool/devcg.h) on
 * arbitrary bytes: the driver's "information" file, /proc/devices,
 * mig-minors and bus ids. No crash, and what parses is within bounds. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pool/devcg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	unsigned v;
	if (devcg_parse_minor(text, &v) == 0 && v >= DEVCG_MODESET_MINOR)
		__builtin_trap();
	if (devcg_parse_major(text, "nvidia-caps", &v) == 1 && v >= 4096)
		__builtin_trap();
	struct devcg_cap caps[8];
	int n = devcg_parse_mig_minors(text, caps, 8);
	if (n > 8)
		__builtin_trap();
	for (int i = 0; i < n; i++)
		if (!caps[i].name[0] || strlen(caps[i].name) >= sizeof(caps[i].name) || strchr(caps[i].name, ' '))
			__builtin_trap();
	char id[16];
	if (devcg_proc_bus_id(text, id, sizeof(id)) == 0 && strlen(id) != 12)
		__builtin_trap();
	free(text);
	return 0;
}
