#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# all.sh - the whole real-GPU run in as few device calls as possible.
#
#   scripts/gpu/all.sh pack            here: packed Release gpuctl + its shared
#                                      libraries (foundation.sh pack) and the CUDA
#                                      kernels module built here with nvcc, into
#                                      .device-carry/
#   scripts/gpu/all.sh run PART...     on the GPU machine. PARTs: foundation agent
#                                      top_dmon (read-only: run side by side), then
#                                      nvmlcost (bench/nvml_cost: NVML cost per call),
#                                      nvmlspaced (nvml_cost --spaced),
#                                      bench benchfull p2pnccl torch diag pool
#                                      pool_devices threadcpu threadcpu_defaults
#                                      groupcpu slurm kexp (one
#                                      after another, each under its own time
#                                      limit; benchfull = bench --full alone,
#                                      timed; torch = bench/torch_ref.py,
#                                      PyTorch's figures; kexp = the kernel
#                                      experiments of scripts/gpu/kexp.sh)
#
# Each part is its own script in scripts/gpu/ writing under $OUT/<part>/; this
# one bundles everything into $OUT/all.tgz (the device tool brings back at most
# 8 files) and prints each part's exit code and summary last.
# Device tool: run(command="scripts/gpu/all.sh run ...", carry=[".device-carry"],
# kind="nvidia-h200-x2").
# Issue 9 on a 4- or 8-GPU kind (two calls: each under 10 minutes):
#   run(command="scripts/gpu/all.sh run foundation p2pnccl torch", kind="nvidia-h200-x8", ...)
#   run(command="scripts/gpu/all.sh run diag", kind="nvidia-h200-x8", ...)
# (p2pnccl = bench -s p2p,nccl --full: every pair, NCCL to 4 GiB; torch: PyTorch's
# all-reduce on all GPUs; diag: diag -r 3 on every GPU with the cross-GPU check.)
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
mode="${1:-run}"
shift || true
carry="$root/.device-carry"

if [ "$mode" = pack ]; then
	"$root/scripts/gpu/foundation.sh" pack || exit $?
	build="$root/build-device-cuda"
	cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DGPUCTL_WITH_CUDA=ON -DBUILD_TESTING=OFF >/dev/null || exit 70
	cmake --build "$build" --target gpuctl_kernels -j2 >"$build/pack.log" 2>&1 || { tail -5 "$build/pack.log"; exit 70; }
	mkdir -p "$carry/kernels"
	cp "$build/kernels/gpuctl_kernels.so" "$carry/kernels/"
	# bench/nvml_cost: what each NVML call costs (part nvmlcost)
	mkdir -p "$carry/tools/bin"
	gcc -std=c11 -O2 -Wall -Wextra -Werror -o "$carry/tools/bin/nvml_cost" "$root/bench/nvml_cost.c" -ldl || exit 70
	# tmux (to drive `gpuctl top`) in case the GPU machine has none
	mkdir -p "$carry/tools/bin" "$carry/tools/lib"
	cp "$(command -v tmux)" "$carry/tools/bin/"
	ldd "$(command -v tmux)" | awk '/=> \// { print $3 }' | grep -Ev '/(libc|libm|libresolv)\.so' |
		while read -r lib; do cp -L "$lib" "$carry/tools/lib/"; done
	du -sh "$carry"
	exit 0
fi

out="${OUT:-$root/all-out}"
mkdir -p "$out/parts"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export GPUCTL_DATA_DIR="$root/data"
unset GPUCTL_SIM
# the packed gpuctl (its libraries for it alone), else a build: scripts/gpu/lib.sh
log="$out/parts/gpuctl.log"
. "$root/scripts/gpu/lib.sh"
find_gpuctl all.sh
[ -f "$carry/kernels/gpuctl_kernels.so" ] && export GPUCTL_KERNELS="$carry/kernels/gpuctl_kernels.so"
if ! command -v tmux >/dev/null && [ -x "$carry/tools/bin/tmux" ]; then
	export PATH="$carry/tools/bin:$PATH" LD_LIBRARY_PATH="$carry/tools/lib:$LD_LIBRARY_PATH" TERM="${TERM:-xterm-256color}"
fi
summary="$out/parts/summary.txt"
{ date -u '+%Y-%m-%d %H:%M:%S UTC'; nvidia-smi -L; nvidia-smi --query-gpu=index,temperature.gpu,power.draw,clocks.sm,pstate --format=csv; } >"$summary" 2>&1

# part NAME LIMIT_S ARGS...: runs scripts/gpu/NAME.sh with OUT=$out/parts
part() {
	local name=$1 limit=$2
	shift 2
	local t0=$SECONDS
	OUT="$out/parts" timeout -k 10 "$limit" "$root/scripts/gpu/$name.sh" "$@" >"$out/parts/$name.stdout" 2>&1
	local rc=$?
	echo "== $name: exit $rc in $((SECONDS - t0)) s" >>"$summary"
}

want() { local p; for p in "${PARTS[@]}"; do [ "$p" = "$1" ] && return 0; done; return 1; }
PARTS=("$@")
pids=()
want foundation && { part foundation 120 run & pids+=($!); }
want agent && { part agent 200 & pids+=($!); }
want top_dmon && { part top_dmon 200 & pids+=($!); }
for p in "${pids[@]}"; do wait "$p"; done
# alone: its NVML calls would show in the agent's and top's CPU figures
want nvmlcost && part nvmlcost 120
want nvmlspaced && part nvmlcost 180 spaced
want bench && part bench 330 run
want benchfull && part bench "${BENCHFULL_LIMIT:-590}" fullonly
want p2pnccl && part bench "${P2PNCCL_LIMIT:-400}" p2pnccl
if want torch; then
	# PyTorch's figures for the same operations, in the same run as gpuctl bench
	mkdir -p "$out/parts/torch"
	t0=$SECONDS
	timeout -k 10 300 python3 "$root/bench/torch_ref.py" >"$out/parts/torch/torch_ref.json" 2>"$out/parts/torch/torch_ref.err"
	echo "== torch: exit $? in $((SECONDS - t0)) s" >>"$summary"
fi
want diag && part diag 420
want pool && part pool 150
want pool_devices && part pool_devices 90
want threadcpu && part threadcpu 230
want threadcpu_defaults && part threadcpu 160 defaults
want groupcpu && part threadcpu 300 groups
want slurm && part slurm 120
want kexp && part kexp 150

for f in "$out"/parts/*/summary.txt "$out"/parts/foundation/compare.txt; do
	[ -f "$f" ] && { echo "---- $f"; tail -25 "$f"; } >>"$summary"
done
tar -C "$out/parts" -czf "$out/all.tgz" . 2>/dev/null
cp "$summary" "$out/summary.txt"
cat "$out/summary.txt" | tail -120
