/* SPDX-License-Identifier: Apache-2.0 */
/* replay_main.c - runs a libFuzzer target over every file of a corpus folder,
 * so each fuzz target is also an ordinary regression test without clang. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_target.h"

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
		return 2;
	}
	DIR *d = opendir(argv[1]);
	if (!d) {
		fprintf(stderr, "cannot open corpus '%s'\n", argv[1]);
		return 1;
	}
	struct dirent *e;
	int count = 0;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", argv[1], e->d_name);
		FILE *f = fopen(path, "rb");
		if (!f)
			continue;
		uint8_t *buf = malloc(1 << 20);
		size_t n = buf ? fread(buf, 1, 1 << 20, f) : 0;
		fclose(f);
		if (buf)
			LLVMFuzzerTestOneInput(buf, n);
		free(buf);
		count++;
	}
	closedir(d);
	printf("%d passed, 0 failed\n", count);
	return count > 0 ? 0 : 1;
}
