/* SPDX-License-Identifier: Apache-2.0 */
/* test_agent_parse.c - the agent's pure parsers: the configuration file and
 * flags, listen addresses and durations, request targets and Accept headers,
 * and kernel-log XID lines. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent_config.h"
#include "agent/httpreq.h"
#include "agent/kmsg.h"

static int parse(struct agent_config *c, const char *text, char *err, size_t errlen)
{
	agent_config_default(c);
	return agent_config_parse(c, text, strlen(text), "agent.conf", err, errlen);
}

static void test_config_defaults_and_file(void **state)
{
	(void)state;
	struct agent_config c;
	char err[256] = "";
	agent_config_default(&c);
	assert_int_equal(c.port, 9477);
	assert_string_equal(c.listen_host, "");
	assert_int_equal(c.interval_ns, 1000000000ull);
	assert_int_equal(c.groups, MG_ALL);
	assert_string_equal(c.kernel_log, "/dev/kmsg");
	assert_int_equal(c.per_ip_connections, 32); /* on by default: slow clients (docs/agent.md) */
	assert_int_equal(c.header_timeout_s, 5);
	assert_false(c.dcgm_compat); /* dcgm-exporter's names: opt-in */

	const char *text =
		"# comment\n"
		"\n"
		"  listen = 127.0.0.1:9100  \n"
		"interval=500ms\n"
		"metrics = basic, ecc,xid\n"
		"label.datacenter = eu-west\n"
		"label.rack = \" r 12 \"\n"
		"hostname = gpu-node-7\n"
		"kernel_log = off\n"
		"stale_after = 3s\n"
		"max_connections = 64\n"
		"connection_timeout = 5\n"
		"header_timeout = 2s\n"
		"dcgm_compat = on\n"
		"slow_group_every = 5\r\n";
	assert_int_equal(parse(&c, text, err, sizeof(err)), 0);
	assert_string_equal(c.listen_host, "127.0.0.1");
	assert_int_equal(c.port, 9100);
	assert_int_equal(c.interval_ns, 500000000ull);
	assert_int_equal(c.groups, MG_BASIC | MG_ECC | MG_XID);
	assert_int_equal(c.nlabels, 2);
	assert_string_equal(c.labels[0].key, "datacenter");
	assert_string_equal(c.labels[0].value, "eu-west");
	assert_string_equal(c.labels[1].value, " r 12 ");
	assert_string_equal(c.hostname, "gpu-node-7");
	assert_string_equal(c.kernel_log, "");
	assert_int_equal(c.stale_after_ns, 3000000000ull);
	assert_int_equal(c.max_connections, 64);
	assert_int_equal(c.connection_timeout_s, 5);
	assert_int_equal(c.header_timeout_s, 2);
	assert_int_equal(c.slow_group_every, 5);
	assert_true(c.dcgm_compat);
	assert_int_equal(agent_config_set(&c, "dcgm_compat", "false", err, sizeof(err)), 0);
	assert_false(c.dcgm_compat);
	assert_int_equal(agent_config_set(&c, "connection_timeout", "2m", err, sizeof(err)), 0);
	assert_int_equal(c.connection_timeout_s, 120);
	assert_int_equal(agent_config_set(&c, "pool_log_retention", "30m", err, sizeof(err)), 0);
	assert_int_equal(c.pool_log_retention_ns, 1800ull * 1000000000ull);
}

