/* SPDX-License-Identifier: Apache-2.0 */
/* door.c - the agent's front door (see door.h). */
#include "door.h"

#include <errno.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/thread.h"
#include "httpreq.h"

#define DOOR_SWEEP_MS 100 /* how often deadlines are checked */
#define DOOR_HEAD_MAX 8192

struct waiting {
	int fd;
	bool ready;         /* its head passed: it waits for a place at libmicrohttpd */
	uint64_t since_ns;
	struct sockaddr_storage addr;
	socklen_t addrlen;
};

/* a connection handed to libmicrohttpd (see door.h): from the hand-over to
 * libmicrohttpd's notice that it closed it */
struct door_watch {
	int fd;
	bool started;       /* libmicrohttpd has taken it (its NOTIFY_CONNECTION STARTED) */
	bool head_pending;  /* a request is expected or under way and its head not complete */
	bool shut;          /* shut down for being overdue: once */
	uint64_t since_ns;  /* head_pending since (before started: the hand-over) */
	struct sockaddr_storage addr;
	struct door_watch *prev, *next;
};

struct http_door {
	struct http_door_limits lim;
	pthread_mutex_t watch_mu; /* the watched list and served: libmicrohttpd's threads and the door's */
	struct door_watch *watched;
	unsigned served;          /* records in watched: connections libmicrohttpd holds */
	struct MHD_Daemon *httpd;
	int listen_fd, epfd, wake_fd;
	pthread_t thread;
	atomic_bool stop;
	struct waiting *w; /* lim.max_waiting slots, n in use */
	unsigned n;
};

static bool same_addr(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr == ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (a->ss_family == AF_INET6)
		return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr, &((const struct sockaddr_in6 *)b)->sin6_addr,
			      sizeof(struct in6_addr)) == 0;
	return true;
}

/* Forgets slot i (its fd is closed, or handed over, by the caller). */
static void forget(struct http_door *d, unsigned i)
{
	epoll_ctl(d->epfd, EPOLL_CTL_DEL, d->w[i].fd, NULL);
	d->w[i] = d->w[--d->n];
}

static void drop(struct http_door *d, unsigned i)
{
	int fd = d->w[i].fd;
	forget(d, i);
	close(fd);
}

/* A short answer, sent without waiting (a client that does not read it loses
 * it). What the client sent is taken off the socket first: closing one with
 * unread bytes resets it, and the client may lose the answer. */
