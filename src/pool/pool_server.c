/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pool_server.c - the control socket: a Unix stream socket, one request per
 * connection. The caller is whoever the kernel says (SO_PEERCRED); a request
 * is read up to the client's shutdown(SHUT_WR) or PROTO_MAX_REQUEST bytes.
 * Clients are served concurrently by one poll loop: each connection has its
 * own deadline (IO_TIMEOUT_NS from its accept to its whole request, and as
 * long again without progress to take its answer), so idle clients do not delay the others
 * and their deadlines do not add up. A uid holds at most POOL_MAX_CONN_PER_UID
 * connections: one more closes that uid's oldest one still sending, so a user
 * can only ever stall their own connections. When MAX_CLIENTS are open, a new
 * connection evicts the oldest one of the uid that holds the most (so the user
 * who opened many is the one cut off, never the others). A uid's requests
 * still being sent hold at most POOL_MAX_IN_PER_UID bytes together and its
 * answers not yet read at most POOL_MAX_OUT_PER_UID: past those its request
 * is answered with an error, not read further or handled, so that one user
 * cannot make the agent hold an unbounded share of its memory. Requests are answered one after
 * another (they take well under a millisecond; queue at 10 000 jobs ~10 ms).
 * Socket mode: 0666 when the agent is root (every user submits; requests are
 * checked per caller), 0600 otherwise (only the agent's own user).
 */
#include "pool_internal.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/clock.h"

#define IO_TIMEOUT_NS 5000000000ull
#define MAX_CLIENTS 512u                /* well below the usual 1024 descriptors */
#define POOL_MAX_CONN_PER_UID 64u
#define POOL_MAX_IN_PER_UID (16u << 20)  /* four requests of PROTO_MAX_REQUEST */
#define POOL_MAX_OUT_PER_UID (32u << 20) /* answers held for a uid, not yet taken */
#define POLL_MS 200

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

struct client {
	int fd;
	uid_t uid;
	gid_t gid;
	pid_t pid;
	uint64_t accepted;           /* monotonic ns: oldest first when a uid is over its cap */
	uint64_t deadline;           /* reading: the whole request; writing: the whole answer */
	char *in;                    /* the request so far */
	size_t in_len, in_cap;
	char *out;                   /* the answer, once there is one */
	size_t out_len, out_off;
	int file_fd;                 /* then a file range (raw logs), -1 when none */
	uint64_t file_off, file_left;
};

static void client_close(struct client *c)
{
	close(c->fd);
	if (c->file_fd >= 0)
		close(c->file_fd);
	free(c->in);
	free(c->out);
	memset(c, 0, sizeof(*c));
	c->fd = c->file_fd = -1;
}

/* The answer to send: text (heap, taken) or, when NULL, an error with msg. */
static void client_answer(struct client *c, char *text, const char *msg, uint64_t now)
{
	if (!text) {
		json_t *e = proto_error(msg);
		char *t = e ? json_dumps(e, JSON_COMPACT) : NULL;
		json_decref(e);
		size_t n = t ? strlen(t) : 0;
		text = t ? realloc(t, n + 2) : NULL;
		if (!text) {
			free(t);
			client_close(c); /* out of memory: nothing to say it with */
			return;
		}
		memcpy(text + n, "\n", 2);
	}
	free(c->in);
	c->in = NULL;
	c->in_len = c->in_cap = 0; /* no longer held (uid_held) */
	c->out = text;
	c->out_len = text ? strlen(text) : 0;
	c->out_off = 0;
	c->deadline = now + IO_TIMEOUT_NS;
}

/* What the uid's connections hold: request bytes buffered, answer bytes not yet taken. */
static void uid_held(const struct client *cl, unsigned ncl, uid_t uid, size_t *in, size_t *out)
{
	*in = *out = 0;
	for (unsigned i = 0; i < ncl; i++)
		if (cl[i].fd >= 0 && cl[i].uid == uid) {
			*in += cl[i].in_cap;
			*out += cl[i].out ? cl[i].out_len - cl[i].out_off : 0;
		}
}

/* Reads what is there; at the client's shutdown the request is answered. */
static void client_read(struct pool *p, struct client *cl, unsigned ncl, struct client *c, uint64_t now)
{
	size_t held_in, held_out;
	for (;;) {
		if (c->in_len == c->in_cap) {
			if (c->in_cap > PROTO_MAX_REQUEST) {
				client_answer(c, NULL, "request too large", now);
				return;
			}
			size_t cap = c->in_cap ? c->in_cap * 2 : 4096;
			uid_held(cl, ncl, c->uid, &held_in, &held_out);
			if (held_in + (cap - c->in_cap) > POOL_MAX_IN_PER_UID) {
				client_answer(c, NULL, "refused: this user's requests being sent hold more than 16 MiB "
						       "(send them one after another)", now);
				return;
			}
			char *n = realloc(c->in, cap);
			if (!n) {
				client_answer(c, NULL, "out of memory", now);
				return;
			}
			c->in = n;
			c->in_cap = cap;
		}
		ssize_t r = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len, MSG_DONTWAIT);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (r < 0) {
			client_close(c);
			return;
		}
		if (r == 0)
			break;
		c->in_len += (size_t)r;
	}
	if (c->in_len > PROTO_MAX_REQUEST) {
		client_answer(c, NULL, "request too large", now);
		return;
	}
	uid_held(cl, ncl, c->uid, &held_in, &held_out);
	if (held_out > POOL_MAX_OUT_PER_UID) {
		client_answer(c, NULL, "refused: this user's answers not yet read hold more than 32 MiB (read them first)",
			      now);
		return;
	}
	struct pool_caller who = { .uid = c->uid, .gid = c->gid, .pid = c->pid };
	struct pool_stream more;
	char *text = pool_handle(p, &who, c->in ? c->in : "", c->in_len, &more);
	if (text && more.fd >= 0) {
		c->file_fd = more.fd;
		c->file_off = more.offset;
		c->file_left = more.length;
	} else if (more.fd >= 0) {
		close(more.fd);
	}
	client_answer(c, text, "out of memory", now);
}

