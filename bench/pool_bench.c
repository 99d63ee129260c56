/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pool_bench.c - the job pool's speed (bench/pool_bench.sh runs it; figures
 * go to bench/RESULTS.md, "Pool (simulated)").
 *
 *   pool_bench sched SERVER             sched_pass with 10 000 queued jobs
 *   pool_bench live SOCKET N_LATENCY N_QUEUE
 *       against a running `gpuctl agent --pool` on 8 free simulated GPUs:
 *       1. submit-to-start latency: N_LATENCY jobs `/bin/date +%s%N`, one
 *          at a time on free GPUs: from the client sending the request to
 *          the job's first output (the date it printed), and the agent's
 *          own submit_ns -> start_ns (shim forked)
 *       2. a blocker takes all 8 GPUs, then N_QUEUE submissions as fast as
 *          one client sends them: submissions per second, per-submit p50/p99
 *       3. with those N_QUEUE queued: the `queue` round trip (median of 20)
 *          and the agent's last scheduling pass (ping's last_pass_ns)
 *       The queue is left full; the last line names the blocker job, which
 *       the caller cancels when done ("blocker job: ID").
 * Times are wall clock on this machine; the agent is whatever build runs.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "pool/client.h"
#include "pool/proto.h"
#include "pool/sched.h"
#include "sampler/sampler.h"

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static double pct(uint64_t *v, size_t n, double p)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	size_t i = (size_t)(p * (double)(n - 1) + 0.5);
	return (double)v[i] / 1e6;
}

static int bench_sched(const char *server)
{
	struct gpu_backend be = { 0 };
	struct gpu_err err = { "" };
	if (gpu_backend_open(&be, "sim", server, &err) != GPU_OK) {
		fprintf(stderr, "pool_bench: sim '%s': %s\n", server, err.msg);
		return 1;
	}
	struct snapshot *s = snapshot_new(be.gpu_count);
	if (!s || snapshot_take(&be, GPU_GRP_BASIC, s, &err) != GPU_OK) {
		fprintf(stderr, "pool_bench: snapshot: %s\n", err.msg);
		return 1;
	}
	enum { N = 10000 };
	struct sched_job *jobs = calloc(N, sizeof(*jobs));
	struct sched_decision *d = calloc(N, sizeof(*d));
	/* every GPU busy until t=100..800 s; a realistic mix of shapes, users, priorities, limits */
	struct sched_running run[8];
	for (unsigned g = 0; g < 8; g++)
		run[g] = (struct sched_running){ .id = 100000 + g, .uid = 1000 + g % 4, .gpu_mask = 1ull << g,
						 .end_ns = (100 + 100 * g) * 1000000000ull, .mig_gpu = -1, .mig_gi = -1 };
	static const unsigned shapes[] = { 1, 1, 1, 2, 2, 4, 8 };
	for (unsigned i = 0; i < N; i++) {
		jobs[i].id = i + 1;
		jobs[i].uid = 1000 + i % 16;
		jobs[i].priority = (int)(i % 5) - 2;
		jobs[i].submit_ns = i;
		jobs[i].time_limit_ns = i % 3 ? (uint64_t)(60 + i % 7200) * 1000000000ull : 0;
		jobs[i].req.count = shapes[i % 7];
		jobs[i].req.need_nvlink = jobs[i].req.count > 1 && i % 2;
	}
	struct sched_input in = { .now_ns = 1, .n = s->n, .link = (const struct gpu_link(*)[GPU_MAX_GPUS])s->link,
				  .pending = jobs, .npending = N, .running = run, .nrunning = 8, .max_gpus_per_user = 4 };
	uint64_t t[21];
	for (unsigned k = 0; k < 21; k++) {
		uint64_t t0 = now_ns(CLOCK_MONOTONIC);
		sched_pass(&in, d);
		t[k] = now_ns(CLOCK_MONOTONIC) - t0;
	}
	printf("sched_pass: %u queued jobs (7 shapes, 16 users, limits, priorities), 8 running, %u GPUs (%s): "
	       "median %.3f ms, max %.3f ms over 21 passes\n",
	       N, s->n, server, pct(t, 21, 0.5), pct(t, 21, 1.0));
	free(jobs);
	free(d);
	free(s);
	gpu_backend_close(&be);
	return 0;
}