static void answer(int fd, int status, const char *msg)
{
	char sink[DOOR_HEAD_MAX];
	for (int k = 0; k < 4 && recv(fd, sink, sizeof(sink), MSG_DONTWAIT) > 0; k++)
		;
	const char *reason = status == 400 ? "Bad Request" : status == 408 ? "Request Timeout"
			     : status == 414 ? "URI Too Long" : status == 431 ? "Request Header Fields Too Large"
			     : status == 503 ? "Service Unavailable" : status == 505 ? "HTTP Version Not Supported" : "Error";
	char resp[512];
	int n = snprintf(resp, sizeof(resp),
			 "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %zu\r\n"
			 "Connection: close\r\n\r\ngpuctl agent: %s\n",
			 status, reason, strlen(msg) + strlen("gpuctl agent: \n"), msg);
	if (n > 0 && (size_t)n < sizeof(resp) && send(fd, resp, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
		/* nothing to do: the client is gone or not reading */
	}
}

static void unlink_watch(struct http_door *d, struct door_watch *w)
{
	if (w->prev)
		w->prev->next = w->next;
	else
		d->watched = w->next;
	if (w->next)
		w->next->prev = w->prev;
	d->served--;
}

/* Whether libmicrohttpd may take one more connection from addr: the door
 * counts what it holds (max_served, and per_ip of one address), so that
 * libmicrohttpd never reaches a limit of its own. Under watch_mu. */
static bool room_for(const struct http_door *d, const struct sockaddr_storage *addr)
{
	if (d->served >= d->lim.max_served)
		return false;
	if (!d->lim.per_ip)
		return true;
	unsigned same = 0;
	for (const struct door_watch *w = d->watched; w; w = w->next)
		same += same_addr(&w->addr, addr);
	return same < d->lim.per_ip;
}

/* Hands ready slot i to libmicrohttpd if it has room for it (else it stays
 * ready, until a served connection closes or its head's deadline passes).
 * The record is made first: libmicrohttpd's threads may start and close the
 * connection before MHD_add_connection returns. True if handed over. */
static bool hand_over(struct http_door *d, unsigned i)
{
	pthread_mutex_lock(&d->watch_mu);
	struct door_watch *w = room_for(d, &d->w[i].addr) ? calloc(1, sizeof(*w)) : NULL;
	if (w) {
		w->fd = d->w[i].fd;
		w->head_pending = true; /* the door passed its first head: the handler comes at once */
		w->since_ns = clock_mono_ns();
		w->addr = d->w[i].addr;
		w->next = d->watched;
		if (w->next)
			w->next->prev = w;
		d->watched = w;
		d->served++;
	}
	pthread_mutex_unlock(&d->watch_mu);
	if (!w)
		return false;
	struct waiting c = d->w[i];
	forget(d, i);
	/* on MHD_NO libmicrohttpd has closed it already; a failure after
	 * MHD_YES (in its thread, before it starts the connection) is cleared
	 * by the sweep: a record not started within head_timeout */
	if (MHD_add_connection(d->httpd, c.fd, (const struct sockaddr *)&c.addr, c.addrlen) != MHD_YES) {
		pthread_mutex_lock(&d->watch_mu);
		unlink_watch(d, w);
		pthread_mutex_unlock(&d->watch_mu);
		free(w);
	}
	return true;
}

/* A served connection closed: the ready slots go to libmicrohttpd, oldest
 * first, as long as it has room for them. */
static void hand_over_ready(struct http_door *d)
{
	for (;;) {
		int best = -1;
		for (unsigned i = 0; i < d->n; i++)
			if (d->w[i].ready && (best < 0 || d->w[i].since_ns < d->w[best].since_ns)) {
				pthread_mutex_lock(&d->watch_mu);
				bool room = room_for(d, &d->w[i].addr);
				pthread_mutex_unlock(&d->watch_mu);
				if (room)
					best = (int)i;
			}
		if (best < 0 || !hand_over(d, (unsigned)best))
			return;
	}
}

/* Looks at what slot i has sent so far (without taking it off the socket:
 * libmicrohttpd reads it all again) and passes, answers, or leaves it. */
static void inspect(struct http_door *d, unsigned i)
{
	char buf[DOOR_HEAD_MAX];
	size_t want = d->lim.head_limit < sizeof(buf) ? d->lim.head_limit : sizeof(buf);
	ssize_t r = recv(d->w[i].fd, buf, want, MSG_PEEK | MSG_DONTWAIT);
	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (r <= 0) {
		drop(d, i);
		return;
	}
	int status = 0;
	char msg[160];
	switch (http_head_check(buf, (size_t)r, want, &status, msg, sizeof(msg))) {
	case HEAD_MORE:
		return;
	case HEAD_PASS:
		d->w[i].ready = true;
		hand_over(d, i);
		return;
	case HEAD_REFUSE:
		answer(d->w[i].fd, status, msg);
		drop(d, i);
		return;
	case HEAD_CLOSE:
		drop(d, i);
		return;
	}
}

static int find(const struct http_door *d, int fd)
{
	for (unsigned i = 0; i < d->n; i++)
		if (d->w[i].fd == fd)
			return (int)i;
	return -1;
}

/* Makes room for a new connection when the door is full, or when its address
 * holds its share already (addr non-NULL): the oldest waiting connection (of
 * that address) goes. A client that sends its head at once waits
 * milliseconds, so only slow ones are pushed out, and a scraper gets in
 * however many slow clients hold the door; refusing the newcomer instead
 * would let a client that reconnects fast keep the door for itself. */
static void make_room(struct http_door *d, const struct sockaddr_storage *addr)
{
	int oldest = -1;
	for (unsigned i = 0; i < d->n; i++)
		if ((!addr || same_addr(&d->w[i].addr, addr)) && (oldest < 0 || d->w[i].since_ns < d->w[oldest].since_ns))
			oldest = (int)i;
	if (oldest >= 0)
		drop(d, (unsigned)oldest);
}

/* A new connection: in, making room if the door is full or its address holds
 * its share already. */
static void admit(struct http_door *d, int fd, const struct sockaddr_storage *addr, socklen_t addrlen)
{
	uint64_t now = clock_mono_ns();
	unsigned same = 0;
	for (unsigned i = 0; i < d->n; i++)
		same += same_addr(&d->w[i].addr, addr);
	if (d->lim.per_ip && same >= d->lim.per_ip)
		make_room(d, addr);
	if (d->n == d->lim.max_waiting)
		make_room(d, NULL);
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP | EPOLLET, .data.fd = fd };
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
		close(fd);
		return;
	}
	/* the whole slot: forget() leaves a stale copy (ready included) past n */
	d->w[d->n++] = (struct waiting){ .fd = fd, .ready = false, .since_ns = now, .addr = *addr, .addrlen = addrlen };
	inspect(d, d->n - 1); /* what came with the connection */
}

