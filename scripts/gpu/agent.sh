#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# agent.sh - on a real GPU server (the lead runs it; issue 3's "done when" for
# the agent): `gpuctl agent` next to `nvidia-smi --query-gpu` at the same
# moment, field by field, three rounds; the JSON API and /healthz; scrape
# latency, agent CPU share and RSS at a 1 s interval; whether the kernel log
# was readable. Results under $OUT/agent/ (default ./agent-out/agent/):
# compare.txt (one line per GPU and field, and a verdict), summary.txt,
# run.log, metrics_N.txt, nvsmi_N.csv, gpus.json, health.json, agent.err.
#
# gpuctl: $GPUCTL if set; else the packed build of scripts/gpu/foundation.sh
# (`scripts/gpu/foundation.sh pack` here first); else a cmake build in /tmp/gpuctl-build.
# Device tool, about 1.5 minutes on 2x H200 (plus a build if there is no packed one):
#   run(command="scripts/gpu/agent.sh", carry=[".device-carry"], kind="nvidia-h200-x2", timeout_s=600)
# Exit: 0 every field agrees within its tolerance, 1 some do not (compare.txt),
# 69 nothing could run. Reads only; changes no GPU setting; runs as the
# invoking user.
set -u -o pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="${OUT:-$root/agent-out}/agent"
mkdir -p "$out"
log="$out/run.log"
: >"$log"
export GPUCTL_DATA_DIR="$root/data"
unset GPUCTL_SIM
{ date -u '+%Y-%m-%d %H:%M:%S UTC'; uname -a; nproc; id; } >>"$log" 2>&1
command -v nvidia-smi >/dev/null || { echo "agent.sh: no nvidia-smi here" | tee -a "$log" >&2; exit 69; }
nvidia-smi -L >>"$log" 2>&1

# --- gpuctl -------------------------------------------------------------------
. "$root/scripts/gpu/lib.sh"
find_gpuctl agent.sh

# --- start the agent -------------------------------------------------------------
"$GPUCTL" agent --listen 127.0.0.1:0 --interval 1s >"$out/agent.out" 2>"$out/agent.err" &
agent_pid=$!
trap 'kill "$agent_pid" 2>/dev/null; wait "$agent_pid" 2>/dev/null' EXIT
port=""
for _ in $(seq 1 150); do
	port=$(sed -n 's/.*listening on http:\/\/127.0.0.1:\([0-9]*\)\/metrics.*/\1/p' "$out/agent.err")
	[ -n "$port" ] && break
	kill -0 "$agent_pid" 2>/dev/null || break
	sleep 0.1
done
cat "$out/agent.err" >>"$log"
if [ -z "$port" ]; then
	echo "agent.sh: the agent did not start (agent.err)" | tee -a "$log" >&2
	exit 69
fi
base="http://127.0.0.1:$port"
sleep 3

# --- the same moment, three rounds: a scrape, then nvidia-smi (about 50 ms apart) ---
fields=index,uuid,pci.bus_id,name,power.draw,power.limit,temperature.gpu,temperature.memory,utilization.gpu,utilization.memory,memory.used,memory.total,clocks.sm,clocks.mem,pstate,ecc.errors.uncorrected.volatile.total,pcie.link.gen.current,pcie.link.width.current,pcie.link.gen.max,pcie.link.width.max,clocks.max.sm,enforced.power.limit
for r in 1 2 3; do
	curl -s --max-time 5 "$base/metrics" >"$out/metrics_$r.txt"
	nvidia-smi --query-gpu=$fields --format=csv,noheader,nounits >"$out/nvsmi_$r.csv" 2>>"$log"
	sleep 2
done
curl -s --max-time 5 "$base/api/v1/gpus?pretty=1" >"$out/gpus.json"
curl -s --max-time 5 "$base/api/v1/health?pretty=1" >"$out/health.json"
healthz=$(curl -s --max-time 5 -w ' %{http_code}' "$base/healthz" | tr -d '\n')
curl -s --max-time 5 -H 'Accept: application/openmetrics-text;version=1.0.0' -o /dev/null "$base/metrics"
sleep 1.5
curl -s --max-time 5 -H 'Accept: application/openmetrics-text;version=1.0.0' "$base/metrics" >"$out/metrics_om.txt"
# the gzip answer (what Prometheus asks for) against the plain one: the same series
curl -s --max-time 5 --compressed -D "$out/gzip_headers.txt" "$base/metrics" >"$out/metrics_gz.txt"
curl -s --max-time 5 "$base/metrics" >"$out/metrics_plain.txt"
gz_enc=$(grep -ci '^content-encoding: gzip' "$out/gzip_headers.txt")
gz_series=$(grep -v '^#' "$out/metrics_gz.txt" | sed 's/ [^ ]*$//' | sort | md5sum | cut -c1-8)
plain_series=$(grep -v '^#' "$out/metrics_plain.txt" | sed 's/ [^ ]*$//' | sort | md5sum | cut -c1-8)

