#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench22.sh - issue 22's figures and their peers in ONE device call on one GPU:
# gpuctl bench's memory and compute suites (--quick: the copy variants, the
# latency sweep to 1 GiB, every GEMM precision through cuBLASLt, telemetry
# with energy), gpuctl report on that run (staircase chart, C8 in --quick),
# PyTorch's copy_ and matmul in FP64/FP32/TF32/FP16/BF16/FP8
# (bench/torch_ref.py), the reference pointer chase (bench/ref_chase.cu), the
# memory suite --full (the sweep to several GiB), and the kernels' self-test
# (gk_selftest --check, label gpu) last.
#
#   scripts/gpu/bench22.sh pack   here, no GPU: a Release gpuctl with its shared
#                                 libraries, the kernels module (GK_MODULE=path to
#                                 reuse one built here, else scripts/gpu/kernels.sh
#                                 build), gk_selftest and ref_chase (nvcc, sm_90),
#                                 all in .device-carry/bench22/
#   scripts/gpu/bench22.sh [run]  there: run(command="scripts/gpu/bench22.sh",
#                                 carry=[".device-carry/bench22"], kind="nvidia-h200")
#
# Results in $OUT/b22/: quick.json, memfull.json (gpuctl bench --save), report.html,
# torch_ref.json, check.log, summary.txt (every command's text output, time and
# exit code, the reference chase's table). Never changes clocks, power, MIG or
# persistence; NVLink multicast stays off.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
pack="$root/.device-carry/bench22"

if [ "${1:-run}" = pack ]; then
	cd "$root" || exit 70
	b="$root/build-bench22"
	cmake -S "$root" -B "$b/rel" -DCMAKE_BUILD_TYPE=Release -DGPUCTL_WITH_CUDA=OFF -DBUILD_TESTING=OFF >/dev/null &&
		cmake --build "$b/rel" --target gpuctl -j2 >"$b/rel.log" 2>&1 || { tail -20 "$b/rel.log"; exit 70; }
	if [ -z "${GK_MODULE:-}" ]; then
		GK_BUILD="$b/gk" OUT="$b/gk-out" GK_ARCH="-gencode arch=compute_90,code=sm_90" "$root/scripts/gpu/kernels.sh" build || exit 70
		GK_MODULE="$b/gk/gpuctl_kernels.so"
	fi
	rm -rf "$pack" && mkdir -p "$pack/lib"
	cp "$b/rel/gpuctl" "$GK_MODULE" "$pack/"
	ldd "$b/rel/gpuctl" | awk '/=> \// { print $3 }' | grep -Ev '/(libc|libm|libpthread|libdl|librt|libgcc_s)\.so' |
		xargs -r -I{} cp -L {} "$pack/lib/"
	gcc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Isrc -Ikernels tests/gpu/gk_selftest.c tests/gpu/gk_check.c \
		tests/gpu/gk_timing.c src/kernels_host/kmod.c src/kernels_host/knames.c src/kernels_host/cpu_ref.c \
		src/kernels_host/cpu_ref_bvh.c src/kernels_host/kapps.c src/core/stats.c -o "$pack/gk_selftest" -ldl -lpthread -lm ||
		exit 70
	nvcc -O2 -gencode arch=compute_90,code=sm_90 "$root/bench/ref_chase.cu" -o "$pack/ref_chase" || exit 70
	echo "packed into $pack ($(du -sh "$pack" | cut -f1))"
	exit 0
fi

out="${OUT:-$root/bench22-out}/b22"
mkdir -p "$out"
sum="$out/summary.txt"
: >"$sum"
export GPUCTL_DATA_DIR="$root/data" GPUCTL_KERNELS="$pack/gpuctl_kernels.so" NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
unset GPUCTL_SIM
{ date -u '+%Y-%m-%d %H:%M:%S UTC'; nvidia-smi --query-gpu=index,name,memory.total,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu,driver_version --format=csv; } >>"$sum" 2>&1

# step NAME LIMIT_S CMD...: runs CMD under a time limit, its stdout+stderr into the
# summary under a header, then its time and exit code
step() {
	local name=$1 limit=$2
	shift 2
	local t0
	t0=$(date +%s%N)
	echo "==== $name: $*" >>"$sum"
	timeout "$limit" "$@" >>"$sum" 2>&1
	local rc=$?
	echo "==== $name: exit $rc, $(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a "$sum"
}
# gpuctl with its packed libraries (given to it alone: the machine's python wants its own)
gpuctl="${TMPDIR:-/tmp}/gpuctl22"
printf '#!/bin/sh\nLD_LIBRARY_PATH="%s/lib" exec "%s/gpuctl" "$@"\n' "$pack" "$pack" >"$gpuctl"
chmod +x "$gpuctl"

step quick 120 "$gpuctl" bench --quick -i 0 -s memory,compute --save "$out/quick.json"
step torch 90 sh -c "python3 '$root/bench/torch_ref.py' > '$out/torch_ref.json'"
step ref_chase 60 "$pack/ref_chase" 16K 64K 1M 4M 16M 32M 64M 128M 1G 4G
step report 20 "$gpuctl" report --results "$out/quick.json" --html "$out/report.html"
step memfull 120 "$gpuctl" bench --full -i 0 -s memory --save "$out/memfull.json"
step check 100 sh -c "'$pack/gk_selftest' --module '$pack/gpuctl_kernels.so' --check > '$out/check.log' 2>&1"
grep -v "^PASS" "$out/check.log" | tail -5
grep -E "^(memory|compute) " "$sum" | grep -E "copy|latency|cublas" | head -40
exit 0
