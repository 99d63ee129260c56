/* SPDX-License-Identifier: Apache-2.0 */
/* test_cuda_map.c - NVML's GPUs to CUDA's ordinals by PCI address
 * (src/kernels_host/cuda_map.h), over a stand-in module API: CUDA's own
 * order, address spellings that differ, a device CUDA cannot describe, a
 * GPU CUDA does not see. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kernels_host/cuda_map.h"

/* CUDA's devices: 0 is NVML's GPU 2, 1 cannot be read, 2 is NVML's GPU 0 (lower case, short domain) */
static const char *const cuda_bus[] = { "00000000:C1:00.0", "00000000:41:00.0", "0000:1a:00.0", "garbage" };

static int fake_info(int device, struct gk_device_info *out)
{
	if (device == 1)
		return GK_ECUDA;
	snprintf(out->pci_bus_id, sizeof(out->pci_bus_id), "%s", cuda_bus[device]);
	return GK_OK;
}

static void test_map(void **state)
{
	(void)state;
	struct gk_api api;
	memset(&api, 0, sizeof(api));
	api.device_info = fake_info;
	const char *nvml[] = { "00000000:1A:00.0", "00000000:41:00.0", "00000000:C1:00.0", NULL, "00000000:99:00.0" };
	int cuda[5] = { 7, 7, 7, 7, 7 };
	cuda_map(&api, 4, nvml, 5, cuda);
	assert_int_equal(cuda[0], 2);
	assert_int_equal(cuda[1], -1); /* its device could not be read */
	assert_int_equal(cuda[2], 0);
	assert_int_equal(cuda[3], -1); /* no address */
	assert_int_equal(cuda[4], -1); /* hidden from CUDA */
	/* CUDA sees nothing */
	cuda_map(&api, 0, nvml, 5, cuda);
	for (int i = 0; i < 5; i++)
		assert_int_equal(cuda[i], -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(test_map) };
	return cmocka_run_group_tests(tests, NULL, NULL);
}
