/* SPDX-License-Identifier: Apache-2.0 */
/* test_pool_runner.c - the shim with real processes: exit records, output
 * files, environment and directory, failures to start named by stage, the
 * job's own process group, /proc parsing, the PATH search, cgroups where the
 * machine allows them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pool/runner.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/gpuctl-runner-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[160];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void job_dir(const char *name, char *out, size_t outlen)
{
	snprintf(out, outlen, "%s/%s", dir, name);
	assert_int_equal(mkdir(out, 0755), 0);
}

/* Waits up to 10 s for the exit record, then reaps the shim. */
static struct runner_exit wait_exit(const char *jd, pid_t shim)
{
	struct runner_exit x;
	for (int i = 0; i < 1000; i++) {
		if (runner_read_exit(jd, &x) == 1) {
			int st;
			assert_int_equal(waitpid(shim, &st, 0), shim);
			assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
			return x;
		}
		struct timespec ts = { 0, 10000000 };
		nanosleep(&ts, NULL);
	}
	fail_msg("no exit record in %s", jd);
	return x;
}

static void read_file(const char *jd, const char *name, char *out, size_t outlen)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", jd, name);
	FILE *f = fopen(p, "r");
	assert_non_null(f);
	size_t n = fread(out, 1, outlen - 1, f);
	out[n] = '\0';
	fclose(f);
}

static void test_runs_and_records(void **state)
{
	(void)state;
	char jd[128], out[256];
	job_dir("ok", jd, sizeof(jd));
	char *argv[] = { "sh", "-c", "echo out; echo err >&2; pwd; echo \"$FOO\"; exit 3", NULL };
	char *envp[] = { "FOO=bar baz", "PATH=/usr/bin:/bin", NULL };
	struct runner_spec s = { .job_dir = jd, .cwd = "/tmp", .path = "/bin/sh", .argv = argv, .envp = envp };
	pid_t shim;
	char err[256];
	assert_int_equal(runner_spawn(&s, &shim, err, sizeof(err)), 0);
	struct runner_exit x = wait_exit(jd, shim);
	assert_int_equal(x.stage, RUNNER_STAGE_RAN);
	assert_true(WIFEXITED(x.wait_status));
	assert_int_equal(WEXITSTATUS(x.wait_status), 3);
	assert_true(x.end_ns > 0);
	read_file(jd, "stdout", out, sizeof(out));
	assert_string_equal(out, "out\n/tmp\nbar baz\n");
	read_file(jd, "stderr", out, sizeof(out));
	assert_string_equal(out, "err\n");
	int sp, jp;
	assert_int_equal(runner_read_pids(jd, &sp, &jp), 1);
	assert_int_equal(sp, shim);
	assert_true(jp > 0 && jp != shim);
}

static void test_start_failures(void **state)
{
	(void)state;
	char jd[128], err[256];
	char *argv[] = { "x", NULL };
	char *envp[] = { NULL };
	job_dir("nocwd", jd, sizeof(jd));
	struct runner_spec s = { .job_dir = jd, .cwd = "/nonexistent-gpuctl", .path = "/bin/true", .argv = argv, .envp = envp };
	pid_t shim;
	assert_int_equal(runner_spawn(&s, &shim, err, sizeof(err)), 0);
	struct runner_exit x = wait_exit(jd, shim);
	assert_int_equal(x.stage, RUNNER_STAGE_CWD);
	assert_int_equal(x.error, ENOENT);
	job_dir("noexec", jd, sizeof(jd));
	s.cwd = "/";
	s.path = "/nonexistent-gpuctl/prog";
	assert_int_equal(runner_spawn(&s, &shim, err, sizeof(err)), 0);
	x = wait_exit(jd, shim);
	assert_int_equal(x.stage, RUNNER_STAGE_EXEC);
	assert_int_equal(x.error, ENOENT);
	assert_string_equal(runner_stage_name(x.stage), "executing the command");
	/* PATH searched by the job, like execvp: found in a later entry, or not at all */
	job_dir("search", jd, sizeof(jd));
	char *argv2[] = { "sh", "-c", "exit 7", NULL };
	s.path = "sh";
	s.search_path = "/nonexistent-gpuctl::/bin";
	s.argv = argv2;
	assert_int_equal(runner_spawn(&s, &shim, err, sizeof(err)), 0);
	x = wait_exit(jd, shim);
	assert_int_equal(x.stage, RUNNER_STAGE_RAN);
	assert_int_equal(WEXITSTATUS(x.wait_status), 7);
	job_dir("notfound", jd, sizeof(jd));
	s.path = "gpuctl-no-such-program";
	s.search_path = "/bin:/usr/bin";
	assert_int_equal(runner_spawn(&s, &shim, err, sizeof(err)), 0);
	x = wait_exit(jd, shim);
	assert_int_equal(x.stage, RUNNER_STAGE_EXEC);
	assert_int_equal(x.error, ENOENT);
	s.search_path = NULL;
	/* no job directory: refused before forking */
	s.job_dir = "/nonexistent-gpuctl";
	assert_int_equal(runner_spawn(&s, &shim, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "cannot open '/nonexistent-gpuctl'"));
}

