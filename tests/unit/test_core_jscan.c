/* SPDX-License-Identifier: Apache-2.0 */
/* test_core_jscan.c - the tree-free JSON reader behind `gpuctl queue`: the
 * tokenizer, the re-indenter checked byte for byte against jansson (which
 * `queue --json` used to go through), what it leaves to jansson, and that it
 * accepts exactly the documents jansson accepts (also on mutated answers). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "core/jscan.h"
#include "pool/pool_internal.h"
#include "pool/queue_view.h"

/* What `queue --json` printed through jansson: loaded, "ok" removed, dumped
 * with JSON_INDENT(2), a newline. NULL when jansson refuses the text. */
static char *jansson_pretty(const char *text, size_t len)
{
	json_t *doc = json_loadb(text, len, 0, NULL);
	if (!doc)
		return NULL;
	json_object_del(doc, "ok");
	char *s = json_dumps(doc, JSON_INDENT(2));
	json_decref(doc);
	char *out = malloc(strlen(s) + 2);
	strcpy(out, s);
	strcat(out, "\n");
	free(s);
	return out;
}

/* jscan_pretty handles text and writes exactly what jansson writes. */
static void same_as_jansson(const char *text)
{
	struct abuf out;
	abuf_init(&out);
	enum jscan_tok dropped;
	char *want = jansson_pretty(text, strlen(text));
	assert_non_null(want);
	if (jscan_pretty(text, strlen(text), "ok", &out, &dropped) != 0)
		fail_msg("not handled: %s", text);
	assert_string_equal(out.p, want);
	free(want);
	abuf_free(&out);
}

static void test_pretty_matches_jansson(void **state)
{
	(void)state;
	static const char *const docs[] = {
		"{}",
		"{\"ok\":true}",
		"{\"a\":1}",
		" \t\r\n{ \"a\" : [ 1 , 2 ] , \"b\" : { } , \"c\" : [ ] } \n",
		"{\"a\":{\"b\":{\"c\":[[],[{}],[1,[2,[3]]]]}}}",
		"{\"ok\":true,\"jobs\":[{\"id\":1,\"gpus\":[0,1]}],\"pending\":0}",
		"{\"jobs\":[],\"ok\":true}",
		"{\"x\":1,\"ok\":{\"nested\":[1,2]},\"y\":2}",
		"{\"i\":[0,-0,7,-7,9223372036854775807,-9223372036854775808,1796005978465679024]}",
		"{\"l\":[true,false,null]}",
		/* escapes in, jansson's escapes out */
		"{\"s\":\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\"}",
		"{\"s\":\"\\u0001\\u001f\\u007f\\u0041\\u00e9\\u20AC\"}",
		"{\"s\":\"\\ud83d\\ude00 and \\uD834\\uDD1E\"}",
		"{\"s\":\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \x7f\"}",
		"{\"\\u006bey\":\"v\",\"\":\"\"}",
		"{\"ok\":false,\"error\":\"no such job\"}",
	};
	for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++)
		same_as_jansson(docs[i]);
}

static int pretty(const char *text, enum jscan_tok *dropped)
{
	struct abuf out;
	abuf_init(&out);
	int rc = jscan_pretty(text, strlen(text), "ok", &out, dropped);
	abuf_free(&out);
	return rc;
}

static void test_pretty_reports_ok(void **state)
{
	(void)state;
	enum jscan_tok d;
	assert_int_equal(pretty("{\"ok\":true,\"a\":1}", &d), 0);
	assert_int_equal(d, JS_TRUE);
	assert_int_equal(pretty("{\"a\":1,\"ok\":false}", &d), 0);
	assert_int_equal(d, JS_FALSE);
	assert_int_equal(pretty("{\"a\":1}", &d), 0);
	assert_int_equal(d, JS_EOF);
	/* "ok" only at the top counts */
	assert_int_equal(pretty("{\"a\":{\"ok\":true}}", &d), 0);
	assert_int_equal(d, JS_EOF);
}

/* Valid JSON that jansson would print differently than its text: left to
 * jansson (reals are reformatted, of duplicate keys one is kept). */
