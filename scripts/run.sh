#!/usr/bin/env bash
# The newcomer's first command: install what is missing, build, and run
# gpuctl's main job on the real GPUs if there are any, else on the simulated
# 8x H200 server (its output then says SIMULATED).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
build/gpuctl --or-sim h200x8 info
build/gpuctl --or-sim h200x8 topo
