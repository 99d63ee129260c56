#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# diag_h2d.sh - issue 31's root cause, on a real GPU: why `diag -r 2` measured
# pcie_h2d 29.6 GB/s on a healthy H200 while `diag -r 3` and `bench -s copy`
# measured 55. Runs bench/h2d_probe.cu in each of its modes (a copy timed
# fresh, right after a large cudaFree, after a memtest-like pass, and each
# after waiting for the freed memory to come back) with nvidia-smi sampling
# the PCIe link and clocks every 100 ms beside it; then gpuctl diag -r 2
# three times and bench -s copy. Everything under $OUT/diag_h2d/.
#   run(command="scripts/gpu/diag_h2d.sh", carry=[".device-carry"], kind="nvidia-h200")
# Never changes clocks, power limits, MIG, persistence or compute mode.
set -u -o pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="${OUT:-$root/diag-h2d-out}/diag_h2d"
mkdir -p "$out"
log="$out/run.log"
: >"$log"
. "$root/scripts/gpu/lib.sh"
gpu_script_start diag_h2d.sh
nvcc -O2 -arch=sm_90 -o /tmp/h2d_probe "$root/bench/h2d_probe.cu" >>"$log" 2>&1 || { echo "probe build failed"; exit 70; }
if [ -z "${GPUCTL_KERNELS:-}" ]; then
	GK_BUILD=/tmp/gk-build OUT=/tmp/gk-build-out bash "$root/scripts/gpu/kernels.sh" build >>"$log" 2>&1 &
	kbuild=$!
fi
nvidia-smi -q -d PERFORMANCE,CLOCK >"$out/smi_q.txt" 2>&1
nvidia-smi -q | sed -n '/PCI/,/Bridge Chip/p' >>"$out/smi_q.txt" 2>&1
nvidia-smi topo -m >>"$out/smi_q.txt" 2>&1
nvidia-smi --query-gpu=timestamp,pcie.link.gen.gpucurrent,pcie.link.width.current,clocks.sm,clocks.mem,pstate,power.draw,memory.used \
	--format=csv -lms 100 >"$out/smi_trace.csv" 2>&1 &
smi=$!
for mode in fresh bigfree bigfree_wait memtest memtest_wait bigfree; do
	echo "== $(date -u +%T.%N) $mode" >>"$out/probe.txt"
	/tmp/h2d_probe "$mode" >>"$out/probe.txt" 2>&1
	echo "exit $?" >>"$out/probe.txt"
done
[ -n "${kbuild:-}" ] && wait "$kbuild" && export GPUCTL_KERNELS=/tmp/gk-build/gpuctl_kernels.so
for k in 1 2 3; do
	echo "== $(date -u +%T.%N) diag -r 2 run $k" >>"$out/probe.txt"
	"$GPUCTL" diag -r 2 --json >"$out/diag_r2_$k.json" 2>>"$log"
	echo "diag -r 2 run $k: exit $?" >>"$out/probe.txt"
done
echo "== $(date -u +%T.%N) bench -s copy" >>"$out/probe.txt"
"$GPUCTL" bench -s copy --size 256M >"$out/bench_copy.txt" 2>>"$log"
kill "$smi" 2>/dev/null
python3 - "$out" <<'EOF' | tee "$out/summary.txt"
import json, sys, glob
out = sys.argv[1]
for f in sorted(glob.glob(out + "/diag_r2_*.json")):
    try:
        d = json.load(open(f))
    except Exception as e:
        print(f, "unreadable", e); continue
    rs = d.get("results", d.get("tests", []))
    for r in rs:
        if r.get("test", "").startswith("pcie") or r.get("verdict") in ("FAIL", "fail"):
            print(f.rsplit("/", 1)[1], r.get("test"), r.get("value"), r.get("verdict"), r.get("detail", "")[:100])
    print(f.rsplit("/", 1)[1], "overall", d.get("verdict"))
EOF
grep -E "^#|sample (2|3|5|10|20|41) " "$out/probe.txt" | head -80
