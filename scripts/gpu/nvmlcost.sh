#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# nvmlcost.sh - on a real GPU server (part `nvmlcost` of scripts/gpu/all.sh):
# runs bench/nvml_cost (packed by `scripts/gpu/all.sh pack` into
# .device-carry/tools/bin, else built here with gcc), which prints, per GPU,
# the wall and thread-CPU time of each NVML call gpuctl makes and of the
# nvmlDeviceGetFieldValues batches it sends (median of 20), what every field
# of the full batch answered, and the fields whose meaning nvml.h leaves open
# next to the single calls they may stand for. About 10 s on 2x H200.
# Results: $OUT/nvmlcost/cost.txt and summary.txt. Exit: nvml_cost's (69: no NVML).
# Reads only. Run it alone, not beside the agent/top CPU measurements.
# `nvmlcost.sh spaced`: instead, GPU 0's calls each once a second, 4 times
# (nvml_cost --spaced: what a 1 s sampler pays), into spaced.txt: ~140 s.
set -u -o pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="${OUT:-$root/nvmlcost-out}/nvmlcost"
mkdir -p "$out"
build() {
	bin=/tmp/nvml_cost
	gcc -std=c11 -O2 -Wall -Wextra -Werror -o "$bin" "$root/bench/nvml_cost.c" -ldl >"$out/build.log" 2>&1 ||
		{ echo "nvmlcost.sh: cannot build bench/nvml_cost.c (see build.log)" | tee "$out/summary.txt"; exit 69; }
}
bin="$root/.device-carry/tools/bin/nvml_cost"
[ -x "$bin" ] || build
if [ "${1:-}" = spaced ]; then
	"$bin" --spaced 0 >"$out/spaced.txt" 2>&1
	rc=$?
	if [ $rc -ge 126 ] || grep -q 'GLIBC_' "$out/spaced.txt"; then
		build
		"$bin" --spaced 0 >"$out/spaced.txt" 2>&1
		rc=$?
	fi
	{ echo "nvml_cost --spaced exit $rc"; cat "$out/spaced.txt"; } >"$out/summary.txt"
	exit $rc
fi
"$bin" >"$out/cost.txt" 2>&1
rc=$?
# the packed binary needs glibc 2.34: where it cannot start, build it here
if [ $rc -ge 126 ] || grep -q 'GLIBC_' "$out/cost.txt"; then
	build
	"$bin" >"$out/cost.txt" 2>&1
	rc=$?
fi
{
	echo "nvml_cost exit $rc"
	[ $rc -eq 0 ] || tail -3 "$out/cost.txt"
	# the per-call table only (not the field dumps), then per GPU what a gpuctl
	# sample costs (last: all.sh shows the last 25 lines)
	grep -E '^(nvmlInit|GPU |  (call|nvml))' "$out/cost.txt"
	grep -E '^(GPU |  (gpuctl|at 1 s))' "$out/cost.txt"
} >"$out/summary.txt"
exit $rc
