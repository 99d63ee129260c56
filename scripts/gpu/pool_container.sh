#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# pool_container.sh - issue 17 on a real GPU server: the pool's own container
# path (gpuctl agent --pool, gpuctl submit --image) with podman, not a podman
# run by hand (that is container.sh). Checks, each logged PASS/FAIL:
#   - a container job runs a CUDA program (the carried image's cudatest: a
#     vector add checked on the CPU) and ends done with PASS in its log;
#   - its container saw exactly the placed GPU: /dev/nvidia<minor> of that GPU
#     and no other GPU's node, CUDA_VISIBLE_DEVICES its UUID;
#   - while a container job runs CUDA, the pool does not take its processes
#     for foreign ones (a pending job's reason is "held by pool job N", never
#     "runs process P, which the pool did not start"): the container's
#     processes run in the job's cgroup, not below its shim;
#   - cancel stops and removes the container; the pending job then runs;
#   - an image needing CUDA 99.0 is refused before it starts.
# podman: the carried Debian 12 podman (.device-carry/podman, podman_setup in
# lib.sh); gpuctl: a Release build packed here with
#   GPUCTL_PACK=$PWD/.device-carry/pool-container GPUCTL_PACK_BUILD=$PWD/build-pc \
#     scripts/gpu/foundation.sh pack
# Device call (one H200, about 2 minutes):
#   run(command="scripts/gpu/pool_container.sh", kind="nvidia-h200", timeout_s=420,
#       carry=[".device-carry/podman", ".device-carry/pool-container"])
# Results under $OUT: summary.txt (checks, verdict), run.log (setup), agent.log,
# jobs.txt (the jobs' records and logs). Changes no GPU setting; writes
# /var/run/cdi/gpuctl-pool-*.json (removed at the end) and
# /etc/containers/policy.json (when missing).
set -u -o pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="${OUT:-$root/pool-container-out}"
mkdir -p "$out"
log="$out/run.log"
: >"$log"
. "$root/scripts/gpu/lib.sh"
GPUCTL_PACK="${GPUCTL_PACK:-$root/.device-carry/pool-container}"
gpu_script_start pool_container
. "$root/tests/cli/lib.bash" # check, wait_until, hold, release, on_exit, finish; $tmp
exec > >(tee "$out/summary.txt") 2>&1
G="$GPUCTL"

pm="$tmp/pm"
podman_setup "$pm" >>"$log" 2>&1 || { echo "VERDICT: the carried podman did not unpack"; exit 1; }
podman import --change 'ENV CUDA_VERSION=12.4.1' "$pm/img.tar" localhost/gpuctl-cudatest >>"$log" 2>&1 &&
	podman import --change 'ENV NVIDIA_REQUIRE_CUDA=cuda>=99.0' "$pm/img.tar" localhost/gpuctl-cuda99 >>"$log" 2>&1 ||
	{ echo "VERDICT: podman import failed (run.log)"; exit 1; }
on_exit 'podman rm -a -f -t 0 >/dev/null 2>&1'

# --- the agent with its pool on the real GPUs
sock="$tmp/pool.sock"
export GPUCTL_POOL_SOCKET="$sock"
"$G" agent --listen 127.0.0.1:0 --interval 200ms --kernel-log off --pool --pool-dir "$tmp/state" \
	--pool-socket "$sock" >"$out/agent.log" 2>&1 &
agent_pid=$!
on_exit 'kill "$agent_pid" 2>/dev/null; wait "$agent_pid" 2>/dev/null; rm -f /var/run/cdi/gpuctl-pool-*.json'
agent_answers() { "$G" queue >/dev/null 2>&1; }
wait_until 60 agent_answers || { echo "VERDICT: the agent did not come up (agent.log)"; exit 1; }
jobfield() { "$G" jobs --history --all --json | jq -r --argjson id "$1" ".jobs[] | select(.id == \$id) | .$2"; }
is_state() { [ "$(jobfield "$1" state)" = "$2" ]; }
reason_of() { "$G" queue --json | jq -r --argjson id "$1" '.jobs[] | select(.id == $id) | .reason'; }
container_gone() { [ -z "$(podman ps -a -q --filter "name=^gpuctl-job-$1\$")" ]; }
record() { # record ID: the job's record and logs into jobs.txt
	{ echo "== job $1"; "$G" jobs --history --all --json | jq ".jobs[] | select(.id == $1)"
	  echo "-- stdout"; "$G" logs "$1"; echo "-- stderr"; "$G" logs --stderr "$1"; } >>"$out/jobs.txt" 2>&1
}
grep "pool on" "$out/agent.log"

