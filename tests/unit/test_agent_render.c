/* SPDX-License-Identifier: Apache-2.0 */
/* test_agent_render.c - when the agent renders its expositions and its
 * /api/v1/gpus document (an agent on
 * the simulated server, in this process, over loopback HTTP): nobody scraping
 * costs no rendering; a scrape nobody asked for lately has its exposition
 * rendered on request, once; scrapers that come every tick have it rendered
 * at the tick, and when they stop the renderings stop; gzip and plain answers
 * carry the right headers and the same text; each tick reads the sampler
 * once, whoever asks. The agent's clock is the test's (agent_env.mono_ns):
 * a tick happens when the test moves it (agent_clock_moved), so the counts
 * are exact; the sampler and the HTTP server run in real time. */
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sched.h>
#include <unistd.h>
#include <zlib.h>

#include "agent/agent.h"

#define INTERVAL_MS 200u
#define INTERVAL_NS (INTERVAL_MS * 1000000ull)

/* The agent's clock: starts far from 0 (0 is "no request" to render_ahead). */
static atomic_ullong fake_now = 1000000000000ull;

static uint64_t fake_mono(void *arg)
{
	(void)arg;
	return atomic_load(&fake_now);
}

/* Moves the agent's clock by ns and lets it make the ticks due by then. */
static void advance(struct agent *a, uint64_t ns)
{
	atomic_fetch_add(&fake_now, ns);
	agent_clock_moved(a);
}

static void ticks(struct agent *a, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		advance(a, INTERVAL_NS);
}

struct reply {
	char head[2048];
	char *body;
	size_t len;
};

/* GET path on a new connection (Connection: close); 0 or -1. */
static int get_path(unsigned port, const char *path, bool gzip, struct reply *r)
{
	memset(r, 0, sizeof(*r));
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	char req[256];
	int n = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n%s\r\n", path,
			 gzip ? "Accept-Encoding: gzip\r\n" : "");
	if (send(fd, req, (size_t)n, 0) != n) {
		close(fd);
		return -1;
	}
	size_t cap = 1u << 20, have = 0;
	char *buf = malloc(cap);
	ssize_t got;
	while (buf && (got = recv(fd, buf + have, cap - have - 1, 0)) > 0) {
		have += (size_t)got;
		if (have + 1 == cap) {
			char *nb = realloc(buf, cap * 2);
			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
	}
	close(fd);
	if (!buf)
		return -1;
	buf[have] = '\0';
	char *end = strstr(buf, "\r\n\r\n");
	if (!end || (size_t)(end - buf) >= sizeof(r->head)) {
		free(buf);
		return -1;
	}
	memcpy(r->head, buf, (size_t)(end - buf));
	r->len = have - (size_t)(end + 4 - buf);
	r->body = malloc(r->len + 1);
	memcpy(r->body, end + 4, r->len);
	r->body[r->len] = '\0';
	free(buf);
	return 0;
}

static int get_metrics(unsigned port, bool gzip, struct reply *r)
{
	return get_path(port, "/metrics", gzip, r);
}

static uint64_t expo_renders(struct agent *a)
{
	struct agent_status st;
	agent_get_status(a, &st);
	return st.expo_renders;
}

static uint64_t doc_renders(struct agent *a)
{
	struct agent_status st;
	agent_get_status(a, &st);
	return st.doc_renders;
}

static unsigned count_of(const char *hay, const char *needle)
{
	unsigned n = 0;
	for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		n++;
	return n;
}

/* The "taken" time of a /api/v1/gpus answer (seconds since the epoch). */
static double taken_of(const char *body)
{
	const char *t = strstr(body, "\"taken\":");
	return t ? strtod(t + 8, NULL) : -1.0;
}

static struct gpu_backend be;

/* An agent on 8 simulated GPUs; with the job pool when pool_dir is given. */
static struct agent *start_agent_in(const char *pool_dir)
{
	struct gpu_err err = { "" };
	if (gpu_backend_open(&be, "sim", "h200x8,latency_us=100", &err) != GPU_OK)
		fail_msg("opening the simulator: %s", err.msg);
	struct agent_config cfg;
	agent_config_default(&cfg);
	snprintf(cfg.listen_host, sizeof(cfg.listen_host), "127.0.0.1");
	cfg.port = 0;
	cfg.interval_ns = INTERVAL_MS * 1000000ull;
	cfg.kernel_log[0] = '\0';
	if (pool_dir) {
		cfg.pool = true;
		snprintf(cfg.pool_dir, sizeof(cfg.pool_dir), "%s", pool_dir);
		snprintf(cfg.pool_socket, sizeof(cfg.pool_socket), "%s/pool.sock", pool_dir);
		snprintf(cfg.pool_cgroup, sizeof(cfg.pool_cgroup), "off");
		cfg.pool_isolation = 2; /* POOL_ISOLATION_OFF */
	}
	struct agent_env env = { .version = "test", .data_dir_env = getenv("GPUCTL_DATA_DIR"), .mono_ns = fake_mono };
	struct agent *a = NULL;
	char msg[256] = "";
	if (agent_start(&a, &be, &cfg, &env, msg, sizeof(msg)) != 0)
		fail_msg("agent_start: %s", msg);
	return a;
}

