#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# pool.sh - the job pool on a real GPU server with at least 2 GPUs (the lead
# runs it; issue 7's "done when"): `gpuctl agent --pool` on a temporary state
# directory and socket, then
#   1. two 1-GPU jobs side by side, each seeing only its GPU (a CUDA driver-API
#      probe through python3 ctypes prints the devices it can see and their
#      UUIDs, then keeps its GPU busy with memsets on a buffer of known size);
#   2. a 2-GPU job submitted meanwhile waits (with its reason) until both end,
#      then sees both GPUs;
#   3. the accounting of each job and GPU against nvidia-smi sampled every
#      250 ms over the same window: energy (integral of power.draw), peak
#      memory used, average utilization;
#   4. a process started outside the pool on GPU 0 holds a job asking for GPU 0
#      ("GPU 0 runs a process the pool did not start") until it ends.
# Results under $OUT/pool/ (default ./pool-out/pool/): summary.txt (PASS/FAIL
# per check, the comparison table), run.log, agent.err, smi.csv, queue.json,
# jobs.json, job_N.out, probe.py.
#
# gpuctl: $GPUCTL if set; else the packed build (.device-carry/foundation, see
# scripts/gpu/foundation.sh pack); else a cmake Release build in /tmp/gpuctl-build.
# About 70 s on 2x H200 (plus a build if there is no packed one). Needs
# python3 and libcuda.so.1 (no nvcc, no PyTorch). Changes no GPU setting.
# Exit: 0 every check passed, 1 some failed (summary.txt), 69 could not run.
set -u -o pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="${OUT:-$root/pool-out}/pool"
mkdir -p "$out"
log="$out/run.log"
: >"$log"
export GPUCTL_DATA_DIR="$root/data"
unset GPUCTL_SIM
{ date -u '+%Y-%m-%d %H:%M:%S UTC'; uname -a; id; } >>"$log" 2>&1
command -v nvidia-smi >/dev/null || { echo "pool.sh: no nvidia-smi here" | tee -a "$log" >&2; exit 69; }
command -v python3 >/dev/null || { echo "pool.sh: needs python3 (for the CUDA probe)" | tee -a "$log" >&2; exit 69; }
nvidia-smi -L >"$out/gpus.txt" 2>>"$log"
ngpu=$(grep -c '^GPU ' "$out/gpus.txt")
[ "$ngpu" -ge 2 ] || { echo "pool.sh: needs 2 GPUs, found $ngpu" | tee -a "$log" >&2; exit 69; }

# --- gpuctl -------------------------------------------------------------------------
. "$root/scripts/gpu/lib.sh"
find_gpuctl pool.sh
G="$GPUCTL"
echo "gpuctl: $G" >>"$log"

# --- the probe: what CUDA lets a job see, then load on every visible GPU ------------------
cat >"$out/probe.py" <<'PY'
import ctypes, sys, time
secs, mem_gib = float(sys.argv[1]), float(sys.argv[2])
cu = ctypes.CDLL("libcuda.so.1")
def ok(r, what):
    if r != 0:
        print("error", what, r, flush=True)
        sys.exit(1)
