#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# gpm_mig.sh - the profiling metrics (GPM) per MIG instance (issue 32) on the
# simulated MIG server h100pcie-mig (GI 2 gemm, GI 3 idle-allocated, GI 9
# dataloader-starved, GI 10 unused): each instance's figures in `info --json`,
# the agent's exposition (gpuctl_gpu_mig_*_ratio) and its dcgm-exporter names
# (DCGM_FI_PROF_* with GPU_I_ID, GPU_I_PROFILE); the GPU-wide figures absent.
#
# Run by CTest (GPUCTL = the binary). By hand:
#   GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/gpm_mig.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
need python3

# --- info --json: each instance's prof_* keys; the GPU's are not supported
expect_exit 0 "$GPUCTL" --sim h100pcie-mig info --json
printf '%s\n' "$out" >"$tmp/info.json"
check "info --json: each MIG instance's GPM figures" python3 -c '
import json, sys
g = json.load(open(sys.argv[1]))["gpus"][0]
assert g["sample"]["unavailable"]["prof_sm_active_pct"] == "not supported", g["sample"]
mig = {m["gpu_instance"]: m for m in g["mig_instances"]}
assert sorted(mig) == [2, 3, 9, 10], sorted(mig)
gemm, idle, starved, unused = mig[2], mig[3], mig[9], mig[10]
assert gemm["prof_sm_active_pct"] >= 85 and gemm["prof_tensor_active_pct"] >= 80, gemm
assert 10 <= gemm["prof_sm_occupancy_pct"] <= 20 and gemm["prof_dram_active_pct"] <= 25, gemm
for k in ("prof_sm_active_pct", "prof_tensor_active_pct", "prof_dram_active_pct"):
    assert idle[k] == 0 and unused[k] == 0, (k, idle, unused)  # a measured 0, not a missing one
assert 0 < starved["prof_sm_active_pct"] < 30 and starved["prof_tensor_active_pct"] < 20, starved
assert gemm["unavailable"]["prof_nvlink_tx_kbps"] == "not supported", gemm
' "$tmp/info.json"

# --- the agent: gpuctl_gpu_mig_*_ratio by gpu_instance; no GPU-wide GPM series
expect_exit 0 "$GPUCTL" --sim h100pcie-mig agent --once --kernel-log off
printf '%s\n' "$out" >"$tmp/metrics.txt"
cat >"$tmp/metrics_check.py" <<'PY'
import re, sys
val = {}
for line in open(sys.argv[1]):
    m = re.match(r'^(gpuctl_gpu_mig_[a-z_]+)\{(.*)\} (\S+)$', line)
    if m:
        lab = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2)))
        val[(m.group(1), lab["gpu_instance"], lab.get("pipe"))] = float(m.group(3))
def v(name, gi, pipe=None):
    assert (name, gi, pipe) in val, "no %s for GPU instance %s" % (name, gi)
    return val[(name, gi, pipe)]
assert v("gpuctl_gpu_mig_sm_active_ratio", "2") >= 0.85 and v("gpuctl_gpu_mig_tensor_active_ratio", "2") >= 0.80
assert 0.10 <= v("gpuctl_gpu_mig_sm_occupancy_ratio", "2") <= 0.20
assert v("gpuctl_gpu_mig_dram_active_ratio", "2") <= 0.25
assert v("gpuctl_gpu_mig_sm_active_ratio", "3") == 0 and v("gpuctl_gpu_mig_sm_active_ratio", "10") == 0
assert 0 < v("gpuctl_gpu_mig_sm_active_ratio", "9") < 0.30
assert v("gpuctl_gpu_mig_pipe_active_ratio", "2", "fp32") > 0
PY
check "agent --once: each MIG instance's GPM ratios" python3 "$tmp/metrics_check.py" "$tmp/metrics.txt"
check "agent --once: the MIG GPM family has HELP" grep -q '^# HELP gpuctl_gpu_mig_sm_active_ratio ' "$tmp/metrics.txt"
check "agent --once: a MIG series has the instance's labels" grep -q \
	'^gpuctl_gpu_mig_sm_active_ratio{.*gpu_instance="2",compute_instance="0",profile="3g.40gb",mig_uuid="MIG-' "$tmp/metrics.txt"
check "agent --once: no GPU-wide sm_active series with MIG on" bash -c "! grep -q '^gpuctl_gpu_sm_active_ratio{' '$tmp/metrics.txt'"

# --- dcgm_compat: DCGM_FI_PROF_* per instance with GPU_I_PROFILE and GPU_I_ID
expect_exit 0 "$GPUCTL" --sim h100pcie-mig agent --once --kernel-log off --dcgm-compat
printf '%s\n' "$out" >"$tmp/dcgm.txt"
check "dcgm_compat: DCGM_FI_PROF_SM_ACTIVE of GPU instance 2" python3 -c '
import re, sys
rows = [l for l in open(sys.argv[1]) if l.startswith("DCGM_FI_PROF_SM_ACTIVE{")]
gi = {}
for l in rows:
    lab = dict(re.findall(r"(\w+)=\"([^\"]*)\"", l.split("} ")[0]))
    assert "GPU_I_ID" in lab and lab["gpu"] == "0", l  # no GPU-wide series with MIG on
    gi[lab["GPU_I_ID"]] = (lab["GPU_I_PROFILE"], float(l.split()[-1]))
assert sorted(gi) == ["10", "2", "3", "9"], gi
assert gi["2"][0] == "3g.40gb" and gi["2"][1] >= 0.85, gi
assert gi["3"][1] == 0, gi
' "$tmp/dcgm.txt"
check "dcgm_compat: tensor activity per instance" grep -q \
	'^DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{.*GPU_I_PROFILE="3g.40gb",GPU_I_ID="2"} 0\.[89]' "$tmp/dcgm.txt"
finish
