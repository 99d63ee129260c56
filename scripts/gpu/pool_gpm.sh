#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# pool_gpm.sh - the pool's profiling accounting and idle allocations (issue 32,
# docs/pool.md "Idle allocations") on a real Hopper GPU (H100/H200), GPU 0:
# `gpuctl agent --pool` with pool_idle_window = 8s, then, one after the other,
#   1. a busy job: a BF16 8192^3 matmul loop in PyTorch for 20 s (without
#      torch: cuMemsetD32 loops through libcuda, ctypes); it must never be
#      flagged, and its mean SM activity in `jobs --json` must agree with
#      `nvidia-smi dmon --gpm-metrics` over the job's seconds (within 5 points:
#      the job's edges fall inside dmon's 1 s samples);
#   2. an idle job: a CUDA context and 1 GiB held, no kernels, for up to 40 s;
#      it must be flagged ("idle allocation: SM activity < 5% for 8s") in
#      `queue --json` and gpuctl_pool_job_idle_allocation{job=...} 1 on
#      /metrics, `gpuctl health -i 0` must give allocated-gpu-idle, and its mean
#      SM activity must be under 5 with nvidia-smi's under 5 too. It is then
#      cancelled.
# Results under $OUT/pool_gpm/ (default ./pool-gpm-out/pool_gpm/): summary.txt
# (PASS/FAIL per check and the figures), summary.json, run.log, agent.err,
# dmon.txt, jobs.json, queue_busy.json, queue_idle.json, metrics_busy.txt,
# metrics_idle.txt, health.json.
#
#   OUT=$OUT bash scripts/gpu/pool_gpm.sh        about 60-75 s on one H200
#
# gpuctl: $GPUCTL, else the packed build (.device-carry/foundation), else a cmake
# Release build in /tmp/gpuctl-build (scripts/gpu/lib.sh). Needs python3 and
# libcuda.so.1; PyTorch ($PYTHON, default python3) if present. Changes no GPU setting.
# Exit: 0 every check passed, 1 some failed (summary.txt), 69 could not run.
set -u -o pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="${OUT:-$root/pool-gpm-out}/pool_gpm"
mkdir -p "$out"
log="$out/run.log"
: >"$log"
PY="${PYTHON:-python3}"
. "$root/scripts/gpu/lib.sh"
gpu_script_start pool_gpm.sh
G="$GPUCTL"
command -v "$PY" >/dev/null || { echo "pool_gpm.sh: needs python3" | tee -a "$log" >&2; exit 69; }
nvidia-smi dmon --help 2>&1 | grep -q gpm-metrics ||
	{ echo "pool_gpm.sh: this nvidia-smi has no dmon --gpm-metrics" | tee -a "$log" >&2; exit 69; }

cat >"$out/busy.py" <<'PY'
import ctypes, sys, time
secs = float(sys.argv[1])
end = time.time() + secs
try:
    import torch
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    print("load: torch bf16 8192^3 matmul", flush=True)
    while time.time() < end:
        for _ in range(8):
            c = a @ b
        torch.cuda.synchronize()
    sys.exit(0)
except ImportError:
    pass
