/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_ldconfig.c - the `ldconfig -p` reader (cdi_ldconfig_find) on arbitrary
 * bytes: no crash, no read past the text; a path it finds is absolute, has no
 * newline, fits, and is found again in a listing of that one line. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view/cdi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = strndup((const char *)data, size); /* the reader takes a C string: up to a NUL */
	if (!text)
		return 0;
	static const char *const arch[] = { "x86-64", "AArch64", "" };
	static const char *const names[] = { "libcuda.so.1", "libnvidia-ml.so.1", "a" };
	char path[64], again[64], line[256];
	for (unsigned a = 0; a < 3; a++)
		for (unsigned k = 0; k < 3; k++) {
			int r = cdi_ldconfig_find(text, names[k], arch[a], path, sizeof(path));
			if (r < -1 || r > 1)
				__builtin_trap();
			if (r != 1)
				continue;
			if (path[0] != '/' || strchr(path, '\n') || strlen(path) >= sizeof(path))
				__builtin_trap();
			snprintf(line, sizeof(line), "\t%s (libc6%s%s) => %s\n", names[k], arch[a][0] ? "," : "", arch[a],
				 path);
			if (cdi_ldconfig_find(line, names[k], arch[a], again, sizeof(again)) != 1 || strcmp(again, path))
				__builtin_trap();
		}
	free(text);
	return 0;
}
