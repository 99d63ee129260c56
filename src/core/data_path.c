/* data_path.c - locating and reading shipped data files. */
#include "data_path.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef GPUCTL_SOURCE_DATA_DIR
#define GPUCTL_SOURCE_DATA_DIR "data"
#endif
#ifndef GPUCTL_INSTALL_DATA_DIR
#define GPUCTL_INSTALL_DATA_DIR "/usr/local/share/gpuctl"
#endif

int data_path_find(const char *env_dir, const char *rel, char *out, size_t outlen)
{
	const char *dirs[] = { env_dir, GPUCTL_SOURCE_DATA_DIR, GPUCTL_INSTALL_DATA_DIR };
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		if (!dirs[i] || !*dirs[i])
			continue;
		int n = snprintf(out, outlen, "%s/%s", dirs[i], rel);
		if (n < 0 || (size_t)n >= outlen)
			continue;
		if (access(out, R_OK) == 0)
			return 0;
	}
	return -1;
}

char *read_whole_file(const char *path, size_t max_bytes, size_t *len, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
		return NULL;
	}
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	while (buf) {
		if (n + 1 >= cap) {
			if (cap >= max_bytes + 1) {
				snprintf(err, errlen, "'%s' is larger than %zu bytes", path, max_bytes);
				free(buf);
				fclose(f);
				return NULL;
			}
			cap = cap * 2 > max_bytes + 1 ? max_bytes + 1 : cap * 2;
			char *nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
		}
		size_t got = fread(buf + n, 1, cap - n - 1, f);
		n += got;
		if (got == 0)
			break;
	}
	if (!buf) {
		snprintf(err, errlen, "out of memory reading '%s'", path);
		fclose(f);
		return NULL;
	}
	if (ferror(f)) {
		snprintf(err, errlen, "cannot read '%s': %s", path, strerror(errno));
		free(buf);
		fclose(f);
		return NULL;
	}
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}
