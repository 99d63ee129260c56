#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The newcomer's first command: install what is missing, build, and run
# gpuctl's main job (`gpuctl report`) on the real GPUs if there are any, else
# on the simulated 8x H200 server (its output then says SIMULATED).
# GPUCTL_RUN_BUILD_DIR: the build folder (default build/).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
build="${GPUCTL_RUN_BUILD_DIR:-build}"
mkdir -p "$build"
log="$build/run.log"
configure() { cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF "$@" >>"$log" 2>&1; }
compile() { cmake --build "$build" -j"$(nproc)" >>"$log" 2>&1; }
cuda_on() { grep -q '^GPUCTL_WITH_CUDA:BOOL=ON$' "$build/CMakeCache.txt" 2>/dev/null; }
: >"$log"
# An nvcc that is there but cannot build the CUDA kernels module (a broken or
# mismatched CUDA install) does not stop the report: it is built without the
# module (bench then has nothing to run on real GPUs, and says so).
note=""
if ! configure; then
	cuda_on || { tail -20 "$log" >&2; echo "run.sh: cmake failed (all of it in $log)" >&2; exit 1; }
	note="nvcc failed (see $log): CUDA module left out"
	configure -DGPUCTL_WITH_CUDA=OFF || { tail -20 "$log" >&2; exit 1; }
fi
if ! compile; then
	cuda_on || { tail -20 "$log" >&2; echo "run.sh: the build failed (all of it in $log)" >&2; exit 1; }
	note="nvcc failed (see $log): CUDA module left out"
	configure -DGPUCTL_WITH_CUDA=OFF && compile || { tail -20 "$log" >&2; exit 1; }
fi
# the configuration's one-line summary (CMakeLists.txt), from its last configure
summary=$(grep -- '-- gpuctl: CUDA kernels module' "$log" | tail -1)
echo "${summary#-- }${note:+ ($note)}"
# report: inventory, topology, health, planning, and on real GPUs a quick
# benchmark against the datasheet; also written as one HTML file
"$build/gpuctl" --or-sim h200x8 report --html "$build/report.html"
