#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The whole test suite (what CI runs): a sanitizer build (ASan + UBSan), then
# every test that needs no GPU; the builds a user makes; scripts/run.sh with a
# broken nvcc; a ThreadSanitizer build and the tests of what runs threads;
# every fuzz target for a few seconds (scripts/fuzz.sh).
# Every build treats warnings as errors (GPUCTL_WERROR).
set -euo pipefail
cd "$(dirname "$0")/.."
# each stage's start, in seconds since the start (CI must stay under 15 min on 2 cores)
stage() { echo "test.sh: [$SECONDS s] $*"; }
stage "dependencies"
GPUCTL_TEST_DEPS=1 scripts/deps.sh
# the package test's clean Debian root: on a new machine debootstrap downloads
# it (minutes, mostly waiting on the mirror), so it starts now, beside the builds
mkdir -p build-deb
scripts/test_deb.sh --prepare-root >build-deb/prepare-root.log 2>&1 &
prepare_root=$!
# The test build: no kernels module (no GPU runs it here, and the tests do not
# load it); nvcc compiles it once, in the package below, for the catalog's
# oldest architecture (sm_75: no BF16 arithmetic, the guards must hold) and the
# H200's (sm_90): every architecture would take CI a minute more on two cores.
stage "the sanitizer build (ASan + UBSan)"
cmake -S . -B build-test -DCMAKE_BUILD_TYPE=Asan -DGPUCTL_WERROR=ON -DGPUCTL_WITH_CUDA=OFF >/dev/null
cmake --build build-test -j"$(nproc)"
# What a user builds: Debug and no build type at all (`cmake -S . -B build`);
# Release (-O2) is the package's build below, also with warnings as errors, and
# the README's first command (scripts/run.sh, static deps) runs in
# test_run_nvcc.sh. Each optimisation level warns where the others do not, so
# each is compiled (the code only: no tests, no CUDA).
for type in Debug ""; do
	dir="build-$(tr '[:upper:]' '[:lower:]' <<<"${type:-default}")"
	stage "the ${type:-default} build"
	cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE="$type" -DGPUCTL_WERROR=ON -DGPUCTL_WITH_CUDA=OFF -DBUILD_TESTING=OFF >/dev/null
	cmake --build "$dir" -j"$(nproc)"
done
stage "scripts/run.sh with a broken nvcc"
scripts/test_run_nvcc.sh
# the Debian package (the Release build, warnings as errors): lintian, install
# into a clean Debian 12 root, remove, purge
stage "the Debian package (Release)"
wait "$prepare_root" || { cat build-deb/prepare-root.log; echo "test.sh: the clean root for the package test failed"; exit 1; }
GPUCTL_DEB_WERROR=ON GPUCTL_DEB_CUDA_ARCHITECTURES="75;90" scripts/test_deb.sh
# ThreadSanitizer (the samplers, HTTP, klog, scheduler, pool server and diag
# watchdogs are threads): the unit tests and the agent and pool CLI tests
stage "the ThreadSanitizer build"
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=Tsan -DGPUCTL_WERROR=ON -DGPUCTL_WITH_CUDA=OFF >/dev/null
# only what its tests run: gpuctl and the unit tests (with the fake kernel
# modules test_kmod loads), not the fuzz replays, the SPANK plugin nor the benches
cmake --build build-tsan -j"$(nproc)" --target unit_tests
stage "the tests (ASan + UBSan)"
cd build-test
# one more job than cores: many CLI tests wait on servers they started (the
# resource locks in tests/CMakeLists.txt keep those that share one apart)
ctest -LE gpu --output-on-failure -j"$(( $(nproc) + 1 ))" --timeout 600 | tee ctest.log
# in CI (CI=true or GPUCTL_TEST_DEPS=1, which ctest passes on to the tests)
# every dependency is installed: a test that reports itself skipped fails the run
if { [ "${CI:-}" = true ] || [ "${GPUCTL_TEST_DEPS:-0}" = 1 ]; } && grep -q '(Skipped)$' ctest.log; then
	echo "test.sh: skipped tests in CI:"
	grep '(Skipped)$' ctest.log
	exit 1
fi
# ThreadSanitizer's reports go to files, so that a race in a server a test
# started in the background fails the run too, not only one in a command.
# The unit tests and the CLI tests that drive every thread the agent and the
# pool run (samplers, render, klog, HTTP, scheduler, pool server, runner):
# cli_agent_rates, cli_pool, cli_pool_crash. Not cli_agent (its limits and
# many-scraper checks passed its 600 s limit under ThreadSanitizer), the soak and
# slowloris tests (speed and capacity, meaningless under ThreadSanitizer's
# 5-15x slowdown), nor the other pool and agent tests: they add no thread
# and would double the CI's time on two cores.
stage "the ThreadSanitizer tests"
cd ../build-tsan
rm -rf tsan && mkdir tsan
TSAN_OPTIONS="log_path=$PWD/tsan/report second_deadlock_stack=1" \
	ctest -LE 'gpu|soak' -R '^(test_|cli_agent_rates|cli_pool$|cli_pool_crash)' --output-on-failure -j"$(nproc)" --timeout 600
if [ -n "$(ls tsan)" ]; then
	echo "test.sh: ThreadSanitizer reports:"
	cat tsan/*
	exit 1
fi
# Every parser's libFuzzer target (tests/fuzz/, clang: the whole tree
# instrumented) run from its corpus for a few seconds each; a crash, leak,
# sanitizer report or hang fails CI with the input that did it
stage "the fuzz targets (clang + libFuzzer)"
cd .. && scripts/fuzz.sh "${GPUCTL_FUZZ_SECONDS:-2}" # from the root: the TSan stage left us in build-tsan
stage "done"
