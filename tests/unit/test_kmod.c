/* SPDX-License-Identifier: Apache-2.0 */
/* test_kmod.c - the kernels-module loader's search order and error paths, and
 * the pure helpers beside it (enum names, nccl-tests bus-bandwidth factors).
 * Runs without a GPU: stand-in modules (kmod_fake.c) are built by CMake. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernels_host/kmod.h"

#ifndef KMOD_FAKE_DIR
#error "KMOD_FAKE_DIR must be defined by CMake"
#endif

#define FAKE(v) KMOD_FAKE_DIR "/kmod_fake_" v ".so"

/* A driver library every Linux test machine has, standing in for libcuda.so.1. */
#define PRESENT_LIB "libc.so.6"

static struct kmod_search search(const char *explicit_path)
{
	struct kmod_search s = { .explicit_path = explicit_path, .build_dir = "/nonexistent-build",
				 .libexec_dir = "/nonexistent-libexec", .exe_dir = "/nonexistent-exe", .built_with_cuda = 1,
				 .driver_lib = PRESENT_LIB };
	return s;
}

static void test_loads_good_module(void **state)
{
	(void)state;
	struct kmod km;
	char err[512];
	struct kmod_search s = search(FAKE("good"));
	assert_int_equal(kmod_open(&km, &s, err, sizeof err), KMOD_OK);
	assert_string_equal(err, "");
	assert_non_null(km.api);
	assert_int_equal(km.api->abi_version, GK_ABI_VERSION);
	int n = 0;
	assert_int_equal(km.api->device_count(&n, err, sizeof err), GK_OK);
	assert_int_equal(n, 3);
	assert_string_equal(km.path, FAKE("good"));
	kmod_close(&km);
	assert_null(km.api);
	assert_null(km.handle);
}

static void test_rejects_wrong_abi(void **state)
{
	(void)state;
	struct kmod km;
	char err[512];
	struct kmod_search s = search(FAKE("badabi"));
	assert_int_equal(kmod_open(&km, &s, err, sizeof err), KMOD_EABI);
	assert_non_null(strstr(err, "rebuild it"));
	assert_non_null(strstr(err, "kmod_fake_badabi.so"));
	assert_null(km.api);
}

static void test_rejects_missing_symbol(void **state)
{
	(void)state;
	struct kmod km;
	char err[512];
	struct kmod_search s = search(FAKE("nosym"));
	assert_int_equal(kmod_open(&km, &s, err, sizeof err), KMOD_ELOAD);
	assert_non_null(strstr(err, "symbol 'gpuctl_kernels_api' missing"));
}

static void test_explicit_path_missing(void **state)
{
	(void)state;
	struct kmod km;
	char err[512];
	struct kmod_search s = search("/no/such/gpuctl_kernels.so");
	/* an explicit path is the only one tried, even if others would exist */
	s.env_override = FAKE("good");
	assert_int_equal(kmod_open(&km, &s, err, sizeof err), KMOD_ENOMODULE);
	assert_string_equal(err, "kernels module '/no/such/gpuctl_kernels.so' not found");
}

static void test_not_a_module(void **state)
{
	(void)state;
	char path[] = "/tmp/gpuctl-kmod-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "not an ELF file\n", 16), 16);
	close(fd);
	struct kmod km;
	char err[512];
	struct kmod_search s = search(path);
	assert_int_equal(kmod_open(&km, &s, err, sizeof err), KMOD_ELOAD);
	assert_true(strncmp(err, "cannot load '/tmp/gpuctl-kmod-", 30) == 0);
	unlink(path);
}

static void test_no_driver(void **state)
{
	(void)state;
	struct kmod km;
	char err[512];
	struct kmod_search s = search(FAKE("good"));
	s.driver_lib = "libcuda-absent-for-test.so.1";
	assert_int_equal(kmod_open(&km, &s, err, sizeof err), KMOD_ENODRIVER);
	assert_string_equal(err, "cannot load '" FAKE("good") "': libcuda-absent-for-test.so.1 not found (no NVIDIA driver)");
	assert_null(km.api);
}

