#!/usr/bin/env bash
# The whole test suite (what CI runs): a sanitizer build (ASan + UBSan), then
# every test that needs no GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
GPUCTL_TEST_DEPS=1 scripts/deps.sh
cmake -S . -B build-test -DCMAKE_BUILD_TYPE=Asan >/dev/null
cmake --build build-test -j"$(nproc)"
cd build-test
ctest -LE gpu --output-on-failure -j"$(nproc)" --timeout 600