static void accept_all(struct http_door *d)
{
	for (;;) {
		struct sockaddr_storage addr;
		socklen_t addrlen = sizeof(addr);
		int fd = accept4(d->listen_fd, (struct sockaddr *)&addr, &addrlen, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return; /* EAGAIN, or out of descriptors: the listen queue holds the rest */
		}
		admit(d, fd, &addr, addrlen);
	}
}

struct door_watch *http_door_started(struct http_door *d, int fd)
{
	pthread_mutex_lock(&d->watch_mu);
	struct door_watch *w = d->watched;
	while (w && (w->started || w->fd != fd))
		w = w->next;
	if (w)
		w->started = true;
	pthread_mutex_unlock(&d->watch_mu);
	return w;
}

/* the door's eventfd: a place at libmicrohttpd is free, or stop */
static void wake(struct http_door *d)
{
	uint64_t one = 1;
	if (write(d->wake_fd, &one, sizeof(one)) < 0) {
		/* the counter is full: the door is woken already */
	}
}

void http_door_closed(struct http_door *d, struct door_watch *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&d->watch_mu);
	unlink_watch(d, w);
	pthread_mutex_unlock(&d->watch_mu);
	free(w);
	wake(d);
}

unsigned http_door_served(struct http_door *d)
{
	pthread_mutex_lock(&d->watch_mu);
	unsigned n = d->served;
	pthread_mutex_unlock(&d->watch_mu);
	return n;
}

static void set_pending(struct http_door *d, struct door_watch *w, bool pending)
{
	if (!w)
		return;
	pthread_mutex_lock(&d->watch_mu);
	w->head_pending = pending;
	w->since_ns = clock_mono_ns();
	pthread_mutex_unlock(&d->watch_mu);
}

void http_door_head_done(struct http_door *d, struct door_watch *w)
{
	set_pending(d, w, false);
}

void http_door_answered(struct http_door *d, struct door_watch *w)
{
	set_pending(d, w, true);
}

/* Shuts down every served connection whose next head is overdue (an idle
 * kept-alive one included). Under watch_mu, so that the descriptor is still
 * the connection's: libmicrohttpd unwatches it before closing it. */
static void sweep_watched(struct http_door *d, uint64_t now)
{
	bool freed = false;
	pthread_mutex_lock(&d->watch_mu);
	for (struct door_watch *w = d->watched, *next; w; w = next) {
		next = w->next;
		if (now - w->since_ns < d->lim.head_timeout_ns)
			continue;
		if (!w->started) {
			/* libmicrohttpd failed to take it after MHD_add_connection
			 * said yes (out of memory): it closed it, and will not say */
			unlink_watch(d, w);
			free(w);
			freed = true;
		} else if (w->head_pending && !w->shut) {
			shutdown(w->fd, SHUT_RDWR);
			w->shut = true;
		}
	}
	pthread_mutex_unlock(&d->watch_mu);
	if (freed)
		hand_over_ready(d);
}

