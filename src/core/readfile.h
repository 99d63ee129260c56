/* SPDX-License-Identifier: Apache-2.0 */
/*
 * readfile.h - the one bounded reader: every file gpuctl reads whole (rules,
 * XID and GPU catalogs, simulated servers and fault files, prices, config,
 * bench results, a sweep's node results and fleet.json, /proc and /sys
 * files) and every program's output it reads whole go through it.
 *
 * A file is read only when it is a regular file (not a device such as
 * /dev/zero, a FIFO or a directory; a symlink counts as what it points to),
 * and only up to a cap: more is an error, never a silent prefix, and so is
 * memory that runs out. Errors are one line naming the file.
 */
#ifndef GPUCTL_READFILE_H
#define GPUCTL_READFILE_H
#include <stddef.h>

/* Reads the regular file path whole (NUL-terminated; *len its length when
 * len is not NULL). Returns a malloc'd buffer, or NULL with err: it cannot
 * be opened, is not a regular file, is larger than max_bytes, or memory ran out. */
char *read_whole_file(const char *path, size_t max_bytes, size_t *len, char *err, size_t errlen);
/* Reads fd to its end (a pipe: a program's output), at most max_bytes, as
 * read_whole_file; what names it in messages ("'ldconfig -p''s output"). */
char *read_fd_bounded(int fd, size_t max_bytes, const char *what, size_t *len, char *err, size_t errlen);

#endif
