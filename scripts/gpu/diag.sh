#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# diag.sh - on a real GPU server (the lead runs it; issue 5's "done when"):
#   gpuctl health, gpuctl diag -r 1, gpuctl diag -r 3 (goal: under 5 minutes per
#   GPU, healthy GPUs pass), and the deliberately corrupted memory test
#   (diag -r 2 --flip-bits, test-only) which must FAIL.
# Results under $OUT/diag/ (default ./diag-out/diag/): summary.txt, run.log,
# health.txt, health.json, diag_r1.txt, diag_r3.json, diag_r3.txt, flipbits.json.
#
# gpuctl: $GPUCTL if set; else the packed build of scripts/gpu/foundation.sh
# (`scripts/gpu/foundation.sh pack` here first: the GPU machine may lack the
# -dev packages); else a cmake build in /tmp/gpuctl-build. The kernels module:
# $GPUCTL_KERNELS if set; else built with nvcc by `scripts/gpu/kernels.sh build`.
# Device tool, about 6 minutes on 2x H200 (module build ~1 min, r3 ~3 min):
#   run(command="scripts/gpu/diag.sh", carry=[".device-carry"], kind="nvidia-h200-x2", timeout_s=600)
# Exit: 0 every expectation met, 1 some not (see summary.txt), 69 nothing could run.
# Never changes clocks, power limits, MIG, persistence or compute mode.
set -u -o pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="${OUT:-$root/diag-out}/diag"
mkdir -p "$out"
log="$out/run.log"
: >"$log"
export NCCL_NVLS_ENABLE=0 # NVLink multicast off (KINDS.md)
export GPUCTL_DATA_DIR="$root/data"
unset GPUCTL_SIM CUDA_VISIBLE_DEVICES
{ date -u '+%Y-%m-%d %H:%M:%S UTC'; uname -a; nproc; nvidia-smi --query-gpu=index,name,pci.bus_id,persistence_mode,temperature.gpu,power.draw --format=csv; } >>"$log" 2>&1
command -v nvidia-smi >/dev/null || { echo "diag.sh: no nvidia-smi here" | tee -a "$log" >&2; exit 69; }

# --- gpuctl ---------------------------------------------------------------
. "$root/scripts/gpu/lib.sh"
find_gpuctl diag.sh

# --- the kernels module ----------------------------------------------------
if [ -z "${GPUCTL_KERNELS:-}" ]; then
	if GK_BUILD=/tmp/gk-build OUT="/tmp/gk-build-out" bash "$root/scripts/gpu/kernels.sh" build >>"$log" 2>&1 &&
	   [ -f /tmp/gk-build/gpuctl_kernels.so ]; then
		export GPUCTL_KERNELS=/tmp/gk-build/gpuctl_kernels.so
	else
		echo "diag.sh: the kernels module did not build (see run.log); levels 2-3 will say so" | tee -a "$log" >&2
	fi
fi
echo "kernels module: ${GPUCTL_KERNELS:-none}" >>"$log"

# --- runs -----------------------------------------------------------------
declare -A rc secs
step() { # NAME OUTFILE ARGS...
	local name=$1 file=$2 t0
	shift 2
	t0=$(date +%s)
	"$GPUCTL" "$@" >"$out/$file" 2>>"$log"
	rc[$name]=$?
	secs[$name]=$(($(date +%s) - t0))
	echo "$name: gpuctl $*: exit ${rc[$name]}, ${secs[$name]} s" | tee -a "$log"
}
step health health.txt health
step health_json health.json health --json
step diag_r1 diag_r1.txt diag -r 1
step diag_r3 diag_r3.json diag -r 3 --json
step flipbits flipbits.json diag -r 2 -i 0 --flip-bits 64 --json

# a readable table of the r3 results, and the expectations
python3 - "$out" "${rc[health]}" "${rc[diag_r1]}" "${rc[diag_r3]}" "${rc[flipbits]}" "${secs[diag_r3]}" <<'PY' >"$out/summary.txt" 2>>"$log"
import json, sys
out, rc_h, rc_r1, rc_r3, rc_flip, t_r3 = sys.argv[1], *map(int, sys.argv[2:7])
def load(name):
    try:
        return json.load(open(f"{out}/{name}"))
    except Exception as e:
        return {"error": str(e)}
r3, flip = load("diag_r3.json"), load("flipbits.json")
with open(f"{out}/diag_r3.txt", "w") as f:
    for t in r3.get("tests", []):
        v = "" if t["value"] is None else f'{t["value"]:.4g} {t["unit"]}'
        gpu = "-" if t["gpu"] is None else (f'{t["gpu"]}->{t["peer"]}' if t["peer"] is not None else str(t["gpu"]))
        f.write(f'{t["test"]:<22} {gpu:>5} {t["verdict"]:<5} {v:>14}  {t["detail"]}\n')
ngpu = len(r3.get("health", {}).get("gpus", [])) or 1
checks = []
def expect(what, ok):
    checks.append(("ok  " if ok else "FAIL") + " " + what)
expect(f"health exits 0 or 1 (got {rc_h})", rc_h in (0, 1))
expect(f"diag -r 1 exits 0 or 1 (got {rc_r1})", rc_r1 in (0, 1))
expect(f"diag -r 3 exits 0 or 1 on healthy GPUs (got {rc_r3})", rc_r3 in (0, 1))
fails = [t for t in r3.get("tests", []) if t["verdict"] == "FAIL"]
expect(f"diag -r 3: no FAIL results ({len(fails)}: " + "; ".join(f'{t["test"]} GPU {t["gpu"]}: {t["detail"]}' for t in fails[:4]) + ")", not fails)
expect(f"diag -r 3 took {t_r3} s for {ngpu} GPUs: {t_r3 / ngpu:.0f} s per GPU (goal < 300)", t_r3 / ngpu < 300)
mt = [t for t in flip.get("tests", []) if t["test"].startswith("memtest")]
expect(f"--flip-bits: exit 2 (got {rc_flip})", rc_flip == 2)
expect(f"--flip-bits: every memtest result FAILs ({[t['verdict'] for t in mt]})", bool(mt) and all(t["verdict"] == "FAIL" for t in mt))
print("\n".join(checks))
print("\nmeasured (diag -r 3), for bench/RESULTS.md:")
for t in r3.get("tests", []):
    if t["value"] is not None:
        print(f'  {t["test"]:<18} GPU {t["gpu"]}{"->" + str(t["peer"]) if t["peer"] is not None else ""}: {t["value"]:.4g} {t["unit"]} ({t["verdict"]}) {t["detail"]}')
sys.exit(0 if all(c.startswith("ok") for c in checks) else 1)
PY
status=$?
cat "$out/summary.txt"
exit $status
