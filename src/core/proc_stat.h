/* SPDX-License-Identifier: Apache-2.0 */
/* proc_stat.h - /proc/PID/stat: the fields gpuctl uses (the pool's process
 * identity and sessions, top's own CPU time, the agent's leak watch). */
#ifndef GPUCTL_PROC_STAT_H
#define GPUCTL_PROC_STAT_H

#include <stdint.h>

struct proc_stat {
	char state;
	int ppid, pgrp, session;
	uint64_t utime_ticks, stime_ticks; /* CPU time in user and kernel mode, clock ticks */
	uint64_t start_ticks;              /* since boot, in clock ticks */
	uint64_t rss_pages;                /* resident set, pages (0 when the line stops before it) */
};
/* Parses a /proc/PID/stat line (pure; the comm may hold spaces and
 * parentheses). 0, or -1 when it is not a stat line (NULL included). */
int proc_stat_parse(const char *line, struct proc_stat *out);
/* Reads /proc/PID/stat. 0, or -1 when the process does not exist. */
int proc_stat_read(int pid, struct proc_stat *out);

#endif
