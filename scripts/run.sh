#!/usr/bin/env bash
# The newcomer's first command: install what is missing, build, and run
# gpuctl's main job (`gpuctl report`) on the real GPUs if there are any, else
# on the simulated 8x H200 server (its output then says SIMULATED).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
# report: inventory, topology, health, planning, and on real GPUs a quick
# benchmark against the datasheet; also written as one HTML file
build/gpuctl --or-sim h200x8 report --html build/report.html