static struct agent *start_agent(void)
{
	return start_agent_in(NULL);
}

/* A client asking for path every half tick for 10 ticks (20 requests), of a
 * set whose variant the caller's last request had rendered: the set of the
 * first tick is rendered on its request (asked in one tick before it only),
 * those of the 9 ticks after at the tick (asked in the two ticks before):
 * 10 renderings, one a tick, not one a request. When the client stops, the
 * renderings stop. */
static void check_poller(struct agent *a, unsigned port, const char *path, bool gzip, uint64_t (*renders)(struct agent *))
{
	uint64_t before = renders(a);
	unsigned requests = 0;
	for (unsigned i = 0; i < 20; i++) {
		struct reply r;
		assert_int_equal(get_path(port, path, gzip, &r), 0);
		assert_non_null(strstr(r.head, "HTTP/1.1 200"));
		free(r.body);
		requests++;
		advance(a, INTERVAL_NS / 2);
	}
	assert_int_equal(requests, 20);
	assert_int_equal(renders(a) - before, 10);
	ticks(a, 8);
	assert_int_equal(renders(a) - before, 10);
}

/* An agent whose ticks go by with nobody asking: nothing rendered. */
static struct agent *start_unasked(unsigned *port, uint64_t (*renders)(struct agent *))
{
	struct agent *a = start_agent();
	struct agent_status st;
	agent_get_status(a, &st);
	*port = st.port;
	ticks(a, 5);
	assert_int_equal(st.ticks, 1); /* agent_start's */
	agent_get_status(a, &st);
	assert_int_equal(st.ticks, 6);
	assert_int_equal(renders(a), 0);
	return a;
}

static void test_rendered_when_asked(void **state)
{
	(void)state;
	unsigned port;
	struct agent *a = start_unasked(&port, expo_renders);

	/* one scrape: rendered on request, once (gzip, as Prometheus asks) */
	struct reply gz;
	assert_int_equal(get_metrics(port, true, &gz), 0);
	assert_non_null(strstr(gz.head, "HTTP/1.1 200"));
	assert_non_null(strstr(gz.head, "Content-Encoding: gzip"));
	assert_non_null(strstr(gz.head, "Vary: Accept-Encoding"));
	assert_int_equal(expo_renders(a), 1);
	/* asked in one tick only: nothing at the next ones */
	ticks(a, 5);
	assert_int_equal(expo_renders(a), 1);
	ticks(a, 5);
	assert_int_equal(expo_renders(a), 1);

	/* the text it holds, as zlib reads it */
	char *text = malloc(4u << 20);
	uLongf tlen = 4u << 20;
	z_stream zs;
	memset(&zs, 0, sizeof(zs));
	assert_int_equal(inflateInit2(&zs, 15 + 16), Z_OK);
	zs.next_in = (Bytef *)gz.body;
	zs.avail_in = (uInt)gz.len;
	zs.next_out = (Bytef *)text;
	zs.avail_out = (uInt)tlen;
	assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
	tlen = zs.total_out;
	inflateEnd(&zs);
	text[tlen] = '\0';
	assert_non_null(strstr(text, "\ngpuctl_gpu_up{"));

	/* plain for a client without gzip: no Content-Encoding, the same series */
	struct reply pl;
	assert_int_equal(get_metrics(port, false, &pl), 0);
	assert_non_null(strstr(pl.head, "HTTP/1.1 200"));
	assert_null(strstr(pl.head, "Content-Encoding"));
	assert_non_null(strstr(pl.head, "Vary: Accept-Encoding"));
	assert_non_null(strstr(pl.body, "\ngpuctl_gpu_up{"));
	assert_true(pl.len > gz.len * 4);

	/* scrapers that come every tick: rendered at the tick, not on request */
	check_poller(a, port, "/metrics", true, expo_renders);

	free(text);
	free(gz.body);
	free(pl.body);
	agent_stop(a);
	gpu_backend_close(&be);
}

/* /api/v1/gpus follows the same rule: nobody asking costs no rendering, a
 * request renders it once from the last tick, pollers have it at the tick. */