/* Issue 38, item 9: the log limit holds as the job writes, not at the
 * agent's next look. The job writes 32 x 256 KiB as fast as it can and,
 * after each, reads what its stdout file holds on disk: never more than the
 * limit plus the shim's one write (64 KiB) and two blocks (joblog.h). Without
 * the agent here, a job writing its file directly kept all 8 MiB. */
static void test_log_limit_as_written(void **state)
{
	(void)state;
	char jd[128], err[256], script[512], out[64];
	job_dir("loglimit", jd, sizeof(jd));
	const uint64_t limit = 256 * 1024;
	snprintf(script, sizeof(script),
		 "f='%s/stdout'; max=0; for i in $(seq 32); do head -c 262144 /dev/zero;"
		 " b=$(($(stat -c '%%b' \"$f\") * 512)); [ $b -gt $max ] && max=$b; done; echo $max >&2",
		 jd);
	char *argv[] = { "sh", "-c", script, NULL };
	char *envp[] = { "PATH=/usr/bin:/bin", NULL };
	struct runner_spec s = { .job_dir = jd, .cwd = "/", .path = "/bin/sh", .argv = argv, .envp = envp,
				 .log_limit = limit };
	pid_t shim;
	assert_int_equal(runner_spawn(&s, &shim, err, sizeof(err)), 0);
	struct runner_exit x = wait_exit(jd, shim);
	assert_int_equal(WEXITSTATUS(x.wait_status), 0);
	char path[200];
	snprintf(path, sizeof(path), "%s/stdout", jd);
	struct stat sb;
	assert_int_equal(stat(path, &sb), 0);
	uint64_t slack = 65536 + 2 * (uint64_t)sb.st_blksize;
	read_file(jd, "stderr", out, sizeof(out));
	uint64_t max = strtoull(out, NULL, 10);
	if (max == 0 || max > limit + slack)
		fail_msg("the job saw %llu bytes on disk, limit %llu + %llu", (unsigned long long)max,
			 (unsigned long long)limit, (unsigned long long)slack);
	assert_true((uint64_t)sb.st_blocks * 512 <= limit + slack);
	assert_int_equal(sb.st_size, 32 * 262144); /* the size stays: the middle is a hole */
}

static void test_process_group(void **state)
{
	(void)state;
	char jd[128], err[256];
	job_dir("group", jd, sizeof(jd));
	char *argv[] = { "sh", "-c", "sleep 30 & sleep 30; wait", NULL };
	char *envp[] = { "PATH=/usr/bin:/bin", NULL };
	struct runner_spec s = { .job_dir = jd, .cwd = "/", .path = "/bin/sh", .argv = argv, .envp = envp };
	pid_t shim;
	assert_int_equal(runner_spawn(&s, &shim, err, sizeof(err)), 0);
	int sp = 0, jp = 0;
	for (int i = 0; i < 500 && runner_read_pids(jd, &sp, &jp) != 1; i++) {
		struct timespec ts = { 0, 10000000 };
		nanosleep(&ts, NULL);
	}
	assert_true(jp > 0);
	struct proc_stat shim_ps;
	assert_int_equal(proc_stat_read(shim, &shim_ps), 0);
	assert_int_equal(shim_ps.session, shim); /* the shim leads its own session (set before "pids") */
	int shims[] = { shim };
	assert_true(proc_in_jobs(jp, shims, 1));
	assert_false(proc_in_jobs(getpid(), shims, 1));
	struct proc_stat ps;
	assert_int_equal(proc_stat_read(jp, &ps), 0);
	assert_int_equal(ps.pgrp, jp); /* its own group: cancel signals all of it */
	assert_true(proc_alive_as(shim, ({ struct proc_stat s2; proc_stat_read(shim, &s2); s2.start_ticks; })));
	assert_int_equal(kill(-jp, SIGTERM), 0);
	struct runner_exit x = wait_exit(jd, shim);
	assert_true(WIFSIGNALED(x.wait_status));
	assert_int_equal(WTERMSIG(x.wait_status), SIGTERM);
	assert_false(proc_alive_as(shim, 1));
}

