/* SPDX-License-Identifier: Apache-2.0 */
/* test_pool_devcg.c - device limiting's pure half: the driver's /proc
 * parsers, a job's rules, the v1 deny lines, and the hand-assembled BPF
 * program run through a small interpreter of the instructions it uses
 * (the kernel's verifier and a real device check are the CLI test's,
 * tests/cli/pool_devices.sh, as root). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/data_path.h"
#include "pool/devcg.h"
#include "pool/pool.h"

static const char information[] = "Model: \t\t NVIDIA H200\n"
				  "IRQ:   \t\t 123\n"
				  "GPU UUID: \t GPU-5f1c2a3e-0000-1111-2222-333344445555\n"
				  "Bus Type: \t PCIe\n"
				  "Bus Location: \t 0000:18:00.0\n"
				  "Device Minor: \t 3\n"
				  "GPU Excluded:\t No\n";

static void test_parse_minor(void **state)
{
	(void)state;
	unsigned m = 99;
	assert_int_equal(devcg_parse_minor(information, &m), 0);
	assert_int_equal(m, 3);
	assert_int_equal(devcg_parse_minor("Device Minor: 0", &m), 0);
	assert_int_equal(m, 0);
	assert_int_equal(devcg_parse_minor("Device Minor: 253\n", &m), 0);
	assert_int_equal(m, 253);
	m = 7;
	assert_int_equal(devcg_parse_minor("Model: x\n", &m), -1);
	assert_int_equal(devcg_parse_minor("Device Minor: \n", &m), -1);
	assert_int_equal(devcg_parse_minor("Device Minor: 3x\n", &m), -1);
	assert_int_equal(devcg_parse_minor("Device Minor: -1\n", &m), -1);
	assert_int_equal(devcg_parse_minor("Device Minor: 254\n", &m), -1); /* nvidia-modeset, not a GPU */
	assert_int_equal(devcg_parse_minor("Device Minor: 99999999999\n", &m), -1);
	assert_int_equal(devcg_parse_minor("", &m), -1);
	assert_int_equal(m, 7);
}

static const char proc_devices[] = "Character devices:\n"
				   "  1 mem\n"
				   "195 nvidia-frontend\n"
				   "195 nvidia\n"
				   "234 xnvidia-caps\n"
				   "237 nvidia-caps\n"
				   "508 nvidia-uvm\n"
				   "\n"
				   "Block devices:\n"
				   "  7 loop\n"
				   "300 nvidia-uvm\n";

static void test_parse_major(void **state)
{
	(void)state;
	unsigned m = 0;
	assert_int_equal(devcg_parse_major(proc_devices, "nvidia-uvm", &m), 1);
	assert_int_equal(m, 508);
	assert_int_equal(devcg_parse_major(proc_devices, "nvidia-caps", &m), 1);
	assert_int_equal(m, 237);
	assert_int_equal(devcg_parse_major(proc_devices, "nvidia", &m), 1);
	assert_int_equal(m, 195);
	assert_int_equal(devcg_parse_major(proc_devices, "loop", &m), 0); /* a block device */
	assert_int_equal(devcg_parse_major(proc_devices, "mem", &m), 1);
	assert_int_equal(m, 1);
	assert_int_equal(devcg_parse_major("Character devices:\nabc nvidia-uvm\n", "nvidia-uvm", &m), 0);
	assert_int_equal(devcg_parse_major("508 nvidia-uvm\n", "nvidia-uvm", &m), 0); /* no section */
}

static void test_bus_id(void **state)
{
	(void)state;
	char out[32];
	assert_int_equal(devcg_proc_bus_id("00000000:18:00.0", out, sizeof(out)), 0);
	assert_string_equal(out, "0000:18:00.0");
	assert_int_equal(devcg_proc_bus_id("00000000:3B:1F.7", out, sizeof(out)), 0);
	assert_string_equal(out, "0000:3b:1f.7");
	assert_int_equal(devcg_proc_bus_id("0001:c1:00.0", out, sizeof(out)), 0);
	assert_string_equal(out, "0001:c1:00.0");
	assert_int_equal(devcg_proc_bus_id("", out, sizeof(out)), -1);
	assert_int_equal(devcg_proc_bus_id(NULL, out, sizeof(out)), -1);
	assert_int_equal(devcg_proc_bus_id("0000:18:00.0x", out, sizeof(out)), -1);
	assert_int_equal(devcg_proc_bus_id("0000:18:00.0/../x", out, sizeof(out)), -1);
	assert_int_equal(devcg_proc_bus_id("0000:+18:00.0", out, sizeof(out)), -1);
	assert_int_equal(devcg_proc_bus_id("0000:118:00.0", out, sizeof(out)), -1);
	assert_int_equal(devcg_proc_bus_id("0000:18:00.0", out, 5), -1);
}

