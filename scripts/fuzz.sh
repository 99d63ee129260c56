#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fuzz.sh [SECONDS] - builds every libFuzzer target of tests/fuzz/ with clang
# (build-fuzz/: GPUCTL_FUZZ=ON, the whole tree instrumented, ASan + UBSan) and
# runs each for SECONDS (default 5) from its corpus (tests/fuzz/corpus/NAME/,
# read only: what the fuzzer finds goes to build-fuzz/found/NAME/), one per
# core at a time. Fails on a crash, leak, sanitizer report or timeout, with
# the input that did it in build-fuzz/artifacts/ and the command that replays
# it. scripts/test.sh runs it in CI; by hand, longer: scripts/fuzz.sh 600.
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-5}"
# a fixed seed: each CI run tries the same inputs first, so that a run fails
# for what changed, not for where a random walk went; GPUCTL_FUZZ_SEED=0 (by
# hand, with more seconds) lets libFuzzer pick one
seed="${GPUCTL_FUZZ_SEED:-1}"
CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUCTL_FUZZ=ON -DGPUCTL_WERROR=ON \
	-DGPUCTL_WITH_CUDA=OFF -DGPUCTL_WITH_SPANK=OFF >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target fuzz_targets
mkdir -p build-fuzz/artifacts
# run_one NAME: one target for $secs from its corpus; its log in build-fuzz/NAME.log
run_one() {
	local name="$1" corpus="tests/fuzz/corpus/${1#fuzz_}" found="build-fuzz/found/${1#fuzz_}"
	mkdir -p "$found"
	# -timeout: one input longer than 10 s is a hang; -rss_limit_mb: a parser
	# that eats memory fails; new inputs go to $found (first folder), the
	# shipped corpus is only read
	if build-fuzz/tests/"$name" -seed="$seed" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=0 \
		-artifact_prefix=build-fuzz/artifacts/"$name"- "$found" "$corpus" >build-fuzz/"$name".log 2>&1; then
		echo "fuzz.sh: $name: $(grep -Eo 'Done [0-9]+ runs in [0-9]+ second' build-fuzz/"$name".log | tail -1)s"
	else
		tail -40 build-fuzz/"$name".log
		echo "fuzz.sh: $name failed; the input: build-fuzz/artifacts/$name-*; replay: build-fuzz/tests/$name FILE"
		return 1
	fi
}
export -f run_one
export secs seed
# one target per core at a time (each is one process)
names=$(for src in tests/fuzz/fuzz_*.c; do basename "$src" .c; done)
if ! xargs -P "$(nproc)" -I{} bash -c 'run_one {}' <<<"$names"; then
	echo "fuzz.sh: a target failed (above)"
	exit 1
fi
echo "fuzz.sh: $(wc -l <<<"$names") targets, ${secs} s each, no crash"