static void test_pretty_leaves_to_jansson(void **state)
{
	(void)state;
	static const char *const docs[] = {
		"{\"r\":1.5}",
		"{\"r\":[1e3]}",
		"{\"a\":1,\"a\":2}",
		"{\"ok\":true,\"ok\":true}",
		"{\"o\":{\"k\":1,\"\\u006b\":2}}",
		"[1,2]",
	};
	enum jscan_tok d;
	for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		json_t *j = json_loadb(docs[i], strlen(docs[i]), JSON_DECODE_ANY, NULL);
		assert_non_null(j); /* valid */
		json_decref(j);
		if (pretty(docs[i], &d) != -1)
			fail_msg("handled: %s", docs[i]);
	}
	/* nesting beyond 60 */
	char deep[200] = "{\"a\":";
	for (int i = 0; i < 70; i++)
		strcat(deep, "[");
	for (int i = 0; i < 70; i++)
		strcat(deep, "]");
	strcat(deep, "}");
	assert_int_equal(pretty(deep, &d), -1);
}

/* Both refuse these (jansson would say why). */
static void test_malformed_refused(void **state)
{
	(void)state;
	static const char *const docs[] = {
		"",
		" ",
		"{",
		"{\"a\"}",
		"{\"a\":}",
		"{\"a\":1,}",
		"{\"a\":[1,]}",
		"{,}",
		"{\"a\":1}}",
		"{\"a\":1} x",
		"{\"a\":01}",
		"{\"a\":-}",
		"{\"a\":1.}",
		"{\"a\":1e}",
		"{\"a\":+1}",
		"{\"a\":9223372036854775808}",
		"{\"a\":-9223372036854775809}",
		"{\"a\":123456789012345678901234567890}",
		"{\"a\":1e999}",
		"{\"a\":tru}",
		"{\"a\":nul}",
		"{\"a\":\"\\x\"}",
		"{\"a\":\"\\u12\"}",
		"{\"a\":\"\\u0000\"}",
		"{\"a\":\"\\ud800\"}",
		"{\"a\":\"\\udc00\"}",
		"{\"a\":\"\\ud800\\u0041\"}",
		"{\"a\":\"tab\there\"}",
		"{\"a\":\"\xc0\xaf\"}",
		"{\"a\":\"\xed\xa0\x80\"}",
		"{\"a\":\"\xf4\x90\x80\x80\"}",
		"{\"a\":\"\xe2\x82\"}",
		"{\"a\":\"\x80\"}",
		"{\"a\":\"open",
		"{\"a\" 1}",
		"{1:2}",
		"{\"a\":[}",
		"{\"a\":{]}",
	};
	enum jscan_tok d;
	for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		json_t *j = json_loadb(docs[i], strlen(docs[i]), 0, NULL);
		if (j)
			fail_msg("jansson accepts: %s", docs[i]);
		if (pretty(docs[i], &d) != -1)
			fail_msg("accepted: %s", docs[i]);
		struct queue_view v;
		if (queue_view_read(docs[i], strlen(docs[i]), &v) != -1)
			fail_msg("queue_view accepted: %s", docs[i]);
	}
}

static void test_tokens(void **state)
{
	(void)state;
	const char *t = "{\"a\":[1,\"x\",-2.5,true,null,{}],\"b\":false}";
	struct jscan s;
	jscan_init(&s, t, strlen(t));
	static const enum jscan_tok want[] = { JS_OBJ,	JS_KEY,	    JS_ARR, JS_INT, JS_STR,	JS_REAL, JS_TRUE,
					       JS_NULL, JS_OBJ,	    JS_OBJ_END, JS_ARR_END, JS_KEY, JS_FALSE, JS_OBJ_END,
					       JS_EOF,	JS_EOF };
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		enum jscan_tok k = jscan_next(&s);
		assert_int_equal(k, want[i]);
		if (i == 1)
			assert_string_equal(s.str, "a");
		if (i == 3)
			assert_int_equal(s.num, 1);
		if (i == 4)
			assert_string_equal(s.str, "x");
		if (i == 5)
			assert_int_equal(s.toklen, 4);
	}
	jscan_free(&s);
	/* skip jumps over a whole value; errors are sticky */
	const char *u = "{\"a\":{\"b\":[1,{\"c\":2}]},\"d\":3}";
	jscan_init(&s, u, strlen(u));
	assert_int_equal(jscan_next(&s), JS_OBJ);
	assert_int_equal(jscan_next(&s), JS_KEY);
	assert_int_equal(jscan_skip(&s, jscan_next(&s)), 0);
	assert_int_equal(jscan_next(&s), JS_KEY);
	assert_string_equal(s.str, "d");
	assert_int_equal(jscan_next(&s), JS_INT);
	assert_int_equal(s.num, 3);
	assert_int_equal(jscan_next(&s), JS_OBJ_END);
	assert_int_equal(jscan_next(&s), JS_EOF);
	jscan_free(&s);
	jscan_init(&s, "[1 2]", 5);
	assert_int_equal(jscan_next(&s), JS_ARR);
	assert_int_equal(jscan_next(&s), JS_INT);
	assert_int_equal(jscan_next(&s), JS_ERROR);
	assert_int_equal(jscan_next(&s), JS_ERROR);
	jscan_free(&s);
}