static void test_built_without_cuda(void **state)
{
	(void)state;
	struct kmod km;
	char err[512];
	struct kmod_search s = search(NULL);
	s.built_with_cuda = 0;
	assert_int_equal(kmod_open(&km, &s, err, sizeof err), KMOD_ENOMODULE);
	assert_string_equal(err, "gpuctl was built without CUDA (no kernels module; rebuild with -DGPUCTL_WITH_CUDA=ON)");
	s.built_with_cuda = 1;
	assert_int_equal(kmod_open(&km, &s, err, sizeof err), KMOD_ENOMODULE);
	assert_non_null(strstr(err, "/nonexistent-build/kernels/gpuctl_kernels.so"));
	assert_non_null(strstr(err, "/nonexistent-libexec/gpuctl_kernels.so"));
	assert_non_null(strstr(err, "/nonexistent-exe/gpuctl_kernels.so"));
	assert_non_null(strstr(err, "/nonexistent-exe/../lib/gpuctl/gpuctl_kernels.so"));
}

static void test_search_order(void **state)
{
	(void)state;
	struct kmod km;
	char err[512];
	/* env override first */
	struct kmod_search s = search(NULL);
	s.env_override = FAKE("good");
	assert_int_equal(kmod_open(&km, &s, err, sizeof err), KMOD_OK);
	kmod_close(&km);
	/* then <build>/kernels/gpuctl_kernels.so: make one that is the bad-ABI module */
	char dir[] = "/tmp/gpuctl-kmodd-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char sub[256], link[300];
	snprintf(sub, sizeof sub, "%s/kernels", dir);
	assert_int_equal(mkdir(sub, 0700), 0);
	snprintf(link, sizeof link, "%s/gpuctl_kernels.so", sub);
	assert_int_equal(symlink(FAKE("badabi"), link), 0);
	s.env_override = NULL;
	s.build_dir = dir;
	s.libexec_dir = KMOD_FAKE_DIR; /* holds no gpuctl_kernels.so */
	assert_int_equal(kmod_open(&km, &s, err, sizeof err), KMOD_EABI);
	/* the build dir wins over libexec: put a good one in libexec and remove the build one */
	unlink(link);
	rmdir(sub);
	snprintf(sub, sizeof sub, "%s/gpuctl_kernels.so", dir);
	assert_int_equal(symlink(FAKE("good"), sub), 0);
	s.build_dir = "/nonexistent-build";
	s.libexec_dir = dir;
	assert_int_equal(kmod_open(&km, &s, err, sizeof err), KMOD_OK);
	kmod_close(&km);
	unlink(sub);
	rmdir(dir);
}

/* Next to the binary ($ORIGIN): <exe dir>/ and <exe dir>/../lib/gpuctl/, before the
 * build tree and the installed path, so that a copied gpuctl loads its own module. */
