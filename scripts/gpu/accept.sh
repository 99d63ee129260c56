#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# accept.sh - the real-GPU acceptance gate (issue 31): on any Linux machine with
# NVIDIA GPUs, one command that finds or builds gpuctl and the kernels module,
# runs every command on the real GPUs and holds each figure or verdict against
# an independent reference measured in the same run (scripts/gpu/accept.py says
# which). Prints one table and writes it as JSON; exits 1 on any disagreement.
#
#   scripts/gpu/accept.sh [--quick]     whole run <= 10 min on one H200, --quick <= 3
#
# gpuctl: $GPUCTL, else the packed build of `scripts/gpu/foundation.sh pack`
# (.device-carry/foundation), else a cmake Release build in /tmp/gpuctl-build.
# Kernels module: $GPUCTL_KERNELS, else built with nvcc (scripts/gpu/kernels.sh
# build, about a minute; one an earlier run left in /tmp/gk-build is used
# unless ACCEPT_REBUILD is set). PyTorch figures: $PYTHON (default python3) with torch
# and transformers. Results under $OUT/accept/ (default ./accept-out/accept/):
# accept.txt (the table), accept.json, accept.log (every command, exit code and
# time) and each command's raw output.
# Device tool: run(command="scripts/gpu/accept.sh", carry=[".device-carry/foundation"],
#                  kind="nvidia-h200", timeout_s=600)
# Exit: 0 all agree, 1 some disagree (the table says which), 69 could not run.
# Never changes clocks, power limits, MIG, persistence or compute mode.
set -u -o pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="${OUT:-$root/accept-out}/accept"
mkdir -p "$out"
log="$out/run.log"
: >"$log"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
. "$root/scripts/gpu/lib.sh"
gpu_script_start accept.sh
if [ -z "${GPUCTL_KERNELS:-}" ] && [ -f /tmp/gk-build/gpuctl_kernels.so ] && [ -z "${ACCEPT_REBUILD:-}" ]; then
	export GPUCTL_KERNELS=/tmp/gk-build/gpuctl_kernels.so # built by an earlier run on this machine
fi
if [ -z "${GPUCTL_KERNELS:-}" ]; then
	if GK_BUILD=/tmp/gk-build OUT=/tmp/gk-build-out bash "$root/scripts/gpu/kernels.sh" build >>"$log" 2>&1 &&
	   [ -f /tmp/gk-build/gpuctl_kernels.so ]; then
		export GPUCTL_KERNELS=/tmp/gk-build/gpuctl_kernels.so
	else
		echo "accept.sh: the kernels module did not build (run.log)" | tee -a "$log" >&2
		exit 69
	fi
fi
arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
if command -v nvcc >/dev/null && nvcc -O2 -arch="sm_${arch:-90}" -o /tmp/chase_ref "$root/bench/chase_ref.cu" >>"$log" 2>&1; then
	export CHASE_REF=/tmp/chase_ref
fi
python3 "$root/scripts/gpu/accept.py" --gpuctl "$GPUCTL" --out "$out" "$@"
rc=$?
# the device tool brings back 8 files: the table, its JSON and one archive of the rest
cp "$out/accept.txt" "$out/accept.json" "$(dirname "$out")/" 2>/dev/null
tar -C "$(dirname "$out")" -czf "$(dirname "$out")/accept-raw.tgz" accept && rm -rf "$out"
exit $rc
