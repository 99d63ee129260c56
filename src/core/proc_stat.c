/* SPDX-License-Identifier: Apache-2.0 */
/* proc_stat.c - /proc/PID/stat (proc_stat.h). */
#include "proc_stat.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int proc_stat_parse(const char *line, struct proc_stat *out)
{
	const char *close = line ? strrchr(line, ')') : NULL;
	if (!close || close[1] != ' ')
		return -1;
	/* fields after comm: 3 state, 4 ppid, 5 pgrp, 6 session, ... 14 utime,
	 * 15 stime, ... 22 starttime, 23 vsize, 24 rss */
	const char *p = close + 2;
	memset(out, 0, sizeof(*out));
	out->state = *p;
	if (!*p)
		return -1;
	p++;
	unsigned long long v[21];
	unsigned n = 0;
	while (*p && n < 21) {
		while (*p == ' ')
			p++;
		if (!*p || *p == '\n')
			break;
		char *end;
		errno = 0;
		long long x = strtoll(p, &end, 10);
		if (end == p || errno)
			return -1;
		v[n++] = (unsigned long long)x;
		p = end;
	}
	if (n < 19) /* starttime is the 19th number after the state */
		return -1;
	out->ppid = (int)v[0];
	out->pgrp = (int)v[1];
	out->session = (int)v[2];
	out->utime_ticks = v[10];
	out->stime_ticks = v[11];
	out->start_ticks = v[18];
	out->rss_pages = n > 20 ? v[20] : 0;
	return 0;
}

int proc_stat_read(int pid, struct proc_stat *out)
{
	if (pid <= 0)
		return -1;
	char p[64], buf[1024];
	snprintf(p, sizeof(p), "/proc/%d/stat", pid);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return proc_stat_parse(buf, out);
}
