/* SPDX-License-Identifier: Apache-2.0 */
/* kmsg.c - XID lines from the kernel log (see kmsg.h). */
#include "kmsg.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *find(const char *s, size_t n, const char *needle)
{
	size_t k = strlen(needle);
	for (size_t i = 0; i + k <= n; i++)
		if (memcmp(s + i, needle, k) == 0)
			return s + i;
	return NULL;
}

/* Reads a hex number of at most maxdigits from [*p, e). */
static bool hexnum(const char **p, const char *e, unsigned maxdigits, unsigned *out)
{
	unsigned v = 0, n = 0;
	while (*p < e && isxdigit((unsigned char)**p) && n < maxdigits) {
		char c = **p;
		v = v * 16 + (unsigned)(isdigit((unsigned char)c) ? c - '0' : (tolower((unsigned char)c) - 'a' + 10));
		(*p)++;
		n++;
	}
	*out = v;
	return n > 0 && !(*p < e && isxdigit((unsigned char)**p));
}

/* "DDDD:BB:DD" or "DDDDDDDD:BB:DD" with an optional ".F"; [s, e). */
static int parse_pci_range(const char *s, const char *e, unsigned *dom, unsigned *bus, unsigned *dev)
{
	const char *p = s;
	if (!hexnum(&p, e, 8, dom) || p >= e || *p != ':')
		return -1;
	p++;
	if (!hexnum(&p, e, 2, bus) || p >= e || *p != ':')
		return -1;
	p++;
	if (!hexnum(&p, e, 2, dev))
		return -1;
	if (p < e && *p == '.') {
		unsigned fn;
		p++;
		if (!hexnum(&p, e, 1, &fn))
			return -1;
	}
	return p == e ? 0 : -1;
}

int kmsg_parse_pci(const char *s, unsigned *domain, unsigned *bus, unsigned *dev)
{
	return parse_pci_range(s, s + strlen(s), domain, bus, dev);
}

int kmsg_parse_xid(const char *line, size_t len, struct kmsg_xid *out)
{
	memset(out, 0, sizeof(*out));
	const char *s = line, *e = line + len;
	while (e > s && (e[-1] == '\n' || e[-1] == '\r'))
		e--;
	/* /dev/kmsg: "PRI,SEQ,TS_US,FLAGS[,...];MESSAGE" */
	const char *semi = memchr(s, ';', (size_t)(e - s));
	if (semi && isdigit((unsigned char)*s)) {
		const char *p = s;
		unsigned commas = 0;
		bool prefix = true;
		for (; p < semi; p++) {
			if (*p == ',')
				commas++;
			else if (!isdigit((unsigned char)*p) && !(commas >= 3))
				prefix = false;
		}
		if (prefix && commas >= 3) {
			const char *ts = s;
			for (unsigned c = 0; c < 2; c++)
				ts = (const char *)memchr(ts, ',', (size_t)(semi - ts)) + 1;
			uint64_t us = 0;
			unsigned digits = 0;
			while (ts < semi && isdigit((unsigned char)*ts) && digits < 19) {
				us = us * 10 + (uint64_t)(*ts - '0');
				ts++;
				digits++;
			}
			out->has_time = digits > 0;
			out->boot_us = us;
			s = semi + 1;
		}
	} else if (s < e && *s == '[') {
		/* dmesg: "[ 1234.567890] MESSAGE" */
		const char *close = memchr(s, ']', (size_t)(e - s));
		if (close) {
			const char *p = s + 1;
			while (p < close && *p == ' ')
				p++;
			uint64_t sec = 0, usec = 0;
			unsigned d1 = 0, d2 = 0;
			while (p < close && isdigit((unsigned char)*p) && d1 < 12)
				sec = sec * 10 + (uint64_t)(*p++ - '0'), d1++;
			if (p < close && *p == '.') {
				p++;
				while (p < close && isdigit((unsigned char)*p) && d2 < 6)
					usec = usec * 10 + (uint64_t)(*p++ - '0'), d2++;
				while (d2 > 0 && d2 < 6)
					usec *= 10, d2++;
			}
			if (p == close && d1 > 0) {
				out->has_time = true;
				out->boot_us = sec * 1000000ull + usec;
			}
			s = close + 1;
		}
	}
	const char *m = find(s, (size_t)(e - s), "NVRM: Xid (");
	if (!m)
		return 0;
	const char *p = m + strlen("NVRM: Xid (");
	if (e - p >= 4 && memcmp(p, "PCI:", 4) == 0)
		p += 4;
	const char *close = memchr(p, ')', (size_t)(e - p));
	if (!close || parse_pci_range(p, close, &out->pci_domain, &out->pci_bus, &out->pci_dev))
		return 0;
	p = close + 1;
	if (p >= e || *p != ':')
		return 0;
	p++;
	while (p < e && *p == ' ')
		p++;
	uint64_t code = 0;
	unsigned digits = 0;
	while (p < e && isdigit((unsigned char)*p) && digits < 6)
		code = code * 10 + (uint64_t)(*p++ - '0'), digits++;
	if (!digits || (p < e && isdigit((unsigned char)*p)))
		return 0;
	if (p < e && *p != ',' && *p != ' ')
		return 0;
	out->xid = code;
	while (p < e && (*p == ',' || *p == ' '))
		p++;
	size_t n = (size_t)(e - p);
	if (n >= sizeof(out->detail))
		n = sizeof(out->detail) - 1;
	for (size_t i = 0; i < n; i++)
		out->detail[i] = isprint((unsigned char)p[i]) ? p[i] : '?';
	out->detail[n] = '\0';
	return 1;
}

