/* data_path.c - locating shipped data files (readfile.c reads them). */
#include "data_path.h"

#include <stdio.h>
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
