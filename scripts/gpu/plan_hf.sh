#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# plan_hf.sh - on a real GPU: bench/hf_plan_memory.py, the peaks `gpuctl plan` must predict
# for Hugging Face transformers models (training and generation). First the smoke set (five
# tiny cases, about 30 s); the full set only if a smoke case measured a peak. Each set is
# bounded by `timeout` so the command returns with what ran: results are JSON lines in
# $OUT/plan_hf/smoke.jsonl and cases.jsonl, logs beside them. Needs python3 with torch and
# transformers (the lent H200's image has both); downloads nothing.
# Usage: scripts/gpu/plan_hf.sh [seconds for the set, default 250] [set: all (default) | holdout | r2fit | r2holdout]
# (holdout: 19 training and 5 serving cases of shapes the model in src/plan/hf.c was not
# derived from, into $OUT/plan_hf/holdout.jsonl; r2fit and r2holdout: issue 34's 12 + 12,
# into $OUT/plan_hf/r2fit.jsonl and r2holdout.jsonl)
set -u -o pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="${OUT:-$root/plan_hf-out}/plan_hf"
mkdir -p "$out"
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_VERBOSITY=error TOKENIZERS_PARALLELISM=false
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv >"$out/gpu.txt" 2>&1
python3 -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__)' \
	2>&1 | tee "$out/versions.txt"
# SMOKE=0 skips the smoke set (when the script has already run on this image)
[ "${SMOKE:-1}" = 0 ] ||
	timeout 90 python3 "$root/bench/hf_plan_memory.py" --set smoke --out "$out/smoke.jsonl" 2>&1 | tee "$out/smoke.log"
if [ "${SMOKE:-1}" = 0 ] || grep -q '"peak_bytes"' "$out/smoke.jsonl" 2>/dev/null; then
	set_name="${2:-all}"
	res="$out/cases.jsonl"
	[ "$set_name" = all ] || res="$out/$set_name.jsonl"
	timeout "${1:-250}" python3 "$root/bench/hf_plan_memory.py" --set "$set_name" --out "$res" \
		>"$out/$set_name.log" 2>&1
	grep -E '^\[[0-9]+\]' "$out/$set_name.log"
	echo "$(wc -l <"$res") cases written"
else
	echo "plan_hf.sh: no smoke case measured a peak: full set not run"
	exit 1
fi