/* Sends what the socket takes, the answer then the file range after it;
 * closes once all is out. Progress moves the deadline: a reader that keeps
 * reading a long log is not cut off, one that stops is. */
static void client_write(struct client *c, uint64_t now)
{
	if (c->fd < 0)
		return;
	while (c->out && c->out_off < c->out_len) {
		ssize_t w = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (w <= 0) {
			client_close(c);
			return;
		}
		c->out_off += (size_t)w;
		c->deadline = now + IO_TIMEOUT_NS;
	}
	while (c->file_fd >= 0 && c->file_left) {
		off_t off = (off_t)c->file_off;
		ssize_t w = sendfile(c->fd, c->file_fd, &off, c->file_left < (1u << 20) ? (size_t)c->file_left : 1u << 20);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (w <= 0)
			break; /* the file shrank (cut back) or the reader left: it gets what was sent */
		c->file_off += (uint64_t)w;
		c->file_left -= (uint64_t)w;
		c->deadline = now + IO_TIMEOUT_NS;
	}
	client_close(c);
}

/* Drops the closed connections, keeping the others in their order. */
static void drop_closed(struct client *cl, unsigned *ncl)
{
	unsigned k = 0;
	for (unsigned i = 0; i < *ncl; i++)
		if (cl[i].fd >= 0)
			cl[k++] = cl[i];
	*ncl = k;
}

/* Answers c with msg (best effort: not waited for) and closes it. */
static void client_evict(struct client *c, const char *msg, uint64_t now)
{
	if (!c->out)
		client_answer(c, NULL, msg, now);
	client_write(c, now);
	if (c->fd >= 0)
		client_close(c);
}

/* With every slot taken: the oldest connection of the uid holding the most
 * (the newcomer's own uid counted with the newcomer), that uid's oldest
 * still sending first. NULL when that uid is the newcomer's and it holds no
 * slot (cannot happen while MAX_CLIENTS > 0). */
static struct client *eviction_victim(struct client *cl, unsigned ncl, uid_t newcomer)
{
	uid_t top = newcomer;
	unsigned top_n = 1;
	for (unsigned i = 0; i < ncl; i++) {
		unsigned n = cl[i].uid == newcomer ? 1 : 0;
		for (unsigned k = 0; k < ncl; k++)
			n += cl[k].uid == cl[i].uid;
		if (n > top_n) {
			top = cl[i].uid;
			top_n = n;
		}
	}
	struct client *v = NULL;
	for (unsigned i = 0; i < ncl; i++)
		if (cl[i].uid == top && (!v || (v->out && !cl[i].out) ||
					 (!v->out == !cl[i].out && cl[i].accepted < v->accepted)))
			v = &cl[i];
	return v;
}

