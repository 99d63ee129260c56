#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# scripts/run.sh with an nvcc that is there but cannot build the kernels
# module (part of scripts/test.sh): the simulated report must still come out,
# and run.sh's summary line must say the CUDA module was not built.
# The fake nvcc hands everything else to the real one when there is one, so
# that CMake takes it for working and the failure comes in the build (run.sh
# then configures again without CUDA); without a real nvcc CMake finds it
# broken at once. A fresh build folder each time, so that no cached choice
# hides the fallback.
set -euo pipefail
cd "$(dirname "$0")/.."
real=$(command -v nvcc || true)
fake=$(mktemp -d)
trap 'rm -rf "$fake"' EXIT
cat >"$fake/nvcc" <<FAKE
#!/bin/sh
case "\$*" in *kernels/gk_*) echo "nvcc: cannot compile (a fake, scripts/test_run_nvcc.sh)" >&2; exit 1;; esac
${real:+exec "$real" "\$@"}
exit 1
FAKE
chmod +x "$fake/nvcc"
dir=build-run-nvcc
rm -rf "$dir"
out=$(PATH="$fake:$PATH" CUDACXX="$fake/nvcc" GPUCTL_RUN_BUILD_DIR="$dir" scripts/run.sh 2>&1) || {
	printf '%s\n' "$out" | tail -20
	echo "test_run_nvcc.sh: FAIL: run.sh failed with a broken nvcc" >&2
	exit 1
}
fail() { printf '%s\n' "$out" | head -5; echo "test_run_nvcc.sh: FAIL: $1" >&2; exit 1; }
grep -q '^gpuctl: CUDA kernels module not built' <<<"$out" || fail "no summary line saying the CUDA module was not built"
grep -q 'SIMULATED' <<<"$out" || fail "no simulated report"
[ -s "$dir/report.html" ] || fail "no HTML report"
echo "test_run_nvcc.sh: run.sh with a broken nvcc: $(grep '^gpuctl: CUDA' <<<"$out")"
