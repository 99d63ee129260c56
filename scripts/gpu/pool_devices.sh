#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# pool_devices.sh - the pool's device limits on a real GPU server with at
# least 2 GPUs, as root (the lead runs it; docs/pool.md "Device limits"):
# `gpuctl agent --pool` on a temporary state directory, then for GPU 0 and
# GPU 1 a job that
#   - opens every /dev/nvidiaN: its own GPU's node (N = "Device Minor:" of its
#     bus id in /proc/driver/nvidia/gpus/) must open, every other one must give
#     EPERM; nvidiactl and nvidia-uvm must open;
#   - initialises CUDA through libcuda (python3 ctypes) and must see exactly
#     one device, with the UUID it was given (CUDA works under the limits);
# and a 2-GPU job that opens both nodes. Also records what nvidia-smi says
# inside a limited job (informational).
# Results under $OUT/pool_devices/ (default ./pool-out/pool_devices/):
# summary.txt (PASS/FAIL per check), run.log, agent.err, job_N.out.
# About 20 s on 2x H200 (plus a build if there is no packed one). Changes no
# GPU setting. Exit: 0 all passed, 1 some failed, 69 could not run (not root,
# no nvidia-smi, fewer than 2 GPUs, no python3).
set -u -o pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="${OUT:-$root/pool-out}/pool_devices"
mkdir -p "$out"
log="$out/run.log"
: >"$log"
export GPUCTL_DATA_DIR="$root/data" LC_ALL=C
unset GPUCTL_SIM
{ date -u '+%Y-%m-%d %H:%M:%S UTC'; uname -a; id; } >>"$log" 2>&1
[ "$(id -u)" -eq 0 ] || { echo "pool_devices.sh: needs root (device programs)" | tee -a "$log" >&2; exit 69; }
command -v nvidia-smi >/dev/null || { echo "pool_devices.sh: no nvidia-smi here" | tee -a "$log" >&2; exit 69; }
command -v python3 >/dev/null || { echo "pool_devices.sh: needs python3" | tee -a "$log" >&2; exit 69; }
nvidia-smi --query-gpu=index,pci.bus_id,uuid --format=csv,noheader >"$out/gpus.csv" 2>>"$log"
ngpu=$(grep -c . "$out/gpus.csv")
# the MIG capability list the device limits read (about 100 KB for 32 possible GPUs)
if [ -r /proc/driver/nvidia-caps/mig-minors ]; then
	{ echo "mig-minors: $(wc -lc </proc/driver/nvidia-caps/mig-minors) (lines, bytes)"; head -3 /proc/driver/nvidia-caps/mig-minors; tail -2 /proc/driver/nvidia-caps/mig-minors; } >>"$log" 2>&1
fi
[ "$ngpu" -ge 2 ] || { echo "pool_devices.sh: needs 2 GPUs, found $ngpu" | tee -a "$log" >&2; exit 69; }

. "$root/scripts/gpu/lib.sh"
find_gpuctl pool_devices.sh
G="$GPUCTL"

# GPU index -> minor, from the driver's files (what the pool reads too)
minor_of() {
	local bus
	bus=$(awk -F', ' -v i="$1" '$1 == i { print tolower($2) }' "$out/gpus.csv" | sed 's/^0000//')
	sed -n 's/^Device Minor:[[:space:]]*//p' "/proc/driver/nvidia/gpus/$bus/information"
}
m0=$(minor_of 0)
m1=$(minor_of 1)
echo "GPU 0 minor $m0, GPU 1 minor $m1" >>"$log"

cat >"$out/cuda.py" <<'PY'
import ctypes
cu = ctypes.CDLL("libcuda.so.1")
r = cu.cuInit(0)
n = ctypes.c_int(-1)
if r == 0:
    r = cu.cuDeviceGetCount(ctypes.byref(n))
print("cuda", r, n.value)
for i in range(max(n.value, 0)):
    dev = ctypes.c_int()
    u = (ctypes.c_ubyte * 16)()
    if cu.cuDeviceGet(ctypes.byref(dev), i) == 0 and cu.cuDeviceGetUuid(u, dev) == 0:
        h = bytes(u).hex()
        print("uuid GPU-%s-%s-%s-%s-%s" % (h[0:8], h[8:12], h[12:16], h[16:20], h[20:32]))
