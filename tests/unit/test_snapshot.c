/* test_snapshot.c - the one-shot sweep: every GPU read, a hung GPU bounded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sampler/sampler.h"

static void open_server(struct gpu_backend *be, const char *spec)
{
	char arg[512];
	const char *dir = getenv("GPUCTL_DATA_DIR");
	snprintf(arg, sizeof(arg), "%s%s%s", spec, dir ? ",data_dir=" : "", dir ? dir : "");
	struct gpu_err err = { "" };
	memset(be, 0, sizeof(*be));
	assert_int_equal(gpu_backend_open(be, "sim", arg, &err), GPU_OK);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_every_gpu_read(void **state)
{
	(void)state;
	struct gpu_backend be;
	open_server(&be, "a100x8");
	struct snapshot *s = calloc(1, sizeof(*s));
	struct gpu_err err = { "" };
	assert_int_equal(snapshot_take(&be, GPU_GRP_ALL, s, &err), GPU_OK);
	assert_int_equal(s->n, 8);
	for (unsigned i = 0; i < s->n; i++) {
		assert_true(s->gpu[i].up);
		assert_int_equal(s->gpu[i].st.index, i);
		assert_true(VAL_HAS(s->gpu[i].s.power_mw));
		assert_int_equal(s->link[i][i].kind, LINK_SELF);
		for (unsigned j = 0; j < s->n; j++)
			if (j != i)
				assert_int_equal(s->link[i][j].nvlinks, 12);
	}
	gpu_backend_close(&be);
	free(s);
}

/* GPU 2's calls block for 3 s; a 300 ms deadline returns with the other
 * GPUs read and GPU 2 down, and closing the backend afterwards is safe. */
static void test_hung_gpu_bounded(void **state)
{
	(void)state;
	struct gpu_backend be;
	open_server(&be, "h200x8,hang_gpu=2,hang_ms=3000");
	struct snapshot *s = calloc(1, sizeof(*s));
	struct gpu_err err = { "" };
	double t0 = now_s();
	assert_int_equal(snapshot_take_timeout(&be, GPU_GRP_BASIC, 300000000ull, s, &err), GPU_OK);
	double took = now_s() - t0;
	assert_true(took < 2.0);
	assert_false(s->gpu[2].up);
	assert_non_null(strstr(s->gpu[2].last_error, "no answer within 0.3 s"));
	for (unsigned i = 0; i < s->n; i++)
		if (i != 2)
			assert_true(s->gpu[i].up);
	gpu_backend_close(&be); /* wakes the hung call; the thread makes no further call */
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_gpu_read),
		cmocka_unit_test(test_hung_gpu_bounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