# --- cost: 50 scrapes, then 20 s of CPU and RSS -------------------------------------
lat=$(for _ in $(seq 1 50); do curl -s -o /dev/null -w '%{time_total}\n' "$base/metrics"; done | sort -n | awk '{a[NR]=$1} END {printf "median %.2f ms, max %.2f ms", a[int(NR/2)+1]*1000, a[NR]*1000}')
clk=$(getconf CLK_TCK)
cpu0=$(awk '{print $14 + $15}' "/proc/$agent_pid/stat")
sleep 20
cpu1=$(awk '{print $14 + $15}' "/proc/$agent_pid/stat")
cpu=$(awk -v a="$cpu0" -v b="$cpu1" -v h="$clk" 'BEGIN { printf "%.2f", 100 * (b - a) / h / 20 }')
rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$agent_pid/status")
klog=$(grep -o 'gpuctl_agent_kernel_log_readable{[^}]*} [01]' "$out/metrics_1.txt" | awk '{print $NF}')

# --- compare --------------------------------------------------------------------------
python3 - "$out" <<'PY' >"$out/compare.txt"
import csv, json, re, sys
out = sys.argv[1]
sample_re = re.compile(r'^(gpuctl_[a-z0-9_]+)\{([^}]*)\} (\S+)$')
label_re = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')

def parse(path):
    series = {}
    for line in open(path):
        m = sample_re.match(line.strip())
        if not m:
            continue
        labels = dict(label_re.findall(m.group(2)))
        if "gpu" not in labels:
            continue
        series.setdefault(labels["gpu"], []).append((m.group(1), labels, float(m.group(3))))
    return series

def metric(s, gpu, name, **want):
    for n, labels, v in s.get(gpu, []):
        if n == name and all(labels.get(k) == w for k, w in want.items()):
            return v, labels
    return None, None

def num(x):
    x = x.strip()
    if x in ("[N/A]", "N/A", "[Not Supported]", "") or x.startswith("[") :
        return None
    try:
        return float(x)
    except ValueError:
        return None

bad = 0
lines = []
def cmp(r, gpu, what, mine, theirs, tol_abs, tol_rel=0.0):
    global bad
    if theirs is None and mine is None:
        lines.append("r%d gpu%s %-22s both absent (not supported)" % (r, gpu, what)); return
    if theirs is None or mine is None:
        ok = False
    else:
        ok = abs(mine - theirs) <= max(tol_abs, tol_rel * abs(theirs))
    bad += not ok
    lines.append("r%d gpu%s %-22s gpuctl=%s nvidia-smi=%s %s" % (r, gpu, what, mine, theirs, "ok" if ok else "DIFFERS"))