/* A queue answer as the agent writes it, with awkward names and reasons. */
static char *agent_answer(size_t *len)
{
	static struct pool_job jobs[4];
	struct pool_job *v[4];
	memset(jobs, 0, sizeof(jobs));
	for (int i = 0; i < 4; i++) {
		struct pool_job *j = &jobs[i];
		j->id = 10 + (uint64_t)i;
		j->uid = 1000;
		snprintf(j->user, sizeof(j->user), "ann");
		j->mig_gpu = j->mig_gi = -1;
		j->submit_ns = 1796005978465679024ull + (uint64_t)i;
		v[i] = j;
	}
	jobs[0].state = JOB_RUNNING;
	jobs[0].gpu_mask = 0x3;
	jobs[0].start_ns = 1796005978565679024ull;
	jobs[0].time_limit_ns = 7200000000000ull;
	snprintf(jobs[0].name, sizeof(jobs[0].name), "tr\"ain\\ \x01\x7f caf\xc3\xa9");
	snprintf(jobs[0].reason, sizeof(jobs[0].reason), "running");
	jobs[1].state = JOB_RUNNING;
	jobs[1].mig_gpu = 3;
	jobs[1].mig_gi = 7;
	snprintf(jobs[1].mig_profile, sizeof(jobs[1].mig_profile), "1g.10gb");
	snprintf(jobs[1].reason, sizeof(jobs[1].reason), "line\nbreak\ttab");
	jobs[2].state = JOB_PENDING;
	jobs[2].req_gpus = 4;
	jobs[2].req_nvlink = true;
	jobs[2].req_mask = 0xf0;
	jobs[2].req_mem = 40ull << 30;
	jobs[2].est_start_ns = 1796005999000000000ull;
	jobs[2].priority = -7;
	jobs[2].after = 10;
	snprintf(jobs[2].reason, sizeof(jobs[2].reason), "waiting for 4 NVLink-connected GPUs");
	jobs[3].state = JOB_PENDING;
	jobs[3].req_gpus = 1;
	snprintf(jobs[3].reason, sizeof(jobs[3].reason), "waiting for job 10 to end");
	struct abuf b;
	abuf_init(&b);
	pool_queue_render(&b, "\"ok\":true", v, 4, true, "devices limited to each job's GPUs (cgroup v2 device program)");
	*len = b.len;
	return b.p;
}

