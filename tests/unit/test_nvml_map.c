/* SPDX-License-Identifier: Apache-2.0 */
/* test_nvml_map.c - the NVML backend without a GPU: the translations from
 * NVML's answers to gpu.h (nvml_map.c), and a missing library giving
 * GPU_ENODRIVER with a one-line message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "device/gpu.h"
#include "device/nvml_map.h"

static void test_return_codes(void **state)
{
	(void)state;
	assert_int_equal(nvml_val_status(NVML_SUCCESS), VAL_OK);
	assert_int_equal(nvml_val_status(NVML_ERROR_NOT_SUPPORTED), VAL_UNSUPPORTED);
	assert_int_equal(nvml_val_status(NVML_ERROR_FUNCTION_NOT_FOUND), VAL_UNSUPPORTED);
	assert_int_equal(nvml_val_status(NVML_ERROR_GPU_IS_LOST), VAL_ERROR);
	assert_int_equal(nvml_val_status(NVML_ERROR_NO_PERMISSION), VAL_ERROR);
	assert_int_equal(nvml_val_status(NVML_ERROR_UNKNOWN), VAL_ERROR);

	assert_int_equal(nvml_errcode(NVML_SUCCESS), GPU_OK);
	assert_int_equal(nvml_errcode(NVML_ERROR_DRIVER_NOT_LOADED), GPU_ENODRIVER);
	assert_int_equal(nvml_errcode(NVML_ERROR_LIBRARY_NOT_FOUND), GPU_ENODRIVER);
	assert_int_equal(nvml_errcode(NVML_ERROR_GPU_IS_LOST), GPU_ENODEV);
	assert_int_equal(nvml_errcode(NVML_ERROR_NOT_SUPPORTED), GPU_EUNSUPPORTED);
	assert_int_equal(nvml_errcode(NVML_ERROR_TIMEOUT), GPU_ETIMEOUT);
	assert_int_equal(nvml_errcode(NVML_ERROR_INVALID_ARGUMENT), GPU_EINVAL);
	assert_int_equal(nvml_errcode(NVML_ERROR_UNKNOWN), GPU_EIO);
}

static void test_topology_levels(void **state)
{
	(void)state;
	assert_int_equal(nvml_topo_level_kind(NVML_TOPOLOGY_INTERNAL), LINK_PIX);
	assert_int_equal(nvml_topo_level_kind(NVML_TOPOLOGY_SINGLE), LINK_PIX);
	assert_int_equal(nvml_topo_level_kind(NVML_TOPOLOGY_MULTIPLE), LINK_PXB);
	assert_int_equal(nvml_topo_level_kind(NVML_TOPOLOGY_HOSTBRIDGE), LINK_PHB);
	assert_int_equal(nvml_topo_level_kind(NVML_TOPOLOGY_NODE), LINK_NODE);
	assert_int_equal(nvml_topo_level_kind(NVML_TOPOLOGY_SYSTEM), LINK_SYS);
	assert_int_equal(nvml_topo_level_kind(35), LINK_UNKNOWN);
	assert_int_equal(nvml_topo_level_kind(-1), LINK_UNKNOWN);
	assert_string_equal(gpu_link_kind_name(nvml_topo_level_kind(30)), "PHB");
}

static void test_architecture_and_cores(void **state)
{
	(void)state;
	assert_string_equal(nvml_arch_name(9), "Hopper");
	assert_string_equal(nvml_arch_name(7), "Ampere");
	assert_string_equal(nvml_arch_name(8), "Ada Lovelace");
	assert_string_equal(nvml_arch_name(10), "Blackwell");
	assert_string_equal(nvml_arch_name(2), "Kepler");
	assert_null(nvml_arch_name(1));
	assert_null(nvml_arch_name(0xffffffffu));
	/* H200: 16896 cores, 132 SMs; A100: 6912 cores, 108 SMs; L40S: 18176, 142 */
	assert_int_equal(16896 / nvml_cores_per_sm(9, 0), 132);
	assert_int_equal(6912 / nvml_cores_per_sm(8, 0), 108);
	assert_int_equal(18176 / nvml_cores_per_sm(8, 9), 142);
	assert_int_equal(16384 / nvml_cores_per_sm(8, 9), 128); /* RTX 4090 */
	assert_int_equal(5120 / nvml_cores_per_sm(7, 0), 80);   /* V100 */
	assert_int_equal(nvml_cores_per_sm(3, 5), 0);
}

static void test_cuda_version(void **state)
{
	(void)state;
	char b[16];
	nvml_cuda_version_str(13000, b, sizeof(b));
	assert_string_equal(b, "13.0");
	nvml_cuda_version_str(12040, b, sizeof(b));
	assert_string_equal(b, "12.4");
	nvml_cuda_version_str(11080, b, sizeof(b));
	assert_string_equal(b, "11.8");
}

