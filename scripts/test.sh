#!/usr/bin/env bash
# The whole test suite (what CI runs): a sanitizer build (ASan + UBSan), then
# every test that needs no GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
GPUCTL_TEST_DEPS=1 scripts/deps.sh
cmake -S . -B build-test -DCMAKE_BUILD_TYPE=Asan >/dev/null
cmake --build build-test -j"$(nproc)"
# the README's first command builds with -O2, which warns where -O1 does not:
# compile it too so -Werror catches that here, not on a newcomer's machine
cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release -DGPUCTL_WITH_CUDA=OFF -DBUILD_TESTING=OFF >/dev/null
cmake --build build-release -j"$(nproc)"
cd build-test
ctest -LE gpu --output-on-failure -j"$(nproc)" --timeout 600 | tee ctest.log
# in CI (CI=true or GPUCTL_TEST_DEPS=1, which ctest passes on to the tests)
# every dependency is installed: a test that reports itself skipped fails the run
if { [ "${CI:-}" = true ] || [ "${GPUCTL_TEST_DEPS:-0}" = 1 ]; } && grep -q '(Skipped)$' ctest.log; then
	echo "test.sh: skipped tests in CI:"
	grep '(Skipped)$' ctest.log
	exit 1
fi