ok(cu.cuInit(0), "cuInit")
n = ctypes.c_int()
ok(cu.cuDeviceGetCount(ctypes.byref(n)), "cuDeviceGetCount")
print("visible", n.value, flush=True)
bufs = []
for i in range(n.value):
    dev = ctypes.c_int()
    ok(cu.cuDeviceGet(ctypes.byref(dev), i), "cuDeviceGet")
    u = (ctypes.c_ubyte * 16)()
    ok(cu.cuDeviceGetUuid(u, dev), "cuDeviceGetUuid")
    h = bytes(u).hex()
    print("uuid GPU-%s-%s-%s-%s-%s" % (h[0:8], h[8:12], h[12:16], h[16:20], h[20:32]), flush=True)
    ctx = ctypes.c_void_p()
    ok(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
    ok(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    size = int(mem_gib * (1 << 30))
    ptr = ctypes.c_uint64()
    ok(cu.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(size)), "cuMemAlloc")
    bufs.append((ctx, ptr, size))
end, k = time.time() + secs, 0
while time.time() < end:
    for ctx, ptr, size in bufs:
        cu.cuCtxSetCurrent(ctx)
        ok(cu.cuMemsetD32_v2(ptr, ctypes.c_uint(k), ctypes.c_size_t(size // 4)), "cuMemsetD32")
    for ctx, ptr, size in bufs:
        cu.cuCtxSetCurrent(ctx)
        ok(cu.cuCtxSynchronize(), "cuCtxSynchronize")
    k += 1
print("memsets", k, flush=True)
PY

# --- the agent ---------------------------------------------------------------------------
tmp=$(mktemp -d /tmp/gpuctl-poolgpu-XXXXXX)
chmod 755 "$tmp"
sock="$tmp/pool.sock"
export GPUCTL_POOL_SOCKET="$sock"
"$G" agent --listen 127.0.0.1:0 --interval 500ms --pool --pool-dir "$tmp/state" --pool-socket "$sock" \
	>"$out/agent.out" 2>"$out/agent.err" &
agent_pid=$!
smi_pid=""
foreign_pid=""
cleanup() {
	[ -n "$smi_pid" ] && kill "$smi_pid" 2>/dev/null
	[ -n "$foreign_pid" ] && kill "$foreign_pid" 2>/dev/null
	kill "$agent_pid" 2>/dev/null
	wait 2>/dev/null
	cp -r "$tmp/state/jobs" "$out/state-jobs" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
for _ in $(seq 1 150); do
	"$G" queue >/dev/null 2>&1 && break
	kill -0 "$agent_pid" 2>/dev/null || break
	sleep 0.1
done
cat "$out/agent.err" >>"$log"
"$G" queue >/dev/null 2>>"$log" || { echo "pool.sh: the agent's pool did not start (agent.err)" | tee -a "$log" >&2; exit 69; }
sleep 2 # a few samples before the first job

nvidia-smi --query-gpu=timestamp,index,uuid,power.draw,memory.used,utilization.gpu --format=csv,noheader,nounits \
	-lms 250 >"$out/smi.csv" 2>>"$log" &
smi_pid=$!
sleep 1

# --- 1 and 2: two 1-GPU jobs side by side, a 2-GPU job behind them ---------------------------
cd "$tmp" || exit 69
j1=$("$G" submit --id-only --name one -- python3 "$out/probe.py" 15 8)
j2=$("$G" submit --id-only --name two -- python3 "$out/probe.py" 15 16)
sleep 2
j3=$("$G" submit --id-only --gpus 2 --name both -- python3 "$out/probe.py" 8 4)
sleep 1.5
"$G" queue --json >"$out/queue.json" 2>>"$log"
"$G" queue >>"$log" 2>&1
"$G" wait --timeout 90s "$j1" "$j2" "$j3" >>"$log" 2>&1
for j in "$j1" "$j2" "$j3"; do "$G" logs "$j" >"$out/job_$j.out" 2>&1; "$G" logs --stderr "$j" >>"$out/job_$j.out" 2>&1; done

# --- 4: a process the pool did not start holds GPU 0 --------------------------------------
uuid0=$(sed -n 's/^GPU 0: .*(UUID: \(GPU-[^)]*\)).*/\1/p' "$out/gpus.txt")
CUDA_VISIBLE_DEVICES="$uuid0" python3 "$out/probe.py" 8 1 >"$out/foreign.out" 2>&1 &
foreign_pid=$!
sleep 3
j4=$("$G" submit --id-only --gpu-ids 0 --name after-foreign -- true)
sleep 1.5
"$G" queue --json >"$out/queue_foreign.json" 2>>"$log"
wait "$foreign_pid" 2>/dev/null
foreign_pid=""
"$G" wait --timeout 30s "$j4" >>"$log" 2>&1
sleep 1
kill "$smi_pid" 2>/dev/null
wait "$smi_pid" 2>/dev/null
smi_pid=""
"$G" jobs --history --json >"$out/jobs.json" 2>>"$log"

# --- the checks -----------------------------------------------------------------------------
python3 - "$out" "$j1" "$j2" "$j3" "$j4" <<'PY' | tee "$out/summary.txt"
import csv, datetime, json, sys
out, j1, j2, j3, j4 = sys.argv[1], *map(int, sys.argv[2:6])
jobs = {j["id"]: j for j in json.load(open(f"{out}/jobs.json"))["jobs"]}
smi_uuids = [l.split("UUID: ")[1].rstrip(")\n") for l in open(f"{out}/gpus.txt") if "UUID: " in l]
fails = 0
def check(what, ok, detail=""):
    global fails
    fails += 0 if ok else 1
    print(("PASS " if ok else "FAIL ") + what + (f" ({detail})" if detail else ""))
def seen(j):
    lines = open(f"{out}/job_{j}.out").read().split("\n")
    vis = [int(l.split()[1]) for l in lines if l.startswith("visible ")]
    return (vis[0] if vis else -1), [l.split()[1] for l in lines if l.startswith("uuid ")]
for j in (j1, j2, j3, j4):
    check(f"job {j} ended done", j in jobs and jobs[j]["state"] == "done", jobs.get(j, {}).get("reason", "missing"))
if fails:
    sys.exit(1)
v1, u1 = seen(j1); v2, u2 = seen(j2); v3, u3 = seen(j3)
check("job 1 sees exactly one GPU", v1 == 1, f"visible {v1}")
check("job 2 sees exactly one GPU", v2 == 1, f"visible {v2}")
check("they see different GPUs", u1 and u2 and u1 != u2, f"{u1} {u2}")
check("job 1 sees the GPU it was given", u1 == [jobs[j1]["cuda_visible_devices"]], f"{u1} vs {jobs[j1]['cuda_visible_devices']}")
check("job 2 sees the GPU it was given", u2 == [jobs[j2]["cuda_visible_devices"]])
check("the UUIDs are nvidia-smi's", all(u in smi_uuids for u in u1 + u2 + u3))
a, b = jobs[j1], jobs[j2]
check("the two ran side by side", a["start_ns"] < b["end_ns"] and b["start_ns"] < a["end_ns"])
q = {j["id"]: j for j in json.load(open(f"{out}/queue.json"))["jobs"]}
check("the 2-GPU job waited with its reason", j3 in q and q[j3]["state"] == "pending",
      q.get(j3, {}).get("reason", "not in queue"))
c = jobs[j3]
check("it started after both ended", c["start_ns"] >= max(a["end_ns"], b["end_ns"]))
check("it saw both GPUs", v3 == 2 and sorted(u3) == sorted(u1 + u2), f"visible {v3}")
qf = {j["id"]: j for j in json.load(open(f"{out}/queue_foreign.json"))["jobs"]}
check("a job for GPU 0 waits while a foreign process runs there",
      qf.get(j4, {}).get("reason") == "GPU 0 runs a process the pool did not start", qf.get(j4, {}).get("reason"))

# accounting vs nvidia-smi over each job's window
rows = []
for r in csv.reader(open(f"{out}/smi.csv")):
    try:
        t = datetime.datetime.strptime(r[0].strip(), "%Y/%m/%d %H:%M:%S.%f").timestamp()
        rows.append((t, r[2].strip(), float(r[3]), float(r[4]), float(r[5])))
    except (ValueError, IndexError):
        pass
uuid_of = {}
for l in open(f"{out}/gpus.txt"):
    if l.startswith("GPU "):
        uuid_of[int(l.split(":")[0].split()[1])] = l.split("UUID: ")[1].rstrip(")\n")
print("\njob gpu  gpuctl: energy J  mem peak MiB  util avg %  | nvidia-smi: energy J  mem peak MiB  util avg %")
for j in (j1, j2, j3):
    job = jobs[j]
    t0, t1 = job["start_ns"] / 1e9, job["end_ns"] / 1e9
    for acc in job.get("accounting", []):
        u = uuid_of[acc["gpu"]]
        w = [r for r in rows if r[1] == u and t0 <= r[0] <= t1]
        e = sum((w[i + 1][0] - w[i][0]) * (w[i][2] + w[i + 1][2]) / 2 for i in range(len(w) - 1))
        e += (w[0][0] - t0) * w[0][2] + (t1 - w[-1][0]) * w[-1][2] if w else 0
        mp = max((r[3] for r in w), default=0)
        ua = sum(r[4] for r in w) / len(w) if w else 0
        ge, gm, gu = acc.get("energy_j"), acc.get("mem_peak_bytes", 0) / 2**20, acc.get("util_avg_pct")
        print(f"{j:3d} {acc['gpu']:3d}  {ge if ge is None else round(ge, 1)!s:>14}  {gm:12.0f}  {gu if gu is None else round(gu, 1)!s:>10}"
              f"  | {e:18.1f}  {mp:12.0f}  {ua:10.1f}   ({len(w)} nvidia-smi samples, {acc['samples']} gpuctl)")
        check(f"job {j} GPU {acc['gpu']}: energy within 15% of nvidia-smi's power integral",
              ge is not None and e > 0 and abs(ge - e) / e < 0.15, f"{ge} J vs {e:.1f} J")
        check(f"job {j} GPU {acc['gpu']}: peak memory within 5% of nvidia-smi's",
              mp > 0 and abs(gm - mp) / mp < 0.05, f"{gm:.0f} vs {mp:.0f} MiB")
print(f"\n{fails} failed")
sys.exit(1 if fails else 0)
PY
rc=$?
exit $rc
