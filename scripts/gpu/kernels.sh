#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# kernels.sh - on a GPU machine: build the kernels module and its standalone
# test driver with nvcc/gcc (no gpuctl_core, so no jansson etc. needed), run
# every kernel's correctness test, then the timing table, then PyTorch's
# reference figures for the same operations. Results go under $OUT (default
# ./kernels-out): build.log, check.log/.jsonl, timing.log/.jsonl, torch_ref.json.
#   scripts/gpu/kernels.sh [check|timing|torch|all]   (default all)
# Expected run time on 2x H200: build ~1 min, check ~1 min, timing ~3 min, torch ~2 min.
# Never changes clocks, power, MIG, persistence or compute mode.
set -u -o pipefail
cd "$(dirname "$0")/../.."
what=${1:-all}
OUT=${OUT:-$PWD/kernels-out}
B=${GK_BUILD:-/tmp/gk-build}
ARCH=${GK_ARCH:-"-gencode arch=compute_90,code=sm_90"}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
mkdir -p "$OUT" "$B/obj"

nvidia-smi --query-gpu=index,name,memory.total,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv \
  2>&1 | tee "$OUT/gpus.txt"

build() {
  local pids=() f o extra
  for f in kernels/*.cu; do
    o="$B/obj/$(basename "$f" .cu).o"
    extra=""
    [ "$(basename "$f")" = gk_apps.cu ] && extra="--fmad=false"
    "$NVCC" -O3 -std=c++17 $ARCH -Xcompiler -fPIC,-fvisibility=hidden -Xptxas -v -lineinfo -Ikernels \
      --expt-relaxed-constexpr $extra -c "$f" -o "$o" >"$o.log" 2>&1 &
    pids+=($!)
  done
  local rc=0
  for p in "${pids[@]}"; do wait "$p" || rc=1; done
  cat "$B"/obj/*.log > "$OUT/build.log"
  [ $rc = 0 ] || { echo "kernels.sh: nvcc failed (see build.log)"; tail -40 "$OUT/build.log"; return 1; }
  "$NVCC" -shared $ARCH --cudart static "$B"/obj/*.o -o "$B/gpuctl_kernels.so" -ldl -lpthread -lrt \
    -Xlinker --exclude-libs,ALL >>"$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; return 1; }
  gcc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Isrc -Ikernels tests/gpu/gk_selftest.c tests/gpu/gk_check.c \
    tests/gpu/gk_timing.c src/kernels_host/kmod.c src/kernels_host/knames.c src/kernels_host/cpu_ref.c \
    src/kernels_host/cpu_ref_bvh.c src/kernels_host/kapps.c src/core/stats.c -o "$B/gk_selftest" -ldl -lpthread -lm \
    >>"$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; return 1; }
  grep -A2 "k_sgemm_regblock\|k_copy16" "$OUT/build.log" | grep -E "registers|spill" | head -4
  echo "build ok"
}

rc=0
build || exit 2
if [ "$what" = all ] || [ "$what" = check ]; then
  "$B/gk_selftest" --module "$B/gpuctl_kernels.so" --check --json "$OUT/check.jsonl" > "$OUT/check.log" 2>&1 || rc=1
  grep -v "^PASS" "$OUT/check.log"
  tail -1 "$OUT/check.log"
fi
if [ "$what" = all ] || [ "$what" = timing ]; then
  "$B/gk_selftest" --module "$B/gpuctl_kernels.so" --timing --json "$OUT/timing.jsonl" > "$OUT/timing.log" 2>&1 || rc=1
fi
if [ "$what" = all ] || [ "$what" = torch ]; then
  timeout 300 python3 bench/torch_ref.py > "$OUT/torch_ref.json" 2> "$OUT/torch_ref.err" || echo "torch_ref failed: $(tail -3 "$OUT/torch_ref.err")"
  python3 -c "import json;d=json.load(open('$OUT/torch_ref.json'));print('\n'.join(f'{k}: {v:.4g}' if isinstance(v,float) else f'{k}: {v}' for k,v in d.items()))" 2>/dev/null
fi
[ -f "$OUT/timing.log" ] && grep -v "^PASS" "$OUT/timing.log" | tail -60
exit $rc
