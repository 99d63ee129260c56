/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_cudaver.c - the CUDA version parsers (src/core/cudaver.c) on arbitrary
 * bytes: no crash; a refusal is one line naming a CUDA version; a version it
 * accepts is in range and, written back as MAJOR.MINOR, parses to itself;
 * the whole input as NVIDIA_REQUIRE_CUDA and as CUDA_VERSION likewise. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/cudaver.h"

static void one_line(const char *err)
{
	for (const char *c = err; *c; c++)
		if ((unsigned char)*c < 0x20)
			__builtin_trap();
	if (!strstr(err, "CUDA version"))
		__builtin_trap();
}

static void round_trip(unsigned v)
{
	char s[32], err[256];
	unsigned w;
	if (v > CUDAVER_MAX_MAJOR * 1000 + CUDAVER_MAX_MINOR * 10 || v % 10)
		__builtin_trap();
	cudaver_format(v, s, sizeof(s));
	if (cudaver_parse(s, &w, err, sizeof(err)) != 0 || w != v)
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char s[200], err[256];
	size_t n = size < sizeof(s) - 1 ? size : sizeof(s) - 1;
	memcpy(s, data, n);
	s[n] = '\0';
	unsigned v;
	err[0] = '\0';
	if (cudaver_parse(s, &v, err, sizeof(err)) == 0)
		round_trip(v);
	else
		one_line(err);
	err[0] = '\0';
	int r = cudaver_from_require(s, &v, err, sizeof(err));
	if (r == 1)
		round_trip(v);
	else if (r == -1)
		one_line(err);
	else if (r != 0)
		__builtin_trap();
	/* the first half as NVIDIA_REQUIRE_CUDA, the rest as CUDA_VERSION */
	char req[200];
	memcpy(req, s, n / 2);
	req[n / 2] = '\0';
	err[0] = '\0';
	r = cudaver_image_need(req, s + n / 2, &v, err, sizeof(err));
	if (r == 1) {
		round_trip(v);
		(void)cudaver_ok(v, v);
	} else if (r == -1) {
		one_line(err);
	} else if (r != 0) {
		__builtin_trap();
	}
	return 0;
}
