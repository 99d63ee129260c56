/* SPDX-License-Identifier: Apache-2.0 */
/* test_gpu_select.c - parsing `-i/--id` GPU specs into a selection bitmap. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "core/gpu_select.h"

static const struct gpu_ident ids[8] = {
	{ "GPU-0a1b2c3d-1111-2222-3333-444444444444", "00000000:18:00.0" },
	{ "GPU-0a1b2c3d-9999-2222-3333-444444444444", "00000000:2A:00.0" },
	{ "GPU-5e6f7a8b-1111-2222-3333-444444444444", "00000000:3A:00.0" },
	{ "GPU-77777777-1111-2222-3333-444444444444", "00000000:5D:00.0" },
	{ "GPU-88888888-1111-2222-3333-444444444444", "00000001:9A:00.0" },
	{ "GPU-99999999-1111-2222-3333-444444444444", "00000000:AB:00.0" },
	{ "GPU-aaaaaaaa-1111-2222-3333-444444444444", "00000000:BA:00.0" },
	{ NULL, NULL },
};

static uint64_t sel(const char *spec)
{
	uint64_t m = 0xdead;
	char err[128] = "";
	assert_int_equal(gpu_select_parse(spec, ids, 8, &m, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	return m;
}

static const char *must_fail(const char *spec)
{
	static char err[128];
	uint64_t m = 0x1234;
	err[0] = '\0';
	assert_int_equal(gpu_select_parse(spec, ids, 8, &m, err, sizeof(err)), -1);
	assert_int_equal(m, 0x1234); /* untouched on error */
	assert_true(err[0] != '\0');
	return err;
}

static void test_indexes_and_ranges(void **state)
{
	(void)state;
	assert_int_equal(sel("0"), 0x1);
	assert_int_equal(sel("7"), 0x80);
	assert_int_equal(sel("0,2"), 0x5);
	assert_int_equal(sel("0-3"), 0xf);
	assert_int_equal(sel("0-3,6"), 0x4f);
	assert_int_equal(sel("5-5"), 0x20);
	assert_int_equal(sel("1, 3"), 0xa);
	assert_int_equal(sel("3,3,3"), 0x8);
	assert_int_equal(sel("0-7"), 0xff);
}

static void test_uuids(void **state)
{
	(void)state;
	assert_int_equal(sel("GPU-5e6f7a8b-1111-2222-3333-444444444444"), 0x4);
	assert_int_equal(sel("gpu-5E6F7A8B-1111-2222-3333-444444444444"), 0x4); /* any case */
	assert_int_equal(sel("GPU-77777777"), 0x8);                              /* unique prefix */
	assert_int_equal(sel("GPU-77777777,0"), 0x9);
	/* a prefix two GPUs share */
	assert_non_null(strstr(must_fail("GPU-0a1b2c3d"), "more than one"));
	/* too short a prefix is not accepted even when unique, and says so */
	assert_non_null(strstr(must_fail("GPU-777"), "GPU UUID prefix 'GPU-777' too short"));
	assert_non_null(strstr(must_fail("GPU-1234"), "unknown GPU 'GPU-1234'")); /* no GPU starts so */
	assert_non_null(strstr(must_fail("GPU-ffffffff"), "unknown GPU"));
}

static void test_bus_ids(void **state)
{
	(void)state;
	assert_int_equal(sel("00000000:2A:00.0"), 0x2);
	assert_int_equal(sel("0000:2a:00.0"), 0x2);
	assert_int_equal(sel("2a:00.0"), 0x2);
	assert_int_equal(sel("0001:9a:00.0"), 0x10);
	assert_int_equal(sel("18:00.0,ba:00.0"), 0x41);
	assert_non_null(strstr(must_fail("9a:00.0"), "no GPU at bus id '9a:00.0'")); /* domain 0 has none */
	assert_non_null(strstr(must_fail("2a:00.9"), "unknown GPU"));               /* function > 7 */
}

static void test_errors(void **state)
{
	(void)state;
	assert_string_equal(must_fail("8"), "GPU index 8 out of range (0-7)");
	assert_string_equal(must_fail("6-9"), "GPU index 9 out of range (0-7)");
	assert_string_equal(must_fail("3-1"), "bad GPU range '3-1': start after end");
	assert_string_equal(must_fail("a-b"), "bad GPU range 'a-b'");
	assert_string_equal(must_fail("1,,2"), "empty item in GPU list");
	assert_string_equal(must_fail("1,"), "empty item in GPU list");
	assert_string_equal(must_fail(""), "empty GPU list");
	assert_string_equal(must_fail("H300"), "unknown GPU 'H300'");
	assert_string_equal(must_fail("-1"), "bad GPU range '-1'");
	assert_string_equal(must_fail("1-"), "bad GPU range '1-'");
	assert_string_equal(must_fail("99999999999"), "unknown GPU '99999999999'");
	uint64_t m;
	char err[64];
	assert_int_equal(gpu_select_parse("0", ids, 0, &m, err, sizeof(err)), -1);
	assert_string_equal(err, "GPU index 0 out of range: no GPU");
	/* without identities only indexes work */
	assert_int_equal(gpu_select_parse("GPU-77777777", NULL, 8, &m, err, sizeof(err)), -1);
	assert_int_equal(gpu_select_parse("1-2", NULL, 8, &m, err, sizeof(err)), 0);
	assert_int_equal(m, 0x6);
}

