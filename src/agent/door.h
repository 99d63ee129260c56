/* SPDX-License-Identifier: Apache-2.0 */
/*
 * door.h - the agent's front door: one thread accepts the HTTP connections
 * and holds each until the head of its first request is complete and sound
 * (http_head_check), then hands it to libmicrohttpd (MHD_add_connection).
 *
 * Why: a head must be complete within a total deadline, however slowly it
 * trickles in (libmicrohttpd's timeout is an idle one: a header line every few
 * seconds keeps it open for ever); a connection that is not HTTP is closed at
 * its first byte; and the requests libmicrohttpd 0.9.75 answers wrongly (no
 * Host, a bad Content-Length: its status line and headers twice) are answered
 * here. Later requests on a kept-alive connection are libmicrohttpd's alone.
 * When the door is full (max_waiting, or per_ip from one address), a new
 * connection pushes out the oldest one waiting (a head sent at once waits
 * milliseconds: only slow clients are pushed out).
 *
 * The door counts the connections it has handed over until libmicrohttpd
 * says it closed them (http_door_closed), and never hands over more than
 * max_served (per_ip of one address): a connection whose head passed waits
 * at the door for a place, and is answered 503 at its head's deadline if none
 * came. libmicrohttpd's own limits are set above the door's and are never
 * reached (libmicrohttpd 0.9.75's refusal of a connection handed to a thread
 * pool through MHD_add_connection could lock its workers up for good).
 */
#ifndef GPUCTL_AGENT_DOOR_H
#define GPUCTL_AGENT_DOOR_H

#include <stddef.h>
#include <stdint.h>

struct MHD_Daemon;
struct http_door;

struct http_door_limits {
	unsigned max_waiting;        /* connections at the door (head not complete, or waiting for a place) */
	unsigned max_served;         /* connections handed to libmicrohttpd and not closed yet */
	unsigned per_ip;             /* of each from one address (0: no limit) */
	uint64_t head_timeout_ns;    /* from accept to a complete head */
	size_t head_limit;           /* bytes a head may take */
	size_t stack_bytes;          /* the door thread's stack (0: the default, 8 MiB) */
};

/* Starts the door on listen_fd (bound and listening; the door owns it from
 * now on, also on failure). 0, or -1 with err filled in. */
int http_door_start(struct http_door **out, int listen_fd, struct MHD_Daemon *httpd,
		    const struct http_door_limits *lim, char *err, size_t errlen);
/* libmicrohttpd's side: the connections it serves are watched too, so that a
 * later request on a kept-alive connection also has head_timeout from the
 * previous answer (or the hand-over) to the end of its head; one that has not
 * is shut down (libmicrohttpd then closes it). Called from its threads:
 * started when a connection starts (MHD_CONNECTION_NOTIFY_STARTED: returns
 * the record the door made at the hand-over, NULL if it has none), closed
 * when it closes (NOTIFY_CLOSED, before the descriptor is closed: the place
 * is free again), head_done when a request's head is complete, answered when
 * a request has been answered. */
struct door_watch;
struct door_watch *http_door_started(struct http_door *d, int fd);
void http_door_closed(struct http_door *d, struct door_watch *w);
void http_door_head_done(struct http_door *d, struct door_watch *w);
void http_door_answered(struct http_door *d, struct door_watch *w);
/* Connections handed over and not closed yet. */
unsigned http_door_served(struct http_door *d);

/* Stops the thread, closes the listening socket and the waiting connections
 * (libmicrohttpd is then stopped, which unwatches its connections, and the
 * door freed: http_door_free). */
void http_door_stop(struct http_door *d);
void http_door_free(struct http_door *d);

#endif