static void test_cpu_mask(void **state)
{
	(void)state;
	unsigned long m[4] = { 0, 0, 0, 0 };
	char b[64];
	assert_int_equal(nvml_cpu_mask_to_list(m, 4, b, sizeof(b)), 0);
	assert_string_equal(b, "");
	m[0] = 0xffffffffffffffUL; /* 0-55 */
	m[1] = 0xffUL << 48;       /* 112-119 */
	assert_int_equal(nvml_cpu_mask_to_list(m, 4, b, sizeof(b)), 0);
	assert_string_equal(b, "0-55,112-119");
	m[0] = 0x5;                /* 0,2 */
	m[1] = 0;
	m[3] = 1UL << 63;          /* 255 */
	assert_int_equal(nvml_cpu_mask_to_list(m, 4, b, sizeof(b)), 0);
	assert_string_equal(b, "0,2,255");
	/* a range across a word boundary */
	m[0] = 1UL << 63;
	m[1] = 1;
	m[3] = 0;
	assert_int_equal(nvml_cpu_mask_to_list(m, 4, b, sizeof(b)), 0);
	assert_string_equal(b, "63-64");
	/* too small a buffer: -1, and what fits */
	m[0] = 0x15; /* 0,2,4 */
	m[1] = 0;
	assert_int_equal(nvml_cpu_mask_to_list(m, 4, b, 4), -1);
	assert_string_equal(b, "0,2");
}

static void test_bus_ids(void **state)
{
	(void)state;
	char b[32];
	assert_int_equal(nvml_busid_to_sysfs("00000000:18:00.0", b, sizeof(b)), 0);
	assert_string_equal(b, "0000:18:00.0");
	assert_int_equal(nvml_busid_to_sysfs("00000001:AB:1F.3", b, sizeof(b)), 0);
	assert_string_equal(b, "0001:ab:1f.3");
	assert_int_equal(nvml_busid_to_sysfs("garbage", b, sizeof(b)), -1);
	assert_true(nvml_busid_equal("00000000:18:00.0", "0000:18:00.0"));
	assert_true(nvml_busid_equal("00000000:AB:00.0", "ab:00.0"));
	assert_false(nvml_busid_equal("00000000:18:00.0", "00000000:19:00.0"));
	assert_false(nvml_busid_equal("", "00000000:19:00.0"));
}

static void test_vm_quirks(void **state)
{
	(void)state;
	/* a VM that hides the NVSwitches answers all ones for the remote end */
	assert_false(nvml_busid_known("FFFFFFFF:FF:FF.0"));
	assert_false(nvml_busid_known(""));
	assert_true(nvml_busid_known("00000000:05:00.0"));
	/* nvmlDeviceGetNvLinkVersion answers nvmlNvlinkVersion_t: an H200 says 6 (4.0) */
	assert_int_equal(nvml_nvlink_generation(6), 4);
	assert_int_equal(nvml_nvlink_generation(4), 3);
	assert_int_equal(nvml_nvlink_generation(3), 2);
	assert_int_equal(nvml_nvlink_generation(7), 5);
	assert_int_equal(nvml_nvlink_generation(0), 0);
	assert_int_equal(nvml_nvlink_generation(8), 0);
	unsigned long m[2] = { 0, 0 };
	assert_int_equal(nvml_first_bit(m, 2), -1);
	m[1] = 0x6;
	assert_int_equal(nvml_first_bit(m, 2), (int)(8 * sizeof(unsigned long)) + 1);
	m[0] = 1;
	assert_int_equal(nvml_first_bit(m, 2), 0);
}

static void test_mig_profile(void **state)
{
	(void)state;
	char b[32];
	assert_int_equal(nvml_mig_profile_from_name("NVIDIA H100 PCIe MIG 1g.10gb", b, sizeof(b)), 0);
	assert_string_equal(b, "1g.10gb");
	assert_int_equal(nvml_mig_profile_from_name("NVIDIA A100-SXM4-80GB MIG 1c.3g.40gb", b, sizeof(b)), 0);
	assert_string_equal(b, "1c.3g.40gb");
	assert_int_equal(nvml_mig_profile_from_name("NVIDIA H200", b, sizeof(b)), -1);
	assert_int_equal(nvml_mig_profile_from_name("NVIDIA H200 MIG ", b, sizeof(b)), -1);
}

