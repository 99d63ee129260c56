/* SPDX-License-Identifier: Apache-2.0 */
/* spawn.c - see spawn.h. One poll loop over the program's stdout and stderr
 * pipes, with the deadline; the child is always reaped. */
#include "core/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/clock.h"

extern char **environ;

/* The output kept so far: stdout up to the cap, stderr's first line. */
struct sink {
	char *buf;
	size_t len, cap, max;
	bool over, keep;
	char err[512];
	size_t elen;
};

static int grow(struct sink *s, size_t need)
{
	if (need <= s->cap)
		return 0;
	size_t ncap = s->cap ? s->cap : 4096;
	while (ncap < need)
		ncap *= 2;
	char *nb = realloc(s->buf, ncap);
	if (!nb)
		return -1;
	s->buf = nb;
	s->cap = ncap;
	return 0;
}

/* Reads what fd has now into the sink: 1 open, 0 at its end, -1 out of memory. */
static int drain(int fd, struct sink *s, bool is_err)
{
	char tmp[4096];
	ssize_t r = read(fd, tmp, sizeof(tmp));
	if (r < 0)
		return errno == EINTR || errno == EAGAIN ? 1 : 0;
	if (r == 0)
		return 0;
	if (is_err) {
		size_t room = sizeof(s->err) - 1 - s->elen, k = (size_t)r < room ? (size_t)r : room;
		memcpy(s->err + s->elen, tmp, k);
		s->elen += k;
		s->err[s->elen] = '\0';
		return 1;
	}
	if (!s->keep || s->over)
		return 1;
	if (s->len + (size_t)r > s->max) {
		s->over = true; /* the rest unread: the program ends on a broken pipe */
		return 0;
	}
	if (grow(s, s->len + (size_t)r + 1) != 0)
		return -1;
	memcpy(s->buf + s->len, tmp, (size_t)r);
	s->len += (size_t)r;
	return 1;
}

int spawn_run(char *const argv[], const struct spawn_opts *o, char **out, size_t *len, char *errline,
	      size_t errlen)
{
	int po[2], pe[2];
	errline[0] = '\0';
	if (out)
		*out = NULL;
	if (len)
		*len = 0;
	if (pipe2(po, O_CLOEXEC) != 0)
		return snprintf(errline, errlen, "pipe: %s", strerror(errno)), -1;
	if (pipe2(pe, O_CLOEXEC) != 0) {
		close(po[0]);
		close(po[1]);
		return snprintf(errline, errlen, "pipe: %s", strerror(errno)), -1;
	}
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, po[1], 1);
	posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
	pid_t pid;
	int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(po[1]);
	close(pe[1]);
	if (rc != 0) {
		close(po[0]);
		close(pe[0]);
		return snprintf(errline, errlen, "cannot run '%s': %s", argv[0], strerror(rc)), -1;
	}
	struct sink s = { .max = o->out_max, .keep = out != NULL };
	uint64_t deadline = o->timeout_ms ? clock_mono_ns() + o->timeout_ms * 1000000ull : 0;
	bool timed_out = false, oom = false;
	struct pollfd pf[2] = { { po[0], POLLIN, 0 }, { pe[0], POLLIN, 0 } };
	while ((pf[0].fd >= 0 || pf[1].fd >= 0) && !timed_out && !oom) {
		int wait_ms = -1;
		if (deadline) {
			uint64_t now = clock_mono_ns();
			if (now >= deadline) {
				timed_out = true;
				break;
			}
			uint64_t left = (deadline - now + 999999) / 1000000;
			wait_ms = left > 1000 ? 1000 : (int)left;
		}
		int n = poll(pf, 2, wait_ms);
		if (n < 0 && errno != EINTR)
			break;
		for (int k = 0; k < 2 && n > 0; k++) {
			if (pf[k].fd < 0 || !pf[k].revents)
				continue;
			int r = drain(pf[k].fd, &s, k == 1);
			if (r <= 0) {
				oom = r < 0;
				close(pf[k].fd);
				pf[k].fd = -1;
			}
		}
	}
	for (int k = 0; k < 2; k++)
		if (pf[k].fd >= 0)
			close(pf[k].fd);
	int st = 0;
	bool reaped = false;
	/* its pipes closed, the program may still run: the deadline holds for it too */
	while (deadline && !timed_out && !oom) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid) {
			reaped = true;
			break;
		}
		if (w < 0 && errno != EINTR)
			break;
		if (w == 0 && clock_mono_ns() >= deadline)
			timed_out = true;
		else if (w == 0)
			poll(NULL, 0, 10);
	}
	if (timed_out || oom)
		kill(pid, SIGKILL);
	while (!reaped && waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			free(s.buf);
			return snprintf(errline, errlen, "waitpid: %s", strerror(errno)), -1;
		}
	s.err[strcspn(s.err, "\n")] = '\0';
	snprintf(errline, errlen, "%s", s.err);
	if (timed_out)
		snprintf(errline, errlen, "'%s' ran past %llu ms: killed", argv[0], (unsigned long long)o->timeout_ms);
	else if (oom)
		snprintf(errline, errlen, "out of memory reading the output of '%s'", argv[0]);
	else if (s.over)
		snprintf(errline, errlen, "the output of '%s' is larger than %zu bytes", argv[0], s.max);
	else if (!WIFEXITED(st))
		snprintf(errline, errlen, "'%s' was killed by signal %d", argv[0], WTERMSIG(st));
	if (timed_out || oom || s.over || !WIFEXITED(st)) {
		free(s.buf);
		return -1;
	}
	if (out) {
		if (grow(&s, s.len + 1) != 0) {
			free(s.buf);
			return snprintf(errline, errlen, "out of memory reading the output of '%s'", argv[0]), -1;
		}
		s.buf[s.len] = '\0';
		*out = s.buf;
		if (len)
			*len = s.len;
	}
	return WEXITSTATUS(st);
}