static void test_next_to_binary(void **state)
{
	(void)state;
	struct kmod km;
	char err[512];
	char root[] = "/tmp/gpuctl-kmode-XXXXXX";
	assert_non_null(mkdtemp(root));
	char bin[300], lib[300], libg[300], in_bin[400], in_lib[400];
	snprintf(bin, sizeof bin, "%s/bin", root);
	snprintf(lib, sizeof lib, "%s/lib", root);
	snprintf(libg, sizeof libg, "%s/lib/gpuctl", root);
	assert_int_equal(mkdir(bin, 0700), 0);
	assert_int_equal(mkdir(lib, 0700), 0);
	assert_int_equal(mkdir(libg, 0700), 0);
	snprintf(in_bin, sizeof in_bin, "%s/gpuctl_kernels.so", bin);
	snprintf(in_lib, sizeof in_lib, "%s/gpuctl_kernels.so", libg);
	/* ../lib/gpuctl/ wins over the installed path (which holds a bad one) */
	struct kmod_search s = search(NULL);
	s.exe_dir = bin;
	s.libexec_dir = root;
	char bad[400];
	snprintf(bad, sizeof bad, "%s/gpuctl_kernels.so", root);
	assert_int_equal(symlink(FAKE("badabi"), bad), 0);
	assert_int_equal(symlink(FAKE("good"), in_lib), 0);
	assert_int_equal(kmod_open(&km, &s, err, sizeof err), KMOD_OK);
	char want[400];
	snprintf(want, sizeof want, "%s/../lib/gpuctl/gpuctl_kernels.so", bin);
	assert_string_equal(km.path, want);
	kmod_close(&km);
	/* the binary's own folder comes first of all but GPUCTL_KERNELS */
	assert_int_equal(symlink(FAKE("nosym"), in_bin), 0);
	assert_int_equal(kmod_open(&km, &s, err, sizeof err), KMOD_ELOAD);
	s.env_override = FAKE("good");
	assert_int_equal(kmod_open(&km, &s, err, sizeof err), KMOD_OK);
	kmod_close(&km);
	unlink(in_bin);
	unlink(in_lib);
	unlink(bad);
	rmdir(libg);
	rmdir(lib);
	rmdir(bin);
	rmdir(root);
}

static void test_names_round_trip(void **state)
{
	(void)state;
	for (int p = 0; p < GK_PREC_COUNT; p++)
		assert_int_equal(kmod_prec_parse(kmod_prec_name(p)), p);
	assert_int_equal(kmod_prec_parse("fp7"), -1);
	assert_int_equal(kmod_prec_parse(NULL), -1);
	assert_string_equal(kmod_prec_name(GK_FP8_E4M3), "fp8_e4m3");
	assert_string_equal(kmod_prec_name(99), "unknown");
	for (int c = GK_ALL_REDUCE; c <= GK_ALL_TO_ALL; c++)
		assert_int_equal(kmod_coll_parse(kmod_coll_name(c)), c);
	assert_string_equal(kmod_mem_op_name(GK_MEM_TRIAD), "triad");
	assert_string_equal(kmod_rc_name(GK_ETIMEOUT), "timed out");
}

static void test_busbw_factors(void **state)
{
	(void)state;
	/* nccl-tests: all_reduce 2(n-1)/n, gather/scatter/alltoall (n-1)/n, broadcast 1 */
	assert_float_equal(kmod_busbw_factor(GK_ALL_REDUCE, 2), 1.0, 1e-12);
	assert_float_equal(kmod_busbw_factor(GK_ALL_REDUCE, 8), 1.75, 1e-12);
	assert_float_equal(kmod_busbw_factor(GK_ALL_GATHER, 8), 0.875, 1e-12);
	assert_float_equal(kmod_busbw_factor(GK_REDUCE_SCATTER, 4), 0.75, 1e-12);
	assert_float_equal(kmod_busbw_factor(GK_ALL_TO_ALL, 2), 0.5, 1e-12);
	assert_float_equal(kmod_busbw_factor(GK_BROADCAST, 8), 1.0, 1e-12);
	assert_float_equal(kmod_busbw_factor(GK_ALL_REDUCE, 1), 0.0, 1e-12);
	assert_float_equal(kmod_busbw_factor(GK_ALL_REDUCE, 0), 0.0, 1e-12);
	assert_float_equal(kmod_busbw_factor(42, 4), 0.0, 1e-12);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loads_good_module), cmocka_unit_test(test_rejects_wrong_abi),
		cmocka_unit_test(test_rejects_missing_symbol), cmocka_unit_test(test_explicit_path_missing),
		cmocka_unit_test(test_not_a_module), cmocka_unit_test(test_no_driver),
		cmocka_unit_test(test_next_to_binary),
		cmocka_unit_test(test_built_without_cuda), cmocka_unit_test(test_search_order),
		cmocka_unit_test(test_names_round_trip), cmocka_unit_test(test_busbw_factors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
