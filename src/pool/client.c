/* SPDX-License-Identifier: Apache-2.0 */
/* client.c - see client.h. */
#include "client.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define MAX_RESPONSE (256u << 20)

/* Connects, sends req and shuts down the writing side: *fd open on success. */
static int connect_send(const char *socket_path, const json_t *req, int *fd_out, char *err, size_t errlen)
{
	struct sockaddr_un a;
	memset(&a, 0, sizeof(a));
	a.sun_family = AF_UNIX;
	if (strlen(socket_path) >= sizeof(a.sun_path)) {
		snprintf(err, errlen, "socket path '%s' is too long", socket_path);
		return POOL_CALL_IO;
	}
	memcpy(a.sun_path, socket_path, strlen(socket_path) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return POOL_CALL_IO;
	}
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		snprintf(err, errlen, "no pool agent on '%s' (%s); start one with 'gpuctl agent --pool'", socket_path,
			 strerror(errno));
		close(fd);
		return POOL_CALL_NO_AGENT;
	}
	char *text = json_dumps(req, JSON_COMPACT);
	if (!text) {
		snprintf(err, errlen, "out of memory");
		close(fd);
		return POOL_CALL_IO;
	}
	size_t n = strlen(text), off = 0;
	while (off < n) {
		ssize_t w = send(fd, text + off, n - off, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			snprintf(err, errlen, "sending to '%s': %s", socket_path, strerror(errno));
			free(text);
			close(fd);
			return POOL_CALL_IO;
		}
		off += (size_t)w;
	}
	free(text);
	shutdown(fd, SHUT_WR);
	*fd_out = fd;
	return POOL_CALL_OK;
}

int pool_call_raw(const char *socket_path, const json_t *req, char **answer, size_t *answer_len, char *err,
		  size_t errlen)
{
	*answer = NULL;
	*answer_len = 0;
	int fd;
	int rc = connect_send(socket_path, req, &fd, err, errlen);
	if (rc != POOL_CALL_OK)
		return rc;
	rc = POOL_CALL_IO;
	size_t cap = 1u << 20, len = 0;
	char *buf = malloc(cap);
	while (buf) {
		if (len + 1 >= cap) {
			if (cap >= MAX_RESPONSE) {
				snprintf(err, errlen, "answer from the agent is too large");
				goto out;
			}
			char *g = realloc(buf, cap * 2);
			if (!g) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = g;
			cap *= 2;
		}
		ssize_t r = recv(fd, buf + len, cap - len - 1, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(err, errlen, "reading from '%s': %s", socket_path, strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	if (!buf) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (!len) {
		snprintf(err, errlen, "the agent closed the connection");
		goto out;
	}
	buf[len] = '\0';
	*answer = buf;
	*answer_len = len;
	buf = NULL;
	rc = POOL_CALL_OK;
out:
	free(buf);
	close(fd);
	return rc;
}

int pool_call_stream(const char *socket_path, const json_t *req, json_t **head, FILE *out, uint64_t *copied,
		     bool *write_failed, char *err, size_t errlen)
{
	*head = NULL;
	*copied = 0;
	*write_failed = false;
	int fd;
	int rc = connect_send(socket_path, req, &fd, err, errlen);
	if (rc != POOL_CALL_OK)
		return rc;
	rc = POOL_CALL_IO;
	enum { CHUNK = 1 << 16 };
	char *buf = malloc(CHUNK);
	size_t have = 0;
	char *nl = NULL;
	while (buf && !nl && have < CHUNK) { /* the answer's line */
		ssize_t r = recv(fd, buf + have, CHUNK - have, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		nl = memchr(buf + have, '\n', (size_t)r);
		have += (size_t)r;
	}
	if (!buf || !nl) {
		snprintf(err, errlen, !buf ? "out of memory" : "malformed answer from the agent: no answer line");
		goto out;
	}
	*head = pool_answer_parse(buf, (size_t)(nl - buf), err, errlen);
	if (!*head)
		goto out;
	json_int_t want = json_integer_value(json_object_get(*head, "length"));
	uint64_t left = want > 0 ? (uint64_t)want : 0;
	size_t extra = have - (size_t)(nl + 1 - buf);
	memmove(buf, nl + 1, extra);
	for (;;) {
		size_t n = extra < left ? extra : (size_t)left;
		if (n && fwrite(buf, 1, n, out) != n) {
			*write_failed = true;
			break;
		}
		*copied += n;
		left -= n;
		if (!left)
			break;
		ssize_t r = recv(fd, buf, CHUNK, 0);
		if (r < 0 && errno == EINTR) {
			extra = 0;
			continue;
		}
		if (r <= 0)
			break; /* fewer than announced (the file was cut back): the caller goes on from *copied */
		extra = (size_t)r;
	}
	rc = POOL_CALL_OK;
out:
	free(buf);
	close(fd);
	return rc;
}

json_t *pool_answer_parse(const char *answer, size_t len, char *err, size_t errlen)
{
	json_error_t je;
	json_t *resp = json_loadb(answer, len, 0, &je);
	if (!resp || !json_is_object(resp)) {
		json_decref(resp);
		snprintf(err, errlen, "malformed answer from the agent: %s", resp ? "not an object" : je.text);
		return NULL;
	}
	return resp;
}

int pool_call(const char *socket_path, const json_t *req, json_t **resp, char *err, size_t errlen)
{
	char *answer;
	size_t len;
	*resp = NULL;
	int rc = pool_call_raw(socket_path, req, &answer, &len, err, errlen);
	if (rc != POOL_CALL_OK)
		return rc;
	*resp = pool_answer_parse(answer, len, err, errlen);
	free(answer);
	return *resp ? POOL_CALL_OK : POOL_CALL_IO;
}