static const char mig_minors[] = "config 1\n"
				 "monitor 2\n"
				 "gpu0/gi1/access 12\n"
				 "gpu0/gi1/ci0/access 13\n"
				 "gpu0/gi1/ci1/access 14\n"
				 "gpu0/gi2/access 21\n"
				 "gpu0/gi2/ci0/access 22\n"
				 "gpu1/gi1/access 147\n"
				 "gpu1/gi1/ci0/access 148\n"
				 "gpu0/gi11/access 111\n";

static void test_mig_minors(void **state)
{
	(void)state;
	struct devcg_cap caps[16];
	assert_int_equal(devcg_parse_mig_minors(mig_minors, caps, 16), 10);
	assert_string_equal(caps[2].name, "gpu0/gi1/access");
	assert_int_equal(caps[2].minor, 12);
	/* a cut list would leave minors neither allowed nor denied */
	assert_int_equal(devcg_parse_mig_minors(mig_minors, caps, 3), DEVCG_CAPS_TOO_MANY);
	assert_int_equal(devcg_parse_mig_minors("", caps, 16), 0);
	assert_int_equal(devcg_parse_mig_minors("config\n", caps, 16), -1);
	assert_int_equal(devcg_parse_mig_minors("config x\n", caps, 16), -1);
	assert_int_equal(devcg_parse_mig_minors(" 3\n", caps, 16), -1);
}

/* ---- an interpreter of the instructions the program uses ---- */

struct dev_ctx {
	uint32_t access_type, major, minor;
};

/* 1 allow, 0 deny; fails the test on anything the generator must not emit. */
static int run_prog(const struct bpf_insn *p, size_t n, const struct dev_ctx *ctx)
{
	uint64_t r[11] = { 0 };
	size_t pc = 0;
	for (unsigned steps = 0; steps < 10000; steps++) {
		assert_true(pc < n);
		const struct bpf_insn *i = &p[pc++];
		uint64_t k = (uint64_t)(int64_t)i->imm;
		switch (i->code) {
		case BPF_LDX | BPF_W | BPF_MEM:
			assert_int_equal(i->src_reg, 1);
			assert_true(i->off == 0 || i->off == 4 || i->off == 8);
			r[i->dst_reg] = i->off == 0 ? ctx->access_type : i->off == 4 ? ctx->major : ctx->minor;
			break;
		case BPF_ALU | BPF_AND | BPF_K:
			r[i->dst_reg] = (uint32_t)r[i->dst_reg] & (uint32_t)i->imm;
			break;
		case BPF_ALU64 | BPF_MOV | BPF_K:
			r[i->dst_reg] = k;
			break;
		case BPF_JMP | BPF_JA:
			assert_true(i->off >= 0); /* forward only: the verifier refuses loops */
			pc += (size_t)i->off;
			break;
		case BPF_JMP | BPF_JEQ | BPF_K:
		case BPF_JMP | BPF_JNE | BPF_K:
		case BPF_JMP | BPF_JGE | BPF_K: {
			assert_true(i->off >= 0);
			uint8_t op = i->code & 0xf0;
			bool t = op == BPF_JEQ ? r[i->dst_reg] == k : op == BPF_JNE ? r[i->dst_reg] != k : r[i->dst_reg] >= k;
			if (t)
				pc += (size_t)i->off;
			break;
		}
		case BPF_JMP | BPF_EXIT:
			assert_true(r[0] == 0 || r[0] == 1);
			return (int)r[0];
		default:
			fail_msg("unexpected opcode 0x%02x at %zu", i->code, pc - 1);
		}
	}
	fail_msg("the program does not end");
	return -1;
}

static struct bpf_insn prog[DEVCG_MAX_PROG];

/* The program agrees with devcg_rules_allow on every char and block device
 * of the majors that matter, for every access. */
static void check_program(const struct devcg_rules *r)
{
	size_t n = devcg_bpf_program(r, prog, DEVCG_MAX_PROG);
	assert_true(n > 0 && n <= DEVCG_MAX_PROG);
	unsigned majors[] = { 1, 10, 195, 237, 508, r->caps_major };
	for (size_t mj = 0; mj < sizeof(majors) / sizeof(majors[0]); mj++)
		for (unsigned minor = 0; minor < 300; minor++)
			for (unsigned acc = 1; acc <= 7; acc++) {
				struct dev_ctx c = { acc << 16 | BPF_DEVCG_DEV_CHAR, majors[mj], minor };
				assert_int_equal(run_prog(prog, n, &c), devcg_rules_allow(r, majors[mj], minor));
				c.access_type = acc << 16 | BPF_DEVCG_DEV_BLOCK;
				assert_int_equal(run_prog(prog, n, &c), 1);
			}
}

