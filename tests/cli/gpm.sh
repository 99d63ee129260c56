#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# gpm.sh - the profiling metrics (NVML GPM; issue 32) on simulated servers:
# each workload of h200-workloads (GEMM-bound, memory-bound, idle but
# allocated, dataloader-starved) in `dmon -s g`, `info --json`, the agent's
# exposition (`agent --once`) and its JSON API (/api/v1/gpus), at the
# figures the model gives (docs/simulator.md); "not supported" / n/a /
# absent on an A100 and a V100-era server, never 0.
#
# Run by CTest (GPUCTL = the binary). By hand:
#   GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/gpm.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/agent_lib.bash"
need python3 curl

# --- dmon -s g: one line per GPU, the columns of group g
if "$GPUCTL" --sim h200-workloads dmon -s g -c 1 -d 0.1 --json >"$tmp/dmon.jsonl" 2>"$tmp/dmon.err"; then
	check "dmon -s g: 4 lines" [ "$(grep -c . "$tmp/dmon.jsonl")" -eq 4 ]
	cat >"$tmp/dmon_check.py" <<'EOF'
import json, sys
# the sample's keys (dmon --json writes each value under its sample key: issue 35)
rows = {r["gpu"]: r for r in map(json.loads, open(sys.argv[1]))}
want = ["prof_sm_active_pct", "prof_sm_occupancy_pct", "prof_tensor_active_pct", "prof_dram_active_pct",
        "prof_fp64_active_pct", "prof_fp32_active_pct", "prof_fp16_active_pct"]
for g, r in rows.items():
    missing = [k for k in want if not isinstance(r.get(k), (int, float))]
    assert not missing, "GPU%d: no number for %s: %s" % (g, missing, r)
gemm, mem, idle, starved = rows[0], rows[1], rows[2], rows[3]
# GEMM-bound: busy SMs and tensor cores, low occupancy, little DRAM (as on a real H200)
assert gemm["prof_sm_active_pct"] >= 85 and gemm["prof_tensor_active_pct"] >= 80, gemm
assert 10 <= gemm["prof_sm_occupancy_pct"] <= 20 and gemm["prof_dram_active_pct"] <= 25, gemm
# memory-bound: DRAM busy, no tensor work
assert mem["prof_dram_active_pct"] >= 75 and mem["prof_tensor_active_pct"] == 0, mem
# idle but allocated: every figure 0 (a measured 0, not a missing one)
assert all(idle[k] == 0 for k in want), idle
# dataloader-starved: its SMs mostly wait
assert starved["prof_sm_active_pct"] < 30 and starved["prof_tensor_active_pct"] < 20, starved
EOF
	check "dmon -s g: each workload's figures" python3 "$tmp/dmon_check.py" "$tmp/dmon.jsonl"
else
	fail "dmon -s g on h200-workloads: $(head -c 300 "$tmp/dmon.err")"
fi
"$GPUCTL" --sim h200-workloads dmon -s g -c 1 -d 0.1 >"$tmp/dmon.txt" 2>&1
check "dmon -s g: text header" grep -qx '# gpu smact smocc tensor  dram  fp64  fp32  fp16' "$tmp/dmon.txt"

# --- older GPUs: n/a in every GPM column, never 0
for srv in a100x8 l40sx4; do
	"$GPUCTL" --sim "$srv" dmon -s g -c 1 -d 0.1 >"$tmp/old.txt" 2>&1
	data=$(grep -v '^[#*]' "$tmp/old.txt")
	check "$srv: dmon -s g prints lines" [ -n "$data" ]
	check "$srv: every GPM column is n/a" [ "$(echo "$data" | awk '{ for (i = 2; i <= NF; i++) if ($i != "n/a") bad++ } END { print bad + 0 }')" -eq 0 ]
done

