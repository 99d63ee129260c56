#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# report_recorded.sh - `gpuctl report --results FILE` renders with no backend
# at all (issue 20, item 14): the inventory is the one the results file
# recorded (its host, driver, GPUs and their catalog models), so a file copied
# off the GPU server renders on a laptop without a driver (it exited 69), and
# a simulated server's inventory appears only when --sim names one; --live
# reads this machine's GPUs instead.
#
# Run by CTest (GPUCTL = the binary). By hand:
#   GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/report_recorded.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/results_lib.bash"

# no --sim, and a driver nowhere to be found: the recorded inventory
expect 0 recorded -- report --results "$fixture" --html "$tmp/r.html"
has recorded.out "gpuctl report: lent nvidia-h200-x2, 2 GPUs, driver 580.159.04"
has recorded.out "as recorded in results file '$fixture' (host lent nvidia-h200-x2, 2026-11-30T00:32:00Z)"
grep -E '^0 +NVIDIA H200 +H200 SXM +140\.4 GiB +00000000:00:06\.0 ' "$tmp/recorded.out" >/dev/null ||
	fail "recorded: GPU 0's row: $(grep '^0 ' "$tmp/recorded.out")"
grep -E '^1 +NVIDIA H200 +H200 SXM ' "$tmp/recorded.out" >/dev/null || fail "recorded: no GPU 1 row"
hasnt recorded.out "SIMULATED"
hasnt recorded.out "not on this simulated server"
has recorded.out "the results file holds no health data"
has recorded.out "== Planning (gpuctl plan; 2 GPUs of 150.8 GB) =="
grep -E '^device memory copy \(read\+write\) +4009 GB/s +4800 GB/s +0\.84' "$tmp/recorded.out" >/dev/null ||
	fail "recorded: memory copy headline wrong"
has r.html "As recorded in results file"
grep -q 'SIMULATED' "$tmp/r.html" && fail "r.html: SIMULATED without a simulator"
checks=$((checks + 1))
[ ! -s "$tmp/recorded.err" ] || fail "recorded: stderr '$(cat "$tmp/recorded.err")'"

# a simulated server only when asked: its inventory beside the file's figures
expect 0 sim -- --sim h200x8 report --results "$fixture"
has sim.out "== Inventory (SIMULATED) =="
has sim.out "not on this simulated server"
hasnt sim.out "as recorded in results file"

# --live without --results is a usage error; with it and no driver: 69, said
expect 64 live-alone -- report --live
one_line live-alone.err
if ! ldconfig -p 2>/dev/null | grep -q 'libnvidia-ml.so.1'; then
	expect 69 live-no-driver -- report --results "$fixture" --live
	one_line live-no-driver.err
fi
# a bad results file is still 65 without a backend
printf '{"schema_version": 1, "results": [' >"$tmp/trunc.json"
expect 65 truncated -- report --results "$tmp/trunc.json"
one_line truncated.err

finish
