#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# train.sh - on a GPU machine: the GPT-2 training step (issue 16). Builds the
# kernels module (kernels.sh's build) and the gk_train driver, checks the tiny
# model's loss and every gradient against the CPU reference (fp32, tf32,
# bf16), runs that check under compute-sanitizer, times 124M in bf16, tf32 and
# fp32 (and bf16 with --grad-accum 2, 350M and 774M), then PyTorch's figures
# for the same model and batch (bench/train_torch.py) in the same call.
# Results under $OUT (default ./train-out): check.log (with nvidia-smi's view), sanitizer.log,
# train.log, train.jsonl, power.csv, torch_eager.json, torch_compile.json, torch.err.
#   [TORCH_COMPILE=1] scripts/gpu/train.sh [quick|gpuctl|quickbench]    quick: 124M bf16 only, no PyTorch;
#   gpuctl: the data-parallel step over every GPU here and `gpuctl bench -s compute,train`;
#   quickbench: `gpuctl bench --quick` (every default suite, the short train run with them)
#   timed by the wall clock (issue 16: under 60 s), then PyTorch's eager bf16 step;
#   attn: a module built with a changed attention, carried in .device-carry/train-attn (module and
#   gk_train): its checks, the checks under compute-sanitizer, 124M in bf16, tf32 and fp32, the
#   carried .device-carry/train module's bf16 step beside it, then PyTorch's bf16 step under
#   torch.compile (and eager with TORCH_EAGER=1)
#   fused: issue 33's run (the opt-in fused attention and chunked classifier against the plain
#   paths, per-op profiles, torch.compile in the same call; see the mode below)
# TORCH_COMPILE=1 adds PyTorch's bf16 step under torch.compile (a few minutes of compiling).
# Never changes clocks, power, MIG, persistence or compute mode.
set -u -o pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/train-out}
B=${GK_BUILD:-/tmp/gk-build}
mode=${1:-full}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=index,name,memory.total,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv 2>&1 | tee "$OUT/check.log"
t0=$(date +%s)
# a module and driver built here beforehand (carried in .device-carry/train) save the build when they run
if [ -f .device-carry/train/gpuctl_kernels.so ] && { .device-carry/train/gk_train > /dev/null 2>&1; [ $? = 2 ]; }; then
  B=$PWD/.device-carry/train; echo "using the carried build"
else
OUT=/tmp/train-build GK_BUILD="$B" scripts/gpu/kernels.sh build > /tmp/train-build.log 2>&1 || { tail -30 /tmp/train-build.log; exit 2; }
gcc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Isrc -Ikernels tests/gpu/gk_train_main.c src/kernels_host/kmod.c \
  src/kernels_host/knames.c src/kernels_host/cpu_ref.c src/kernels_host/cpu_ref_bvh.c src/kernels_host/kapps.c src/kernels_host/train_ref.c \
  src/kernels_host/ktrain.c src/core/stats.c \
  -o "$B/gk_train" -ldl -lpthread -lm >> /tmp/train-build.log 2>&1 || { tail -30 /tmp/train-build.log; exit 2; }
fi
echo "build: $(( $(date +%s) - t0 )) s"
G="$B/gk_train --module $B/gpuctl_kernels.so --json $OUT/train.jsonl"
rc=0
torch_ref() { # name, timeout, modes
  timeout "$2" python3 bench/train_torch.py --steps 20 --modes "$3" > "$OUT/torch_$1.json" 2>> "$OUT/torch.err" ||
    { echo "train_torch.py $3 failed:"; tail -5 "$OUT/torch.err"; }
  python3 -c "import json;d=json.load(open('$OUT/torch_$1.json'));[print(k, v) for k, v in d.items()]" 2>/dev/null
}
if [ "$mode" = attn ]; then
  A=$PWD/.device-carry/train-attn
  GA="$A/gk_train --module $A/gpuctl_kernels.so --json $OUT/train.jsonl"
  $GA --check 2>&1 | tee -a "$OUT/check.log" || rc=1
  timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 $A/gk_train --module $A/gpuctl_kernels.so --check \
    > "$OUT/sanitizer.log" 2>&1; echo "compute-sanitizer memcheck: exit $?"; tail -3 "$OUT/sanitizer.log"
  for a in "--prec bf16 --steps 50" "--prec tf32 --steps 20" "--prec fp32 --steps 13"; do
    $GA --run --model 124M $a 2>&1 | tee -a "$OUT/train.log" | grep -v '^losses' || rc=1
  done
  echo "the carried module before the change:"
  $G --run --model 124M --prec bf16 --steps 30 2>&1 | tee -a "$OUT/train_before.log" | grep -v '^losses' || rc=1
  [ -n "${TORCH_EAGER:-}" ] && torch_ref eager 120 bf16
  torch_ref compile 150 bf16_compile
  echo "total: $(( $(date +%s) - t0 )) s"
  exit $rc