/* Closes every connection whose head is overdue. */
static void sweep(struct http_door *d)
{
	uint64_t now = clock_mono_ns();
	sweep_watched(d, now);
	for (unsigned i = 0; i < d->n;) {
		if (now - d->w[i].since_ns < d->lim.head_timeout_ns) {
			i++;
			continue;
		}
		if (d->w[i].ready)
			answer(d->w[i].fd, 503, "too many connections (max_connections, per_ip_connections); try again");
		else
			answer(d->w[i].fd, 408, "request head not complete in time");
		drop(d, i);
	}
}

static void *door_main(void *arg)
{
	struct http_door *d = arg;
	struct epoll_event evs[64];
	while (!atomic_load(&d->stop)) {
		int n = epoll_wait(d->epfd, evs, 64, DOOR_SWEEP_MS);
		for (int k = 0; k < n; k++) {
			int fd = evs[k].data.fd;
			if (fd == d->listen_fd) {
				accept_all(d);
			} else if (fd == d->wake_fd) {
				uint64_t v;
				if (read(d->wake_fd, &v, sizeof(v)) < 0) {
					/* nothing to read: woken by another event */
				}
				hand_over_ready(d);
			} else {
				int i = find(d, fd);
				if (i >= 0)
					inspect(d, (unsigned)i);
			}
		}
		sweep(d);
	}
	return NULL;
}

int http_door_start(struct http_door **out, int listen_fd, struct MHD_Daemon *httpd,
		    const struct http_door_limits *lim, char *err, size_t errlen)
{
	*out = NULL;
	struct http_door *d = calloc(1, sizeof(*d));
	if (d)
		d->w = calloc(lim->max_waiting ? lim->max_waiting : 1, sizeof(*d->w));
	if (!d || !d->w) {
		if (d)
			free(d);
		close(listen_fd);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	d->lim = *lim;
	pthread_mutex_init(&d->watch_mu, NULL);
	if (!d->lim.max_waiting)
		d->lim.max_waiting = 1;
	d->httpd = httpd;
	d->listen_fd = listen_fd;
	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	d->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	struct epoll_event lev = { .events = EPOLLIN, .data.fd = listen_fd };
	struct epoll_event wev = { .events = EPOLLIN, .data.fd = d->wake_fd };
	/* set before the thread starts: libmicrohttpd's callbacks use it from
	 * the first connection the thread hands over */
	*out = d;
	if (d->epfd < 0 || d->wake_fd < 0 || epoll_ctl(d->epfd, EPOLL_CTL_ADD, listen_fd, &lev) != 0 ||
	    epoll_ctl(d->epfd, EPOLL_CTL_ADD, d->wake_fd, &wev) != 0 ||
	    thread_start(&d->thread, d->lim.stack_bytes, door_main, d) != 0) {
		*out = NULL;
		snprintf(err, errlen, "cannot start the HTTP door: %s", strerror(errno));
		if (d->epfd >= 0)
			close(d->epfd);
		if (d->wake_fd >= 0)
			close(d->wake_fd);
		close(listen_fd);
		pthread_mutex_destroy(&d->watch_mu);
		free(d->w);
		free(d);
		return -1;
	}
	return 0;
}

void http_door_stop(struct http_door *d)
{
	if (!d)
		return;
	atomic_store(&d->stop, true);
	wake(d);
	pthread_join(d->thread, NULL);
	while (d->n)
		drop(d, d->n - 1);
	close(d->listen_fd);
	close(d->epfd);
	/* wake_fd stays until http_door_free: libmicrohttpd, stopped after
	 * this, says each connection closed (http_door_closed writes to it) */
}

void http_door_free(struct http_door *d)
{
	if (!d)
		return;
	/* libmicrohttpd has stopped: it unwatched every connection it closed */
	close(d->wake_fd);
	while (d->watched) { /* handed over, never started by libmicrohttpd */
		struct door_watch *w = d->watched;
		d->watched = w->next;
		free(w);
	}
	pthread_mutex_destroy(&d->watch_mu);
	free(d->w);
	free(d);
}
