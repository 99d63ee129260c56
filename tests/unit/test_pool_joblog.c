/* SPDX-License-Identifier: Apache-2.0 */
/* test_pool_joblog.c - a job's output within the pool's log limit: what is
 * punched out (head and tail kept, whole blocks, never twice), and reading a
 * punched file back around the hole. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pool/joblog.h"

#define KIB 1024ull
#define MIB (1024ull * 1024ull)

static void test_trim_plan(void **state)
{
	(void)state;
	uint64_t from, to;
	/* within the limit, or no limit: nothing */
	assert_false(joblog_trim_plan(MIB, MIB, 4096, 0, &from, &to));
	assert_false(joblog_trim_plan(100 * MIB, 0, 4096, 0, &from, &to));
	/* 30 MB with 1 MiB: the first 512 KiB and at least the last 512 KiB stay */
	assert_true(joblog_trim_plan(30000005, MIB, 4096, 0, &from, &to));
	assert_int_equal(from, 512 * KIB);
	assert_int_equal(to, (30000005 - 512 * KIB) & ~4095ull);
	assert_true(30000005 - to >= 512 * KIB);
	assert_true(30000005 - to < 512 * KIB + 4096);
	/* what is gone already is not punched again; growth punches the new middle */
	uint64_t done = to;
	assert_false(joblog_trim_plan(30000005, MIB, 4096, done, &from, &to));
	assert_true(joblog_trim_plan(40000000, MIB, 4096, done, &from, &to));
	assert_int_equal(from, done);
	assert_int_equal(to, (40000000 - 512 * KIB) & ~4095ull);
	/* a limit that is not a block multiple: the head rounds up, never cut into */
	assert_true(joblog_trim_plan(10 * MIB, 100 * KIB + 1, 4096, 0, &from, &to));
	assert_int_equal(from, 53248); /* 50 KiB rounded up to 13 blocks */
	assert_int_equal(from % 4096, 0);
	assert_int_equal(to % 4096, 0);
	/* barely past the limit: less than a block to drop, nothing yet */
	assert_false(joblog_trim_plan(MIB + 100, MIB, 4096, 0, &from, &to));
}

/* On a real file (where the filesystem punches holes): the kept bytes are
 * intact, the hole reads as skipped, the disk space is given back. */
static void test_trim_and_segment(void **state)
{
	(void)state;
	char path[] = "/tmp/gpuctl-joblog-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	char *block = malloc(MIB);
	assert_non_null(block);
	for (unsigned i = 0; i < 8; i++) {
		memset(block, 'a' + (int)i, MIB);
		assert_int_equal(write(fd, block, MIB), (ssize_t)MIB);
	}
	uint64_t punched = 0;
	if (joblog_trim(path, 2 * MIB, &punched) != 0) {
		close(fd);
		unlink(path);
		free(block);
		skip();
	}
	struct stat sb;
	assert_int_equal(fstat(fd, &sb), 0);
	if (punched == 0) { /* no holes here: cut back to the head */
		assert_int_equal(sb.st_size, MIB);
	} else {
		assert_int_equal(sb.st_size, 8 * MIB); /* the writer's offset stays valid */
		assert_int_equal(punched, 7 * MIB);
		assert_true((uint64_t)sb.st_blocks * 512 <= 2 * MIB + 64 * KIB);
		uint64_t skip_b, len;
		joblog_segment(fd, 0, 8 * MIB, &skip_b, &len);
		assert_int_equal(skip_b, 0);
		assert_int_equal(len, MIB);
		joblog_segment(fd, MIB, 8 * MIB, &skip_b, &len);
		assert_int_equal(skip_b, 6 * MIB);
		assert_int_equal(len, MIB);
		char c;
		assert_int_equal(pread(fd, &c, 1, (off_t)(7 * MIB)), 1);
		assert_int_equal(c, 'h'); /* the tail is the last MiB, intact */
		assert_int_equal(pread(fd, &c, 1, (off_t)(MIB - 1)), 1);
		assert_int_equal(c, 'a');
		joblog_segment(fd, 8 * MIB, 8 * MIB, &skip_b, &len);
		assert_int_equal(skip_b + len, 0);
	}
	close(fd);
	unlink(path);
	free(block);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trim_plan),
		cmocka_unit_test(test_trim_and_segment),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