for r in (1, 2, 3):
    s = parse("%s/metrics_%d.txt" % (out, r))
    for row in csv.reader(open("%s/nvsmi_%d.csv" % (out, r))):
        row = [c.strip() for c in row]
        if len(row) < 22:
            continue
        g = row[0]
        up, labels = metric(s, g, "gpuctl_gpu_up")
        if up != 1:
            bad += 1
            lines.append("r%d gpu%s not up in gpuctl (%s)" % (r, g, up)); continue
        for lab, val in (("uuid", row[1]), ("pci_bus_id", row[2]), ("model", row[3])):
            ok = labels.get(lab, "").lower() == val.lower()
            bad += not ok
            lines.append("r%d gpu%s %-22s gpuctl=%s nvidia-smi=%s %s" % (r, g, lab, labels.get(lab), val, "ok" if ok else "DIFFERS"))
        v = lambda name, **w: metric(s, g, name, **w)[0]
        mib = lambda x: None if x is None else x / 1048576
        mhz = lambda x: None if x is None else x / 1e6
        pct = lambda x: None if x is None else x * 100
        # values that move between the two reads get room; static ones must match
        cmp(r, g, "power.draw W", v("gpuctl_gpu_power_watts"), num(row[4]), 25, 0.10)
        cmp(r, g, "power.limit W", v("gpuctl_gpu_power_limit_watts"), num(row[5]), 1)
        cmp(r, g, "temperature.gpu C", v("gpuctl_gpu_temperature_celsius"), num(row[6]), 3)
        cmp(r, g, "temperature.memory C", v("gpuctl_gpu_memory_temperature_celsius"), num(row[7]), 3)
        cmp(r, g, "utilization.gpu %", pct(v("gpuctl_gpu_utilization_ratio")), num(row[8]), 20)
        cmp(r, g, "utilization.memory %", pct(v("gpuctl_gpu_memory_utilization_ratio")), num(row[9]), 20)
        cmp(r, g, "memory.used MiB", mib(v("gpuctl_gpu_memory_used_bytes")), num(row[10]), 64, 0.02)
        cmp(r, g, "memory.total MiB", mib(v("gpuctl_gpu_memory_total_bytes")), num(row[11]), 1)
        cmp(r, g, "clocks.sm MHz", mhz(v("gpuctl_gpu_sm_clock_hertz")), num(row[12]), 100, 0.10)
        cmp(r, g, "clocks.mem MHz", mhz(v("gpuctl_gpu_memory_clock_hertz")), num(row[13]), 1)
        ps = row[14][1:] if row[14].startswith("P") else None
        cmp(r, g, "pstate", v("gpuctl_gpu_performance_state"), num(ps) if ps else None, 0)
        cmp(r, g, "ecc uncorrected vol", v("gpuctl_gpu_ecc_volatile_errors_total", type="uncorrected"), num(row[15]), 0)
        cmp(r, g, "pcie gen (current)", v("gpuctl_gpu_pcie_link_generation"), num(row[16]), 1)
        cmp(r, g, "pcie width (current)", v("gpuctl_gpu_pcie_link_width"), num(row[17]), 0)
        cmp(r, g, "pcie gen max", v("gpuctl_gpu_pcie_link_generation_max"), num(row[18]), 0)
        cmp(r, g, "pcie width max", v("gpuctl_gpu_pcie_link_width_max"), num(row[19]), 0)
        cmp(r, g, "clocks.max.sm MHz", mhz(v("gpuctl_gpu_sm_clock_max_hertz")), num(row[20]), 0)
print("\n".join(lines))
print("verdict: %s (%d differing)" % ("agree" if bad == 0 else "DIFFER", bad))
sys.exit(1 if bad else 0)
PY
cmp_rc=$?
json_ok=$(python3 -c '
import json,sys
g=json.load(open(sys.argv[1])); h=json.load(open(sys.argv[2]))
print("ok" if g["simulated"] is False and len(g["gpus"]) == len(h["gpus"]) > 0 else "bad")' "$out/gpus.json" "$out/health.json" 2>>"$log")
om_ok=$(tail -1 "$out/metrics_om.txt")
{
	echo "gpuctl agent on $(nvidia-smi -L | wc -l) GPUs, $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "compare with nvidia-smi --query-gpu (3 rounds): $(tail -1 "$out/compare.txt")"
	echo "scrape latency (curl, 50 sequential): $lat"
	echo "agent CPU over 20 s at 1 s interval: $cpu % of one core; RSS $rss KiB"
	echo "/healthz: $healthz; JSON API: $json_ok; OpenMetrics last line: $om_ok"
	echo "gzip: Content-Encoding gzip $gz_enc, series $(grep -vc '^#' "$out/metrics_gz.txt") ($gz_series), plain $(grep -vc '^#' "$out/metrics_plain.txt") ($plain_series): $([ "$gz_enc" = 1 ] && [ "$gz_series" = "$plain_series" ] && echo same || echo DIFFER)"
	echo "kernel log readable: ${klog:-unknown} (0 = XIDs from NVML events only)"
	if command -v promtool >/dev/null; then
		promtool check metrics <"$out/metrics_1.txt" >>"$log" 2>&1 && echo "promtool check metrics: ok" || echo "promtool check metrics: FAILED (run.log)"
	fi
} | tee "$out/summary.txt"
exit "$cmp_rc"
