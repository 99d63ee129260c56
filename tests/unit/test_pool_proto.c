/* SPDX-License-Identifier: Apache-2.0 */
/* test_pool_proto.c - the pool's control protocol: requests that parse, the
 * ones that must be refused (and why), round trips, value syntaxes, base64. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "core/units.h"
#include "pool/proto.h"

static int parse(const char *text, struct proto_request *r, char *err)
{
	return proto_parse_request(text, strlen(text), r, err, 256);
}

static void test_submit_parses(void **state)
{
	(void)state;
	struct proto_request r;
	char err[256];
	const char *t = "{\"v\":1,\"op\":\"submit\",\"gpus\":2,\"nvlink\":true,\"priority\":-5,\"time_limit_s\":60,"
			"\"name\":\"train\",\"after\":7,\"mem_per_gpu\":1073741824,\"cwd\":\"/home/ann\","
			"\"argv\":[\"python3\",\"t.py\",\"--lr\",\"3e-4\"],\"env\":[\"PATH=/usr/bin\",\"A=b=c\"]}";
	assert_int_equal(parse(t, &r, err), 0);
	assert_int_equal(r.op, OP_SUBMIT);
	assert_int_equal(r.sub.gpus, 2);
	assert_true(r.sub.nvlink);
	assert_int_equal(r.sub.priority, -5);
	assert_int_equal(r.sub.time_limit_s, 60);
	assert_string_equal(r.sub.name, "train");
	assert_int_equal(r.sub.after, 7);
	assert_int_equal(r.sub.mem_per_gpu, 1073741824ull);
	assert_int_equal(r.sub.argc, 4);
	assert_string_equal(r.sub.argv[3], "3e-4");
	assert_int_equal(r.sub.envc, 2);
	assert_string_equal(r.sub.env[1], "A=b=c");
	/* round trip through what a client sends */
	json_t *j = proto_request_json(&r);
	char *s = json_dumps(j, JSON_COMPACT);
	struct proto_request r2;
	assert_int_equal(parse(s, &r2, err), 0);
	assert_int_equal(r2.sub.gpus, 2);
	assert_string_equal(r2.sub.argv[0], "python3");
	assert_string_equal(r2.sub.cwd, "/home/ann");
	proto_request_free(&r2);
	free(s);
	json_decref(j);
	proto_request_free(&r);
}

static void test_submit_defaults(void **state)
{
	(void)state;
	struct proto_request r;
	char err[256];
	assert_int_equal(parse("{\"v\":1,\"op\":\"submit\",\"cwd\":\"/\",\"argv\":[\"true\"],\"env\":[]}", &r, err), 0);
	assert_int_equal(r.sub.gpus, 1); /* one GPU unless told */
	proto_request_free(&r);
	assert_int_equal(parse("{\"v\":1,\"op\":\"submit\",\"cwd\":\"/\",\"argv\":[\"true\"],\"gpu_ids\":[1,3,5]}", &r, err), 0);
	assert_int_equal(r.sub.gpus, 3); /* every named GPU */
	assert_int_equal(r.sub.gpu_ids, (1u << 1) | (1u << 3) | (1u << 5));
	proto_request_free(&r);
	assert_int_equal(parse("{\"v\":1,\"op\":\"submit\",\"cwd\":\"/\",\"argv\":[\"true\"],\"mig\":\"1g.10gb\"}", &r, err), 0);
	assert_int_equal(r.sub.gpus, 0);
	assert_string_equal(r.sub.mig, "1g.10gb");
	proto_request_free(&r);
}

static void refused(const char *text, const char *why)
{
	struct proto_request r;
	char err[256] = "";
	if (parse(text, &r, err) == 0)
		fail_msg("accepted: %s", text);
	if (!strstr(err, why))
		fail_msg("'%s' -> '%s', want '%s'", text, err, why);
	assert_null(strchr(err, '\n'));
}

