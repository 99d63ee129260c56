/* SPDX-License-Identifier: Apache-2.0 */
/* agent_config.c - the agent's configuration file and flags (see agent_config.h). */
#include "agent_config.h"

#include "health/leak.h"
#include "agent/pool_agent.h"
#include "core/units.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LINE 1024

#define MS 1000000ll
#define SEC 1000000000ll
/* The duration and whole-number settings: a row each, and where its value
 * goes (a uint64_t of nanoseconds, or an unsigned: whole seconds for a
 * duration kept in seconds, else the number). */
enum { SET_INTERVAL, SET_STALE_AFTER, SET_STOP_TIMEOUT, SET_LEAK_WINDOW, SET_CONNECTION_TIMEOUT, SET_HEADER_TIMEOUT,
       SET_SLOW_GROUP_EVERY, SET_MAX_CONNECTIONS, SET_PER_IP_CONNECTIONS, SET_THREADS, SET_POOL_KILL_GRACE,
       SET_POOL_USER_GPU_LIMIT };
const struct opt_spec agent_settings[] = {
	[SET_INTERVAL] = { "interval", 0, OPT_DURATION, NULL, "sampling and rendering interval", "1s", 10 * MS, 3600 * SEC,
			   NULL },
	[SET_STALE_AFTER] = { "stale_after", 0, OPT_DURATION, NULL, "a GPU with no good sample this long is down",
			      "5 intervals", 10 * MS, 86400 * SEC, NULL },
	[SET_STOP_TIMEOUT] = { "stop_timeout", 0, OPT_DURATION, NULL, "the longest from SIGTERM/SIGINT to exit", "10s",
			       100 * MS, 3600 * SEC, NULL },
	[SET_LEAK_WINDOW] = { "leak_window", 0, OPT_DURATION, NULL, "memory-leak watch: the window growth is judged over",
			      "300s", SEC, 86400 * SEC, NULL },
	[SET_CONNECTION_TIMEOUT] = { "connection_timeout", 0, OPT_DURATION, NULL,
				     "a connection without traffic this long is closed (whole seconds)", "10s", SEC,
				     3600 * SEC, NULL },
	[SET_HEADER_TIMEOUT] = { "header_timeout", 0, OPT_DURATION, NULL,
				 "a request's head is complete this long after the connection or the last answer",
				 "5s", SEC, 60 * SEC, NULL },
	[SET_SLOW_GROUP_EVERY] = { "slow_group_every", 0, OPT_INT, NULL,
				   "read the slow groups (ECC, PCIe, NVLink, violations) every Nth tick", "5", 1, 3600,
				   NULL },
	[SET_MAX_CONNECTIONS] = { "max_connections", 0, OPT_INT, NULL, "concurrent HTTP connections", "256", 1, 65536,
				  NULL },
	[SET_PER_IP_CONNECTIONS] = { "per_ip_connections", 0, OPT_INT, NULL, "concurrent connections from one address (0: no limit)",
				     "32", 0, 65536, NULL },
	[SET_THREADS] = { "threads", 0, OPT_INT, NULL, "HTTP threads", "2", 1, 64, NULL },
	/* the job pool's (docs/pool.md) */
	[SET_POOL_KILL_GRACE] = { "pool_kill_grace", 0, OPT_DURATION, NULL, "pool: SIGTERM to SIGKILL of a job", "10s", MS,
				  3600 * SEC, NULL },
	[SET_POOL_USER_GPU_LIMIT] = { "pool_user_gpu_limit", 0, OPT_INT, NULL, "pool: GPUs one user may hold (0: no limit)",
				      "0", 0, 64, NULL },
};
const size_t agent_nsettings = sizeof(agent_settings) / sizeof(agent_settings[0]);