/* ---- reader ---------------------------------------------------------------- */

#define READ_CHUNK 8192

struct kmsg_reader {
	int fd;
	char buf[READ_CHUNK + 1];
	size_t have;   /* bytes of an unfinished line kept from the last read */
};

int kmsg_reader_open(struct kmsg_reader **out, const char *path, char *err, size_t errlen)
{
	*out = NULL;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "cannot read the kernel log '%.200s': %s", path, strerror(errno));
		return -1;
	}
	struct kmsg_reader *r = calloc(1, sizeof(*r));
	if (!r) {
		close(fd);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	r->fd = fd;
	*out = r;
	return 0;
}

static void split_lines(struct kmsg_reader *r, kmsg_xid_fn fn, void *arg, int *records)
{
	size_t start = 0;
	for (size_t i = 0; i < r->have; i++) {
		if (r->buf[i] != '\n')
			continue;
		struct kmsg_xid x;
		/* /dev/kmsg continuation lines (" KEY=VALUE") carry no XID */
		if (r->buf[start] != ' ' && kmsg_parse_xid(r->buf + start, i - start, &x))
			fn(arg, &x);
		(*records)++;
		start = i + 1;
	}
	if (start > 0) {
		memmove(r->buf, r->buf + start, r->have - start);
		r->have -= start;
	} else if (r->have == READ_CHUNK) {
		r->have = 0; /* a line longer than the buffer: drop it */
	}
}

int kmsg_reader_poll(struct kmsg_reader *r, unsigned timeout_ms, kmsg_xid_fn fn, void *arg)
{
	int records = 0;
	struct pollfd pfd = { .fd = r->fd, .events = POLLIN };
	int pr = poll(&pfd, 1, (int)timeout_ms);
	if (pr < 0)
		return errno == EINTR ? 0 : -1;
	bool regular_eof = false;
	for (int reads = 0; reads < 4096 && !regular_eof; reads++) {
		ssize_t n = read(r->fd, r->buf + r->have, READ_CHUNK - r->have);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				break;
			if (errno == EPIPE)
				continue; /* /dev/kmsg: records were overwritten before we read them */
			return -1;
		}
		if (n == 0) {
			regular_eof = true; /* a plain file at its end: poll says readable forever */
			break;
		}
		r->have += (size_t)n;
		split_lines(r, fn, arg, &records);
	}
	if (regular_eof && records == 0) {
		struct timespec ts = { (time_t)(timeout_ms / 1000), (long)(timeout_ms % 1000) * 1000000L };
		nanosleep(&ts, NULL);
	}
	return records;
}

void kmsg_reader_close(struct kmsg_reader *r)
{
	if (!r)
		return;
	close(r->fd);
	free(r);
}