PY
cat >"$out/job.sh" <<'SH'
for n in /dev/nvidia[0-9]* /dev/nvidiactl /dev/nvidia-uvm; do
	if msg=$( (: <"$n") 2>&1); then echo "open ${n#/dev/} ok"
	else case "$msg" in *"not permitted"*) echo "open ${n#/dev/} EPERM";; *) echo "open ${n#/dev/} other $msg";; esac; fi
done
python3 "$1"
nvidia-smi -L 2>&1 | sed 's/^/smi /'
SH

tmp=$(mktemp -d /tmp/gpuctl-pooldev-XXXXXX)
chmod 755 "$tmp"
sock="$tmp/pool.sock"
export GPUCTL_POOL_SOCKET="$sock"
"$G" agent --listen 127.0.0.1:0 --interval 500ms --pool --pool-dir "$tmp/state" --pool-socket "$sock" \
	>"$out/agent.out" 2>"$out/agent.err" &
agent_pid=$!
trap 'kill $agent_pid 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 1 150); do
	"$G" queue >/dev/null 2>&1 && break
	kill -0 "$agent_pid" 2>/dev/null || break
	sleep 0.1
done
"$G" queue --json >"$out/queue.json" 2>>"$log" || { echo "pool_devices.sh: the pool did not start (agent.err)" | tee -a "$log" >&2; exit 69; }
sleep 2
cd "$tmp" || exit 69
j0=$("$G" submit --id-only --gpu-ids 0 -- bash "$out/job.sh" "$out/cuda.py")
j1=$("$G" submit --id-only --gpu-ids 1 -- bash "$out/job.sh" "$out/cuda.py")
"$G" wait --timeout 60s "$j0" "$j1" >>"$log" 2>&1
j2=$("$G" submit --id-only --gpu-ids 0,1 -- bash "$out/job.sh" "$out/cuda.py")
"$G" wait --timeout 60s "$j2" >>"$log" 2>&1
for j in "$j0" "$j1" "$j2"; do "$G" logs "$j" >"$out/job_$j.out" 2>&1; "$G" logs --stderr "$j" >>"$out/job_$j.out" 2>&1; done
"$G" jobs --history --json >"$out/jobs.json" 2>>"$log"

fails=0
check() { if eval "$2"; then echo "PASS $1"; else echo "FAIL $1"; fails=$((fails + 1)); fi; }
{
	devices=$(jq -r .devices "$out/queue.json")
	echo "devices line: $devices"
	check "the agent limits devices with the cgroup v2 program or v1" "grep -q 'devices limited to each job' <<<\"\$devices\""
	for pair in "$j0:$m0:$m1:0" "$j1:$m1:$m0:1"; do
		IFS=: read -r j own other idx <<<"$pair"
		f="$out/job_$j.out"
		uuid=$(awk -F', ' -v i="$idx" '$1 == i { print $3 }' "$out/gpus.csv")
		check "job $j (GPU $idx): its node nvidia$own opens" "grep -q '^open nvidia$own ok' $f"
		check "job $j (GPU $idx): nvidia$other gives EPERM" "grep -q '^open nvidia$other EPERM' $f"
		check "job $j: no other GPU node opens" "! grep -v '^open nvidia$own ' $f | grep -q '^open nvidia[0-9]* ok'"
		check "job $j: nvidiactl opens" "grep -q '^open nvidiactl ok' $f"
		check "job $j: nvidia-uvm is not denied" "! grep -q '^open nvidia-uvm EPERM' $f"
		check "job $j: CUDA sees one device" "grep -q '^cuda 0 1$' $f"
		check "job $j: it is its GPU" "grep -q '^uuid $uuid$' $f"
	done
	f="$out/job_$j2.out"
	check "2-GPU job: both nodes open" "grep -q '^open nvidia$m0 ok' $f && grep -q '^open nvidia$m1 ok' $f"
	check "2-GPU job: CUDA sees two devices" "grep -q '^cuda 0 2$' $f"
	echo "$fails failed"
} | tee "$out/summary.txt"
grep -q '^0 failed$' "$out/summary.txt"
