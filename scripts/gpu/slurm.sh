#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# slurm.sh - the Slurm side of gpuctl on a real GPU server (the lead runs it;
# issue 8). No Slurm is needed; nothing is changed on the machine.
#   1. `gpuctl slurm gres-conf` against the driver: one line per GPU, File=
#      /dev/nvidiaN that exists and is a character device, Type from the
#      driver's name, Links rows equal to `nvidia-smi topo -m`'s NV# counts
#      (-1 on the diagonal, 0 where the pair has no NVLink), Cores equal to
#      nvidia-smi's CPU affinity turned into Slurm's logical core indexes
#      (lscpu: cores numbered socket by socket);
#   2. `gpuctl slurm health-check --dry-run` with a stand-in scontrol that
#      reports an idle node: a healthy server gives "action: none";
#   3. `gpuctl agent --pool` on a temporary socket: `slurm job-start` of a
#      made-up Slurm job on GPU 0, 10 s of load on GPU 0 by a CUDA driver-API
#      probe (python3 ctypes), `slurm job-end`, then `gpuctl jobs --slurm`:
#      energy, utilization and peak memory are numbers (not n/a), GPU-seconds
#      about 10 x 1, and the utilization average is above 50 %.
# Results under $OUT/slurm/ (default ./slurm-out/slurm/): summary.txt (PASS/FAIL
# per check), gres.conf, topo.txt, cpus.csv, health.txt, stats.json, run.log.
# gpuctl: find_gpuctl (scripts/gpu/lib.sh): $GPUCTL, else the packed build, else a
# cmake Release build in /tmp/gpuctl-build. About 30 s. Needs nvidia-smi, lscpu,
# python3 and libcuda.so.1. Exit: 0 all passed, 1 some failed, 69 could not run.
set -u -o pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="${OUT:-$root/slurm-out}/slurm"
mkdir -p "$out"
log="$out/run.log"
: >"$log"
export GPUCTL_DATA_DIR="$root/data"
unset GPUCTL_SIM
command -v nvidia-smi >/dev/null || { echo "slurm.sh: no nvidia-smi here" | tee -a "$log" >&2; exit 69; }
. "$root/scripts/gpu/lib.sh"
find_gpuctl slurm.sh
G="$GPUCTL"
: >"$out/summary.txt"
fails=0
check() { # check NAME CONDITION-EXIT-CODE DETAIL
	if [ "$2" = 0 ]; then echo "PASS $1" >>"$out/summary.txt"; else echo "FAIL $1: $3" >>"$out/summary.txt"; fails=$((fails + 1)); fi
}

# ---- 1. gres.conf ----------------------------------------------------------------------
"$G" slurm gres-conf --node gpunode >"$out/gres.conf" 2>>"$log"
check "gres-conf runs" $? "see run.log"
nvidia-smi topo -m >"$out/topo.txt" 2>>"$log"
nvidia-smi --query-gpu=index,name --format=csv,noheader >"$out/names.csv" 2>>"$log"
lscpu -p=CPU,CORE,SOCKET | grep -v '^#' >"$out/cpus.csv"
n=$(wc -l <"$out/names.csv")
lines=$(grep -c '^NodeName=gpunode Name=gpu ' "$out/gres.conf")
check "one line per GPU ($n)" $([ "$lines" = "$n" ]; echo $?) "$lines lines"
# expected Links rows from topo -m: rows "GPUi  X NV18 ..." (first n cells after the name)
awk -v n="$n" '/^GPU[0-9]+[ \t]/ { row = $1; sub("GPU", "", row); s = "";
	for (j = 2; j <= n + 1; j++) { c = $j; v = (c == "X") ? -1 : (c ~ /^NV[0-9]+$/ ? substr(c, 3) + 0 : 0); s = s (j > 2 ? "," : "") v }
	print row, s }' "$out/topo.txt" >"$out/links.expected"
# Slurm's logical core index of each CPU: rank of its (socket, core) pair
sort -t, -k3,3n -k2,2n -k1,1n "$out/cpus.csv" |
	awk -F, '{ key = $3 "," $2; if (!(key in rank)) rank[key] = n++; print $1, rank[key] }' >"$out/cpu_core.txt"
