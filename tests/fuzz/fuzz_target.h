/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_target.h - libFuzzer's entry point, which every fuzz_*.c defines and
 * replay_main.c calls. libFuzzer ships no header for it; tests/CMakeLists.txt
 * includes this one in every fuzz target (-Wmissing-prototypes). */
#ifndef GPUCTL_FUZZ_TARGET_H
#define GPUCTL_FUZZ_TARGET_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