static void test_parsers(void **state)
{
	(void)state;
	struct proc_stat ps;
	const char *line = "4242 (we (ird) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10 "
			   "18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0\n";
	assert_int_equal(proc_stat_parse(line, &ps), 0);
	assert_int_equal(ps.state, 'S');
	assert_int_equal(ps.ppid, 1);
	assert_int_equal(ps.pgrp, 4242);
	assert_int_equal(ps.session, 4242);
	assert_int_equal(ps.start_ticks, 987654);
	assert_int_equal(ps.utime_ticks, 1);
	assert_int_equal(ps.stime_ticks, 2);
	assert_int_equal(ps.rss_pages, 10); /* field 24, top's host memory */
	assert_int_equal(proc_stat_parse("12 (x) S 1 2", &ps), -1);
	assert_int_equal(proc_stat_parse("no parens", &ps), -1);
	assert_int_equal(proc_stat_parse(NULL, &ps), -1);
	/* comm with spaces and a ')' inside; utime 1234, stime 56 (top's own CPU time) */
	assert_int_equal(proc_stat_parse("4242 (gpu ctl) top) S 1 4242 4242 34816 4242 4194304 100 0 0 0 1234 56 0 0 "
					 "20 0 3 0 1 1 1",
					 &ps),
			 0);
	assert_int_equal(ps.utime_ticks + ps.stime_ticks, 1290);
	assert_int_equal(ps.start_ticks, 1);
	assert_int_equal(ps.rss_pages, 1); /* the last number: field 24 */
	/* this process, read from /proc: it has resident pages */
	assert_int_equal(proc_stat_read((int)getpid(), &ps), 0);
	assert_true(ps.rss_pages > 0);
	assert_int_equal(ps.ppid, (int)getppid());
	assert_int_equal(proc_stat_read(0, &ps), -1);
	struct runner_exit x;
	assert_int_equal(runner_parse_exit("v1 status=768 end_ns=5 stage=0 error=0\n", &x), 0);
	assert_int_equal(x.wait_status, 768);
	assert_int_equal(runner_parse_exit("v1 status=0 end_ns=5 stage=9 error=0\n", &x), -1);
	assert_int_equal(runner_parse_exit("v2 status=0\n", &x), -1);
	assert_int_equal(runner_parse_exit("", &x), -1);
	int a, b;
	assert_int_equal(runner_parse_pids("10 11\n", &a, &b), 0);
	assert_int_equal(a, 10);
	assert_int_equal(runner_parse_pids("10\n", &a, &b), -1);
	assert_int_equal(runner_parse_pids("-1 3\n", &a, &b), -1);
	/* a process in a job's cgroup or below it (a container's) */
	const char *job = "/sys/fs/cgroup/x/gpuctl-0a1b2c3d-job-1";
	assert_true(runner_cgroup_path_within("/x/gpuctl-0a1b2c3d-job-1", job));
	assert_true(runner_cgroup_path_within("/x/gpuctl-0a1b2c3d-job-1/libpod-payload-f00", job));
	assert_true(runner_cgroup_path_within("/x/gpuctl-0a1b2c3d-job-1/runtime", job));
	assert_false(runner_cgroup_path_within("/x/gpuctl-0a1b2c3d-job-12", job));
	assert_false(runner_cgroup_path_within("/x/gpuctl-0a1b2c3d-job-12/gpuctl-0a1b2c3d-job-1x", job));
	assert_false(runner_cgroup_path_within("/x/my-gpuctl-0a1b2c3d-job-1", job));
	assert_false(runner_cgroup_path_within("/docker/abc", job));
	assert_false(runner_cgroup_path_within("/", job));
	assert_false(runner_cgroup_path_within("/x/gpuctl-0a1b2c3d-job-1", ""));
	assert_false(runner_cgroup_path_within("/x", "/"));
}

static void test_cgroup(void **state)
{
	(void)state;
	char base[512], cg[256], err[256];
	if (runner_cgroup_base(NULL, base, sizeof(base), err, sizeof(err)) != 0 ||
	    runner_cgroup_create(base, "test", (uint64_t)getpid(), cg, sizeof(cg), err, sizeof(err)) != 0) {
		print_message("skipped: no writable cgroup v2 here (%s)\n", err);
		skip();
	}
	char jd[128];
	job_dir("cgroup", jd, sizeof(jd));
	char *argv[] = { "sh", "-c", "setsid sleep 30 & sleep 30", NULL };
	char *envp[] = { "PATH=/usr/bin:/bin", NULL };
	struct runner_spec s = { .job_dir = jd, .cwd = "/", .path = "/bin/sh", .argv = argv, .envp = envp, .cgroup_dir = cg };
	pid_t shim;
	assert_int_equal(runner_spawn(&s, &shim, err, sizeof(err)), 0);
	int n = 0;
	for (int i = 0; i < 500 && (n = runner_cgroup_count(cg)) < 3; i++) {
		struct timespec ts = { 0, 10000000 };
		nanosleep(&ts, NULL);
	}
	assert_int_equal(n, 3); /* sh and both sleeps, the setsid one too: the shim is not in it */
	runner_cgroup_kill(cg);
	struct runner_exit x = wait_exit(jd, shim);
	assert_true(WIFSIGNALED(x.wait_status));
	for (int i = 0; i < 500 && runner_cgroup_count(cg) > 0; i++) {
		struct timespec ts = { 0, 10000000 };
		nanosleep(&ts, NULL);
	}
	assert_int_equal(runner_cgroup_count(cg), 0);
	assert_true(runner_cgroup_remove(cg));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_runs_and_records),
		cmocka_unit_test(test_log_limit_as_written),
		cmocka_unit_test(test_start_failures),
		cmocka_unit_test(test_process_group),
		cmocka_unit_test(test_parsers),
		cmocka_unit_test(test_cgroup),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
