/* SPDX-License-Identifier: Apache-2.0 */
/* test_view_info_text.c - `gpuctl info`'s text (src/view/info_text.h) from a
 * simulated server's snapshot: the header, the table of the GPUs picked
 * only, a GPU that is down or partly read, and -q's sections per GPU. */
#include "test_sim_util.h"

#include "core/gpu_select.h"
#include "sampler/sampler.h"
#include "view/info_text.h"

/* What f wrote, NUL-terminated (heap). */
static char *render(void (*fn)(FILE *, const struct snapshot *, uint64_t), const struct snapshot *s, uint64_t mask)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	fn(f, s, mask);
	fclose(f);
	return buf;
}

static size_t count(const char *text, const char *what)
{
	size_t n = 0;
	for (const char *p = strstr(text, what); p; p = strstr(p + 1, what))
		n++;
	return n;
}

static void test_text(void **state)
{
	(void)state;
	struct gpu_backend be;
	struct test_clock clk;
	open_sim(&be, &clk, "h200x8");
	struct snapshot *s = snapshot_new(be.gpu_count);
	assert_non_null(s);
	struct gpu_err err = { "" };
	assert_int_equal(snapshot_take(&be, GPU_GRP_ALL, s, &err), GPU_OK);
	assert_int_equal(s->n, 8);

	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	info_text_header(f, s);
	fclose(f);
	assert_non_null(strstr(buf, "8 GPUs"));
	assert_non_null(strstr(buf, "driver "));
	free(buf);

	/* GPUs 1 and 6: their bus ids in the table, no other GPU's */
	uint64_t mask = (1u << 1) | (1u << 6);
	char *t = render(info_text_table, s, mask);
	for (unsigned i = 0; i < 8; i++) {
		const char *bus = s->gpu[i].st.pci_bus_id.s;
		if (gpu_select_has(mask, i))
			assert_non_null(strstr(t, bus));
		else
			assert_null(strstr(t, bus));
	}
	assert_null(strstr(t, "DOWN"));
	free(t);

	/* GPU 6 down, GPU 1 partly read: one line each, after the table */
	s->gpu[6].up = false;
	snprintf(s->gpu[6].last_error, sizeof(s->gpu[6].last_error), "GPU is lost");
	snprintf(s->gpu[1].last_error, sizeof(s->gpu[1].last_error), "no ECC counters");
	t = render(info_text_table, s, mask);
	assert_non_null(strstr(t, "GPU 6 DOWN: GPU is lost\n"));
	assert_non_null(strstr(t, "GPU 1 partly read: no ECC counters\n"));
	free(t);

	/* -q: a block per GPU picked, each with its sections, saying what could not be read */
	char *d = render(info_text_detail, s, mask);
	assert_int_equal(count(d, "Compute Mode"), 2);
	assert_int_equal(count(d, "Processes"), 2);
	assert_non_null(strstr(d, "GPU 1  "));
	assert_non_null(strstr(d, "GPU 6  "));
	assert_null(strstr(d, "GPU 0  "));
	assert_non_null(strstr(d, "    DOWN: GPU is lost\n"));
	assert_non_null(strstr(d, "    partly read: no ECC counters\n"));
	free(d);

	free(s);
	gpu_backend_close(&be);
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(test_text) };
	return cmocka_run_group_tests(tests, NULL, NULL);
}