static void test_rules_whole_gpus(void **state)
{
	(void)state;
	static struct devcg_rules r;
	unsigned minors[] = { 1, 3 };
	devcg_rules_build(&r, minors, 2, -1, -1, -1, NULL, 0);
	assert_false(devcg_rules_allow(&r, 195, 0));
	assert_true(devcg_rules_allow(&r, 195, 1));
	assert_false(devcg_rules_allow(&r, 195, 2));
	assert_true(devcg_rules_allow(&r, 195, 3));
	assert_false(devcg_rules_allow(&r, 195, 253));
	assert_true(devcg_rules_allow(&r, 195, 254)); /* nvidia-modeset */
	assert_true(devcg_rules_allow(&r, 195, 255)); /* nvidiactl */
	assert_true(devcg_rules_allow(&r, 508, 0));   /* nvidia-uvm and the rest */
	assert_true(devcg_rules_allow(&r, 1, 3));
	check_program(&r);

	/* no GPU at all, and every GPU */
	devcg_rules_build(&r, NULL, 0, -1, -1, -1, NULL, 0);
	assert_false(devcg_rules_allow(&r, 195, 0));
	assert_true(devcg_rules_allow(&r, 195, 255));
	check_program(&r);
	unsigned all[254];
	for (unsigned i = 0; i < 254; i++)
		all[i] = i;
	devcg_rules_build(&r, all, 254, -1, -1, 237, NULL, 0);
	for (unsigned i = 0; i < 256; i++)
		assert_true(devcg_rules_allow(&r, 195, i));
	check_program(&r);
}

static void test_rules_mig(void **state)
{
	(void)state;
	static struct devcg_rules r;
	struct devcg_cap caps[16];
	int n = devcg_parse_mig_minors(mig_minors, caps, 16);
	/* a slice of GPU instance 1 on the GPU of minor 0 */
	devcg_rules_build(&r, NULL, 0, 0, 1, 237, caps, n);
	assert_true(devcg_rules_allow(&r, 195, 0));
	assert_false(devcg_rules_allow(&r, 195, 1));
	assert_true(devcg_rules_allow(&r, 237, 12));
	assert_true(devcg_rules_allow(&r, 237, 13));
	assert_true(devcg_rules_allow(&r, 237, 14));
	assert_false(devcg_rules_allow(&r, 237, 1));   /* config */
	assert_false(devcg_rules_allow(&r, 237, 2));   /* monitor */
	assert_false(devcg_rules_allow(&r, 237, 21));  /* another instance */
	assert_false(devcg_rules_allow(&r, 237, 111)); /* gi11 is not gi1 */
	assert_false(devcg_rules_allow(&r, 237, 147)); /* gi1 of another GPU */
	assert_false(devcg_rules_allow(&r, 237, 500)); /* unlisted */
	assert_int_equal(r.ncaps_allow, 3);
	assert_int_equal(r.ncaps_deny, 7);
	check_program(&r);
	/* a whole GPU: no capability at all */
	unsigned one = 1;
	devcg_rules_build(&r, &one, 1, -1, -1, 237, caps, n);
	assert_false(devcg_rules_allow(&r, 237, 12));
	assert_false(devcg_rules_allow(&r, 237, 147));
	check_program(&r);
}

/* The driver's whole list: config, monitor, then for 32 GPUs every GPU
 * instance (gi0-14) and its compute instances (ci0-7): 4322 lines, about
 * 100 KB. Read from a file like the agent reads it (a 64 KiB read cut it in
 * the middle of a line on a real H200 server). */