cu = ctypes.CDLL("libcuda.so.1")
assert cu.cuInit(0) == 0
dev, ctx, ptr = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_uint64()
assert cu.cuDeviceGet(ctypes.byref(dev), 0) == 0
assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0 and cu.cuCtxSetCurrent(ctx) == 0
size = 8 << 30
assert cu.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(size)) == 0
print("load: cuMemsetD32 on 8 GiB (no torch)", flush=True)
k = 0
while time.time() < end:
    assert cu.cuMemsetD32_v2(ptr, ctypes.c_uint(k), ctypes.c_size_t(size // 4)) == 0
    assert cu.cuCtxSynchronize() == 0
    k += 1
PY
cat >"$out/idle.py" <<'PY'
import ctypes, sys, time
cu = ctypes.CDLL("libcuda.so.1")
assert cu.cuInit(0) == 0
dev, ctx, ptr = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_uint64()
assert cu.cuDeviceGet(ctypes.byref(dev), 0) == 0
assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0 and cu.cuCtxSetCurrent(ctx) == 0
assert cu.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(1 << 30)) == 0
print("holding GPU 0 idle", flush=True)
time.sleep(float(sys.argv[1]))
PY

tmp=$(mktemp -d /tmp/gpuctl-poolgpm-XXXXXX)
chmod 755 "$tmp"
sock="$tmp/pool.sock"
export GPUCTL_POOL_SOCKET="$sock"
printf 'pool_idle_window = 8s\npool_idle_threshold = 5%%\n' >"$tmp/agent.conf"
"$G" agent --listen 127.0.0.1:0 --interval 500ms --kernel-log off --pool --pool-dir "$tmp/state" \
	--pool-socket "$sock" --config "$tmp/agent.conf" >"$out/agent.out" 2>"$out/agent.err" &
agent_pid=$!
dmon_pid=""
cleanup() {
	[ -n "$dmon_pid" ] && kill "$dmon_pid" 2>/dev/null
	kill "$agent_pid" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
wait_pool_agent "$agent_pid" || { echo "pool_gpm.sh: the agent's pool did not start (agent.err)" | tee -a "$log" >&2; exit 69; }
port=$(sed -n 's/.*listening on http:\/\/127.0.0.1:\([0-9]*\)\/metrics.*/\1/p' "$out/agent.err" "$out/agent.out" | head -1)
echo "agent port $port" >>"$log"
# SM activity (2), tensor (5), DRAM (10): the last three columns of each line
nvidia-smi dmon -i 0 -s u -d 1 -o DT --gpm-metrics 2,5,10 >"$out/dmon.txt" 2>>"$log" &
dmon_pid=$!
cd "$tmp" || exit 69

warning_of() { "$G" queue --json 2>>"$log" | "$PY" -c '
import json, sys
j = [j for j in json.load(sys.stdin)["jobs"] if j["id"] == int(sys.argv[1])]
print(j[0].get("warning", "") if j else "")' "$1"; }

# --- 1: busy -----------------------------------------------------------------------
busy=$("$G" submit --id-only --gpu-ids 0 --name busy -- "$PY" "$out/busy.py" 20)
echo "busy job $busy" >>"$log"
# until the job has run 16 s (past the 8 s window with the load on, torch's start included)
ran_for() { "$G" jobs --json 2>>"$log" | "$PY" -c '
import json, sys
j = [j for j in json.load(sys.stdin)["jobs"] if j["id"] == int(sys.argv[1])]
a = (j[0].get("accounting") or [{}])[0] if j else {}
sys.exit(0 if a.get("gpu_seconds", 0) >= float(sys.argv[2]) else 1)' "$1" "$2"; }
for _ in $(seq 1 300); do ran_for "$busy" 16 && break; sleep 0.1; done
"$G" queue --json >"$out/queue_busy.json" 2>>"$log"
curl -s --max-time 10 "http://127.0.0.1:$port/metrics" >"$out/metrics_busy.txt"
"$G" wait --timeout 60s "$busy" >>"$log" 2>&1

# --- 2: idle -----------------------------------------------------------------------
idle=$("$G" submit --id-only --gpu-ids 0 --name idle -- "$PY" "$out/idle.py" 40)
echo "idle job $idle" >>"$log"
for _ in $(seq 1 300); do
	[ -n "$(warning_of "$idle")" ] && break
	sleep 0.1
done
"$G" queue --json >"$out/queue_idle.json" 2>>"$log"
curl -s --max-time 10 "http://127.0.0.1:$port/metrics" >"$out/metrics_idle.txt"
"$G" health -i 0 --json >"$out/health.json" 2>>"$log"
"$G" cancel "$idle" >>"$log" 2>&1
"$G" wait --timeout 30s "$idle" >>"$log" 2>&1
sleep 1
kill "$dmon_pid" 2>/dev/null
wait "$dmon_pid" 2>/dev/null
dmon_pid=""
"$G" jobs --history --json >"$out/jobs.json" 2>>"$log"
"$G" jobs --history >>"$log" 2>&1
for j in "$busy" "$idle"; do "$G" logs "$j" >>"$log" 2>&1; "$G" logs --stderr "$j" >>"$log" 2>&1; done

# --- the checks ------------------------------------------------------------------------
"$PY" - "$out" "$busy" "$idle" <<'PY' | tee "$out/summary.txt"
import datetime, json, sys
out, busy, idle = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
jobs = {j["id"]: j for j in json.load(open(f"{out}/jobs.json"))["jobs"]}
fails, res = 0, {}
def check(what, ok, detail=""):
    global fails
    fails += 0 if ok else 1
    res[what] = {"ok": bool(ok), "detail": str(detail)}
    print(("PASS " if ok else "FAIL ") + what + (f" ({detail})" if detail else ""))
def queue_warning(path, j):
    return next((x.get("warning", "") for x in json.load(open(path))["jobs"] if x["id"] == j), None)
def metric(path, name, j):
    for l in open(path):
        if l.startswith(name + '{job="%d"' % j):
            return float(l.split()[-1])
    return None
dmon = []  # (t, sm, tensor, dram)
for l in open(f"{out}/dmon.txt"):
    f = l.split()
    if not f or f[0].startswith("#") or len(f) < 6:
        continue
    try:
        t = datetime.datetime.strptime(f[0] + " " + f[1], "%Y%m%d %H:%M:%S").timestamp()
        dmon.append((t,) + tuple(None if v == "-" else float(v) for v in f[-3:]))
    except ValueError:
        pass
def dmon_mean(j, k):
    s, e = j["start_ns"] / 1e9, j["end_ns"] / 1e9
    v = [r[k] for r in dmon if s + 1 <= r[0] <= e - 1 and r[k] is not None]
    return sum(v) / len(v) if v else None
figs = {}
for name, j in (("busy", busy), ("idle", idle)):
    job = jobs.get(j, {})
    a = (job.get("accounting") or [{}])[0]
    figs[name] = {k: a.get(k) for k in ("sm_active_avg_pct", "tensor_active_avg_pct", "dram_active_avg_pct", "samples")}
    if job.get("start_ns") and job.get("end_ns"):
        figs[name]["nvidia_smi"] = {"sm": dmon_mean(job, 1), "tensor": dmon_mean(job, 2), "dram": dmon_mean(job, 3)}
    figs[name]["state"], figs[name]["reason"] = job.get("state"), job.get("reason")
print(json.dumps(figs, indent=1))
b, i = figs["busy"], figs["idle"]
check("busy job done", b["state"] == "done", b["reason"])
check("busy job not flagged in queue (after the window)", queue_warning(f"{out}/queue_busy.json", busy) == "",
      queue_warning(f"{out}/queue_busy.json", busy))
check("busy job's idle metric is 0", metric(f"{out}/metrics_busy.txt", "gpuctl_pool_job_idle_allocation", busy) == 0)
check("busy job: SM activity mean read", isinstance(b["sm_active_avg_pct"], (int, float)), b["sm_active_avg_pct"])
smi = (b.get("nvidia_smi") or {}).get("sm")
check("busy job: SM activity mean within 5 points of nvidia-smi dmon --gpm-metrics",
      smi is not None and isinstance(b["sm_active_avg_pct"], (int, float)) and abs(b["sm_active_avg_pct"] - smi) <= 5,
      f"gpuctl {b['sm_active_avg_pct']}, nvidia-smi {smi}")
check("busy job: SM activity over 50", (b["sm_active_avg_pct"] or 0) > 50, b["sm_active_avg_pct"])
w = queue_warning(f"{out}/queue_idle.json", idle)
check("idle job flagged in queue", w == "idle allocation: SM activity < 5% for 8s", w)
check("idle job's idle metric is 1", metric(f"{out}/metrics_idle.txt", "gpuctl_pool_job_idle_allocation", idle) == 1)
h = json.load(open(f"{out}/health.json"))
rules = [f["rule"] for g in h.get("gpus", []) for f in g.get("findings", [])]
check("health: allocated-gpu-idle while the idle job holds GPU 0", "allocated-gpu-idle" in rules, rules)
check("idle job: SM activity mean under 5", isinstance(i["sm_active_avg_pct"], (int, float)) and i["sm_active_avg_pct"] < 5,
      i["sm_active_avg_pct"])
ismi = (i.get("nvidia_smi") or {}).get("sm")
check("idle job: nvidia-smi's SM activity under 5 too", ismi is not None and ismi < 5, ismi)
check("idle job cancelled", i["state"] == "cancelled", i["reason"])
json.dump({"checks": res, "figures": figs, "failed": fails}, open(f"{out}/summary.json", "w"), indent=1)
print("%d checks, %d failed" % (len(res), fails))
sys.exit(1 if fails else 0)
PY
exit "${PIPESTATUS[0]}"