/* Where setting i goes in c: a uint64_t (ns) or an unsigned (seconds or a number). */
static void *setting_dst(struct agent_config *c, size_t i, bool *u64, bool *seconds)
{
	void *const dst[] = {
		[SET_INTERVAL] = &c->interval_ns,
		[SET_STALE_AFTER] = &c->stale_after_ns,
		[SET_STOP_TIMEOUT] = &c->stop_timeout_ns,
		[SET_LEAK_WINDOW] = &c->leak_window_ns,
		[SET_CONNECTION_TIMEOUT] = &c->connection_timeout_s,
		[SET_HEADER_TIMEOUT] = &c->header_timeout_s,
		[SET_SLOW_GROUP_EVERY] = &c->slow_group_every,
		[SET_MAX_CONNECTIONS] = &c->max_connections,
		[SET_PER_IP_CONNECTIONS] = &c->per_ip_connections,
		[SET_THREADS] = &c->threads,
		[SET_POOL_KILL_GRACE] = &c->pool_kill_grace_ns,
		[SET_POOL_USER_GPU_LIMIT] = &c->pool_user_gpu_limit,
	};
	*seconds = i == SET_CONNECTION_TIMEOUT || i == SET_HEADER_TIMEOUT;
	*u64 = agent_settings[i].kind == OPT_DURATION && !*seconds;
	return dst[i];
}

/* Setting i from text, by the one option parser; a duration kept in seconds
 * must be whole seconds. */
static int set_from_table(struct agent_config *c, size_t i, const char *value, char *err, size_t errlen)
{
	struct opt_value v;
	bool u64, seconds;
	void *dst = setting_dst(c, i, &u64, &seconds);
	const char *key = agent_settings[i].name;
	if (opt_value_parse_as(&agent_settings[i], key, value, &v, err, errlen))
		return -1;
	if (seconds && v.num % SEC) {
		char q[41];
		snprintf(err, errlen, "option '%s': '%s' is not whole seconds (e.g. 10s, 1m)", key, units_quoted(value, q));
		return -1;
	}
	if (u64)
		*(uint64_t *)dst = (uint64_t)v.num;
	else
		*(unsigned *)dst = (unsigned)(seconds ? v.num / SEC : v.num);
	return 0;
}

void agent_config_default(struct agent_config *c)
{
	memset(c, 0, sizeof(*c));
	c->listen_host[0] = '\0'; /* every address, like other exporters */
	c->port = AGENT_DEFAULT_PORT;
	c->interval_ns = 1000000000ull;
	c->slow_group_every = 5; /* ECC, PCIe, NVLink, violation groups every 5th tick: each NVML call costs CPU */
	c->groups = MG_ALL;
	snprintf(c->kernel_log, sizeof(c->kernel_log), "/dev/kmsg");
	c->max_connections = 256;
	c->per_ip_connections = 32;
	c->connection_timeout_s = 10;
	c->header_timeout_s = 5;
	c->threads = 2;
	struct leak_params lp;
	leak_params_default(&lp);
	c->leak_window_ns = (uint64_t)(lp.min_window_s * 1e9);
	c->leak_min_rate = lp.min_rate;
	c->leak_min_growth = lp.min_growth;
	c->history_ns = 3600000000000ull;
	c->stop_timeout_ns = 10000000000ull;
}

/* "17476", "1MiB/min", "512KiB/s", "2M/s" (binary units; per second unless /min) -> bytes/s. */
static int agent_parse_rate(const char *s, double *bytes_per_s, char *err, size_t errlen)
{
	char size[64];
	const char *slash = strchr(s, '/');
	size_t n = slash ? (size_t)(slash - s) : strlen(s);
	double per = 1;
	if (slash && strcmp(slash + 1, "min") == 0)
		per = 60;
	else if (slash && strcmp(slash + 1, "s") != 0)
		n = sizeof(size); /* an unknown time unit */
	uint64_t bytes = 0;
	char msg[128];
	if (n >= sizeof(size)) {
		snprintf(err, errlen, "bad rate '%.40s' (use e.g. 1MiB/min, 512KiB/s or bytes per second)", s);
		return -1;
	}
	memcpy(size, s, n);
	size[n] = '\0';
	if (units_parse_size(size, 1, UNITS_SIZE_MAX, &bytes, msg, sizeof(msg))) {
		snprintf(err, errlen, "bad rate '%.40s' (use e.g. 1MiB/min, 512KiB/s or bytes per second)", s);
		return -1;
	}
	*bytes_per_s = (double)bytes / per;
	return 0;
}

static int parse_uint(const char *s, unsigned lo, unsigned hi, unsigned *out)
{
	if (!*s || !isdigit((unsigned char)*s))
		return -1;
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -1;
	*out = (unsigned)v;
	return 0;
}