static void test_agent_answer(void **state)
{
	(void)state;
	size_t len;
	char *a = agent_answer(&len);
	/* the agent's text itself (pool_queue_render writes it without printf) */
	static const char *const parts[] = {
		"{\"ok\":true,\"jobs\":[{\"id\":10,\"name\":\"tr\\\"ain\\\\ \\u0001\\u007f caf\xc3\xa9\",\"user\":\"ann\","
		"\"uid\":1000,\"state\":\"running\",\"reason\":\"running\",\"priority\":0,\"submit_ns\":1796005978465679024,"
		"\"start_ns\":1796005978565679024,\"time_limit_s\":7200,\"request\":{\"gpus\":0,\"nvlink\":false},\"gpus\":[0,1]}",
		"\"reason\":\"line\\u000abreak\\u0009tab\"",
		"\"request\":{\"mig\":\"1g.10gb\"},\"gpus\":[3],\"mig_instance\":{\"gpu\":3,\"gi\":7}}",
		"\"priority\":-7,\"submit_ns\":1796005978465679026,\"est_start_ns\":1796005999000000000,\"after\":10,"
		"\"request\":{\"gpus\":4,\"gpu_ids\":[4,5,6,7],\"nvlink\":true,\"mem_per_gpu_bytes\":42949672960},\"position\":1}",
		"\"position\":2}],\"pending\":2,\"running\":2,\"devices\":\"devices limited to each job's GPUs (cgroup v2 device "
		"program)\",\"simulated\":true}\n",
	};
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		if (!strstr(a, parts[i]))
			fail_msg("no '%s' in %s", parts[i], a);
	same_as_jansson(a);

	struct queue_view v;
	assert_int_equal(queue_view_read(a, len, &v), 0);
	assert_true(v.ok);
	assert_true(v.simulated);
	assert_int_equal(v.pending, 2);
	assert_int_equal(v.running, 2);
	assert_int_equal(v.n, 4);
	const struct queue_row *r = v.rows;
	assert_int_equal(r[0].id, 10);
	assert_string_equal(queue_view_str(&v, r[0].name), "tr\"ain\\ \x01\x7f caf\xc3\xa9");
	assert_string_equal(queue_view_str(&v, r[0].user), "ann");
	assert_string_equal(queue_view_str(&v, r[0].state), "running");
	assert_string_equal(r[0].gpus, "0,1");
	assert_false(r[0].has_mig_instance);
	assert_int_equal(r[0].start_ns, 1796005978565679024ll);
	assert_string_equal(r[1].gpus, "3");
	assert_true(r[1].has_mig_instance);
	assert_int_equal(r[1].mig_gi, 7);
	assert_string_equal(queue_view_str(&v, r[1].req_mig), "1g.10gb");
	assert_string_equal(queue_view_str(&v, r[1].reason), "line\nbreak\ttab");
	assert_string_equal(queue_view_str(&v, r[2].state), "pending");
	assert_int_equal(r[2].req_gpus, 4);
	assert_true(r[2].req_nvlink);
	assert_null(queue_view_str(&v, r[2].req_mig));
	assert_int_equal(r[2].priority, -7);
	assert_string_equal(r[2].gpus, "");
	assert_int_equal(r[2].submit_ns, 1796005978465679026ll);
	assert_string_equal(queue_view_str(&v, r[3].reason), "waiting for job 10 to end");
	assert_false(r[3].req_nvlink);
	queue_view_free(&v);
	free(a);
}

/* What jansson's json_*_value calls gave the table: wrong types read as
 * absent or 0, the last of duplicate keys counts, odd array members. */