fi
if [ "$mode" = fused ]; then
  # issue 33 (opt-in paths): the fused attention and the chunked classifier against the CPU
  # reference (the classifier in chunks of 8 rows), the plain paths and the GELU epilogues; 124M
  # bf16 fused and plain, each with its per-op profile (GK_TRAIN_PROFILE=1); PyTorch's bf16 step
  # under torch.compile; then 350M and 774M bf16 fused, 124M tf32, compute-sanitizer over a check
  F="GK_TRAIN_ATTN=flash GK_TRAIN_CLASSIFIER=chunked"
  chk() { echo "+ $1 check"; env $1 $G --check 2>&1 | tee -a "$OUT/check.log" || rc=1; }
  chk "GK_TRAIN_ATTN=flash GK_TRAIN_CLASSIFIER=8"; chk GK_TRAIN_ATTN=flash; chk GK_TRAIN_ATTN=plain
  chk "GK_TRAIN_EPILOGUE=1 GK_TRAIN_ATTN=flash GK_TRAIN_CLASSIFIER=8"
  prun() { echo "+ $*" >> "$OUT/train.log"; env $1 GK_TRAIN_PROFILE=1 $G --run "${@:2}" > "$OUT/prof.tmp" 2>&1 || rc=1
    cat "$OUT/prof.tmp" >> "$OUT/train.log"; grep -v '^losses' "$OUT/prof.tmp" | grep "${PGREP:-.}"; }
  prun "$F" --model 124M --prec bf16 --steps 30
  prun GK_TRAIN_ATTN=plain --model 124M --prec bf16 --steps 20
  prun "$F GK_TRAIN_EPILOGUE=1" --model 124M --prec bf16 --steps 30
  PGREP=PASS prun GK_TRAIN_ATTN=flash --model 124M --prec bf16 --steps 20
  echo "gpuctl 124M: $(( $(date +%s) - t0 )) s"
  # TRAIN_SHORT=1: stop here (a call that shares its device time with other checks)
  [ -n "${TRAIN_SHORT:-}" ] && exit $rc
  torch_ref compile ${TORCH_TIMEOUT:-170} bf16_compile
  echo "torch: $(( $(date +%s) - t0 )) s"
  for m in 350M 774M; do PGREP=PASS prun "$F" --model $m --prec bf16 --steps 12; done
  PGREP=PASS prun "$F" --model 124M --prec tf32 --steps 8
  env $F GK_TRAIN_CLASSIFIER=8 timeout 40 compute-sanitizer --tool memcheck --error-exitcode 9 $B/gk_train \
    --module $B/gpuctl_kernels.so --check > "$OUT/sanitizer.log" 2>&1; echo "compute-sanitizer memcheck: exit $?"
  tail -3 "$OUT/sanitizer.log"
  echo "total: $(( $(date +%s) - t0 )) s"
  exit $rc
fi
if [ "$mode" = quickbench ]; then
  # the whole --quick run on a GPU that ran nothing before it in this call, by the wall clock
  t1=$(date +%s.%N)
  LD_LIBRARY_PATH=$PWD/.device-carry/train/lib .device-carry/train/gpuctl bench --quick \
    --kernels "$B/gpuctl_kernels.so" --save "$OUT/bench.json" > "$OUT/bench.txt" 2>&1
  brc=$?
  echo "gpuctl bench --quick: exit $brc, wall clock $(python3 -c "import time;print(round(time.time() - $t1, 1))") s"
  tail -1 "$OUT/bench.txt"
  sed -n '/^training steps/,/^planner:/p' "$OUT/bench.txt"
  grep -i "failed" "$OUT/bench.txt"
  torch_ref eager 150 bf16
  exit $brc
fi
$G --check 2>&1 | tee -a "$OUT/check.log" || rc=1
if [ "$mode" = gpuctl ]; then
  # the data-parallel machinery (NCCL buckets) over every GPU here beside the plain step, then
  # gpuctl bench -s compute,train itself (a Release gpuctl packed in .device-carry/train)
  n=$(nvidia-smi -L | wc -l)
  for a in "--gpus $n" ""; do
    $G --run --model 124M --prec bf16 --steps 30 $a 2>&1 | tee -a "$OUT/train.log" | grep -v '^losses' || rc=1
  done
  t1=$(date +%s)
  LD_LIBRARY_PATH=$PWD/.device-carry/train/lib .device-carry/train/gpuctl bench --quick -s compute,train \
    --kernels "$B/gpuctl_kernels.so" --save "$OUT/bench.json" > "$OUT/bench.txt" 2>&1
  brc=$?; [ $brc = 0 ] || rc=1
  echo "gpuctl bench --quick -s compute,train: exit $brc, $(( $(date +%s) - t1 )) s"
  grep -i "train\|fail" "$OUT/bench.txt"
  exit $rc
fi
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 $B/gk_train --module $B/gpuctl_kernels.so --check \
  > "$OUT/sanitizer.log" 2>&1; echo "compute-sanitizer memcheck: exit $?"; tail -3 "$OUT/sanitizer.log"
# board power every 100 ms through the runs (energy per token: bench/RESULTS.md's arithmetic)
nvidia-smi --query-gpu=timestamp,power.draw,clocks.sm --format=csv,noheader -lms 100 > "$OUT/power.csv" 2>/dev/null &
smi=$!
run() { echo "+ $(date +%s.%N) gk_train --run $*" >> "$OUT/train.log"; $G --run "$@" 2>&1 | tee -a "$OUT/train.log" | grep -v '^losses' || rc=1
  echo "- $(date +%s.%N)" >> "$OUT/train.log"; }
run --model 124M --prec bf16 --steps 50
[ "$mode" = quick ] && { kill $smi; exit $rc; }
run --model 124M --prec tf32 --steps 30
run --model 124M --prec fp32 --steps 20
run --model 124M --prec bf16 --grad-accum 2 --steps 20
run --model 350M --prec bf16 --steps 20
run --model 774M --prec bf16 --steps 20
kill $smi
$G --gemm-peak 2>&1 | tee -a "$OUT/train.log" || rc=1
echo "gpuctl: $(( $(date +%s) - t0 )) s"
torch_ref eager 240 fp32,tf32,bf16
[ -n "${TORCH_COMPILE:-}" ] && torch_ref compile 200 bf16_compile
echo "total: $(( $(date +%s) - t0 )) s"
exit $rc
