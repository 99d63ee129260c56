/* data_path.h - where gpuctl finds its shipped data files (catalog, simulated
 * servers, prices, XID catalog, health rules). Order: $GPUCTL_DATA_DIR, the
 * source tree's data/ (compiled in as GPUCTL_SOURCE_DATA_DIR), then the install
 * prefix's share/gpuctl. The caller passes the environment value in. */
#ifndef GPUCTL_DATA_PATH_H
#define GPUCTL_DATA_PATH_H
#include <stddef.h>

#include "readfile.h" /* read_whole_file: its callers find data files here */

/* Writes the full path of data file `rel` ("sim/h200x8.json") into out.
 * env_dir is getenv("GPUCTL_DATA_DIR") or NULL. Returns 0 if it exists, -1 if not. */
int data_path_find(const char *env_dir, const char *rel, char *out, size_t outlen);

#endif
