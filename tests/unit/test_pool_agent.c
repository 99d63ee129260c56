/* SPDX-License-Identifier: Apache-2.0 */
/* test_pool_agent.c - the pool's agent settings (pool, pool_dir, ...) through
 * the agent's own configuration parser, and the default places of the state
 * and the socket for root and for other users. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "agent/agent_config.h"
#include "pool/pool.h"

static void test_config_keys(void **state)
{
	(void)state;
	struct agent_config c;
	char err[256];
	agent_config_default(&c);
	assert_false(c.pool); /* off unless asked */
	const char *text = "pool = on\npool_dir = /srv/pool\npool_socket = /run/p.sock\npool_cgroup = off\n"
			   "pool_user_gpu_limit = 4\npool_kill_grace = 30s\npool_user_job_limit = 50\n"
			   "pool_idle_threshold = 2.5%\npool_idle_window = 90s\npool_idle_cancel = on\n";
	assert_int_equal(agent_config_parse(&c, text, strlen(text), "t.conf", err, sizeof(err)), 0);
	assert_true(c.pool);
	assert_string_equal(c.pool_dir, "/srv/pool");
	assert_string_equal(c.pool_socket, "/run/p.sock");
	assert_string_equal(c.pool_cgroup, "off");
	assert_int_equal(c.pool_user_gpu_limit, 4);
	assert_int_equal(c.pool_kill_grace_ns, 30000000000ull);
	assert_int_equal(c.pool_user_job_limit, 50);
	assert_int_equal(agent_config_set(&c, "pool_user_job_limit", "0", err, sizeof(err)), 0);
	assert_int_equal(c.pool_user_job_limit, UINT_MAX); /* no limit, not the default */
	assert_true(c.pool_idle_threshold_set && c.pool_idle_threshold_pct == 2.5);
	assert_int_equal(c.pool_idle_window_ns, 90000000000ull);
	assert_true(c.pool_idle_cancel);
	assert_int_equal(agent_config_set(&c, "pool_idle_threshold", "5", err, sizeof(err)), 0);
	assert_true(c.pool_idle_threshold_pct == 5);
	assert_int_equal(agent_config_set(&c, "pool_idle_window", "off", err, sizeof(err)), 0);
	assert_int_equal(c.pool_idle_window_ns, UINT64_MAX);
	assert_int_equal(agent_config_set(&c, "pool", "off", err, sizeof(err)), 0);
	assert_false(c.pool);
	const struct { const char *key, *value, *why; } bad[] = {
		{ "pool", "maybe", "on or off" },
		{ "pool_dir", "relative/dir", "absolute path" },
		{ "pool_dir", "off", "absolute path" },
		{ "pool_socket", "", "absolute path" },
		{ "pool_user_gpu_limit", "65", "0 to 64" },
		{ "pool_user_gpu_limit", "-1", "0 to 64" },
		{ "pool_kill_grace", "soon", "bad duration" },
		{ "pool_user_job_limit", "1000001", "0 to 1000000" },
		{ "pool_user_job_limit", "-1", "0 to 1000000" },
		{ "pool_user_job_limit", "many", "0 to 1000000" },
		{ "pool_idle_threshold", "0", "a percent above 0" },
		{ "pool_idle_threshold", "101%", "a percent above 0" },
		{ "pool_idle_threshold", "5%%", "a percent above 0" },
		{ "pool_idle_window", "half an hour", "bad duration" },
		{ "pool_idle_window", "0", "duration" },
		{ "pool_idle_cancel", "sometimes", "on or off" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(agent_config_set(&c, bad[i].key, bad[i].value, err, sizeof(err)), -1);
		if (!strstr(err, bad[i].why))
			fail_msg("%s = '%s': '%s', want '%s'", bad[i].key, bad[i].value, err, bad[i].why);
	}
	/* other keys still reach the agent's parser */
	assert_int_equal(agent_config_set(&c, "poolx", "1", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "unknown setting 'poolx'"));
}

static void test_default_paths(void **state)
{
	(void)state;
	char st[256] = "", so[256] = "";
	pool_default_paths(0, "/x", "/run/user/0", "/root", st, sizeof(st), so, sizeof(so));
	assert_string_equal(st, "/var/lib/gpuctl/pool");
	assert_string_equal(so, "/run/gpuctl/pool.sock");
	st[0] = so[0] = '\0';
	pool_default_paths(1000, NULL, "/run/user/1000", "/home/ann", st, sizeof(st), so, sizeof(so));
	assert_string_equal(st, "/home/ann/.local/state/gpuctl/pool");
	assert_string_equal(so, "/run/user/1000/gpuctl-pool.sock");
	st[0] = so[0] = '\0';
	pool_default_paths(1000, "/state", NULL, NULL, st, sizeof(st), so, sizeof(so));
	assert_string_equal(st, "/state/gpuctl/pool");
	assert_string_equal(so, "/tmp/gpuctl-1000/gpuctl-pool.sock");
	snprintf(st, sizeof(st), "/given");
	snprintf(so, sizeof(so), "/given.sock");
	pool_default_paths(0, NULL, NULL, NULL, st, sizeof(st), so, sizeof(so));
	assert_string_equal(st, "/given"); /* what was set stays */
	assert_string_equal(so, "/given.sock");
	char c[256];
	pool_client_socket("/env.sock", true, "/run/user/1000", 1000, c, sizeof(c));
	assert_string_equal(c, "/env.sock");
	pool_client_socket(NULL, true, "/run/user/1000", 1000, c, sizeof(c));
	assert_string_equal(c, "/run/gpuctl/pool.sock");
	pool_client_socket("", false, "/run/user/1000", 1000, c, sizeof(c));
	assert_string_equal(c, "/run/user/1000/gpuctl-pool.sock");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_keys),
		cmocka_unit_test(test_default_paths),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
