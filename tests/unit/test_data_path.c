/* SPDX-License-Identifier: Apache-2.0 */
/* test_data_path.c - where data files are read from (core/data_path.h): the
 * caller's directory, then /etc/gpuctl, then the installed copy, then the copy
 * compiled in; a folder taken whole from the first place that has it; and the
 * compiled-in copy is data/, byte for byte. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/data_path.h"

static const unsigned char blob_a[] = "embedded a\n", blob_b[] = "[1]", blob_c[] = "[2]", blob_sub[] = "x";
static const struct data_blob blobs[] = {
	{ "a.json", blob_a, sizeof(blob_a) - 1 },
	{ "prices/b.json", blob_b, sizeof(blob_b) - 1 },
	{ "prices/c.json", blob_c, sizeof(blob_c) - 1 },
	{ "prices/deep/d.json", blob_sub, sizeof(blob_sub) - 1 },
};

static char root[64];
static char dirs[3][128]; /* env, etc, share */

static void put(const char *dir, const char *rel, const char *text)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	char *slash = strrchr(path, '/');
	*slash = '\0';
	mkdir(path, 0700); /* one level is all these tests need */
	*slash = '/';
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/gpuctl-datapath-XXXXXX");
	if (!mkdtemp(root))
		return -1;
	const char *names[3] = { "env", "etc", "share" };
	for (int i = 0; i < 3; i++) {
		snprintf(dirs[i], sizeof(dirs[i]), "%s/%s", root, names[i]);
		if (mkdir(dirs[i], 0700))
			return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

static struct data_places places(void)
{
	struct data_places p = { .dir = { dirs[0], dirs[1], dirs[2] }, .blobs = blobs,
				 .nblobs = sizeof(blobs) / sizeof(blobs[0]) };
	return p;
}

static void expect_read(const struct data_places *p, const char *rel, enum data_origin origin, const char *text)
{
	struct data_file f;
	char err[256] = "";
	assert_int_equal(data_places_read(p, rel, 1 << 20, &f, err, sizeof(err)), DATA_OK);
	assert_int_equal(f.origin, origin);
	assert_string_equal(f.text, text);
	assert_int_equal(f.len, strlen(text));
	char name[600];
	if (origin == DATA_FROM_EMBEDDED)
		snprintf(name, sizeof(name), "embedded:%s", rel);
	else
		snprintf(name, sizeof(name), "%s/%s", dirs[origin], rel);
	assert_string_equal(f.name, name);
	data_file_free(&f);
}

/* The order: each place on disk wins over those after it, the compiled-in copy comes last. */
static void test_lookup_order(void **state)
{
	(void)state;
	struct data_places p = places();
	expect_read(&p, "a.json", DATA_FROM_EMBEDDED, "embedded a\n");
	put(dirs[2], "a.json", "share a");
	expect_read(&p, "a.json", DATA_FROM_SHARE, "share a");
	put(dirs[1], "a.json", "etc a");
	expect_read(&p, "a.json", DATA_FROM_ETC, "etc a");
	put(dirs[0], "a.json", "env a");
	expect_read(&p, "a.json", DATA_FROM_DIR, "env a");
	/* no caller's directory (no --data-dir, no $GPUCTL_DATA_DIR): /etc's */
	p.dir[0] = NULL;
	expect_read(&p, "a.json", DATA_FROM_ETC, "etc a");
	p.dir[0] = "";
	expect_read(&p, "a.json", DATA_FROM_ETC, "etc a");
	/* a file only on disk, in a place that is not the first */
	put(dirs[2], "only-share.json", "s");
	expect_read(&p, "only-share.json", DATA_FROM_SHARE, "s");
	char name[256];
	assert_int_equal(data_places_locate(&p, "only-share.json", name, sizeof(name)), DATA_FROM_SHARE);
}

/* A folder of the file's name, or an unreadable file, is passed over. */
static void test_not_a_file_is_passed_over(void **state)
{
	(void)state;
	struct data_places p = places();
	char path[256];
	snprintf(path, sizeof(path), "%s/dir.json", dirs[0]);
	assert_int_equal(mkdir(path, 0700), 0);
	put(dirs[2], "dir.json", "share");
	expect_read(&p, "dir.json", DATA_FROM_SHARE, "share");
}

static void test_missing_and_too_large(void **state)
{
	(void)state;
	struct data_places p = places();
	struct data_file f;
	char err[256] = "";
	assert_int_equal(data_places_read(&p, "sim/none.json", 1 << 20, &f, err, sizeof(err)), DATA_ENOENT);
	assert_string_equal(err, "no data file 'sim/none.json'");
	assert_null(f.text);
	char name[64] = "x";
	assert_int_equal(data_places_locate(&p, "sim/none.json", name, sizeof(name)), DATA_MISSING);
	assert_string_equal(name, "");
	p.dir[0] = p.dir[1] = p.dir[2] = NULL;
	assert_int_equal(data_places_read(&p, "a.json", 4, &f, err, sizeof(err)), DATA_EREAD);
	assert_string_equal(err, "'embedded:a.json' is larger than 4 bytes");
	assert_null(f.text);
}

static void expect_list(const struct data_places *p, const char *want)
{
	char **names, err[256] = "", got[512] = "";
	size_t n;
	assert_int_equal(data_places_list(p, "prices", ".json", &names, &n, err, sizeof(err)), DATA_OK);
	for (size_t i = 0; i < n; i++)
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s", i ? " " : "", names[i]);
	data_list_free(names, n);
	assert_string_equal(got, want);
}

/* A folder comes whole from the first place that has it: its own files, sorted,
 * of the suffix, not those of its subfolders. */
static void test_folder_list(void **state)
{
	(void)state;
	struct data_places p = places();
	expect_list(&p, "prices/b.json prices/c.json");
	put(dirs[1], "prices/z.json", "[]");
	put(dirs[1], "prices/m.json", "[]");
	put(dirs[1], "prices/notes.txt", "");
	put(dirs[1], "prices/.hidden.json", "[]");
	char sub[256];
	snprintf(sub, sizeof(sub), "%s/prices/sub.json", dirs[1]);
	assert_int_equal(mkdir(sub, 0700), 0);
	expect_list(&p, "prices/m.json prices/z.json");
	/* an empty folder in the first place is still the folder */
	snprintf(sub, sizeof(sub), "%s/prices", dirs[0]);
	assert_int_equal(mkdir(sub, 0700), 0);
	expect_list(&p, "");
	char **names, err[256];
	size_t n;
	assert_int_equal(data_places_list(&p, "nothing", ".json", &names, &n, err, sizeof(err)), DATA_ENOENT);
	assert_string_equal(err, "no data folder 'nothing'");
	assert_null(names);
}

/* The default places: the caller's directory first, then the compiled-in ones,
 * and the copy compiled in is every file of data/, byte for byte. */
static void test_default_places_and_embedded_copy(void **state)
{
	(void)state;
	struct data_places p;
	data_places_default(&p, "/some/dir");
	assert_string_equal(p.dir[DATA_FROM_DIR], "/some/dir");
	assert_string_equal(p.dir[DATA_FROM_ETC], GPUCTL_ETC_DATA_DIR);
	assert_string_equal(p.dir[DATA_FROM_SHARE], GPUCTL_INSTALL_DATA_DIR);
	assert_ptr_equal(p.blobs, data_embedded);
	assert_true(data_embedded_n >= 12);
	const char *src = getenv("GPUCTL_DATA_DIR");
	assert_non_null(src); /* ctest sets it to the source tree's data/ */
	for (size_t i = 0; i < data_embedded_n; i++) {
		const struct data_blob *b = &data_embedded[i];
		if (i)
			assert_true(strcmp(data_embedded[i - 1].rel, b->rel) < 0);
		char path[1024], err[256];
		snprintf(path, sizeof(path), "%s/%s", src, b->rel);
		size_t len;
		char *text = read_whole_file(path, 1 << 24, &len, err, sizeof(err));
		assert_non_null(text);
		assert_int_equal(len, b->len);
		assert_memory_equal(text, b->bytes, len);
		assert_int_equal(b->bytes[len], 0);
		free(text);
	}
	const char *want[] = { "catalog/gpus.json", "health/rules.json", "health/xid.json", "plan/models.json",
			       "prices/aws.json",   "sim/h200x8.json",   "claims.json" };
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct data_places none = { .blobs = data_embedded, .nblobs = data_embedded_n };
		char name[256];
		assert_int_equal(data_places_locate(&none, want[i], name, sizeof(name)), DATA_FROM_EMBEDDED);
	}
	assert_string_equal(data_origin_word(DATA_FROM_EMBEDDED), "embedded");
	assert_string_equal(data_origin_word(DATA_FROM_SHARE), "installed");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_lookup_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_a_file_is_passed_over, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_and_too_large, setup, teardown),
		cmocka_unit_test_setup_teardown(test_folder_list, setup, teardown),
		cmocka_unit_test(test_default_places_and_embedded_copy),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