static void test_refusals(void **state)
{
	(void)state;
	refused("", "malformed request");
	refused("[1]", "a request is a JSON object");
	refused("{\"op\":\"ping\"}", "unsupported protocol version");
	refused("{\"v\":2,\"op\":\"ping\"}", "unsupported protocol version");
	refused("{\"v\":1,\"op\":\"reboot\"}", "unknown operation 'reboot'");
	refused("{\"v\":1,\"op\":\"cancel\"}", "'cancel' needs a job id");
	refused("{\"v\":1,\"op\":\"cancel\",\"job\":-1}", "'job' must be an integer");
	refused("{\"v\":1,\"op\":\"logs\",\"job\":1,\"stream\":3}", "'stream'");
	refused("{\"v\":1,\"op\":\"logs\",\"job\":1,\"max_bytes\":99999999}", "'max_bytes'");
	refused("{\"v\":1,\"op\":\"ping\",\"op\":\"queue\"}", "malformed request"); /* duplicate key */
	const char *base = "{\"v\":1,\"op\":\"submit\",\"cwd\":\"/\",\"argv\":[\"x\"]";
	char t[512];
#define SUB(extra, why) do { snprintf(t, sizeof(t), "%s,%s}", base, extra); refused(t, why); } while (0)
	SUB("\"gpus\":65", "'gpus' must be an integer from 0 to 64");
	SUB("\"gpus\":\"2\"", "'gpus' must be an integer");
	SUB("\"gpu_ids\":[64]", "'gpu_ids[0]'");
	SUB("\"gpu_ids\":[1,1]", "names GPU 1 twice");
	SUB("\"gpu_ids\":[]", "'gpu_ids' must be an array");
	SUB("\"gpus\":3,\"gpu_ids\":[0,1]", "'gpus' is 3 but 'gpu_ids' names only 2");
	SUB("\"mig\":\"1g.10gb\",\"gpus\":1", "'mig' goes without");
	SUB("\"mig\":\"1g;rm -rf\"", "bad MIG profile");
	SUB("\"priority\":1001", "'priority'");
	SUB("\"time_limit_s\":99999999999", "'time_limit_s'");
	SUB("\"name\":\"a\\nb\"", "control character");
	SUB("\"name\":\"a\\u009b2J\"", "control character"); /* C1 CSI (issue 38) */
	SUB("\"name\":\"a\\u0085b\"", "control character");   /* NEL */
	SUB("\"shell\":true,\"argv\":[\"a\",\"b\"]", "malformed request"); /* duplicate argv */
	SUB("\"env\":[\"NOEQUALS\"]", "is not KEY=VALUE");
	SUB("\"env\":[\"=x\"]", "is not KEY=VALUE");
	SUB("\"env\":[\"A=\\u0000\"]", "malformed request");
	SUB("\"nvlink\":1", "'nvlink' must be true or false");
	refused("{\"v\":1,\"op\":\"submit\",\"cwd\":\"relative\",\"argv\":[\"x\"]}", "'cwd' must be an absolute path");
	refused("{\"v\":1,\"op\":\"submit\",\"cwd\":\"/\",\"argv\":[]}", "'argv' must hold a command");
	refused("{\"v\":1,\"op\":\"submit\",\"cwd\":\"/\",\"argv\":[\"\"]}", "'argv' must hold a command");
	refused("{\"v\":1,\"op\":\"submit\",\"cwd\":\"/\",\"argv\":[1]}", "'argv[0]' must be a string");
	refused("{\"v\":1,\"op\":\"submit\",\"cwd\":\"/\",\"argv\":[\"a\"],\"shell\":true,\"x\":0,\"argv\":[\"b\"]}",
		"malformed request");
	/* unknown fields, and fields another operation reads, are refused (issue 38) */
	SUB("\"gpu\":2", "unknown field 'gpu' in a submit request");
	SUB("\"privileged\":true", "unknown field 'privileged' in a submit request");
	SUB("\"devices\":[\"/dev/nvidia3\"]", "unknown field 'devices'");
	SUB("\"job\":3", "unknown field 'job' in a submit request");
	SUB("\"a\\u001b[2J\":1", "unknown field 'a?[2J'");
	refused("{\"v\":1,\"op\":\"ping\",\"image\":\"x\"}", "unknown field 'image' in a ping request");
	refused("{\"v\":1,\"op\":\"cancel\",\"job\":1,\"all_users\":true}", "unknown field 'all_users'");
	refused("{\"v\":1,\"op\":\"queue\",\"history\":true}", "unknown field 'history' in a queue request");
	refused("{\"v\":1,\"op\":\"queue\",\"all_users\":true}", "unknown field 'all_users' in a queue request");
	/* too large as a whole */
	size_t big = PROTO_MAX_REQUEST + 10;
	char *huge = malloc(big);
	memset(huge, ' ', big);
	struct proto_request r;
	char err[256];
	assert_int_equal(proto_parse_request(huge, big, &r, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "request larger than"));
	free(huge);
}

