/* SPDX-License-Identifier: Apache-2.0 */
/*
 * joblog.h - a job's output files (pool_dir/jobs/<id>/stdout|stderr) kept
 * within the pool's per-stream limit, and read back around what was dropped.
 *
 * The job writes into a pipe; its shim (runner.c) copies what comes into the
 * file (O_APPEND) and, past the limit, punches the middle out of the file
 * after each write (fallocate(PUNCH_HOLE)), so the file never holds more
 * than the limit plus one write (64 KiB) and two filesystem blocks: the
 * first half of the limit and the latest half stay, the disk space of the
 * rest is given back, and the file keeps its size. Readers find the dropped
 * range as a hole (SEEK_DATA). On a filesystem that cannot punch holes the
 * file is cut back to its head instead (the tail is then lost).
 * Block-aligned, so nothing kept is ever zeroed. The agent also trims the
 * files of running jobs every 200 ms (pool_logs.c): what a job writes into
 * its file by its path, not through its stdout or stderr, is bounded that way.
 */
#ifndef GPUCTL_POOL_JOBLOG_H
#define GPUCTL_POOL_JOBLOG_H

#include <stdbool.h>
#include <stdint.h>

#define JOBLOG_DEFAULT_LIMIT (128ull << 20)   /* bytes kept of each stream */

/* Pure: the range to punch so that a file of size bytes keeps its first
 * limit/2 and its last limit/2 (rounded to whole blocks; block a power of
 * two), given that [.., punched_to) is gone already. True with [*from, *to)
 * when there is something new to punch. limit 0: no limit. */
bool joblog_trim_plan(uint64_t size, uint64_t limit, uint64_t block, uint64_t punched_to, uint64_t *from,
		      uint64_t *to);

/* Keeps the file at path within limit (joblog_trim_plan); *punched_to is
 * kept by the caller between calls (0 at first). 0, or -1 with errno. */
int joblog_trim(const char *path, uint64_t limit, uint64_t *punched_to);
/* The same on an open file (written by the shim after each copy: system
 * calls only, async-signal-safe). */
int joblog_trim_fd(int fd, uint64_t limit, uint64_t *punched_to);

/* Where the data at or after offset is: *skip bytes of hole (dropped) first,
 * then *len bytes of data up to the next hole or the end of the file. */
void joblog_segment(int fd, uint64_t offset, uint64_t size, uint64_t *skip, uint64_t *len);

#endif
