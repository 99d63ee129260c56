#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# pool_bench.sh - the job pool's speed on a simulated 8x H200 (no GPU needed):
# a scheduling pass over 10 000 queued jobs, submit-to-start latency on free
# GPUs, submissions per second, `queue` with 10 000 jobs queued (through the
# protocol, and the `gpuctl queue --json` and `gpuctl queue` commands as new
# processes: median of RUNS, default 21). Release build.
#
#   bench/pool_bench.sh                       # build (Release) and run
#   BUILD=build-rel N_LATENCY=200 N_QUEUE=10000 bench/pool_bench.sh
# Output: plain text; copy the figures into bench/RESULTS.md ("Pool (simulated)").
# The comparison of submit-to-start with Slurm's srun belongs to the Slurm
# issue's test cluster (docs/pool.md says so).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${BUILD:-build-pool-release}"
N_LATENCY="${N_LATENCY:-200}"
N_QUEUE="${N_QUEUE:-10000}"
if [ "${SKIP_BUILD:-0}" != 1 ]; then
	cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DGPUCTL_WITH_CUDA=OFF >/dev/null
	cmake --build "$BUILD" -j"${JOBS:-2}" --target gpuctl gpuctl_core >/dev/null
fi
cc -O2 -std=c11 -D_GNU_SOURCE -Isrc bench/pool_bench.c "$BUILD/libgpuctl_core.a" \
	$(pkg-config --libs jansson libmicrohttpd sqlite3 ncursesw) -lpthread -ldl -lm -o "$BUILD/pool_bench"
export GPUCTL_DATA_DIR="$PWD/data"
tmp=$(mktemp -d)
agent_pid=""
trap '[ -n "$agent_pid" ] && kill "$agent_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
jq 'del(.gpus[].processes)' data/sim/h200x8.json >"$tmp/free8.json"

echo "date: $(date -u +%Y-%m-%dT%H:%MZ)  host: $(uname -n)  cpus: $(nproc)  $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "state on: $(df -T "$tmp" | awk 'NR == 2 { print $2 }') ($tmp)"
"$BUILD/pool_bench" sched "$tmp/free8.json,data_dir=$GPUCTL_DATA_DIR"

sock="$tmp/pool.sock"
"$BUILD/gpuctl" --sim "$tmp/free8.json" agent --listen 127.0.0.1:0 --interval 1s --kernel-log off \
	--pool --pool-dir "$tmp/state" --pool-socket "$sock" ${POOL_FLAGS:-} 2>"$tmp/agent.err" &
agent_pid=$!
for _ in $(seq 1 100); do
	[ -S "$sock" ] && break
	sleep 0.1
done
"$BUILD/pool_bench" live "$sock" "$N_LATENCY" "$N_QUEUE" | tee "$tmp/live.out"
# the commands a user runs, with the queue full: each a new process (parse,
# format, print), as `time gpuctl queue` measures it
export GPUCTL_POOL_SOCKET="$sock"
blocker=$(sed -n 's/^blocker job: //p' "$tmp/live.out")
RUNS="${RUNS:-21}"
cmd_median() { # cmd_median ARGS...: wall time of RUNS runs of gpuctl ARGS, output to /dev/null
	local t0 i
	for i in $(seq 1 "$RUNS"); do
		t0=$(date +%s%N)
		"$BUILD/gpuctl" "$@" >/dev/null
		echo $(( ($(date +%s%N) - t0) / 1000 ))
	done | sort -n | awk '{ a[NR] = $1 } END { printf "median %.1f ms (min %.1f, max %.1f; %d runs)", a[int((NR + 1) / 2)] / 1000, a[1] / 1000, a[NR] / 1000, NR }'
}
n=$("$BUILD/gpuctl" queue --json | jq '.jobs | length')
echo "gpuctl queue --json with $n jobs, a new process each time: $(cmd_median queue --json)"
echo "gpuctl queue (table) with $n jobs, a new process each time: $(cmd_median queue)"
echo "for scale, gpuctl --version (process start alone): $(cmd_median --version)"
"$BUILD/gpuctl" cancel "$blocker" >/dev/null
kill "$agent_pid"
wait "$agent_pid" 2>/dev/null || true
agent_pid=""