static void test_mig_minors_driver_size(void **state)
{
	(void)state;
	static char text[256 << 10];
	static struct devcg_rules r;
	size_t len = 0;
	unsigned minor = 1;
	len += (size_t)sprintf(text + len, "config %u\nmonitor %u\n", minor, minor + 1);
	minor += 2;
	for (int g = 0; g < 32; g++)
		for (int gi = 0; gi < 15; gi++) {
			len += (size_t)sprintf(text + len, "gpu%d/gi%d/access %u\n", g, gi, minor++);
			for (int ci = 0; ci < 8; ci++)
				len += (size_t)sprintf(text + len, "gpu%d/gi%d/ci%d/access %u\n", g, gi, ci, minor++);
		}
	assert_true(len > 65536);
	char path[] = "/tmp/gpuctl-test-migminors-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	close(fd);
	char e[256];
	size_t got = 0;
	char *back = read_whole_file(path, 16 << 20, &got, e, sizeof(e));
	assert_non_null(back);
	assert_int_equal(got, len);
	assert_string_equal(back, text);
	free(back);
	unlink(path);

	struct devcg_cap *caps = calloc(DEVCG_MAX_CAPS, sizeof(*caps));
	assert_non_null(caps);
	int n = devcg_parse_mig_minors(text, caps, DEVCG_MAX_CAPS);
	assert_int_equal(n, 2 + 32 * 15 * 9);
	/* GPU instance 3 of the GPU of minor 5: its access and its 8 compute instances */
	devcg_rules_build(&r, NULL, 0, 5, 3, 237, caps, n);
	unsigned first = 3 + (5 * 15 + 3) * 9;
	assert_int_equal(r.ncaps_allow, 9);
	assert_int_equal(r.ncaps_deny, (unsigned)n - 9);
	for (unsigned m = first; m < first + 9; m++)
		assert_true(devcg_rules_allow(&r, 237, m));
	assert_false(devcg_rules_allow(&r, 237, first - 1));
	assert_false(devcg_rules_allow(&r, 237, first + 9));
	check_program(&r);
	/* a whole GPU: none of them */
	unsigned one = 5;
	devcg_rules_build(&r, &one, 1, -1, -1, 237, caps, n);
	assert_int_equal(r.ncaps_allow, 0);
	assert_false(devcg_rules_allow(&r, 237, first));
	check_program(&r);
	free(caps);
}

struct lines {
	char all[20000];
	unsigned n;
};

static int collect(const char *line, void *arg)
{
	struct lines *l = arg;
	strcat(l->all, line);
	strcat(l->all, "\n");
	l->n++;
	return 0;
}

static int stop_at_3(const char *line, void *arg)
{
	(void)line;
	return ++*(int *)arg == 3 ? 42 : 0;
}

static void test_v1_lines(void **state)
{
	(void)state;
	static struct devcg_rules r;
	static struct lines l;
	struct devcg_cap caps[16];
	int n = devcg_parse_mig_minors(mig_minors, caps, 16);
	unsigned minors[] = { 1, 3 };
	devcg_rules_build(&r, minors, 2, -1, -1, 237, caps, n);
	memset(&l, 0, sizeof(l));
	assert_int_equal(devcg_v1_deny_lines(&r, collect, &l), 0);
	assert_int_equal(l.n, 252 + 10);
	assert_non_null(strstr(l.all, "c 195:0 rwm\n"));
	assert_non_null(strstr(l.all, "c 195:2 rwm\n"));
	assert_non_null(strstr(l.all, "c 195:253 rwm\n"));
	assert_null(strstr(l.all, "c 195:1 rwm\n"));
	assert_null(strstr(l.all, "c 195:3 rwm\n"));
	assert_null(strstr(l.all, "c 195:254 rwm\n"));
	assert_null(strstr(l.all, "c 195:255 rwm\n"));
	assert_non_null(strstr(l.all, "c 237:12 rwm\n"));
	int calls = 0;
	assert_int_equal(devcg_v1_deny_lines(&r, stop_at_3, &calls), 42);
	assert_int_equal(calls, 3);
}

static void test_program_too_long(void **state)
{
	(void)state;
	static struct devcg_rules r;
	devcg_rules_build(&r, NULL, 0, -1, -1, -1, NULL, 0);
	struct bpf_insn small[4];
	assert_int_equal(devcg_bpf_program(&r, small, 4), 0);
}

static void test_isolation_setting(void **state)
{
	(void)state;
	assert_int_equal(pool_isolation_parse("strict"), POOL_ISOLATION_STRICT);
	assert_int_equal(pool_isolation_parse("best-effort"), POOL_ISOLATION_BEST_EFFORT);
	assert_int_equal(pool_isolation_parse("off"), POOL_ISOLATION_OFF);
	assert_int_equal(pool_isolation_parse("Strict"), -1);
	assert_int_equal(pool_isolation_parse(""), -1);
	struct pool_config c;
	pool_config_default(&c);
	assert_int_equal(c.isolation, POOL_ISOLATION_STRICT); /* strict by default */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_minor),      cmocka_unit_test(test_parse_major),
		cmocka_unit_test(test_bus_id),           cmocka_unit_test(test_mig_minors),
		cmocka_unit_test(test_mig_minors_driver_size),
		cmocka_unit_test(test_rules_whole_gpus), cmocka_unit_test(test_rules_mig),
		cmocka_unit_test(test_v1_lines),         cmocka_unit_test(test_program_too_long),
		cmocka_unit_test(test_isolation_setting),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
