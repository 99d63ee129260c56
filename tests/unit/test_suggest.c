/* SPDX-License-Identifier: Apache-2.0 */
/* test_suggest.c - "did you mean": the nearest names to a mistyped word. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "core/suggest.h"

static const char *hint(const char *word, const char *const *names, size_t n, char *out, size_t len)
{
	struct suggest s = SUGGEST_INIT(word);
	for (size_t i = 0; i < n; i++)
		suggest_consider(&s, names[i]);
	return suggest_text(&s, out, len);
}

static void test_distance_counts_edits_and_swaps(void **state)
{
	(void)state;
	assert_int_equal(suggest_distance("json", "json"), 0);
	assert_int_equal(suggest_distance("jsn", "json"), 1);         /* a letter left out */
	assert_int_equal(suggest_distance("jsoon", "json"), 1);       /* one too many */
	assert_int_equal(suggest_distance("josn", "json"), 1);       /* two swapped */
	assert_int_equal(suggest_distance("pwrr", "pwr"), 1);
	assert_int_equal(suggest_distance("JSON", "json"), 0);        /* caseless */
	assert_int_equal(suggest_distance("llama3-8b", "llama-3-8b"), 0); /* '-' ignored */
	assert_int_equal(suggest_distance("abc", "xyz"), 3);
}

static void test_option_typo_names_the_option(void **state)
{
	(void)state;
	const char *const opts[] = { "json", "detail", "id", "sim" };
	char out[200];
	assert_string_equal(hint("jsn", opts, 4, out, sizeof(out)), " (did you mean 'json'?)");
	assert_string_equal(hint("detial", opts, 4, out, sizeof(out)), " (did you mean 'detail'?)");
}

static void test_nothing_near_says_nothing(void **state)
{
	(void)state;
	const char *const opts[] = { "json", "detail", "id" };
	char out[200] = "junk";
	assert_string_equal(hint("frobnicate", opts, 3, out, sizeof(out)), "");
	/* a short word is not "near" everything short: one edit at most */
	assert_string_equal(hint("xq", opts, 3, out, sizeof(out)), "");
}

static void test_word_start_offers_every_model_it_starts(void **state)
{
	(void)state;
	/* "h200" is the whole first word of two catalog keys, one letter from B200 */
	const char *const gpus[] = { "B200", "H100 SXM", "H200 SXM", "H200 NVL", "A100 80GB" };
	char out[200];
	assert_string_equal(hint("h200", gpus, 5, out, sizeof(out)), " (did you mean 'H200 SXM' or 'H200 NVL'?)");
}

static void test_ties_are_listed_up_to_the_cap_and_duplicates_once(void **state)
{
	(void)state;
	const char *const names[] = { "ab1", "ab2", "ab2", "ab3", "ab4", "ab5" };
	char out[200];
	/* "abx": one letter from each; the alias row (ab2 twice) is offered once */
	assert_string_equal(hint("abx", names, 6, out, sizeof(out)), " (did you mean 'ab1', 'ab2', 'ab3' or 'ab4'?)");
}

static void test_small_buffer_is_cut_not_overrun(void **state)
{
	(void)state;
	const char *const opts[] = { "json" };
	char out[8];
	memset(out, 'x', sizeof(out));
	hint("jsn", opts, 1, out, sizeof(out));
	assert_int_equal(strlen(out), sizeof(out) - 1);
}

static void test_overlong_words_are_never_matched(void **state)
{
	(void)state;
	char longword[200];
	memset(longword, 'a', sizeof(longword) - 1);
	longword[sizeof(longword) - 1] = '\0';
	const char *const names[] = { "aaaa", longword };
	char out[200];
	assert_string_equal(hint(longword, names, 2, out, sizeof(out)), "");
	assert_int_equal(suggest_distance(longword, "aaaa"), ~0u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_distance_counts_edits_and_swaps),
		cmocka_unit_test(test_option_typo_names_the_option),
		cmocka_unit_test(test_nothing_near_says_nothing),
		cmocka_unit_test(test_word_start_offers_every_model_it_starts),
		cmocka_unit_test(test_ties_are_listed_up_to_the_cap_and_duplicates_once),
		cmocka_unit_test(test_small_buffer_is_cut_not_overrun),
		cmocka_unit_test(test_overlong_words_are_never_matched),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
