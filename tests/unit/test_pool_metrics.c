/* SPDX-License-Identifier: Apache-2.0 */
/* test_pool_metrics.c - the pool's job series' label values: escaped, and
 * valid UTF-8 whatever the bytes of a user name or reason. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "core/abuf.h"
#include "pool/pool.h"

static void expect_label(const char *raw, const char *want)
{
	struct abuf b;
	abuf_init(&b);
	pool_metrics_label_value(&b, raw);
	assert_false(b.oom);
	assert_string_equal(b.len ? b.p : "", want);
	abuf_free(&b);
}

static void test_label_values(void **state)
{
	(void)state;
	expect_label("alice", "alice");
	expect_label("a\"b\\c\nd", "a\\\"b\\\\c\\nd");
	expect_label("j\xc3\xbcrgen", "j\xc3\xbcrgen");  /* UTF-8 stays */
	expect_label("bad\xff\xfe", "bad??");            /* bytes that are not UTF-8 do not */
	expect_label("cut\xe2\x82", "cut??");            /* a truncated sequence */
	expect_label("tab\there", "tab?here");           /* control characters */
	expect_label("", "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_label_values),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
