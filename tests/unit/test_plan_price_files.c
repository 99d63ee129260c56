/* SPDX-License-Identifier: Apache-2.0 */
/* test_plan_price_files.c - the default price table is every *.json file of a folder, read
 * in name order; other files are ignored; a broken or unreadable file is an error naming it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plan/price_files.h"

static char dir[64];

static void put(const char *name, const char *text)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void rm(const char *name)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	remove(path);
}

static const char *price_row(char *buf, size_t n, const char *instance, double on_demand)
{
	snprintf(buf, n,
		 "{\"instance\":\"%s\",\"provider\":\"p\",\"gpus\":8,\"gpu_model\":\"H100 SXM\",\"region\":\"r\","
		 "\"on_demand\":%g,\"reserved_1y\":null,\"reserved_3y\":null,\"spot\":null,\"currency\":\"USD\","
		 "\"source\":\"s\",\"date\":\"2026\"}",
		 instance, on_demand);
	return buf;
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/gpuctl-prices-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	const char *names[] = { "a.json", "b.json", "c.json", "notes.txt", ".draft.json", "json" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		rm(names[i]);
	char sub[128];
	snprintf(sub, sizeof(sub), "%s/old.json", dir);
	rmdir(sub);
	return rmdir(dir);
}

static void test_every_json_file_in_name_order(void **state)
{
	(void)state;
	char r1[512], r2[512], r3[512], text[2048], err[512];
	snprintf(text, sizeof(text), "{\"rows\":[%s]}", price_row(r1, sizeof(r1), "from-b", 3));
	put("b.json", text);
	snprintf(text, sizeof(text), "{\"rows\":[%s,%s]}", price_row(r1, sizeof(r1), "from-a-1", 1),
		 price_row(r2, sizeof(r2), "from-a-2", 2));
	put("a.json", text);
	/* not price files: another extension, a hidden draft (invalid), a folder named *.json */
	put("notes.txt", "not json");
	put("json", "not json either");
	put(".draft.json", "{ broken");
	char sub[128];
	snprintf(sub, sizeof(sub), "%s/old.json", dir);
	assert_int_equal(mkdir(sub, 0700), 0);

	struct plan_prices pr = { 0 };
	size_t files = 99;
	assert_int_equal(plan_prices_load_dir(&pr, dir, &files, err, sizeof(err)), PRICES_OK);
	assert_int_equal(files, 2);
	assert_int_equal(pr.n, 3);
	assert_string_equal(pr.p[0].instance, "from-a-1");
	assert_string_equal(pr.p[1].instance, "from-a-2");
	assert_string_equal(pr.p[2].instance, "from-b");
	assert_float_equal(pr.p[2].on_demand, 3, 0);

	/* --prices FILE appends after the folder's rows */
	snprintf(text, sizeof(text), "%s/notes.txt", dir);
	put("notes.txt", "{\"rows\":[");
	assert_int_equal(plan_prices_load_file(&pr, text, err, sizeof(err)), PRICES_BADDATA);
	assert_non_null(strstr(err, "notes.txt"));
	assert_int_equal(pr.n, 3); /* unchanged on error */
	snprintf(text, sizeof(text), "{\"rows\":[%s]}", price_row(r3, sizeof(r3), "mine", 9));
	put("notes.txt", text);
	snprintf(text, sizeof(text), "%s/notes.txt", dir);
	assert_int_equal(plan_prices_load_file(&pr, text, err, sizeof(err)), PRICES_OK);
	assert_int_equal(pr.n, 4);
	assert_string_equal(pr.p[3].instance, "mine");
	plan_prices_free(&pr);
}

static void test_a_broken_file_is_named(void **state)
{
	(void)state;
	char r1[512], text[1024], err[512];
	snprintf(text, sizeof(text), "{\"rows\":[%s]}", price_row(r1, sizeof(r1), "ok", 1));
	put("a.json", text);
	/* c.json lacks the spot column */
	put("c.json", "{\"rows\":[{\"instance\":\"x\",\"provider\":\"p\",\"gpus\":1,\"gpu_model\":\"L4\",\"region\":\"r\","
		      "\"on_demand\":1,\"reserved_1y\":null,\"reserved_3y\":null,\"currency\":\"USD\",\"source\":\"s\","
		      "\"date\":\"2026\"}]}");
	struct plan_prices pr = { 0 };
	assert_int_equal(plan_prices_load_dir(&pr, dir, NULL, err, sizeof(err)), PRICES_BADDATA);
	assert_non_null(strstr(err, "c.json"));
	assert_non_null(strstr(err, "missing column 'spot'"));
	assert_null(strchr(err, '\n'));
	plan_prices_free(&pr);
	rm("c.json");
}

static void test_missing_or_empty_folder(void **state)
{
	(void)state;
	char err[512];
	struct plan_prices pr = { 0 };
	char gone[128];
	snprintf(gone, sizeof(gone), "%s/no-such-folder", dir);
	assert_int_equal(plan_prices_load_dir(&pr, gone, NULL, err, sizeof(err)), PRICES_NOINPUT);
	assert_non_null(strstr(err, "no-such-folder"));
	rm("a.json");
	rm("b.json");
	size_t files = 7;
	assert_int_equal(plan_prices_load_dir(&pr, dir, &files, err, sizeof(err)), PRICES_NOINPUT);
	assert_int_equal(files, 0);
	assert_non_null(strstr(err, "no price files"));
	assert_int_equal(pr.n, 0);
	snprintf(gone, sizeof(gone), "%s/none.json", dir);
	assert_int_equal(plan_prices_load_file(&pr, gone, err, sizeof(err)), PRICES_NOINPUT);
	assert_non_null(strstr(err, "cannot open"));
	plan_prices_free(&pr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_json_file_in_name_order),
		cmocka_unit_test(test_a_broken_file_is_named),
		cmocka_unit_test(test_missing_or_empty_folder),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
