/* SPDX-License-Identifier: Apache-2.0 */
/* test_core_spawn.c - the one subprocess runner (src/core/spawn.h): exit
 * status, stdout, stderr's first line, the output cap, a signal, a program
 * that is not there, and the timeout (a program that would sleep for minutes). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/spawn.h"

static int sh(const char *script, const struct spawn_opts *o, char **out, char *err, size_t errlen)
{
	char *argv[] = { (char *)"sh", (char *)"-c", (char *)script, NULL };
	return spawn_run(argv, o, out, NULL, err, errlen);
}

static void test_status_stdout_stderr(void **state)
{
	(void)state;
	struct spawn_opts o = { .out_max = 100 };
	char *out, err[128];
	size_t len;
	char *argv[] = { (char *)"sh", (char *)"-c", (char *)"echo hi; echo oops >&2; echo more >&2; exit 3", NULL };
	assert_int_equal(spawn_run(argv, &o, &out, &len, err, sizeof(err)), 3);
	assert_non_null(out);
	assert_string_equal(out, "hi\n");
	assert_int_equal(len, 3);
	assert_string_equal(err, "oops");
	free(out);
	/* no output: an empty string, not NULL; stdin is /dev/null (cat ends at once) */
	assert_int_equal(sh("cat", &o, &out, err, sizeof(err)), 0);
	assert_string_equal(out, "");
	assert_string_equal(err, "");
	free(out);
	/* out NULL: the output is read and thrown away */
	assert_int_equal(sh("echo thrown; exit 0", &o, NULL, err, sizeof(err)), 0);
}

static void test_cap(void **state)
{
	(void)state;
	struct spawn_opts o = { .out_max = 1000 };
	char *out = (char *)"x", err[128];
	assert_int_equal(sh("head -c 1000 /dev/zero", &o, &out, err, sizeof(err)), 0);
	free(out);
	assert_int_equal(sh("head -c 1001 /dev/zero", &o, &out, err, sizeof(err)), -1);
	assert_null(out);
	assert_string_equal(err, "the output of 'sh' is larger than 1000 bytes");
	/* endless output ends on the broken pipe, not in a hang */
	assert_int_equal(sh("yes", &o, &out, err, sizeof(err)), -1);
	assert_null(out);
}

static void test_failures(void **state)
{
	(void)state;
	struct spawn_opts o = { .out_max = 100 };
	char *out = (char *)"x", err[128];
	assert_int_equal(sh("kill -9 $$", &o, &out, err, sizeof(err)), -1);
	assert_null(out);
	assert_string_equal(err, "'sh' was killed by signal 9");
	char *argv[] = { (char *)"/nonexistent/gpuctl-no-such-program", NULL };
	assert_int_equal(spawn_run(argv, &o, &out, NULL, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "cannot run '/nonexistent/gpuctl-no-such-program'"));
}

static void test_timeout(void **state)
{
	(void)state;
	struct spawn_opts o = { .out_max = 100, .timeout_ms = 50 };
	char *out = (char *)"x", err[128];
	/* writing or not, a program past the deadline is killed: the test ends, not in 300 s */
	assert_int_equal(sh("echo started; exec sleep 300", &o, &out, err, sizeof(err)), -1);
	assert_null(out);
	assert_string_equal(err, "'sh' ran past 50 ms: killed");
	assert_int_equal(sh("exec >&- 2>&-; exec sleep 300", &o, &out, err, sizeof(err)), -1);
	assert_string_equal(err, "'sh' ran past 50 ms: killed");
	/* a quick program under a deadline: its status */
	o.timeout_ms = 60000;
	assert_int_equal(sh("exit 4", &o, &out, err, sizeof(err)), 4);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_status_stdout_stderr),
		cmocka_unit_test(test_cap),
		cmocka_unit_test(test_failures),
		cmocka_unit_test(test_timeout),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