extern char **environ;

static json_t *call(const char *sock, json_t *req)
{
	json_t *resp = NULL;
	char err[256];
	if (pool_call(sock, req, &resp, err, sizeof(err)) != POOL_CALL_OK) {
		fprintf(stderr, "pool_bench: %s\n", err);
		exit(1);
	}
	json_decref(req);
	if (!json_is_true(json_object_get(resp, "ok"))) {
		fprintf(stderr, "pool_bench: agent: %s\n", json_string_value(json_object_get(resp, "error")));
		exit(1);
	}
	return resp;
}

static json_t *submit_req(char **argv, int argc, unsigned gpus, uint64_t after)
{
	static char *env[] = { "PATH=/usr/bin:/bin", NULL };
	struct proto_request r;
	memset(&r, 0, sizeof(r));
	r.op = OP_SUBMIT;
	r.sub.gpus = gpus;
	r.sub.after = after;
	r.sub.argv = argv;
	r.sub.argc = (size_t)argc;
	r.sub.env = env;
	r.sub.envc = 1;
	snprintf(r.sub.cwd, sizeof(r.sub.cwd), "/");
	return proto_request_json(&r);
}

static json_t *show(const char *sock, uint64_t id)
{
	json_t *req = json_pack("{s:i, s:s, s:I}", "v", 1, "op", "show", "job", (json_int_t)id);
	return call(sock, req);
}

/* One queue request; returns the answer's size (read, not parsed). */
static size_t raw_queue(const char *sock)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", sock);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		perror("pool_bench: connect");
		exit(1);
	}
	const char req[] = "{\"v\":1,\"op\":\"queue\"}";
	if (write(fd, req, sizeof(req) - 1) != (ssize_t)(sizeof(req) - 1))
		exit(1);
	shutdown(fd, SHUT_WR);
	static char buf[1 << 16];
	size_t total = 0;
	ssize_t r;
	while ((r = read(fd, buf, sizeof(buf))) > 0)
		total += (size_t)r;
	close(fd);
	return total;
}

