/* SPDX-License-Identifier: Apache-2.0 */
/* A stand-in kernels module for test_kmod: built three times, as a good
 * module (right ABI), one with a wrong ABI version, and one without the
 * exported symbol, so the loader's checks can be tested without CUDA. */
#include "gpuctl_kernels.h"

#if defined(FAKE_good) || defined(FAKE_badabi)
static int fake_count(int *count, char *err, size_t errlen)
{
	(void)err; (void)errlen;
	*count = 3;
	return GK_OK;
}

static struct gk_api table = {
#ifdef FAKE_good
	.abi_version = GK_ABI_VERSION,
#else
	.abi_version = GK_ABI_VERSION + 100,
#endif
	.struct_size = sizeof(struct gk_api),
	.build_info = "fake module for tests",
	.device_count = fake_count,
};

const struct gk_api *gpuctl_kernels_api(void) { return &table; }
#else
int gpuctl_kernels_not_the_symbol(void);
int gpuctl_kernels_not_the_symbol(void) { return 0; }
#endif