static void test_gpus_document_when_asked(void **state)
{
	(void)state;
	unsigned port;
	struct agent *a = start_unasked(&port, doc_renders);

	struct reply r1;
	assert_int_equal(get_path(port, "/api/v1/gpus", false, &r1), 0);
	assert_non_null(strstr(r1.head, "HTTP/1.1 200"));
	assert_non_null(strstr(r1.head, "application/json"));
	assert_int_equal(count_of(r1.body, "\"uuid\":\"GPU-"), 8);
	assert_true(taken_of(r1.body) > 0);
	assert_int_equal(doc_renders(a), 1);
	/* the health document is rendered at every tick regardless */
	struct reply h;
	assert_int_equal(get_path(port, "/api/v1/health", false, &h), 0);
	assert_non_null(strstr(h.head, "HTTP/1.1 200"));
	ticks(a, 5);
	assert_int_equal(doc_renders(a), 1);
	ticks(a, 3);
	assert_int_equal(doc_renders(a), 1);

	/* a later request gets a later tick's snapshot, not the one rendered before */
	struct reply r2;
	assert_int_equal(get_path(port, "/api/v1/gpus?gpu=2", false, &r2), 0);
	assert_int_equal(count_of(r2.body, "\"uuid\":\"GPU-"), 1);
	assert_true(taken_of(r2.body) > taken_of(r1.body));
	assert_int_equal(doc_renders(a), 2);

	/* a poller every half tick: about one rendering a tick, not one a request */
	check_poller(a, port, "/api/v1/gpus", false, doc_renders);

	free(r1.body);
	free(r2.body);
	free(h.body);
	agent_stop(a);
	gpu_backend_close(&be);
}

static unsigned expo_buffers(struct agent *a)
{
	struct agent_status st;
	agent_get_status(a, &st);
	return st.expo_buffers;
}

/* The expositions the response sets hold (resident): none while nobody
 * asks. While a client scrapes every half tick, the current set's, and not a
 * second copy in the set that waits to be rendered into (two at a look only
 * when a tick replaced a set a scrape was still reading: it goes at the next
 * tick; every look here found two before the sets dropped theirs). When the
 * client stops, none again within a few ticks (bounded wait). Plain text,
 * rendered for a client without gzip, goes the same way. */
static void test_expositions_held_only_while_served(void **state)
{
	(void)state;
	unsigned port;
	struct agent *a = start_unasked(&port, expo_renders);
	assert_int_equal(expo_buffers(a), 0);
	unsigned looks = 0, single = 0;
	for (unsigned i = 0; i < 30; i++) {
		struct reply r;
		assert_int_equal(get_metrics(port, true, &r), 0);
		assert_non_null(strstr(r.head, "HTTP/1.1 200"));
		free(r.body);
		advance(a, INTERVAL_NS / 2);
		if (i < 10)
			continue; /* the first ticks: scrapes rendered on request, then at the tick */
		unsigned n = expo_buffers(a);
		assert_in_range(n, 0, 2);
		looks++;
		single += n <= 1;
	}
	if (single == 0)
		fail_msg("%u looks while a client scraped: two expositions held at every one", looks);
	struct reply pl;
	assert_int_equal(get_metrics(port, false, &pl), 0);
	assert_non_null(strstr(pl.body, "\ngpuctl_gpu_up{"));
	free(pl.body);
	/* the last scrape's reference goes when libmicrohttpd has finished with
	 * the response, which may be just after the client read it: the ticks
	 * are the test's, each followed by a yield to the server's thread */
	unsigned n = 0;
	for (; n < 40 && expo_buffers(a) != 0; n++) {
		ticks(a, 1);
		sched_yield();
	}
	struct agent_status st;
	agent_get_status(a, &st);
	if (st.expo_buffers != 0)
		fail_msg("40 ticks after the last scrape the sets hold %u expositions (%zu bytes)", st.expo_buffers,
			 st.expo_bytes);
	assert_int_equal(st.expo_bytes, 0);
	agent_stop(a);
	gpu_backend_close(&be);
}

/* One read of the sampler per tick: the health document, the expositions,
 * /api/v1/gpus and the job pool all take the tick's snapshot and health
 * report (health/tick.h), and what is rendered on request reads nothing. */
static void test_one_sampler_read_per_tick(void **state)
{
	(void)state;
	char dir[] = "/tmp/gpuctl_test_tick_XXXXXX";
	assert_non_null(mkdtemp(dir));
	struct agent *a = start_agent_in(dir);
	struct agent_status st;
	agent_get_status(a, &st);
	assert_int_equal(st.ticks, 1); /* agent_start's, which the pool took in at its start */
	assert_int_equal(st.sampler_reads, 1);
	const char *paths[] = { "/metrics", "/api/v1/gpus", "/api/v1/health" };
	for (unsigned i = 0; i < 12; i++) {
		struct reply r;
		assert_int_equal(get_path(st.port, paths[i % 3], i % 2, &r), 0);
		assert_non_null(strstr(r.head, "HTTP/1.1 200"));
		free(r.body);
		advance(a, INTERVAL_NS / 2);
	}
	agent_get_status(a, &st);
	assert_int_equal(st.ticks, 7);
	assert_int_equal(st.sampler_reads, st.ticks);
	agent_stop(a);
	gpu_backend_close(&be);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rendered_when_asked),
		cmocka_unit_test(test_gpus_document_when_asked),
		cmocka_unit_test(test_expositions_held_only_while_served),
		cmocka_unit_test(test_one_sampler_read_per_tick),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
