#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# steptime.sh - issue 40's "done when" on a real H200 (one GPU is enough):
#   1. `gpuctl report --quiet --save F --html A` (one quick run: text and HTML from it), then
#      `gpuctl report --results F --html B` timed (goal: under 2 s, nothing measured);
#   2. `gpuctl bench -s compute,train --model M -i 0` for M = 124M, 350M, 774M (the train
#      rows in bf16, tf32 and fp32, the GEMM of the same call): each row's planned step
#      (plan_step_diff_pct: catalog, calibrated on H200 runs) must be within 15% of the
#      measured one at 124M and 350M (774M is reported, not judged);
#   3. the report's planning row for llama-3-70b serving on this server (all its GPUs): on one H200 it
#      must say "does not fit (0 x 4096-token sequences)".
# Everything goes to $OUT/steptime/: report-run.{json,txt,err}, report.html, rerender.*,
# train-M.{json,txt,err}, verdict.txt (one line a check), run.log.
# Device tool: scripts/gpu/foundation.sh pack here, then run(command="scripts/gpu/steptime.sh",
# carry=[".device-carry/foundation"], kind="nvidia-h200"): about 4 minutes (kernels build ~1,
# quick run ~45 s, three train runs).
# New calibration rows: add each train row (tokens_per_s, and the compute/cublas GEMM of the
# same file) to src/plan/steptime.c's comment and table and tests/unit/test_plan_steptime.c.
# Exit: 0 every check passed, 1 one failed, 69 no gpuctl, module or GPU.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="${OUT:-$root/bench-out}/steptime"
mkdir -p "$out"
log="$out/run.log"
: > "$log"
. "$root/scripts/gpu/lib.sh"
gpu_script_start steptime.sh
if [ -z "${GPUCTL_KERNELS:-}" ]; then
	OUT="$out/kernels-build" "$root/scripts/gpu/kernels.sh" build >> "$log" 2>&1
	export GPUCTL_KERNELS="${GK_BUILD:-/tmp/gk-build}/gpuctl_kernels.so"
fi
[ -f "$GPUCTL_KERNELS" ] || { echo "steptime.sh: no kernels module at $GPUCTL_KERNELS (see $log)" | tee -a "$log" >&2; exit 69; }
export NCCL_NVLS_ENABLE=0
verdict="$out/verdict.txt"
: > "$verdict"
rc=0
judge() { # PASS|FAIL TEXT
	echo "$1 $2" | tee -a "$verdict"
	[ "$1" = PASS ] || rc=1
}
# timed NAME ARGS...: stdout to NAME.txt, stderr to NAME.err; the wall time in ms in $ms
timed() {
	local name=$1 t0
	shift
	t0=$(date +%s%N)
	"$GPUCTL" "$@" > "$out/$name.txt" 2> "$out/$name.err"
	local r=$?
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	echo "gpuctl $*: exit $r, $ms ms" | tee -a "$log"
	return $r
}

# 1. one run for text and HTML, kept; rendered again without measuring
timed report-run report --quiet --kernels "$GPUCTL_KERNELS" --save "$out/report-run.json" --html "$out/report.html"
[ -s "$out/report-run.json" ] && judge PASS "report --save wrote the quick run ($ms ms with it)" ||
	judge FAIL "report --save: no results file (see report-run.err)"
timed rerender report --results "$out/report-run.json" --html "$out/rerender.html"
[ "$ms" -lt 2000 ] && judge PASS "report --results F --html: $ms ms (< 2000)" || judge FAIL "report --results F --html: $ms ms"
grep -q "quick run saved: $out/report-run.json" "$out/report-run.txt" || judge FAIL "report: no 'quick run saved' line"

# 3. serving llama-3-70b on this server (the report's planning row)
row=$(grep -E '^llama-3-70b ' "$out/report-run.txt")
echo "planning row: $row" >> "$log"
ngpu=$(nvidia-smi -L | wc -l)
if grep -q "does not fit (0 x 4096-token sequences)" <<<"$row"; then
	judge PASS "70B serving row: $(sed 's/.*GB\/GPU, does not fit/does not fit/' <<<"$row")"
elif grep -q "fits (0 x" <<<"$row"; then
	judge FAIL "70B serving row still says 'fits (0 x': $row"
else
	echo "INFO 70B serving row over $ngpu GPUs: $row" | tee -a "$verdict"
fi

# 2. the planner's step against the measured one, per size and precision
for m in 124M 350M 774M; do
	timed "train-$m" bench -s compute,train --model "$m" -i 0 --kernels "$GPUCTL_KERNELS" --save "$out/train-$m.json"
	sed -n '/^training steps/,/^planner:/p' "$out/train-$m.txt" | tee -a "$log"
	python3 - "$out/train-$m.json" "$m" <<'PY' | tee -a "$verdict"
import json, sys
d = json.load(open(sys.argv[1])); size = sys.argv[2]
judged = size in ("124M", "350M")
for r in d["results"]:
    if r["suite"] != "train" or r["status"] not in ("ok", "low"):
        continue
    aux = {a["name"]: a["value"] for a in r.get("aux", [])}
    diff = aux.get("plan_step_diff_pct")
    tag = "INFO" if not judged else ("PASS" if diff is not None and abs(diff) <= 15 else "FAIL")
    print("%s train %s %s: measured %.2f ms, planned %s ms (%s), %.0f tokens/s" % (
        tag, r["test"], r["variant"], aux.get("step_ms", float("nan")),
        "%.2f" % aux["plan_step_ms"] if "plan_step_ms" in aux else "n/a",
        "%+.1f%%" % diff if diff is not None else "n/a", aux.get("tokens_per_s", float("nan"))))
for r in d["results"]:
    if r["suite"] == "compute" and r["test"] in ("cublas", "cublaslt") and r["status"] in ("ok", "low"):
        print("INFO gemm %s %s: %.1f TFLOP/s" % (r["test"], r["variant"], r["value"]["median"]))
PY
done
grep -q '^FAIL' "$verdict" && rc=1
echo "steptime.sh: exit $rc" | tee -a "$log"
exit $rc
