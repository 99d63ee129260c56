/* SPDX-License-Identifier: Apache-2.0 */
/* joblog.c - see joblog.h. */
#include "joblog.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

bool joblog_trim_plan(uint64_t size, uint64_t limit, uint64_t block, uint64_t punched_to, uint64_t *from,
		      uint64_t *to)
{
	if (!limit || size <= limit || !block)
		return false;
	uint64_t head = (limit / 2 + block - 1) & ~(block - 1); /* up: the head is never cut into */
	uint64_t keep_from = (size - limit / 2) & ~(block - 1); /* down: the tail is at least limit / 2 */
	uint64_t start = punched_to > head ? punched_to : head;
	if (keep_from <= start)
		return false;
	*from = start;
	*to = keep_from;
	return true;
}

int joblog_trim_fd(int fd, uint64_t limit, uint64_t *punched_to)
{
	struct stat sb;
	uint64_t from, to;
	if (fstat(fd, &sb) != 0)
		return -1;
	if (!joblog_trim_plan((uint64_t)sb.st_size, limit, sb.st_blksize > 0 ? (uint64_t)sb.st_blksize : 4096,
			      *punched_to, &from, &to))
		return 0;
	if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)from, (off_t)(to - from)) == 0) {
		*punched_to = to;
		return 0;
	}
	if (errno == EOPNOTSUPP) /* no holes here: keep the head only */
		return ftruncate(fd, (off_t)from);
	return -1;
}

int joblog_trim(const char *path, uint64_t limit, uint64_t *punched_to)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	int rc = joblog_trim_fd(fd, limit, punched_to);
	int saved = errno;
	close(fd);
	errno = saved;
	return rc;
}

void joblog_segment(int fd, uint64_t offset, uint64_t size, uint64_t *skip, uint64_t *len)
{
	*skip = *len = 0;
	if (offset >= size)
		return;
	off_t d = lseek(fd, (off_t)offset, SEEK_DATA);
	if (d < 0) { /* ENXIO: only a hole up to the end; EINVAL: no SEEK_DATA here, all data */
		if (errno == ENXIO)
			*skip = size - offset;
		else
			*len = size - offset;
		return;
	}
	off_t h = lseek(fd, d, SEEK_HOLE);
	uint64_t end = h < 0 || (uint64_t)h > size ? size : (uint64_t)h;
	*skip = (uint64_t)d - offset;
	*len = end > (uint64_t)d ? end - (uint64_t)d : 0;
}
