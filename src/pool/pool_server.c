/*
 * pool_server.c - the control socket: a Unix stream socket, one request per
 * connection. The caller is whoever the kernel says (SO_PEERCRED); a request
 * is read up to the client's shutdown(SHUT_WR) or PROTO_MAX_REQUEST bytes,
 * with a timeout so a client that sends nothing cannot hold the server.
 * Socket mode: 0666 when the agent is root (every user submits; requests are
 * checked per caller), 0600 otherwise (only the agent's own user).
 */
#include "pool_internal.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define IO_TIMEOUT_S 5

static int make_addr(const char *path, struct sockaddr_un *a, char *err, size_t errlen)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(a->sun_path)) {
		snprintf(err, errlen, "socket path '%s' is too long", path);
		return -1;
	}
	memcpy(a->sun_path, path, strlen(path) + 1);
	return 0;
}

/* True when something answers on the path (another agent). */
static bool socket_answers(const struct sockaddr_un *a)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	bool up = connect(fd, (const struct sockaddr *)a, sizeof(*a)) == 0;
	close(fd);
	return up;
}

static void write_all(int fd, const char *s, size_t n)
{
	while (n > 0) {
		ssize_t w = send(fd, s, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

static void serve_one(struct pool *p, int fd)
{
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) != 0)
		return;
	struct timeval tv = { IO_TIMEOUT_S, 0 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	size_t cap = 16384, len = 0;
	char *buf = malloc(cap);
	json_t *resp = NULL;
	char *text = NULL;
	bool too_big = false, timed_out = false;
	while (buf) {
		if (len == cap) {
			if (cap > PROTO_MAX_REQUEST) {
				too_big = true;
				break;
			}
			char *n = realloc(buf, cap * 2);
			if (!n)
				break;
			buf = n;
			cap *= 2;
		}
		ssize_t r = recv(fd, buf + len, cap - len, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			timed_out = true;
			break;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	if (!buf)
		resp = proto_error("out of memory");
	else if (too_big || len > PROTO_MAX_REQUEST)
		resp = proto_error("request too large");
	else if (timed_out)
		resp = proto_error("request not complete within 5 s (a client shuts down its writing side when done)");
	else {
		struct pool_caller c = { .uid = cred.uid, .gid = cred.gid, .pid = cred.pid };
		text = pool_handle(p, &c, buf, len);
		if (!text)
			resp = proto_error("out of memory");
	}
	free(buf);
	bool own_error = resp != NULL; /* pool_handle's text already ends in a newline */
	if (own_error) {
		text = json_dumps(resp, JSON_COMPACT);
		json_decref(resp);
	}
	if (text) {
		write_all(fd, text, strlen(text));
		if (own_error)
			write_all(fd, "\n", 1);
	}
	free(text);
}

static void *server_thread(void *arg)
{
	struct pool *p = arg;
	for (;;) {
		pthread_mutex_lock(&p->mu);
		bool stop = p->stopping;
		pthread_mutex_unlock(&p->mu);
		if (stop)
			break;
		struct pollfd pfd = { .fd = p->listen_fd, .events = POLLIN };
		if (poll(&pfd, 1, 200) <= 0)
			continue;
		int fd = accept4(p->listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		serve_one(p, fd);
		close(fd);
	}
	return NULL;
}

int pool_server_start(struct pool *p, char *err, size_t errlen)
{
	struct sockaddr_un a;
	if (make_addr(p->cfg.socket_path, &a, err, errlen))
		return -1;
	struct stat sb;
	if (lstat(p->cfg.socket_path, &sb) == 0) {
		if (!S_ISSOCK(sb.st_mode)) {
			snprintf(err, errlen, "'%s' exists and is not a socket", p->cfg.socket_path);
			return -1;
		}
		if (socket_answers(&a)) {
			snprintf(err, errlen, "another pool agent answers on '%s'", p->cfg.socket_path);
			return -1;
		}
		unlink(p->cfg.socket_path); /* left by an agent that died */
	}
	p->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (p->listen_fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	mode_t old = umask(p->euid == 0 ? 0111 : 0177);
	int rc = bind(p->listen_fd, (struct sockaddr *)&a, sizeof(a));
	umask(old);
	if (rc != 0 || listen(p->listen_fd, 512) != 0) {
		snprintf(err, errlen, "cannot listen on '%s': %s", p->cfg.socket_path, strerror(errno));
		close(p->listen_fd);
		p->listen_fd = -1;
		return -1;
	}
	chmod(p->cfg.socket_path, p->euid == 0 ? 0666 : 0600);
	if (pthread_create(&p->server_thread, NULL, server_thread, p) != 0) {
		snprintf(err, errlen, "cannot start the control socket thread");
		close(p->listen_fd);
		p->listen_fd = -1;
		unlink(p->cfg.socket_path);
		return -1;
	}
	p->server_started = true;
	return 0;
}

void pool_server_stop(struct pool *p)
{
	if (p->server_started) {
		pthread_mutex_lock(&p->mu);
		p->stopping = true;
		pthread_mutex_unlock(&p->mu);
		pthread_join(p->server_thread, NULL);
		p->server_started = false;
	}
	if (p->listen_fd >= 0) {
		close(p->listen_fd);
		unlink(p->cfg.socket_path);
		p->listen_fd = -1;
	}
}
