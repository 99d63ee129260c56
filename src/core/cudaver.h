/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cudaver.h - CUDA versions and the driver/CUDA match (docs/containers.md):
 * what `submit --image` checks against an image's NVIDIA_REQUIRE_CUDA or
 * CUDA_VERSION and `gpuctl health --need-cuda X.Y` checks against the
 * driver. Pure: versions in, verdicts out.
 *
 * A version is encoded as CUDA encodes it (cudaDriverGetVersion):
 * major * 1000 + minor * 10, so 12.4 is 12040. A patch level ("12.4.1") is
 * read and dropped: the driver's CUDA version says which major.minor it runs.
 */
#ifndef GPUCTL_CUDAVER_H
#define GPUCTL_CUDAVER_H

#include <stdbool.h>
#include <stddef.h>

#define CUDAVER_MAX_MAJOR 999u
#define CUDAVER_MAX_MINOR 99u

/* "12", "12.4" or "12.4.1" (digits only, no sign or space) -> *ver. 0, or
 * -1 with a one-line message naming the version in err. */
int cudaver_parse(const char *s, unsigned *ver, char *err, size_t errlen);
/* The "cuda>=X.Y" term of NVIDIA_REQUIRE_CUDA ("cuda>=12.4 brand=tesla,
 * driver>=470,driver<471 ..."; terms split by spaces, each a comma list).
 * 1 found (*ver), 0 no cuda term, -1 a malformed cuda term (err says). */
int cudaver_from_require(const char *require, unsigned *ver, char *err, size_t errlen);
/* What an image needs: its NVIDIA_REQUIRE_CUDA's cuda term, else its
 * CUDA_VERSION (either may be NULL or empty). 1 with *need, 0 when the
 * image says nothing (any driver), -1 malformed (err says which). */
int cudaver_image_need(const char *require, const char *cuda_version, unsigned *need, char *err, size_t errlen);
/* Whether a driver supporting CUDA `driver` runs what needs `need`. */
bool cudaver_ok(unsigned driver, unsigned need);
/* 12040 -> "12.4". */
void cudaver_format(unsigned ver, char *out, size_t outlen);

#endif