static void test_view_types(void **state)
{
	(void)state;
	const char *t = "{\"ok\":true,\"jobs\":[{\"id\":\"7\",\"user\":5,\"name\":null,\"state\":\"running\","
			"\"gpus\":[1,\"x\",[2],3],\"mig_instance\":true,\"request\":[1]},"
			"{\"id\":1,\"id\":2,\"user\":\"a\",\"user\":false,\"priority\":1.5,"
			"\"request\":{\"gpus\":2,\"nvlink\":1,\"mig\":\"1g\"},\"request\":{\"gpus\":3}},"
			"17,"
			"{\"mig_instance\":{\"gi\":4,\"gpu\":9},\"extra\":{\"deep\":[{}]}}],"
			"\"running\":\"2\",\"pending\":3,\"simulated\":1,\"unknown\":[1,2]}";
	struct queue_view v;
	assert_int_equal(queue_view_read(t, strlen(t), &v), 0);
	assert_true(v.ok);
	assert_false(v.simulated);
	assert_int_equal(v.running, 0);
	assert_int_equal(v.pending, 3);
	assert_int_equal(v.n, 4);
	assert_int_equal(v.rows[0].id, 0);
	assert_null(queue_view_str(&v, v.rows[0].user));
	assert_null(queue_view_str(&v, v.rows[0].name));
	assert_string_equal(v.rows[0].gpus, "1,0,0,3");
	assert_true(v.rows[0].has_mig_instance);
	assert_int_equal(v.rows[0].mig_gi, 0);
	assert_int_equal(v.rows[1].id, 2);
	assert_null(queue_view_str(&v, v.rows[1].user));
	assert_int_equal(v.rows[1].priority, 0);
	assert_int_equal(v.rows[1].req_gpus, 3);
	assert_false(v.rows[1].req_nvlink);
	assert_null(queue_view_str(&v, v.rows[1].req_mig));
	assert_int_equal(v.rows[2].id, 0); /* not an object: an empty row, as before */
	assert_null(queue_view_str(&v, v.rows[2].state));
	assert_int_equal(v.rows[3].mig_gi, 4);
	queue_view_free(&v);

	const char *e = "{\"ok\":false,\"error\":\"job 12 belongs to another user\"}";
	assert_int_equal(queue_view_read(e, strlen(e), &v), 0);
	assert_false(v.ok);
	assert_string_equal(queue_view_str(&v, v.error), "job 12 belongs to another user");
	queue_view_free(&v);

	/* a gpus list longer than the cell is cut as snprintf cut it */
	struct abuf b;
	abuf_init(&b);
	abuf_puts(&b, "{\"ok\":true,\"jobs\":[{\"gpus\":[");
	for (int i = 0; i < 100; i++)
		abuf_printf(&b, "%s%d", i ? "," : "", 1000 + i);
	abuf_puts(&b, "]}]}");
	assert_int_equal(queue_view_read(b.p, b.len, &v), 0);
	assert_int_equal(strlen(v.rows[0].gpus), 127);
	assert_memory_equal(v.rows[0].gpus, "1000,1001,", 10);
	queue_view_free(&v);
	abuf_free(&b);
}

/* Random byte changes to a real answer: the reader never crashes, accepts
 * exactly what jansson accepts, and what it re-indents is jansson's text. */
static void test_mutations_agree_with_jansson(void **state)
{
	(void)state;
	size_t len;
	char *a = agent_answer(&len);
	char *m = malloc(len + 1);
	uint64_t x = 88172645463325252ull;
	static const char bytes[] = "{}[]\",:\\ 0-1e.tfnu\x80\xc3\xed\x01";
	unsigned handled = 0, refused = 0;
	for (int round = 0; round < 4000; round++) {
		memcpy(m, a, len + 1);
		size_t n = len;
		for (int k = 0; k < 1 + round % 3; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			size_t at = (size_t)(x >> 8) % n;
			if (x % 5 == 0 && n > 1) { /* cut the rest */
				n = at + 1;
			} else {
				m[at] = bytes[(x >> 40) % (sizeof(bytes) - 1)];
			}
		}
		m[n] = '\0';
		json_t *j = json_loadb(m, n, 0, NULL);
		struct queue_view v;
		int vr = queue_view_read(m, n, &v);
		if ((j && json_is_object(j)) != (vr == 0))
			fail_msg("queue_view %s what jansson %s: %.*s", vr ? "refuses" : "accepts",
				 j ? "accepts" : "refuses", (int)n, m);
		queue_view_free(&v);
		json_decref(j);
		struct abuf out;
		abuf_init(&out);
		enum jscan_tok d;
		if (jscan_pretty(m, n, "ok", &out, &d) == 0) {
			char *want = jansson_pretty(m, n);
			if (!want)
				fail_msg("re-indented what jansson refuses: %.*s", (int)n, m);
			assert_string_equal(out.p, want);
			free(want);
			handled++;
		} else {
			refused++;
		}
		abuf_free(&out);
	}
	/* both outcomes were exercised */
	assert_true(handled > 100);
	assert_true(refused > 100);
	free(m);
	free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pretty_matches_jansson),
		cmocka_unit_test(test_pretty_reports_ok),
		cmocka_unit_test(test_pretty_leaves_to_jansson),
		cmocka_unit_test(test_malformed_refused),
		cmocka_unit_test(test_tokens),
		cmocka_unit_test(test_agent_answer),
		cmocka_unit_test(test_view_types),
		cmocka_unit_test(test_mutations_agree_with_jansson),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
