/* SPDX-License-Identifier: Apache-2.0 */
/* readfile.c - the one bounded reader of whole files and pipes (readfile.h). */
#include "readfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *read_fd_bounded(int fd, size_t max_bytes, const char *what, size_t *len, char *err, size_t errlen)
{
	if (max_bytes > (size_t)-1 / 4)
		max_bytes = (size_t)-1 / 4;
	size_t cap = max_bytes < 4095 ? max_bytes + 1 : 4096, n = 0;
	char *buf = malloc(cap);
	if (!buf) {
		snprintf(err, errlen, "out of memory reading %s", what);
		return NULL;
	}
	for (;;) {
		if (n + 1 >= cap) {
			if (cap >= max_bytes + 1) {
				/* full to the cap: one more byte says whether there is more */
				char probe;
				ssize_t r;
				while ((r = read(fd, &probe, 1)) < 0 && errno == EINTR)
					;
				if (r == 0)
					break;
				if (r > 0)
					snprintf(err, errlen, "%s is larger than %zu bytes", what, max_bytes);
				else
					snprintf(err, errlen, "cannot read %s: %s", what, strerror(errno));
				free(buf);
				return NULL;
			}
			size_t ncap = cap * 2 > max_bytes + 1 || cap * 2 < cap ? max_bytes + 1 : cap * 2;
			char *nb = realloc(buf, ncap);
			if (!nb) {
				snprintf(err, errlen, "out of memory reading %s (%zu bytes)", what, ncap);
				free(buf);
				return NULL;
			}
			buf = nb;
			cap = ncap;
		}
		ssize_t r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(err, errlen, "cannot read %s: %s", what, strerror(errno));
			free(buf);
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

char *read_whole_file(const char *path, size_t max_bytes, size_t *len, char *err, size_t errlen)
{
	/* O_NONBLOCK: a FIFO does not hang the open; it is refused below */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
		return NULL;
	}
	struct stat st;
	if (fstat(fd, &st) != 0) {
		snprintf(err, errlen, "cannot read '%s': %s", path, strerror(errno));
		close(fd);
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "'%s' is not a regular file", path);
		close(fd);
		return NULL;
	}
	if (st.st_size > 0 && (unsigned long long)st.st_size > max_bytes) {
		snprintf(err, errlen, "'%s' is larger than %zu bytes", path, max_bytes);
		close(fd);
		return NULL;
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		(void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	char what[300];
	snprintf(what, sizeof(what), "'%s'", path);
	char *buf = read_fd_bounded(fd, max_bytes, what, len, err, errlen);
	close(fd);
	return buf;
}