# --- 1: a CUDA program in a container, what it sees
j1=$("$G" submit --id-only --image localhost/gpuctl-cudatest -- \
	sh -c 'echo "nodes=$(ls /dev | grep nvidia | tr "\n" " ")"; echo "cvd=$CUDA_VISIBLE_DEVICES gpus=$GPUCTL_JOB_GPUS"; cudatest')
check "job $j1 submitted" test -n "$j1"
timeout 180 "$G" wait "$j1" >/dev/null
record "$j1"
check "job $j1 done" is_state "$j1" done
check "its CUDA program passed" sh -c "\"$G\" logs $j1 | grep -qx PASS"
if ! is_state "$j1" done; then # the rest needs containers that start: stop here (its stderr is in jobs.txt)
	"$G" logs --stderr "$j1" | tail -5
	finish
	echo "VERDICT: FAIL (the first container job did not end done)"
	exit 0
fi
g=$(jobfield "$j1" 'gpus[0]')
uuid=$(jobfield "$j1" cuda_visible_devices)
bus=$(nvidia-smi -i "$g" --query-gpu=pci.bus_id --format=csv,noheader | tr 'A-F' 'a-f')
[ -e "/proc/driver/nvidia/gpus/$bus" ] || bus=${bus#0000} # 00000000:xx:00.0 there, or 0000:xx:00.0
minor=$(sed -n 's/^Device Minor:[[:space:]]*//p' "/proc/driver/nvidia/gpus/$bus/information")
nodes=$("$G" logs "$j1" | sed -n 's/^nodes=//p')
echo "job $j1: GPU $g ($uuid, bus $bus, minor $minor); the container saw: $nodes"
gpu_nodes=$(tr ' ' '\n' <<<"$nodes" | grep -E '^nvidia[0-9]+$' | tr '\n' ' ')
check "the container saw its GPU's node and no other GPU's" test "$gpu_nodes" = "nvidia$minor "
check "CUDA_VISIBLE_DEVICES is its GPU's UUID" sh -c "\"$G\" logs $j1 | grep -q '^cvd=$uuid '"
check "which is GPU $g's UUID for nvidia-smi" test "$(nvidia-smi -i "$g" --query-gpu=uuid --format=csv,noheader)" = "$uuid"
check "job $j1 has accounting" test "$(jobfield "$j1" 'accounting | length')" -ge 1
check "its container is gone" container_gone "$j1"

# --- 2: a container job running CUDA until released; a bare job waits for its GPU
loop="n=0; while [ -e '$tmp/j2.hold' ]; do cudatest >/dev/null && n=\$((n+1)) && echo \"ran \$n\"; done"
: >"$tmp/j2.hold"
j2=$("$G" submit --id-only --image localhost/gpuctl-cudatest --mount "$tmp:$tmp:ro" -- sh -c "$loop")
ran_twice() { "$G" logs "$j2" | grep -qx 'ran 2'; }
check "job $j2 runs CUDA in its container" wait_until 120 ran_twice
j3=$("$G" submit --id-only --gpu-ids "$(jobfield "$j2" 'gpus[0]')" -- true)
foreign=0 held=0
for _ in $(seq 60); do # 60 samples of j3's reason, while j2's container runs CUDA programs
	r=$(reason_of "$j3")
	case "$r" in
	*"did not start"*) foreign=$((foreign + 1)); echo "sample: $r" ;;
	*"held by pool job $j2"*) held=$((held + 1)) ;;
	esac
	sleep 0.2 # a sampling rate, not a wait for something
done
echo "job $j3's reason in 60 samples: held by pool job $j2: $held; a process the pool did not start: $foreign"
check "the container's CUDA processes are the pool's (never foreign)" test "$foreign" -eq 0
check "job $j3 waits for job $j2's GPU" test "$held" -gt 0
"$G" cancel "$j2" >/dev/null
check "job $j2 cancelled" wait_until 120 is_state "$j2" cancelled
check "job $j2's container removed" wait_until 120 container_gone "$j2"
check "job $j3 then ran" wait_until 120 is_state "$j3" done
release j2
record "$j2"

# --- 3: an image that needs a newer CUDA than the driver's
j4=$("$G" submit --id-only --image localhost/gpuctl-cuda99 -- cudatest)
check "job $j4 (CUDA 99.0 image) failed" wait_until 120 is_state "$j4" failed
record "$j4"
check "its reason names both versions" sh -c "\"$G\" jobs --history --json | jq -r '.jobs[] | select(.id == $j4) | .reason' | grep -q 'needs CUDA 99.0; the driver supports CUDA'"
check "no gpuctl container left" test -z "$(podman ps -a -q --filter name=gpuctl-job-)"
finish && echo "VERDICT: PASS" || echo "VERDICT: FAIL"