static void test_field_values(void **state)
{
	(void)state;
	nvmlFieldValue_t fv;
	uint64_t v = 0;
	memset(&fv, 0, sizeof(fv));
	fv.valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
	fv.value.uiVal = 47;
	assert_true(nvml_field_value_u64(&fv, &v));
	assert_int_equal(v, 47);
	fv.valueType = NVML_VALUE_TYPE_SIGNED_INT;
	fv.value.siVal = -5;
	assert_false(nvml_field_value_u64(&fv, &v));
	fv.valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
	fv.value.ullVal = 1ULL << 40;
	assert_true(nvml_field_value_u64(&fv, &v));
	assert_true(v == 1ULL << 40);
	fv.valueType = NVML_VALUE_TYPE_DOUBLE;
	fv.value.dVal = 41.6;
	assert_true(nvml_field_value_u64(&fv, &v));
	assert_int_equal(v, 42);
	fv.valueType = 99;
	assert_false(nvml_field_value_u64(&fv, &v));
	/* the layout NVML expects: 40 bytes, the value at offset 32 */
	assert_int_equal(sizeof(nvmlFieldValue_t), 40);
	assert_int_equal(offsetof(nvmlFieldValue_t, value), 32);
}

static void test_struct_layouts(void **state)
{
	(void)state;
	/* wrong layouts corrupt memory: pin the sizes nvml.h gives on x86-64 */
	assert_int_equal(sizeof(nvmlPciInfo_t), 68);
	assert_int_equal(offsetof(nvmlPciInfo_t, busId), 36);
	assert_int_equal(sizeof(nvmlMemory_t), 24);
	assert_int_equal(sizeof(nvmlProcessInfo_t), 24);
	assert_int_equal(offsetof(nvmlProcessInfo_t, gpuInstanceId), 16);
	assert_int_equal(sizeof(nvmlEventData_t), 32);
	assert_int_equal(sizeof(nvmlDeviceAttributes_t), 40);
	assert_int_equal(offsetof(nvmlGpuFabricInfo_t, state), 24);
	assert_int_equal(sizeof(nvmlViolationTime_t), 16);
}

static struct nvml_link_info link(bool active, bool sw, const char *remote)
{
	struct nvml_link_info l;
	memset(&l, 0, sizeof(l));
	l.active = active;
	l.to_switch = sw;
	snprintf(l.remote_busid, sizeof(l.remote_busid), "%s", remote);
	return l;
}

static void test_nvlink_peers(void **state)
{
	(void)state;
	struct nvml_link_info l[12];
	/* A100 without switches: 4 links to GPU1, 2 to GPU2, 1 down to GPU1 */
	for (int i = 0; i < 4; i++)
		l[i] = link(true, false, "00000000:2A:00.0");
	l[4] = link(true, false, "00000000:3A:00.0");
	l[5] = link(true, false, "00000000:3a:00.0");
	l[6] = link(false, false, "00000000:2A:00.0");
	assert_int_equal(nvml_count_peer_links(l, 7, "0000:2a:00.0", 0), 4);
	assert_int_equal(nvml_count_peer_links(l, 7, "00000000:3A:00.0", 0), 2);
	assert_int_equal(nvml_count_peer_links(l, 7, "00000000:5D:00.0", 0), 0);
	assert_int_equal(nvml_switch_links(l, 7), 0);
	/* NVSwitch system: 12 links to switches, one down -> 11 to any peer with switch links */
	for (int i = 0; i < 12; i++)
		l[i] = link(i != 3, true, "00000000:C1:00.0");
	assert_int_equal(nvml_switch_links(l, 12), 11);
	assert_int_equal(nvml_count_peer_links(l, 12, "00000000:2A:00.0", 12), 11);
	assert_int_equal(nvml_count_peer_links(l, 12, "00000000:2A:00.0", 8), 8);
	assert_int_equal(nvml_count_peer_links(l, 12, "00000000:2A:00.0", 0), 0); /* peer not on the fabric */
}

static void test_missing_library(void **state)
{
	(void)state;
	struct gpu_backend be;
	struct gpu_err err = { "" };
	memset(&be, 0, sizeof(be));
	nvml_set_library_name("libgpuctl-no-such-nvml.so.1");
	assert_int_equal(gpu_backend_open(&be, "nvml", NULL, &err), GPU_ENODRIVER);
	assert_string_equal(err.msg, "cannot load libgpuctl-no-such-nvml.so.1: NVIDIA driver not found");
	assert_null(be.ops);
	/* a library that loads but is no NVML */
	nvml_set_library_name("libm.so.6");
	assert_int_equal(gpu_backend_open(&be, "nvml", NULL, &err), GPU_ENODRIVER);
	assert_string_equal(err.msg, "libm.so.6 is not a usable NVML library: it lacks nvmlInit_v2");
	nvml_set_library_name(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_return_codes),
		cmocka_unit_test(test_topology_levels),
		cmocka_unit_test(test_architecture_and_cores),
		cmocka_unit_test(test_cuda_version),
		cmocka_unit_test(test_cpu_mask),
		cmocka_unit_test(test_bus_ids),
		cmocka_unit_test(test_vm_quirks),
		cmocka_unit_test(test_mig_profile),
		cmocka_unit_test(test_field_values),
		cmocka_unit_test(test_struct_layouts),
		cmocka_unit_test(test_nvlink_peers),
		cmocka_unit_test(test_missing_library),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