static void test_config_errors(void **state)
{
	(void)state;
	struct agent_config c;
	char err[256];
	const struct { const char *text, *msg; } bad[] = {
		{ "listen = 1.2.3.4:9477\nbogus = 1\n", "agent.conf:2: unknown setting 'bogus'" },
		{ "interval\n", "agent.conf:1: expected 'key = value'" },
		{ " = 3\n", "agent.conf:1: missing key before '='" },
		{ "interval = 5ms\n", "agent.conf:1: option 'interval': duration '5ms' out of range (10ms to 1h)" },
		{ "interval = fast\n", "agent.conf:1: option 'interval': bad duration 'fast'" },
		{ "metrics = basic,cpu\n", "agent.conf:1: unknown metric group 'cpu'" },
		{ "label.gpu = x\n", "agent.conf:1: bad label name 'gpu'" },
		{ "label.a-b = x\n", "agent.conf:1: bad label name 'a-b'" },
		{ "listen = 1.2.3.4:99999\n", "agent.conf:1: bad port" },
		{ "listen = ::1:9477\n", "agent.conf:1: bad listen address" },
		{ "max_connections = 0\n", "agent.conf:1: option 'max_connections': '0' is not a whole number from 1 to 65536" },
		{ "threads = -1\n", "agent.conf:1: option 'threads': '-1' is not a whole number from 1 to 64" },
		/* timeouts read the duration grammar, in whole seconds (issue 35) */
		{ "connection_timeout = 1500ms\n", "agent.conf:1: option 'connection_timeout': '1500ms' is not whole seconds" },
		{ "header_timeout = 2m\n", "agent.conf:1: option 'header_timeout': duration '2m' out of range (1s to 1m)" },
		{ "per_ip_connections = 65537\n", "agent.conf:1: option 'per_ip_connections': '65537' is not a whole number" },
		/* a number alone was minutes here: refused with the fix (issue 36) */
		{ "pool_log_retention = 30\n",
		  "agent.conf:1: bad pool_log_retention '30': a number alone is ambiguous here; write 30m or 30s" },
		{ "dcgm_compat = yes please\n", "agent.conf:1: bad value 'yes please' for 'dcgm_compat' (on or off)" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(parse(&c, bad[i].text, err, sizeof(err)), -1);
		if (strncmp(err, bad[i].msg, strlen(bad[i].msg)) != 0)
			fail_msg("'%s': got '%s', want '%s...'", bad[i].text, err, bad[i].msg);
	}
	char big[2048];
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(parse(&c, big, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "longer than"));
	/* a NUL inside the text is an error, not a silent truncation */
	agent_config_default(&c);
	assert_int_equal(agent_config_parse(&c, "interval = 1s\0x\n", 16, "f", err, sizeof(err)), -1);
	/* more labels than fit */
	agent_config_default(&c);
	char key[32];
	int rc = 0;
	for (unsigned i = 0; i <= METRICS_MAX_LABELS && rc == 0; i++) {
		snprintf(key, sizeof(key), "label.l%u", i);
		rc = agent_config_set(&c, key, "v", err, sizeof(err));
	}
	assert_int_equal(rc, -1);
	assert_non_null(strstr(err, "more than"));
}

static void test_listen_forms(void **state)
{
	(void)state;
	char host[64], err[256];
	unsigned port = 0;
	assert_int_equal(agent_parse_listen(":9100", host, sizeof(host), &port, err, sizeof(err)), 0);
	assert_string_equal(host, "");
	assert_int_equal(port, 9100);
	assert_int_equal(agent_parse_listen("9200", host, sizeof(host), &port, err, sizeof(err)), 0);
	assert_int_equal(port, 9200);
	assert_int_equal(agent_parse_listen("localhost", host, sizeof(host), &port, err, sizeof(err)), 0);
	assert_string_equal(host, "localhost");
	assert_int_equal(port, 9477);
	assert_int_equal(agent_parse_listen("[::1]:9300", host, sizeof(host), &port, err, sizeof(err)), 0);
	assert_string_equal(host, "::1");
	assert_int_equal(port, 9300);
	assert_int_equal(agent_parse_listen("*:9400", host, sizeof(host), &port, err, sizeof(err)), 0);
	assert_string_equal(host, "");
	assert_int_equal(agent_parse_listen("[::1", host, sizeof(host), &port, err, sizeof(err)), -1);
	assert_int_equal(agent_parse_listen("a b:1", host, sizeof(host), &port, err, sizeof(err)), -1);
	assert_int_equal(agent_parse_listen("host:0x10", host, sizeof(host), &port, err, sizeof(err)), -1);
	/* durations read the one grammar (core/units.h, docs/units.md): 1h and 1h30m too */
	struct agent_config c;
	agent_config_default(&c);
	assert_int_equal(agent_config_set(&c, "interval", "2.5s", err, sizeof(err)), 0);
	assert_int_equal(c.interval_ns, 2500000000ull);
	assert_int_equal(agent_config_set(&c, "interval", "1m", err, sizeof(err)), 0);
	assert_int_equal(c.interval_ns, 60000000000ull);
	assert_int_equal(agent_config_set(&c, "interval", "3", err, sizeof(err)), 0);
	assert_int_equal(c.interval_ns, 3000000000ull);
	assert_int_equal(agent_config_set(&c, "interval", "1h", err, sizeof(err)), 0);
	assert_int_equal(c.interval_ns, 3600000000000ull);
	assert_int_equal(agent_config_set(&c, "stale_after", "1h30m", err, sizeof(err)), 0);
	assert_int_equal(c.stale_after_ns, 5400000000000ull);
	assert_int_equal(agent_config_set(&c, "interval", "-1s", err, sizeof(err)), -1);
	assert_int_equal(agent_config_set(&c, "interval", "1h1s", err, sizeof(err)), -1);
	assert_string_equal(err, "option 'interval': duration '1h1s' out of range (10ms to 1h)");
}

static struct http_req req_of(const char *target)
{
	struct http_req r;
	http_req_parse(target, strlen(target), &r);
	return r;
}

static void test_request_targets(void **state)
{
	(void)state;
	struct http_req r = req_of("/metrics");
	assert_int_equal(r.status, 200);
	assert_int_equal(r.route, ROUTE_METRICS);
	assert_int_equal(r.gpu_mask, ~0ull);
	r = req_of("/api/v1/gpus?gpu=0,3,5-7&pretty=1");
	assert_int_equal(r.status, 200);
	assert_int_equal(r.route, ROUTE_GPUS);
	assert_int_equal(r.gpu_mask, (1ull << 0) | (1ull << 3) | (7ull << 5));
	assert_true(r.pretty);
	r = req_of("/api/v1/health?gpu=63");
	assert_int_equal(r.route, ROUTE_HEALTH);
	assert_int_equal(r.gpu_mask, 1ull << 63);
	r = req_of("/api/v1/%67pus");
	assert_int_equal(r.route, ROUTE_GPUS);
	assert_int_equal(req_of("/healthz").route, ROUTE_HEALTHZ);
	assert_int_equal(req_of("/").route, ROUTE_INDEX);
	r = req_of("/api/v1/pool?pretty=1");
	assert_int_equal(r.status, 200);
	assert_int_equal(r.route, ROUTE_POOL);
	assert_true(r.pretty);

	const struct { const char *target; int status; const char *msg; } bad[] = {
		{ "/nope", 404, "no such endpoint" },
		{ "/metrics/", 404, "no such endpoint" },
		{ "metrics", 400, "must start with '/'" },
		{ "/api/v1/gpus?gpu=64", 400, "bad gpu list" },
		{ "/api/v1/gpus?gpu=3-1", 400, "bad gpu list" },
		{ "/api/v1/gpus?gpu=", 400, "bad gpu list" },
		{ "/api/v1/gpus?gpu=1,,2", 400, "bad gpu list" },
		{ "/api/v1/gpus?pretty=maybe", 400, "bad value for pretty" },
		{ "/metrics?gpu=1", 400, "unknown query parameter 'gpu'" },
		{ "/api/v1/pool?gpu=1", 400, "unknown query parameter 'gpu'" },
		{ "/api/v1/pool?since=1", 400, "unknown query parameter 'since'" },
		{ "/api/v1/pool?pretty=2", 400, "bad value for pretty" },
		{ "/api/v1/gpus?x=%zz", 400, "malformed query" },
		{ "/me%2", 400, "malformed percent" },
		{ "/me%00trics", 400, "malformed percent" },
		{ "/metrics#x", 400, "fragment" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = req_of(bad[i].target);
		if (r.status != bad[i].status || !strstr(r.error, bad[i].msg))
			fail_msg("'%s': got %d '%s', want %d '%s'", bad[i].target, r.status, r.error, bad[i].status,
				 bad[i].msg);
	}
	char longt[HTTPREQ_MAX_TARGET + 10];
	memset(longt, 'a', sizeof(longt) - 1);
	longt[0] = '/';
	longt[sizeof(longt) - 1] = '\0';
	assert_int_equal(req_of(longt).status, 414);
}

static void test_accept(void **state)
{
	(void)state;
	assert_true(http_accept_openmetrics(
		"application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
		"text/plain;version=0.0.4;q=0.5,*/*;q=0.1"));
	assert_true(http_accept_openmetrics("text/plain, Application/OpenMetrics-Text"));
	assert_false(http_accept_openmetrics("text/plain;version=0.0.4"));
	assert_false(http_accept_openmetrics("application/openmetrics-text;q=0"));
	assert_false(http_accept_openmetrics("application/openmetrics-textx"));
	assert_false(http_accept_openmetrics(""));
	assert_false(http_accept_openmetrics(NULL));
	assert_true(http_accept_openmetrics("application/openmetrics-text; q=.5"));
	assert_false(http_accept_openmetrics("application/openmetrics-text;q=0.000"));
}

static void test_accept_encoding(void **state)
{
	(void)state;
	assert_true(http_accept_gzip("gzip"));                 /* Prometheus */
	assert_true(http_accept_gzip("deflate, gzip"));        /* curl --compressed */
	assert_true(http_accept_gzip("br;q=1.0, GZIP;q=0.5, *;q=0.1"));
	assert_true(http_accept_gzip("x-gzip"));
	assert_true(http_accept_gzip("*"));
	assert_true(http_accept_gzip(" identity ,\t gzip ; q=1"));
	assert_false(http_accept_gzip("gzip;q=0"));
	assert_false(http_accept_gzip("gzip;q=0.000, *"));     /* refused by name: * does not override */
	assert_false(http_accept_gzip("*;q=0"));
	assert_false(http_accept_gzip("identity"));
	assert_false(http_accept_gzip("deflate, br"));
	assert_false(http_accept_gzip("gzipx, xgzip"));
	assert_false(http_accept_gzip(""));
	assert_false(http_accept_gzip(NULL));
}

static void test_kmsg_lines(void **state)
{
	(void)state;
	struct kmsg_xid x;
	const char *rec = "4,1234,5678901234,-;NVRM: Xid (PCI:0000:18:00): 79, pid=0, name=python, GPU has fallen off the bus.\n";
	assert_int_equal(kmsg_parse_xid(rec, strlen(rec), &x), 1);
	assert_int_equal(x.xid, 79);
	assert_int_equal(x.pci_domain, 0);
	assert_int_equal(x.pci_bus, 0x18);
	assert_int_equal(x.pci_dev, 0);
	assert_true(x.has_time);
	assert_int_equal(x.boot_us, 5678901234ull);
	assert_string_equal(x.detail, "pid=0, name=python, GPU has fallen off the bus.");

	const char *dm = "[ 1234.5678] NVRM: Xid (PCI:0001:b3:00): 48, An uncorrectable double bit error";
	assert_int_equal(kmsg_parse_xid(dm, strlen(dm), &x), 1);
	assert_int_equal(x.xid, 48);
	assert_int_equal(x.pci_domain, 1);
	assert_int_equal(x.pci_bus, 0xb3);
	assert_int_equal(x.boot_us, 1234567800ull);

	const char *old = "NVRM: Xid (0000:03:00): 13, Graphics Exception";
	assert_int_equal(kmsg_parse_xid(old, strlen(old), &x), 1);
	assert_int_equal(x.xid, 13);
	assert_false(x.has_time);

	const char *no[] = {
		"6,1,2,-;usb 1-1: new device",
		"NVRM: Xid (PCI:0000:18:00) 79",
		"NVRM: Xid (PCI:0000:18): 79, x",
		"NVRM: Xid (PCI:0000:18:00): , x",
		"NVRM: Xid (PCI:0000:18:00): 12345678, x",
		"NVRM: Xid (PCI:zzzz:18:00): 79, x",
		"NVRM: Xid (PCI:0000:18:00): 79x",
		"",
	};
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (kmsg_parse_xid(no[i], strlen(no[i]), &x) != 0)
			fail_msg("'%s' taken for an XID line", no[i]);

	unsigned d, b, v;
	assert_int_equal(kmsg_parse_pci("00000000:18:00.0", &d, &b, &v), 0);
	assert_int_equal(b, 0x18);
	assert_int_equal(kmsg_parse_pci("0000:18:00", &d, &b, &v), 0);
	assert_int_equal(kmsg_parse_pci("0000:18:00.0x", &d, &b, &v), -1);
	assert_int_equal(kmsg_parse_pci("123456789:18:00.0", &d, &b, &v), -1);
}


/* The Host allow-list against DNS rebinding (issue 38, item 6). */
static void test_host_allowed(void **state)
{
	(void)state;
	const char *names = "gpu01, gpu01.example.org,metrics.example.org";
	assert_true(http_host_allowed("127.0.0.1", names));
	assert_true(http_host_allowed("127.0.0.1:9477", names));
	assert_true(http_host_allowed("10.1.2.3:80", NULL));
	assert_true(http_host_allowed("[::1]:9477", NULL));
	assert_true(http_host_allowed("[fe80::1]", NULL));
	assert_true(http_host_allowed("localhost:9477", NULL));
	assert_true(http_host_allowed("LocalHost.", NULL));
	assert_true(http_host_allowed("agent.localhost", NULL));
	assert_true(http_host_allowed("gpu01:9477", names));
	assert_true(http_host_allowed("GPU01.example.org.", names));
	assert_true(http_host_allowed("metrics.example.org", names));
	assert_true(http_host_allowed("attacker.example", "gpu01, *"));
	/* what a rebinding page sends */
	assert_false(http_host_allowed("attacker.example:9477", names));
	assert_false(http_host_allowed("attacker.example", NULL));
	assert_false(http_host_allowed("gpu01.attacker.example", names));
	assert_false(http_host_allowed("gpu0", names));
	assert_false(http_host_allowed("localhost.attacker.example", names));
	assert_false(http_host_allowed("xlocalhost", names));
	/* malformed */
	assert_false(http_host_allowed("", names));
	assert_false(http_host_allowed(":9477", names));
	assert_false(http_host_allowed("127.0.0.1:", names));
	assert_false(http_host_allowed("127.0.0.1:x", names));
	assert_false(http_host_allowed("127.0.0.1:1234567", names));
	assert_false(http_host_allowed("[::1", names));
	assert_false(http_host_allowed("[::1]x", names));
	assert_false(http_host_allowed("[]", names));
	assert_false(http_host_allowed("[attacker.example]", names));
	assert_false(http_host_allowed("::1", names));
	assert_false(http_host_allowed(".", names));
}

/* The settings of issues 38 (allowed_hosts) and 39 (stop_timeout). */
static void test_stop_and_host_settings(void **state)
{
	(void)state;
	struct agent_config c;
	char err[256];
	agent_config_default(&c);
	assert_true(c.stop_timeout_ns == 10000000000ull);
	assert_string_equal(c.allowed_hosts, "");
	assert_int_equal(agent_config_set(&c, "stop_timeout", "2s", err, sizeof(err)), 0);
	assert_true(c.stop_timeout_ns == 2000000000ull);
	assert_int_equal(agent_config_set(&c, "stop_timeout", "50ms", err, sizeof(err)), -1);
	assert_int_equal(agent_config_set(&c, "stop_timeout", "2h", err, sizeof(err)), -1);
	assert_int_equal(agent_config_set(&c, "allowed_hosts", "gpu01.example.org, metrics", err, sizeof(err)), 0);
	assert_string_equal(c.allowed_hosts, "gpu01.example.org, metrics");
	assert_int_equal(agent_config_set(&c, "allowed_hosts", "*", err, sizeof(err)), 0);
	assert_int_equal(agent_config_set(&c, "allowed_hosts", "a/b", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "allowed_hosts"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_defaults_and_file),
		cmocka_unit_test(test_config_errors),
		cmocka_unit_test(test_listen_forms),
		cmocka_unit_test(test_request_targets),
		cmocka_unit_test(test_accept),
		cmocka_unit_test(test_accept_encoding),
		cmocka_unit_test(test_host_allowed),
		cmocka_unit_test(test_stop_and_host_settings),
		cmocka_unit_test(test_kmsg_lines),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