int agent_parse_listen(const char *s, char *host, size_t hostlen, unsigned *port, char *err, size_t errlen)
{
	const char *colon = NULL;
	size_t hlen;
	unsigned p = AGENT_DEFAULT_PORT;
	if (s[0] == '[') {
		const char *close = strchr(s, ']');
		if (!close || (close[1] && close[1] != ':'))
			goto bad;
		hlen = (size_t)(close - s - 1);
		if (close[1] == ':' && parse_uint(close + 2, 0, 65535, &p))
			goto badport;
		if (hlen == 0 || hlen >= hostlen)
			goto bad;
		memcpy(host, s + 1, hlen);
		host[hlen] = '\0';
		*port = p;
		return 0;
	}
	colon = strrchr(s, ':');
	if (colon && strchr(s, ':') != colon)
		goto bad; /* a bare IPv6 address needs brackets */
	if (!colon) {
		bool digits = *s != '\0';
		for (const char *c = s; *c; c++)
			digits &= isdigit((unsigned char)*c) != 0;
		if (digits) {
			if (parse_uint(s, 0, 65535, &p))
				goto badport;
			host[0] = '\0';
			*port = p;
			return 0;
		}
		hlen = strlen(s);
	} else {
		if (parse_uint(colon + 1, 0, 65535, &p))
			goto badport;
		hlen = (size_t)(colon - s);
	}
	if (hlen >= hostlen)
		goto bad;
	if (hlen == 1 && s[0] == '*')
		hlen = 0; /* every address */
	for (size_t i = 0; i < hlen; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '.' || s[i] == '-'))
			goto bad;
	memcpy(host, s, hlen);
	host[hlen] = '\0';
	*port = p;
	return 0;
badport:
	snprintf(err, errlen, "bad port in '%.80s' (0 to 65535; 0 = any free port)", s);
	return -1;
bad:
	snprintf(err, errlen, "bad listen address '%.80s' (use ADDR:PORT, [IPV6]:PORT or :PORT)", s);
	return -1;
}

static int copy_value(char *dst, size_t dstlen, const char *key, const char *value, char *err, size_t errlen)
{
	size_t n = strlen(value);
	if (n >= dstlen) {
		snprintf(err, errlen, "value of '%.64s' is too long (at most %zu bytes)", key, dstlen - 1);
		return -1;
	}
	memcpy(dst, value, n + 1);
	return 0;
}

int agent_config_bool(const char *key, const char *value, bool *dst, char *err, size_t errlen)
{
	if (strcmp(value, "on") == 0 || strcmp(value, "true") == 0 || strcmp(value, "1") == 0)
		*dst = true;
	else if (strcmp(value, "off") == 0 || strcmp(value, "false") == 0 || strcmp(value, "0") == 0)
		*dst = false;
	else {
		snprintf(err, errlen, "bad value '%.40s' for '%s' (on or off)", value, key);
		return -1;
	}
	return 0;
}