# --- info --json: the sample's prof_* keys, or why not
"$GPUCTL" --sim h200-workloads info --json >"$tmp/info.json" 2>"$tmp/info.err"
check "info --json: GPU 0 (gemm) tensor activity" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
s = d["gpus"][0]["sample"]
assert s["prof_tensor_active_pct"] >= 80 and 10 <= s["prof_sm_occupancy_pct"] <= 20, s
assert d["gpus"][2]["sample"]["prof_sm_active_pct"] == 0' "$tmp/info.json"
"$GPUCTL" --sim a100x8 info --json >"$tmp/info_a100.json" 2>"$tmp/info.err"
check "info --json on an A100: not supported" python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["gpus"][0]["sample"]
assert "prof_sm_active_pct" not in s and s["unavailable"]["prof_sm_active_pct"] == "not supported", s' "$tmp/info_a100.json"

# --- the agent's exposition: each workload's figures as 0-1 ratios
"$GPUCTL" --sim h200-workloads agent --once --kernel-log off >"$tmp/metrics.txt" 2>"$tmp/once.err"
cat >"$tmp/metrics_check.py" <<'EOF'
import re, sys
val = {}
for line in open(sys.argv[1]):
    m = re.match(r'^(gpuctl_gpu_[a-z_]+)\{(.*)\} (\S+)$', line)
    if m:
        lab = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2)))
        val[(m.group(1), int(lab["gpu"]), lab.get("pipe"))] = float(m.group(3))
def v(name, gpu, pipe=None):
    assert (name, gpu, pipe) in val, "no %s for GPU %d" % (name, gpu)
    return val[(name, gpu, pipe)]
assert v("gpuctl_gpu_sm_active_ratio", 0) >= 0.85 and v("gpuctl_gpu_tensor_active_ratio", 0) >= 0.80
assert 0.10 <= v("gpuctl_gpu_sm_occupancy_ratio", 0) <= 0.20 and v("gpuctl_gpu_dram_active_ratio", 0) <= 0.25
assert v("gpuctl_gpu_dram_active_ratio", 1) >= 0.75 and v("gpuctl_gpu_tensor_active_ratio", 1) == 0
assert v("gpuctl_gpu_sm_active_ratio", 2) == 0 and v("gpuctl_gpu_dram_active_ratio", 2) == 0
assert v("gpuctl_gpu_sm_active_ratio", 3) < 0.30
assert v("gpuctl_gpu_pipe_active_ratio", 1, "fp32") > 0
EOF
check "agent --once: each workload's GPM ratios" python3 "$tmp/metrics_check.py" "$tmp/metrics.txt"
check "agent --once: the GPM families have HELP" grep -q '^# HELP gpuctl_gpu_sm_occupancy_ratio ' "$tmp/metrics.txt"
"$GPUCTL" --sim a100x8 agent --once --kernel-log off >"$tmp/metrics_a100.txt" 2>"$tmp/once.err"
check "agent --once on an A100: GPU series, no GPM family" grep -q '^gpuctl_gpu_utilization_ratio{' "$tmp/metrics_a100.txt"
check "agent --once on an A100: no sm_active series" bash -c "! grep -q '^gpuctl_gpu_sm_active_ratio' '$tmp/metrics_a100.txt'"
"$GPUCTL" --sim h200-workloads agent --once --kernel-log off --metrics basic >"$tmp/metrics_basic.txt" 2>"$tmp/once.err"
check "agent --metrics basic: no GPM series" bash -c "! grep -q '^gpuctl_gpu_sm_active_ratio' '$tmp/metrics_basic.txt'"

# --- the JSON API: /api/v1/gpus carries them in each GPU's sample
"$GPUCTL" --sim h200-workloads agent --listen 127.0.0.1:0 --interval 0.2s --kernel-log off \
	>"$tmp/agent.out" 2>"$tmp/agent.err" &
agent_pid=$!
wait_agent_port
api_has_gpm() {
	curl -s --max-time 5 "http://127.0.0.1:$port/api/v1/gpus" >"$tmp/api.json" &&
		python3 -c '
import json, sys
g = json.load(open(sys.argv[1]))["gpus"]
assert g[0]["sample"]["prof_tensor_active_pct"] >= 80 and g[1]["sample"]["prof_dram_active_pct"] >= 75' "$tmp/api.json" 2>/dev/null
}
check "API /api/v1/gpus: each GPU's GPM figures" wait_until 30 api_has_gpm
finish