affcol=$(head -1 "$out/topo.txt" | tr '\t' '\n' | grep -n 'CPU Affinity' | cut -d: -f1)
while read -r idx name; do
	i=${idx%,}
	want_type=$(echo "$name" | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9.]\{1,\}/_/g; s/^_//; s/_$//')
	line=$(grep "File=/dev/nvidia$i " "$out/gres.conf")
	echo "$line" | grep -q "Type=$want_type " && [ -c "/dev/nvidia$i" ]
	check "GPU $i Type=$want_type, /dev/nvidia$i a character device" $? "$line"
	want_links=$(awk -v i="$i" '$1 == i { print $2 }' "$out/links.expected")
	got_links=$(echo "$line" | sed -n 's/.*Links=\([-0-9,]*\).*/\1/p')
	check "GPU $i Links=$want_links (nvidia-smi topo -m)" $([ "$want_links" = "$got_links" ]; echo $?) "got '$got_links'"
	if [ -n "$affcol" ]; then
		aff=$(grep -P "^GPU$i\t" "$out/topo.txt" | cut -f"$affcol" | tr -d ' ')
		want_cores=$(echo "$aff" | tr ',' '\n' | awk -F- '{ b = ($2 == "") ? $1 : $2; for (c = $1; c <= b; c++) print c }' |
			awk 'NR == FNR { core[$1] = $2; next } { print core[$1] }' "$out/cpu_core.txt" - | sort -n -u |
			awk '{ if (NR > 1 && $1 == last + 1) { last = $1; next }
			       if (NR > 1) { printf "%s%s", sep, (first == last ? first : first "-" last); sep = "," }
			       first = last = $1 }
			     END { if (NR) printf "%s%s", sep, (first == last ? first : first "-" last); print "" }')
		got_cores=$(echo "$line" | sed -n 's/.*Cores=\([-0-9,]*\).*/\1/p')
		check "GPU $i Cores=$want_cores (affinity $aff)" $([ "$want_cores" = "$got_cores" ]; echo $?) "got '$got_cores'"
	fi
done < <(tr -d '\r' <"$out/names.csv" | sed 's/, /\t/' | tr '\t' ' ')

# ---- 2. health check, dry run ----------------------------------------------------------
printf '#!/bin/sh\n[ "$1" = show ] && echo "NodeName=gpunode State=IDLE Partitions=gpu"\n' >"$out/scontrol"
chmod 755 "$out/scontrol"
"$G" slurm health-check --node gpunode --scontrol "$out/scontrol" --dry-run >"$out/health.txt" 2>&1
rc=$?
grep -q "action: none" "$out/health.txt" && [ "$rc" -le 1 ]
check "health-check on a healthy server: action none (exit $rc)" $? "$(cat "$out/health.txt")"

# ---- 3. a Slurm job's accounting on real GPUs ------------------------------------------------
tmp=$(mktemp -d)
"$G" agent --listen 127.0.0.1:0 --kernel-log off --pool --pool-dir "$tmp/pool" --pool-socket "$tmp/pool.sock" \
	>"$out/agent.log" 2>&1 &
agent=$!
trap 'kill $agent 2>/dev/null; wait $agent 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 100); do "$G" queue --socket "$tmp/pool.sock" >/dev/null 2>&1 && break; sleep 0.1; done
"$G" slurm job-start --job 900001 --gpus 0 --uid "$(id -u)" --socket "$tmp/pool.sock" >>"$log" 2>&1
check "slurm job-start" $? "see run.log"
CUDA_VISIBLE_DEVICES=0 timeout 30 python3 - >>"$log" 2>&1 <<'PY'
import ctypes, time
cu = ctypes.CDLL("libcuda.so.1")
assert cu.cuInit(0) == 0
dev = ctypes.c_int(); cu.cuDeviceGet(ctypes.byref(dev), 0)
ctx = ctypes.c_void_p(); assert cu.cuCtxCreate_v2(ctypes.byref(ctx), 0, dev) == 0
n = 4 << 30
ptr = ctypes.c_uint64(); assert cu.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(n)) == 0
end = time.time() + 10
while time.time() < end:
    cu.cuMemsetD8_v2(ptr, 1, ctypes.c_size_t(n)); cu.cuCtxSynchronize()
print("probe: 10 s of memsets on 4 GiB")
PY
check "CUDA load on GPU 0" $? "see run.log"
"$G" slurm job-end --job 900001 --socket "$tmp/pool.sock" >>"$log" 2>&1
check "slurm job-end" $? "see run.log"
"$G" jobs --slurm 900001 --socket "$tmp/pool.sock" --json >"$out/stats.json" 2>>"$log"
"$G" slurm stats --job 900001 --socket "$tmp/pool.sock" >"$out/stats.txt" 2>>"$log"
cat "$out/stats.txt" >>"$log"
grep -q '"energy_j"' "$out/stats.json" && grep -q '"util_avg_pct"' "$out/stats.json" && grep -q '"mem_peak_bytes"' "$out/stats.json"
check "energy, utilization, peak memory are numbers" $? "$(cat "$out/stats.txt")"
gs=$(sed -n 's/.*"gpu_seconds": \([0-9.]*\).*/\1/p' "$out/stats.json" | head -1)
ua=$(sed -n 's/.*"util_avg_pct": \([0-9.]*\).*/\1/p' "$out/stats.json" | head -1)
awk -v g="$gs" 'BEGIN { exit !(g >= 9 && g < 30) }'
check "GPU-seconds about 10 ($gs)" $? "$gs"
awk -v u="$ua" 'BEGIN { exit !(u > 50) }'
check "average utilization above 50 % ($ua %)" $? "$ua"

cat "$out/summary.txt"
[ "$fails" = 0 ] && exit 0 || exit 1