static int bench_live(const char *sock, unsigned nlat, unsigned nq)
{
	/* 1. latency */
	uint64_t *e2e = calloc(nlat, sizeof(uint64_t)), *agent = calloc(nlat, sizeof(uint64_t)),
		 *exec = calloc(nlat, sizeof(uint64_t));
	uint64_t start_ns = 0;
	char *date_argv[] = { "/bin/date", "+%s%N" };
	for (unsigned i = 0; i < nlat; i++) {
		uint64_t sent = now_ns(CLOCK_REALTIME);
		json_t *r = call(sock, submit_req(date_argv, 2, 1, 0));
		uint64_t id = (uint64_t)json_integer_value(json_object_get(r, "job"));
		json_decref(r);
		for (;;) {
			json_t *s = show(sock, id);
			json_t *job = json_object_get(s, "job");
			const char *st = json_string_value(json_object_get(job, "state"));
			if (st && strcmp(st, "done") == 0) {
				start_ns = (uint64_t)json_integer_value(json_object_get(job, "start_ns"));
				agent[i] = start_ns - (uint64_t)json_integer_value(json_object_get(job, "submit_ns"));
				json_decref(s);
				break;
			}
			if (st && strcmp(st, "pending") && strcmp(st, "starting") && strcmp(st, "running")) {
				fprintf(stderr, "pool_bench: job %llu %s\n", (unsigned long long)id, st);
				return 1;
			}
			json_decref(s);
			usleep(2000);
		}
		json_t *lr = json_pack("{s:i, s:s, s:I, s:i}", "v", 1, "op", "logs", "job", (json_int_t)id, "stream", 1);
		json_t *l = call(sock, lr);
		unsigned char out[64];
		const char *b64 = json_string_value(json_object_get(l, "data_b64"));
		long n = b64 && strlen(b64) < 80 ? proto_b64_decode(b64, out) : -1;
		out[n > 0 ? n : 0] = '\0';
		uint64_t started = strtoull((char *)out, NULL, 10);
		e2e[i] = started > sent ? started - sent : 0;
		exec[i] = started > start_ns ? started - start_ns : 0;
		json_decref(l);
	}
	printf("submit-to-start, %u jobs one at a time on free GPUs: client request -> job running "
	       "(its own clock): median %.2f ms, p90 %.2f ms; of which agent submit -> start decided: median %.2f ms, "
	       "start decided -> job running (shim fork, job fork + exec): median %.2f ms\n",
	       nlat, pct(e2e, nlat, 0.5), pct(e2e, nlat, 0.9), pct(agent, nlat, 0.5), pct(exec, nlat, 0.5));

	/* 2. submission rate into a queue behind a blocker */
	char *sleep_argv[] = { "/bin/sleep", "100000" }, *true_argv[] = { "/bin/true" };
	json_t *r = call(sock, submit_req(sleep_argv, 2, 8, 0));
	uint64_t blocker = (uint64_t)json_integer_value(json_object_get(r, "job"));
	json_decref(r);
	usleep(300000);
	uint64_t *lat = calloc(nq, sizeof(uint64_t));
	uint64_t t0 = now_ns(CLOCK_MONOTONIC);
	for (unsigned i = 0; i < nq; i++) {
		uint64_t a = now_ns(CLOCK_MONOTONIC);
		json_decref(call(sock, submit_req(true_argv, 1, 1 + (i % 4 == 3), 0)));
		lat[i] = now_ns(CLOCK_MONOTONIC) - a;
	}
	double secs = (double)(now_ns(CLOCK_MONOTONIC) - t0) / 1e9;
	printf("submissions: %u from one client in %.2f s = %.0f per second; per submit p50 %.2f ms, p99 %.2f ms\n",
	       nq, secs, nq / secs, pct(lat, nq, 0.5), pct(lat, nq, 0.99));

	/* 3. queue and pass with the queue full */
	usleep(500000);
	uint64_t q[20];
	size_t njobs = 0;
	for (unsigned k = 0; k < 20; k++) {
		uint64_t a = now_ns(CLOCK_MONOTONIC);
		json_t *qr = call(sock, json_pack("{s:i, s:s}", "v", 1, "op", "queue"));
		q[k] = now_ns(CLOCK_MONOTONIC) - a;
		njobs = json_array_size(json_object_get(qr, "jobs"));
		json_decref(qr);
	}
	/* the same without parsing the answer: what the agent itself takes */
	uint64_t raw[20];
	size_t bytes = 0;
	for (unsigned k = 0; k < 20; k++) {
		uint64_t a = now_ns(CLOCK_MONOTONIC);
		bytes = raw_queue(sock);
		raw[k] = now_ns(CLOCK_MONOTONIC) - a;
	}
	printf("queue answer: %zu bytes; round trip without parsing it: median %.2f ms\n", bytes, pct(raw, 20, 0.5));
	json_t *ping = call(sock, json_pack("{s:i, s:s}", "v", 1, "op", "ping"));
	printf("queue with %zu jobs: round trip median %.2f ms, max %.2f ms; agent's last scheduling pass %.3f ms "
	       "(%lld passes)\n",
	       njobs, pct(q, 20, 0.5), pct(q, 20, 1.0),
	       (double)json_integer_value(json_object_get(ping, "last_pass_ns")) / 1e6,
	       (long long)json_integer_value(json_object_get(ping, "passes")));
	json_decref(ping);
	/* the queue stays full for the commands' timing (pool_bench.sh); it cancels the blocker */
	printf("blocker job: %llu\n", (unsigned long long)blocker);
	free(e2e);
	free(agent);
	free(exec);
	free(lat);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "sched") == 0)
		return bench_sched(argv[2]);
	if (argc == 5 && strcmp(argv[1], "live") == 0)
		return bench_live(argv[2], (unsigned)atoi(argv[3]), (unsigned)atoi(argv[4]));
	fprintf(stderr, "usage: pool_bench sched SERVER | pool_bench live SOCKET N_LATENCY N_QUEUE\n");
	return 64;
}
