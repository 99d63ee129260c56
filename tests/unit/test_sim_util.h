/* SPDX-License-Identifier: Apache-2.0 */
/* test_sim_util.h - what the simulator's unit tests share: a controlled
 * backend clock, opening a shipped server, temporary files, field checks. */
#ifndef GPUCTL_TEST_SIM_UTIL_H
#define GPUCTL_TEST_SIM_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "device/gpu.h"
#include "device/sim.h"

#define SEC 1000000000ull
#define MIB_B (1024ull * 1024ull)
/* an arbitrary wall-clock instant the tests start their clock at */
#define T0 (1764460800ull * SEC)

struct test_clock { uint64_t now; };

static inline uint64_t test_clock_read(void *arg)
{
	return ((struct test_clock *)arg)->now;
}

/* Opens "sim" with arg (NAME[,opts]) on a controlled clock starting at T0. */
static inline void open_sim(struct gpu_backend *be, struct test_clock *clk, const char *arg)
{
	memset(be, 0, sizeof(*be));
	clk->now = T0;
	be->now_ns = test_clock_read;
	be->clock_arg = clk;
	struct gpu_err err = { "" };
	int rc = gpu_backend_open(be, "sim", arg, &err);
	if (rc != GPU_OK)
		fail_msg("opening sim '%s' failed (%d): %s", arg, rc, err.msg);
}

static inline uint64_t mono_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec;
}

/* Writes text to a new temporary file; the path goes into path[64]. */
static inline void write_temp(char *path, const char *suffix, const char *text)
{
	snprintf(path, 64, "/tmp/gpuctl-sim-test-XXXXXX%s", suffix);
	int fd = mkstemps(path, (int)strlen(suffix));
	assert_true(fd >= 0);
	size_t n = strlen(text);
	assert_int_equal(write(fd, text, n), (ssize_t)n);
	close(fd);
}

/* Replaces a file's contents atomically (new inode), as a tool writing a
 * fault file should. */
static inline void rewrite_file(const char *path, const char *text)
{
	char tmp[96];
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	FILE *f = fopen(tmp, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(rename(tmp, path), 0);
}

static inline void assert_u64(u64v v, uint64_t expect)
{
	if (v.st != VAL_OK)
		fail_msg("value not present (%s), expected %llu", val_status_name(v.st), (unsigned long long)expect);
	assert_int_equal(v.v, expect);
}

static inline void assert_unsupported(u64v v)
{
	if (v.st != VAL_UNSUPPORTED)
		fail_msg("expected 'not supported', got %s (%llu)", val_status_name(v.st), (unsigned long long)v.v);
}

static inline void assert_str(strv v, const char *expect)
{
	if (v.st != VAL_OK)
		fail_msg("string not present (%s), expected '%s'", val_status_name(v.st), expect);
	assert_string_equal(v.s, expect);
}

/* Present or explicitly unsupported: never unknown, never an error. */
#define ASSERT_DECIDED(field) \
	do { \
		if ((field).st != VAL_OK && (field).st != VAL_UNSUPPORTED) \
			fail_msg("%s is %s", #field, val_status_name((field).st)); \
	} while (0)

static inline struct gpu_sample take(struct gpu_backend *be, unsigned gpu, unsigned groups)
{
	struct gpu_sample s;
	struct gpu_err err = { "" };
	int rc = be->ops->sample(be, gpu, groups, &s, &err);
	if (rc != GPU_OK)
		fail_msg("sample of GPU %u failed (%d): %s", gpu, rc, err.msg);
	return s;
}

static inline int inject(struct gpu_backend *be, struct sim_fault f)
{
	struct gpu_err err = { "" };
	int id = sim_inject(be, &f, &err);
	if (id <= 0)
		fail_msg("inject %s on GPU %u failed (%d): %s", sim_fault_kind_name(f.kind), f.gpu, id, err.msg);
	return id;
}

#endif