int agent_config_set(struct agent_config *c, const char *key, const char *value, char *err, size_t errlen)
{
	if (strcmp(key, "dcgm_compat") == 0)
		return agent_config_bool(key, value, &c->dcgm_compat, err, errlen);
	if (strcmp(key, "listen") == 0)
		return agent_parse_listen(value, c->listen_host, sizeof(c->listen_host), &c->port, err, errlen);
	for (size_t i = 0; i < agent_nsettings; i++)
		if (strcmp(key, agent_settings[i].name) == 0)
			return set_from_table(c, i, value, err, errlen);
	if (strcmp(key, "history") == 0) {
		if (strcmp(value, "off") == 0 || strcmp(value, "0") == 0) {
			c->history_ns = 0;
			return 0;
		}
		return units_parse_duration(value, 1000000000ull, 86400000000000ull, &c->history_ns, err, errlen);
	}
	if (strcmp(key, "leak_min_rate") == 0)
		return agent_parse_rate(value, &c->leak_min_rate, err, errlen);
	if (strcmp(key, "leak_min_growth") == 0) {
		uint64_t b = 0;
		if (units_parse_size(value, 1, UNITS_SIZE_MAX, &b, err, errlen))
			return -1;
		c->leak_min_growth = (double)b;
		return 0;
	}
	if (strcmp(key, "metrics") == 0)
		return metrics_groups_parse(value, &c->groups, err, errlen);
	if (strcmp(key, "hostname") == 0)
		return copy_value(c->hostname, sizeof(c->hostname), key, value, err, errlen);
	if (strcmp(key, "allowed_hosts") == 0) {
		for (const char *ch = value; *ch; ch++)
			if (!(isalnum((unsigned char)*ch) || strchr(".-_*, ", *ch))) {
				snprintf(err, errlen, "bad value for 'allowed_hosts' (host names, separated by commas or spaces; * for any)");
				return -1;
			}
		return copy_value(c->allowed_hosts, sizeof(c->allowed_hosts), key, value, err, errlen);
	}
	if (strcmp(key, "kernel_log") == 0) {
		if (strcmp(value, "off") == 0) {
			c->kernel_log[0] = '\0';
			return 0;
		}
		return copy_value(c->kernel_log, sizeof(c->kernel_log), key, value, err, errlen);
	}
	if (strncmp(key, "label.", 6) == 0) {
		const char *name = key + 6;
		if (!metrics_label_name_ok(name) || strlen(name) >= sizeof(c->labels[0].key)) {
			snprintf(err, errlen, "bad label name '%.64s' (letters, digits, _; not one gpuctl sets)", name);
			return -1;
		}
		struct metric_label *l = NULL;
		for (unsigned i = 0; i < c->nlabels; i++)
			if (strcmp(c->labels[i].key, name) == 0)
				l = &c->labels[i];
		if (!l) {
			if (c->nlabels >= METRICS_MAX_LABELS) {
				snprintf(err, errlen, "more than %u labels", METRICS_MAX_LABELS);
				return -1;
			}
			l = &c->labels[c->nlabels++];
			snprintf(l->key, sizeof(l->key), "%s", name);
		}
		return copy_value(l->value, sizeof(l->value), key, value, err, errlen);
	}
	int pool_rc = pool_agent_config_set(c, key, value, err, errlen);
	if (pool_rc <= 0)
		return pool_rc;
	snprintf(err, errlen, "unknown setting '%.64s'", key);
	return -1;
}

static void trim(char **s, char **e)
{
	while (*s < *e && isspace((unsigned char)**s))
		(*s)++;
	while (*e > *s && isspace((unsigned char)(*e)[-1]))
		(*e)--;
}

int agent_config_parse(struct agent_config *c, const char *text, size_t len, const char *origin, char *err,
		       size_t errlen)
{
	size_t pos = 0;
	unsigned lineno = 0;
	char line[MAX_LINE + 1], msg[256];
	while (pos < len) {
		lineno++;
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
		if (n > MAX_LINE) {
			snprintf(err, errlen, "%.200s:%u: line longer than %u bytes", origin, lineno, MAX_LINE);
			return -1;
		}
		memcpy(line, text + pos, n);
		line[n] = '\0';
		pos += n + (nl ? 1 : 0);
		if (strlen(line) != n) {
			snprintf(err, errlen, "%.200s:%u: NUL byte in line", origin, lineno);
			return -1;
		}
		char *s = line, *e = line + n;
		trim(&s, &e);
		if (s == e || *s == '#')
			continue;
		char *eq = memchr(s, '=', (size_t)(e - s));
		if (!eq) {
			snprintf(err, errlen, "%.200s:%u: expected 'key = value'", origin, lineno);
			return -1;
		}
		char *ks = s, *ke = eq, *vs = eq + 1, *ve = e;
		trim(&ks, &ke);
		trim(&vs, &ve);
		*ke = '\0';
		*ve = '\0';
		if (ks == ke) {
			snprintf(err, errlen, "%.200s:%u: missing key before '='", origin, lineno);
			return -1;
		}
		/* a value may be quoted to keep spaces at its ends; a quote at one
		 * end only is a mistake, not part of the value */
		bool open_q = ve > vs && *vs == '"', close_q = ve - vs >= 2 && ve[-1] == '"';
		if (open_q != close_q) {
			snprintf(err, errlen, "%.200s:%u: unterminated quote in the value of '%s'", origin, lineno, ks);
			return -1;
		}
		if (open_q) {
			vs++;
			ve[-1] = '\0';
		}
		if (agent_config_set(c, ks, vs, msg, sizeof(msg))) {
			snprintf(err, errlen, "%.200s:%u: %s", origin, lineno, msg);
			return -1;
		}
	}
	return 0;
}