/* A new connection; over the uid's cap, that uid's oldest connection still
 * sending its request is answered with an error and closed. */
static void client_accept(struct client *cl, unsigned *ncl, int fd, uint64_t now)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
		close(fd);
		return;
	}
	if (*ncl == MAX_CLIENTS) {
		struct client *v = eviction_victim(cl, *ncl, cred.uid);
		if (!v) {
			close(fd);
			return;
		}
		client_evict(v, "closed: the pool's connections are all taken and this user holds the most", now);
		drop_closed(cl, ncl);
	}
	unsigned same = 0;
	struct client *oldest = NULL;
	for (unsigned i = 0; i < *ncl; i++)
		if (cl[i].uid == cred.uid) {
			same++;
			if (!cl[i].out && (!oldest || cl[i].accepted < oldest->accepted))
				oldest = &cl[i];
		}
	if (same >= POOL_MAX_CONN_PER_UID && oldest) {
		client_evict(oldest, "closed: this user holds too many connections to the pool", now);
	} else if (same >= POOL_MAX_CONN_PER_UID) {
		close(fd); /* all of them are being answered */
		return;
	}
	struct client *c = &cl[(*ncl)++];
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->file_fd = -1;
	c->uid = cred.uid;
	c->gid = cred.gid;
	c->pid = cred.pid;
	c->accepted = now;
	c->deadline = now + IO_TIMEOUT_NS;
}

static void *server_thread(void *arg)
{
	struct pool *p = arg;
	struct client *cl = calloc(MAX_CLIENTS, sizeof(*cl));
	struct pollfd *pf = calloc(MAX_CLIENTS + 1, sizeof(*pf));
	unsigned ncl = 0;
	uint64_t accept_pause_until = 0; /* out of descriptors: the listening socket rests a while */
	while (cl && pf) {
		pthread_mutex_lock(&p->mu);
		bool stop = p->stopping;
		pthread_mutex_unlock(&p->mu);
		if (stop)
			break;
		uint64_t now = clock_mono_ns();
		int wait_ms = POLL_MS;
		pf[0] = (struct pollfd){ .fd = p->listen_fd, .events = now >= accept_pause_until ? POLLIN : 0 };
		for (unsigned i = 0; i < ncl; i++) {
			pf[i + 1] = (struct pollfd){ .fd = cl[i].fd, .events = cl[i].out ? POLLOUT : POLLIN };
			uint64_t left_ms = cl[i].deadline > now ? (cl[i].deadline - now) / 1000000u + 1 : 0;
			if (left_ms < (uint64_t)wait_ms)
				wait_ms = (int)left_ms;
		}
		if (poll(pf, ncl + 1, wait_ms) < 0 && errno != EINTR)
			break;
		now = clock_mono_ns();
		for (unsigned i = 0; i < ncl; i++) {
			struct client *c = &cl[i];
			short ev = pf[i + 1].revents;
			if (c->fd < 0)
				continue;
			if (!c->out && (ev & (POLLIN | POLLHUP | POLLERR)))
				client_read(p, cl, ncl, c, now);
			else if (c->out && (ev & (POLLOUT | POLLHUP | POLLERR)))
				client_write(c, now);
			if (c->fd >= 0 && now >= c->deadline) {
				if (c->out) {
					client_close(c); /* it does not take its answer */
				} else {
					client_answer(c, NULL,
						      "request not complete within 5 s (a client shuts down its writing side when done)",
						      now);
					client_write(c, now);
				}
			}
		}
		drop_closed(cl, &ncl);
		if (pf[0].revents & POLLIN)
			for (;;) { /* the listening socket does not block */
				int fd = accept4(p->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
				if (fd < 0 && (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM))
					accept_pause_until = now + 100000000ull; /* else poll would wake at once, again and again */
				if (fd < 0)
					break;
				client_accept(cl, &ncl, fd, now);
				drop_closed(cl, &ncl);
			}
	}
	for (unsigned i = 0; cl && i < ncl; i++)
		client_close(&cl[i]);
	free(cl);
	free(pf);
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
	p->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
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
