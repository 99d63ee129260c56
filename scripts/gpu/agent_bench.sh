#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# agent_bench.sh - bench/agent_bench.sh on the GPU machine: the agent on the
# simulator (no GPU is used: 8 and 64 simulated H200 whose every NVML-like
# call takes 2 ms), measured on a quiet 16-core machine, where the scrape
# latency's median and p99 are the agent's rather than a shared VM's load
# (issue 18: median < 1 ms, p99 < 5 ms, RSS < 10 MiB at 64 GPUs without
# history). Two passes: without history (the goal; 64 and 8 GPUs, gzip and
# plain scrapers, then `gpuctl top`), then with the default history (60m; 64
# GPUs, gzip, no top). Each pass's smaps tables say where the RSS goes.
#
#   scripts/gpu/agent_bench.sh pack   here: a Release build of agent_bench
#                                     (CMake target; links the device and core
#                                     layers) into .device-carry/agent-bench/;
#                                     gpuctl itself comes from
#                                     `scripts/gpu/foundation.sh pack`
#   scripts/gpu/agent_bench.sh [run]  on the GPU machine: both passes; all
#                                     output under $OUT/agent_bench/
#
# gpuctl: find_gpuctl (scripts/gpu/lib.sh): $GPUCTL, else the packed build in
# .device-carry/foundation, else a cmake build in /tmp/gpuctl-build.
# Device tool, about 5 minutes on one H200 (no GPU call is made); after
# `scripts/gpu/foundation.sh pack` and `scripts/gpu/agent_bench.sh pack` here
# (all of .device-carry is over the 64 MiB a call carries):
#   run(command="scripts/gpu/agent_bench.sh", carry=[".device-carry/foundation", ".device-carry/agent-bench"],
#       kind="nvidia-h200", timeout_s=600)
# A shorter call: GPU_COUNTS (default "64 8") the counts of the first pass,
# SLOW_SECONDS (default 24) its scraper every 3 s (0: skip), TOP=0 no top:
#   run(command="GPU_COUNTS=64 SLOW_SECONDS=0 scripts/gpu/agent_bench.sh", ...)  about 3 minutes
# Exit: 0 both passes ran, 1 a pass failed (run.log), 69 nothing could run.
set -u -o pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
mode="${1:-run}"
pack_dir="$root/.device-carry/agent-bench"

pack() {
	local build="$root/build-device"
	cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DGPUCTL_WITH_CUDA=OFF -DBUILD_TESTING=OFF >/dev/null || exit 70
	cmake --build "$build" --target agent_bench -j2 >"$build/agent_bench-pack.log" 2>&1 ||
		{ tail -5 "$build/agent_bench-pack.log" >&2; exit 70; }
	rm -rf "$pack_dir"
	mkdir -p "$pack_dir"
	cp "$build/agent_bench" "$pack_dir/"
	echo "packed agent_bench into $pack_dir; gpuctl: scripts/gpu/foundation.sh pack"
}

if [ "$mode" = pack ]; then
	pack
	exit 0
fi

outdir="${OUT:-$root/agent-bench-out}"
out="$outdir/agent_bench"
mkdir -p "$out"
log="$out/run.log"
: >"$log"
. "$root/scripts/gpu/lib.sh"
export GPUCTL_DATA_DIR="$root/data"
unset GPUCTL_SIM
{ date -u '+%Y-%m-%d %H:%M:%S UTC'; uname -a; nproc; uptime; } >>"$log" 2>&1
find_gpuctl agent_bench.sh
bench="$pack_dir/agent_bench"
if [ ! -x "$bench" ]; then
	echo "agent_bench.sh: no $bench (run 'scripts/gpu/agent_bench.sh pack' here first)" | tee -a "$log" >&2
	exit 69
fi
# agent_bench links jansson statically (GPUCTL_STATIC_DEPS): libc only, nothing
# exported (the packed libraries break the machine's tmux, which top runs in)
rc=0
# pass HISTORY GPUS ENCODINGS TOP SECONDS_SLOW (the scraper every 3 s: 24 s at each GPU count)
pass() {
	echo "== history $1: $(date -u '+%H:%M:%S'), load $(cut -d' ' -f1-3 /proc/loadavg)" >>"$log"
	GPUCTL="$GPUCTL" AGENT_BENCH="$bench" HISTORY="$1" GPUS="$2" ENCODINGS="$3" TOP="$4" SECONDS_SLOW="$5" \
		SECONDS_IDLE=10 SECONDS_LOAD=10 "$root/bench/agent_bench.sh" >"$out/history-$1.txt" 2>>"$log" || rc=1
}
pass off "${GPU_COUNTS:-64 8}" "gzip plain" "${TOP:-1}" "${SLOW_SECONDS:-24}"
pass 60m 64 gzip 0 0
echo "done: $(date -u '+%H:%M:%S'), rc $rc" >>"$log"
exit "$rc"
