/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_pooltime.c - submit's --time parser (proto_parse_time_limit) on
 * arbitrary bytes: no crash; a refusal is one line (control characters in
 * the input shown as '?') naming the time limit; a
 * value it accepts is in range, and written back in Slurm's D-HH:MM:SS form
 * (and, when it has no days, as seconds with a unit) parses to the same value. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "pool/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char s[80], err[256], again[64];
	size_t n = size < sizeof(s) - 1 ? size : sizeof(s) - 1;
	memcpy(s, data, n);
	s[n] = '\0';
	uint64_t v, w;
	err[0] = '\0';
	if (proto_parse_time_limit(s, &v, err, sizeof(err)) != 0) {
		for (const char *c = err; *c; c++)
			if ((unsigned char)*c < 0x20) /* one line, whatever the input holds */
				__builtin_trap();
		if (!strstr(err, "time limit"))
			__builtin_trap();
		return 0;
	}
	if (v == 0 || v > PROTO_MAX_TIME_S)
		__builtin_trap();
	snprintf(again, sizeof(again), "%llu-%02llu:%02llu:%02llu", (unsigned long long)(v / 86400),
		 (unsigned long long)(v / 3600 % 24), (unsigned long long)(v / 60 % 60), (unsigned long long)(v % 60));
	if (proto_parse_time_limit(again, &w, err, sizeof(err)) != 0 || w != v)
		__builtin_trap();
	snprintf(again, sizeof(again), "%llus", (unsigned long long)v);
	if (proto_parse_time_limit(again, &w, err, sizeof(err)) != 0 || w != v)
		__builtin_trap();
	return 0;
}
