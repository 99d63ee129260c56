/* client.c - see client.h. */
#include "client.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define MAX_RESPONSE (256u << 20)

int pool_call_raw(const char *socket_path, const json_t *req, char **answer, size_t *answer_len, char *err,
		  size_t errlen)
{
	*answer = NULL;
	*answer_len = 0;
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
	int rc = POOL_CALL_IO;
	char *buf = NULL;
	if (!text) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	size_t n = strlen(text), off = 0;
	while (off < n) {
		ssize_t w = send(fd, text + off, n - off, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			snprintf(err, errlen, "sending to '%s': %s", socket_path, strerror(errno));
			goto out;
		}
		off += (size_t)w;
	}
	shutdown(fd, SHUT_WR);
	size_t cap = 1u << 20, len = 0;
	buf = malloc(cap);
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
	free(text);
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