static void test_busid_parse(void **state)
{
	(void)state;
	struct pci_addr a;
	assert_int_equal(gpu_busid_parse("00000000:18:00.0", &a), 0);
	assert_int_equal(a.domain, 0);
	assert_int_equal(a.bus, 0x18);
	assert_int_equal(a.device, 0);
	assert_int_equal(a.function, 0);
	assert_int_equal(gpu_busid_parse("0001:C1:1f.7", &a), 0);
	assert_int_equal(a.domain, 1);
	assert_int_equal(a.bus, 0xc1);
	assert_int_equal(a.device, 0x1f);
	assert_int_equal(a.function, 7);
	assert_int_equal(gpu_busid_parse("18:00", &a), -1);
	assert_int_equal(gpu_busid_parse("18:00.0x", &a), -1);
	assert_int_equal(gpu_busid_parse("1:2:3:4.0", &a), -1);
	assert_int_equal(gpu_busid_parse("100:00.0", &a), -1); /* bus > 0xff */
	assert_int_equal(gpu_busid_parse("00:20.0", &a), -1);  /* device > 0x1f */
	assert_int_equal(gpu_busid_parse("", &a), -1);
	assert_int_equal(gpu_busid_parse(NULL, &a), -1);
}

/* The form alone, before the GPUs are known: malformed specs fail with
 * gpu_select_parse's message; what needs the GPUs passes. */
static const char *form_error(const char *spec)
{
	static char err[128];
	err[0] = '\0';
	return gpu_select_check(spec, err, sizeof(err)) == 0 ? NULL : err;
}

static void test_form_only(void **state)
{
	(void)state;
	const char *bad[] = { "3-1", "a-b", "1,,2", "1,", "", "H300", "-1", "1-", "99999999999", "2a:00.9", "18:00" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *msg = form_error(bad[i]);
		assert_non_null(msg);
		assert_string_equal(msg, must_fail(bad[i]));
	}
	/* out of range on 8 GPUs, no such UUID or bus id: only the GPUs can say */
	const char *good[] = { "0", "0-3,6", " 1, 3", "8", "6-9", "63", "999999", "GPU-ffffffff", "GPU-777",
			       "9a:00.0", "0001:C1:1f.7", "GPU-77777777,0-2,18:00.0" };
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		assert_null(form_error(good[i]));
	assert_non_null(form_error(NULL));
}

/* The machine-facing lists (the pool's requests, SLURM_JOB_GPUS, the agent's
 * ?gpu=) read one grammar: indexes and ranges, 0 to 63. */
static void test_indexes_only(void **state)
{
	(void)state;
	uint64_t m = 0;
	char err[160];
	assert_int_equal(gpu_select_indexes("0,2,5-7", &m, err, sizeof(err)), 0);
	assert_int_equal(m, 0xe5);
	assert_int_equal(gpu_select_indexes("63", &m, err, sizeof(err)), 0);
	assert_true(m == 1ull << 63);
	assert_int_equal(gpu_select_indexes("0, 3", &m, err, sizeof(err)), 0);
	assert_int_equal(m, 0x9);
	const char *bad[] = { "", "64", "3-1", "1,", "1,,2", "a", "-1", "1-", "1 2", "0x1", "GPU-8f3e12ab", "18:00.0",
			      "0-64" };
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		err[0] = '\0';
		assert_int_equal(gpu_select_indexes(bad[k], &m, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "GPU"));
		assert_null(strchr(err, '\n'));
	}
	assert_int_equal(gpu_select_indexes("64", &m, err, sizeof(err)), -1);
	assert_string_equal(err, "GPU index 64 out of range (0-63)");
	assert_int_equal(gpu_select_indexes("GPU-8f3e12ab", &m, err, sizeof(err)), -1);
	assert_string_equal(err, "bad GPU list 'GPU-8f3e12ab' (indexes 0 to 63 and ranges, e.g. 0,2,5-7)");
}

static void test_all(void **state)
{
	(void)state;
	assert_int_equal(gpu_select_all(0), 0);
	assert_int_equal(gpu_select_all(2), 0x3);
	assert_true(gpu_select_all(64) == ~(uint64_t)0);
	assert_true(gpu_select_has(0x4, 2));
	assert_false(gpu_select_has(0x4, 1));
	assert_false(gpu_select_has(~(uint64_t)0, 64));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_indexes_and_ranges),
		cmocka_unit_test(test_uuids),
		cmocka_unit_test(test_bus_ids),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_busid_parse),
		cmocka_unit_test(test_form_only),
		cmocka_unit_test(test_indexes_only),
		cmocka_unit_test(test_all),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
