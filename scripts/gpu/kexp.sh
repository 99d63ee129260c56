#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# kexp.sh - on a GPU machine (H200, sm_90a): build bench/experiments/kexp.cu
# with nvcc and run it once: every device-copy candidate (4 GiB, 2 passes) and
# every FP16x2/BF16x2 FMA candidate, each timed (median of 11 after warm-up)
# and verified, next to cudaMemcpyAsync D2D and FP32 FMA (issue 4).
# Output under $OUT/kexp/ ($OUT default ./kexp-out): build.log (ptxas -v),
# sass_counts.txt (HFMA2 / HFMA2.MMA / FFMA / LDG / STG ... a kernel, when
# cuobjdump exists), kexp.log (one line a variant), gpus_before/after.txt.
#   scripts/gpu/kexp.sh [copy|fma|all] [copy_GiB] [copy_passes]   (default all 4 2)
# Expected run time on one H200: build ~15 s, run ~20-30 s (capped: fma 25 s, copy 50 s).
# Never changes clocks, power, MIG, persistence or compute mode.
set -u -o pipefail
cd "$(dirname "$0")/../.."
what=${1:-all}
gib=${2:-4}
passes=${3:-2}
case "$what" in copy|fma|all) ;; *) echo "kexp.sh: unknown suite '$what' (copy, fma or all)" >&2; exit 2 ;; esac
OUT=${OUT:-$PWD/kexp-out}
D="$OUT/kexp"
B=${KEXP_BUILD:-/tmp/kexp-build}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
CUOBJDUMP=$(command -v cuobjdump || { [ -x "$(dirname "$NVCC")/cuobjdump" ] && echo "$(dirname "$NVCC")/cuobjdump"; } || true)
mkdir -p "$D" "$B"

nvidia-smi --query-gpu=index,name,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv >"$D/gpus_before.txt" 2>&1
cat "$D/gpus_before.txt"

if ! "$NVCC" -arch=sm_90a -O3 -lineinfo -Xptxas -v bench/experiments/kexp.cu -o "$B/kexp" >"$D/build.log" 2>&1; then
  echo "kexp.sh: nvcc failed (see $D/build.log)"
  tail -30 "$D/build.log"
  exit 2
fi
echo "build ok ($NVCC)"

if [ -n "$CUOBJDUMP" ]; then
  "$CUOBJDUMP" --dump-sass "$B/kexp" >"$B/kexp.sass" 2>"$D/cuobjdump.err"
  # per kernel: how many of each opcode of interest
  awk '
    /Function :/ { fn = $3; order[++nf] = fn; next }
    fn != "" && /\/\*[0-9a-f]+\*\// {
      for (i = 1; i <= NF; i++) {
        op = $i
        if (op ~ /^@/ || op ~ /^\/\*/ || op == "") continue
        sub(/;$/, "", op)
        if (op == "HFMA2.MMA") c[fn, "HFMA2.MMA"]++
        else if (op ~ /^HFMA2(\.|$)/) c[fn, "HFMA2"]++
        else if (op ~ /^HFMA(\.|$)/) c[fn, "HFMA"]++
        else if (op ~ /^FFMA(\.|$)/) c[fn, "FFMA"]++
        else if (op ~ /^LDGSTS/) c[fn, "LDGSTS"]++
        else if (op ~ /^LDG/) c[fn, "LDG"]++
        else if (op ~ /^STG/) c[fn, "STG"]++
        else if (op ~ /^UBLKCP/) c[fn, "UBLKCP"]++
        break
      }
    }
    END {
      printf "%-40s %7s %9s %6s %6s %5s %5s %6s %6s\n", "kernel", "HFMA2", "HFMA2.MMA", "HFMA", "FFMA", "LDG", "STG", "LDGSTS", "UBLKCP"
      for (k = 1; k <= nf; k++) { f = order[k]
        printf "%-40s %7d %9d %6d %6d %5d %5d %6d %6d\n", f, c[f,"HFMA2"], c[f,"HFMA2.MMA"], c[f,"HFMA"], c[f,"FFMA"], c[f,"LDG"], c[f,"STG"], c[f,"LDGSTS"], c[f,"UBLKCP"] }
    }' "$B/kexp.sass" >"$D/sass_counts.txt"
  grep -oE "HFMA2(\.[A-Z0-9_]+)*" "$B/kexp.sass" | sort | uniq -c >"$D/hfma2_forms.txt"
  cp "$B/kexp.sass" "$D/kexp.sass" 2>/dev/null
  cat "$D/sass_counts.txt" "$D/hfma2_forms.txt"
else
  echo "no cuobjdump: SASS counts skipped" | tee "$D/sass_counts.txt"
fi

# FMA first and copy second, each under its own cap, so one stuck variant
# cannot cost the other suite's figures
rc=0
: >"$D/kexp.log"
if [ "$what" = all ] || [ "$what" = fma ]; then
  timeout 25 "$B/kexp" fma >>"$D/kexp.log" 2>&1 || { r=$?; echo "kexp fma: exit $r" >>"$D/kexp.log"; rc=$r; }
fi
if [ "$what" = all ] || [ "$what" = copy ]; then
  timeout 50 "$B/kexp" copy "$gib" "$passes" >>"$D/kexp.log" 2>&1 || { r=$?; echo "kexp copy: exit $r" >>"$D/kexp.log"; rc=$r; }
fi
cat "$D/kexp.log"
nvidia-smi --query-gpu=index,name,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv >"$D/gpus_after.txt" 2>&1
cat "$D/gpus_after.txt"
# the best verified copy and FMA lines, for a quick look
echo "# best copy (TB/s, verified):"
grep "TB/s  verified yes" "$D/kexp.log" | sort -k9 -g -r | head -8
echo "# best FP16x2/BF16x2 FMA (TFLOP/s, verified):"
grep -E "^fma_(h2|b2|mix)" "$D/kexp.log" | grep "verified yes" | sort -k9 -g -r | head -8
grep -q "exit 124" "$D/kexp.log" && echo "kexp.sh: a suite hit its time cap (25 s fma, 50 s copy); partial log above"
exit $rc
