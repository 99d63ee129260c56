#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench.sh - `gpuctl bench` and `gpuctl report` on a real GPU server (issue 4).
#
#   scripts/gpu/bench.sh pack    here (no GPU needed): the packed gpuctl of
#                                scripts/gpu/foundation.sh pack (Release build
#                                plus its shared libraries in .device-carry/)
#   scripts/gpu/bench.sh [run]   on the GPU machine: builds the kernels module
#                                (scripts/gpu/kernels.sh build: nvcc, ~1 min),
#                                then gpuctl bench --quick on GPU 0 alone (the
#                                "under a minute on one H200" goal, timed),
#                                --quick on all GPUs (p2p, nccl), and
#                                gpuctl report --results on that run (+ HTML)
#   scripts/gpu/bench.sh full    the same, then gpuctl bench --full on all GPUs
#   scripts/gpu/bench.sh fullonly  gpuctl bench --full on all GPUs alone (the
#                                "under 10 minutes on 2" goal, timed)
#   scripts/gpu/bench.sh p2pnccl  gpuctl bench -s p2p,nccl --full on all GPUs:
#                                every pair's P2P, NCCL 1 MiB..4 GiB (issue 9,
#                                on a 4- or 8-GPU server)
#
# Everything goes to $OUT/bench/: quick-gpu0.{json,txt,err}, quick.{json,txt,
# csv,err}, report.{txt,html}, full.{json,txt,err}, run.log (times, exit codes).
# Device tool: run(command="scripts/gpu/bench.sh run", carry=[".device-carry"],
# kind="nvidia-h200-x2"): about 5 minutes of device time (full: +10).
# Exit: 0 all ran (bench's own exit codes are in run.log), 69 no gpuctl or module.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
mode="${1:-run}"

if [ "$mode" = pack ]; then
	exec "$root/scripts/gpu/foundation.sh" pack
fi

out="${OUT:-$root/bench-out}/bench"
mkdir -p "$out"
log="$out/run.log"
: > "$log"
{ date -u '+%Y-%m-%d %H:%M:%S UTC'; uname -a; nproc; nvidia-smi -L; } >> "$log" 2>&1

. "$root/scripts/gpu/lib.sh"
find_gpuctl bench.sh
export GPUCTL_DATA_DIR="$root/data"
unset GPUCTL_SIM
if [ -z "${GPUCTL_KERNELS:-}" ]; then
	# kernels.sh builds the module into $GK_BUILD (default /tmp/gk-build) before any step it is asked for
	OUT="$out/kernels-build" "$root/scripts/gpu/kernels.sh" build >> "$log" 2>&1
	export GPUCTL_KERNELS="${GK_BUILD:-/tmp/gk-build}/gpuctl_kernels.so"
fi
[ -f "$GPUCTL_KERNELS" ] || { echo "bench.sh: no kernels module at $GPUCTL_KERNELS (see $log)" | tee -a "$log" >&2; exit 69; }
export NCCL_NVLS_ENABLE=0 # NVLink multicast stays off on the lent machines

# timed NAME ARGS...: runs gpuctl, stdout to NAME.txt, stderr to NAME.err, time and exit to run.log
timed() {
	local name=$1
	shift
	local t0=$(date +%s%N)
	"$GPUCTL" "$@" > "$out/$name.txt" 2> "$out/$name.err"
	local rc=$?
	echo "gpuctl $*: exit $rc, $(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a "$log"
}

if [ "$mode" = fullonly ]; then
	timed full bench --full --save "$out/full.json"
	tail -5 "$out/full.txt"
	exit 0
fi
if [ "$mode" = p2pnccl ]; then
	timed p2pnccl bench -s p2p,nccl --full --save "$out/p2pnccl.json"
	timed p2pnccl-report report --results "$out/p2pnccl.json" --html "$out/p2pnccl-report.html"
	tail -5 "$out/p2pnccl.txt"
	exit 0
fi
timed quick-gpu0 bench --quick -i 0 --save "$out/quick-gpu0.json"
timed quick bench --quick --save "$out/quick.json"
timed quick-csv bench --results "$out/quick.json" --csv && mv "$out/quick-csv.txt" "$out/quick.csv"
timed report report --results "$out/quick.json" --html "$out/report.html"
if [ "$mode" = full ]; then
	timed full bench --full --save "$out/full.json"
fi
tail -5 "$out/quick.txt"
grep -E "^(memory +copy|copy +h2d +pinned .*1 GiB|compute +cublas|gemm|p2p +ce|nccl +all_reduce)" "$out/quick.txt" | head -30
exit 0
