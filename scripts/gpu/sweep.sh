#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# sweep.sh - issue 19 on a real GPU server: what each node's job of
# `gpuctl slurm sweep` runs there (`--run-node`), at diag2 and at bench-quick
# (measured figures: gpuctl bench --quick), and the fleet report of that one
# node (`--gather`). No Slurm runs there (not carried: see docs/slurm.md).
#
#   scripts/gpu/sweep.sh pack   here, no GPU: a Release gpuctl (BUILD, default
#                               build-sweep-rel) with its shared libraries and
#                               the kernels module (KERNELS) into .device-carry/sweep/
#   scripts/gpu/sweep.sh [run]  on the GPU machine: results under $OUT/sweep/:
#                               summary.txt, run.log, diag2-fleet.txt,
#                               diag2-node.json, bench-fleet.txt, bench-node.json
# Device tool: run(command="scripts/gpu/sweep.sh run", carry=[".device-carry/sweep"]),
# about 3-4 minutes. Exit: 0 every check passed, 1 some failed, 69 could not run.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
pack="$root/.device-carry/sweep"

if [ "${1:-run}" = pack ]; then
	b="$root/${BUILD:-build-sweep-rel}"
	k="${KERNELS:?KERNELS=path of a gpuctl_kernels.so built for sm_90 with the ABI of this tree}"
	[ -x "$b/gpuctl" ] && [ -f "$k" ] || { echo "no $b/gpuctl or $k" >&2; exit 70; }
	rm -rf "$pack" && mkdir -p "$pack/lib"
	cp "$b/gpuctl" "$k" "$pack/"
	ldd "$b/gpuctl" | awk '/=> \// { print $3 }' | grep -Ev '/(libc|libm|libpthread|libdl|librt|libgcc_s)\.so' |
		while read -r lib; do cp -L "$lib" "$pack/lib/"; done
	echo "packed into $pack ($(du -sh "$pack" | cut -f1))"
	exit 0
fi

out="${OUT:-$root/sweep-out}/sweep"
mkdir -p "$out"
log="$out/run.log"
: >"$log"
: >"$out/summary.txt"
[ -x "$pack/gpuctl" ] || { echo "sweep.sh: no packed gpuctl (scripts/gpu/sweep.sh pack, carry .device-carry/sweep)" | tee -a "$log"; exit 69; }
command -v nvidia-smi >/dev/null || { echo "sweep.sh: no nvidia-smi here" | tee -a "$log"; exit 69; }
export GPUCTL_DATA_DIR="$root/data" GPUCTL_KERNELS="$pack/$(basename "$(ls "$pack"/*.so | head -1)")" NCCL_NVLS_ENABLE=0
unset GPUCTL_SIM
G="${TMPDIR:-/tmp}/gpuctl-sweep"
printf '#!/bin/sh\nLD_LIBRARY_PATH="%s/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "%s/gpuctl" "$@"\n' "$pack" "$pack" >"$G"
chmod +x "$G"
fails=0
check() { # NAME EXIT-CODE-OF-CONDITION DETAIL
	if [ "$2" = 0 ]; then echo "PASS $1" >>"$out/summary.txt"; else echo "FAIL $1: $3" >>"$out/summary.txt"; fails=$((fails + 1)); fi
}
"$G" --version >>"$log" 2>&1
nvidia-smi --query-gpu=index,name,pci.bus_id --format=csv,noheader >>"$log" 2>&1
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

for level in diag2 bench-quick; do
	short=${level%-quick}
	s=$(date +%s.%N)
	# the sweep makes DIR before the jobs run (a pack older than cc41266 needs it)
	mkdir -p "$tmp/$short"
	timeout 170 "$G" slurm sweep --run-node --node h200 --level "$level" --out "$tmp/$short" >>"$log" 2>&1
	rc=$?
	echo "$level: --run-node exit $rc in $(awk -v s="$s" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }') s" | tee -a "$log" >>"$out/summary.txt"
	check "$level: the node's result written" $([ "$rc" = 0 ] && [ -s "$tmp/$short/nodes/h200.json" ]; echo $?) "exit $rc"
	cp "$tmp/$short/nodes/h200.json" "$out/$short-node.json" 2>/dev/null
	"$G" slurm sweep --gather --out "$tmp/$short" >"$out/$short-fleet.txt" 2>>"$log"
	rc=$?
	check "$level: the fleet report (exit $rc: 0 no outlier, 2 an outlier)" $([ "$rc" -le 2 ] && [ -s "$tmp/$short/fleet.html" ]; echo $?) "exit $rc"
	grep -q SIMULATED "$out/$short-fleet.txt"
	check "$level: nothing SIMULATED on a real GPU" $([ $? != 0 ]; echo $?) "the report says SIMULATED"
done
# diag2's tests came back and were judged; bench-quick's figures are measured ones
python3 - "$out/diag2-node.json" "$out/bench-node.json" >>"$out/summary.txt" 2>>"$log" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
diag = d.get("diag", {})
print("diag2 verdict:", diag.get("verdict"), "tests:", len(diag.get("tests", [])), "error:", diag.get("error"))
bench = b.get("bench", {})
print("bench results:", len(bench.get("results", [])), "simulated:", bench.get("simulated"), "error:", b.get("bench_error"))
PY
grep -A20 "^fleet median" "$out/bench-fleet.txt" >>"$out/summary.txt"
grep -q "^  mem_bw_gbs .* GB/s over 1$" "$out/bench-fleet.txt" && grep -q "^  gemm_bf16_tflops .* over 1$" "$out/bench-fleet.txt"
check "bench-quick: measured memory bandwidth and GEMM BF16 in the fleet's statistics" $? "see bench-fleet.txt"
grep -q "^figures: figures measured by gpuctl bench --quick" "$out/bench-fleet.txt"
check "bench-quick: the report says the figures were measured" $? "see bench-fleet.txt"
grep -Eq "^diag2 verdict: (PASS|WARN|FAIL) tests: [1-9]" "$out/summary.txt"
check "diag2: gpuctl diag -r 2 ran and its tests are in the result" $? "see summary.txt"
cat "$out/summary.txt"
[ "$fails" = 0 ]