/* --time: Slurm's forms but its lone number (issue 36), units only where unambiguous (issue 20). */
static void test_time_limit_forms(void **state)
{
	(void)state;
	static const struct { const char *in; uint64_t want; } ok[] = {
		{ "5:07", 5 * 60 + 7 },       /* MM:SS */
		{ "90:00", 90 * 60 },         /* MM:SS, minutes may pass 59 */
		{ "01:02:03", 3723 },         /* HH:MM:SS */
		{ "25:00:00", 25 * 3600 },
		{ "2-3", 2 * 86400 + 3 * 3600 },                  /* D-HH */
		{ "2-03:04", 2 * 86400 + 3 * 3600 + 4 * 60 },     /* D-HH:MM */
		{ "1-00:00:09", 86400 + 9 },                      /* D-HH:MM:SS */
		{ "90s", 90 }, { "30m", 1800 }, { "2h", 7200 }, { "1d", 86400 },
		{ "1h30m", 5400 }, { "1d12h", 129600 }, { "1h0m5s", 3605 }, { "366d", 366 * 86400 },
		/* the units form is core/units.h's grammar (docs/units.md), in whole seconds */
		{ "1.5h", 5400 }, { "2000ms", 2 }, { "0.5m", 30 },
	};
	static const char *const bad[] = {
		"1h30",     /* ambiguous: 30 what? (was 1 h 30 s) */
		"25:99:99", /* minutes and seconds past 59 */
		"10:60", "1:2:3:4", "1-24", "1-2:60", "1-2:3:4:5", "1-", "-1", "1--2", "1-2-3",
		"30m1h", "1m1m", "1h30x", "h", "1:", ":1", "", "1x", "1500ms", "0.5s", " 1", "1 ", "+1",
		"0", "0:00", "367d", "1234567890", "99999999999s",
		"90", "1.5", /* a number alone: minutes in sbatch, seconds in gpuctl's durations (issue 36) */
	};
	uint64_t v;
	char err[256];
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		if (proto_parse_time_limit(ok[i].in, &v, err, sizeof(err)) != 0)
			fail_msg("'%s' refused: %s", ok[i].in, err);
		if (v != ok[i].want)
			fail_msg("'%s' is %llu s, want %llu", ok[i].in, (unsigned long long)v, (unsigned long long)ok[i].want);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (proto_parse_time_limit(bad[i], &v, err, sizeof(err)) == 0)
			fail_msg("'%s' accepted as %llu s", bad[i], (unsigned long long)v);
		assert_non_null(strstr(err, "time limit"));
	}
	assert_int_equal(proto_parse_time_limit("25:99:99", &v, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "0 to 59"));
	/* the message quotes the input on one line (fuzz_pooltime found a newline kept) */
	assert_int_equal(proto_parse_time_limit("2-031h3\n", &v, err, sizeof(err)), -1);
	assert_null(strchr(err, '\n'));
	assert_non_null(strstr(err, "'2-031h3?'"));
	assert_int_equal(units_parse_size("4\nG", 1, PROTO_MAX_BYTES, &v, err, sizeof(err)), -1);
	assert_null(strchr(err, '\n'));
}

