/* SPDX-License-Identifier: Apache-2.0 */
/* test_hold.c - test-only wedges (see test_hold.h). */
#include "test_hold.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <unistd.h>

void test_hold(const char *env)
{
	const char *path = getenv(env);
	if (!path || !path[0])
		return;
	char waiting[4096];
	if (snprintf(waiting, sizeof(waiting), "%s.waiting", path) >= (int)sizeof(waiting))
		return;
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		/* held by the test: say so, then wait for it */
		int w = open(waiting, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
		if (w >= 0)
			close(w);
		while (flock(fd, LOCK_EX) != 0 && errno == EINTR)
			;
	}
	close(fd); /* the lock goes with it */
}