static void test_values(void **state)
{
	(void)state;
	uint64_t v;
	char err[256];
	assert_int_equal(proto_parse_time_limit("90", &v, err, sizeof(err)), -1);
	assert_string_equal(err, "bad time limit '90': a number alone is ambiguous here; write 90m or 90s");
	assert_int_equal(proto_parse_time_limit("90m", &v, err, sizeof(err)), 0);
	assert_int_equal(v, 90 * 60);
	assert_int_equal(proto_parse_time_limit("1h30m", &v, err, sizeof(err)), 0);
	assert_int_equal(v, 5400);
	assert_int_equal(proto_parse_time_limit("2d", &v, err, sizeof(err)), 0);
	assert_int_equal(v, 172800);
	assert_int_equal(proto_parse_time_limit("01:02:03", &v, err, sizeof(err)), 0);
	assert_int_equal(v, 3723);
	assert_int_equal(proto_parse_time_limit("5:00", &v, err, sizeof(err)), 0);
	assert_int_equal(v, 300);
	assert_int_equal(proto_parse_time_limit("0", &v, err, sizeof(err)), -1);
	assert_int_equal(proto_parse_time_limit("1x", &v, err, sizeof(err)), -1);
	assert_int_equal(proto_parse_time_limit("1:", &v, err, sizeof(err)), -1);
	assert_int_equal(proto_parse_time_limit("400d", &v, err, sizeof(err)), -1);
	assert_int_equal(proto_parse_time_limit("", &v, err, sizeof(err)), -1);
	assert_int_equal(units_parse_size("40G", 1, PROTO_MAX_BYTES, &v, err, sizeof(err)), 0);
	assert_int_equal(v, 40ull << 30);
	assert_int_equal(units_parse_size("512MiB", 1, PROTO_MAX_BYTES, &v, err, sizeof(err)), 0);
	assert_int_equal(v, 512ull << 20);
	assert_int_equal(units_parse_size("1.5T", 1, PROTO_MAX_BYTES, &v, err, sizeof(err)), 0);
	assert_int_equal(v, 3ull << 39);
	assert_int_equal(units_parse_size("1000", 1, PROTO_MAX_BYTES, &v, err, sizeof(err)), 0);
	assert_int_equal(v, 1000);
	assert_int_equal(units_parse_size("-1G", 1, PROTO_MAX_BYTES, &v, err, sizeof(err)), -1);
	assert_int_equal(units_parse_size("4Q", 1, PROTO_MAX_BYTES, &v, err, sizeof(err)), -1);
	/* core/units.h's grammar (docs/units.md): either case, P, 1 byte to 1024P */
	assert_int_equal(units_parse_size("4k", 1, PROTO_MAX_BYTES, &v, err, sizeof(err)), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(units_parse_size("1024P", 1, PROTO_MAX_BYTES, &v, err, sizeof(err)), 0);
	assert_int_equal(v, 1ull << 60);
	assert_int_equal(units_parse_size("1025P", 1, PROTO_MAX_BYTES, &v, err, sizeof(err)), -1);
	assert_string_equal(err, "size '1025P' out of range (1 to 1024P)");
	assert_int_equal(units_parse_size("0", 1, PROTO_MAX_BYTES, &v, err, sizeof(err)), -1);
}

static void test_base64(void **state)
{
	(void)state;
	const unsigned char in[] = { 0, 0xff, 'a', '\n', 0x80, 'z', 'q' };
	for (size_t n = 0; n <= sizeof(in); n++) {
		char enc[32];
		unsigned char dec[32];
		proto_b64_encode(in, n, enc);
		assert_int_equal(strlen(enc), 4 * ((n + 2) / 3));
		assert_int_equal(proto_b64_decode(enc, dec), (long)n);
		assert_memory_equal(in, dec, n);
	}
	char enc[8];
	proto_b64_encode((const unsigned char *)"hi!", 3, enc);
	assert_string_equal(enc, "aGkh");
	unsigned char dec[16];
	assert_int_equal(proto_b64_decode("aGk", dec), -1);
	assert_int_equal(proto_b64_decode("a=Gk", dec), -1);
	assert_int_equal(proto_b64_decode("aG=k", dec), -1);
	assert_int_equal(proto_b64_decode("a*kh", dec), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_submit_parses),
		cmocka_unit_test(test_submit_defaults),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_time_limit_forms),
		cmocka_unit_test(test_base64),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
