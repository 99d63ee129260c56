#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# pool.sh - the job pool of `gpuctl agent --pool` on simulated servers:
# submit/queue/logs/wait/cancel/jobs, the job's environment, directory and
# CUDA_VISIBLE_DEVICES, no shell unless asked, exit codes, start failures,
# time limits, priorities, health gating from the fault file (a failed GPU,
# a foreign process), MIG slices, metrics with job/user labels, hostile
# requests on the socket, usage errors.
#
# Run by CTest (GPUCTL = the binary). By hand:
#   GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/pool.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/pool_lib.bash"
G="$GPUCTL"

# --- usage errors and no agent (exit codes: docs/exit-codes.md)
expect_exit() { # expect_exit CODE DESCRIPTION ARGS...
	local code="$1" what="$2"; shift 2
	checks=$((checks + 1))
	"$G" "$@" >"$tmp/usage.out" 2>"$tmp/usage.err"
	local rc=$?
	[ "$rc" -eq "$code" ] || fail "$what: exit $rc, want $code ($(head -c 200 "$tmp/usage.err"))"
	grep -q "^gpuctl $1: " "$tmp/usage.err" || fail "$what: no 'gpuctl $1:' message"
}
export GPUCTL_POOL_SOCKET="$tmp/none.sock"
expect_exit 64 "submit without a command" submit --gpus 2
expect_exit 64 "bad gpu count" submit --gpus 0 -- true
expect_exit 64 "bad time" submit --time soon -- true
expect_exit 64 "bad memory" submit --mem-per-gpu lots -- true
expect_exit 64 "mig with gpus" submit --mig 1g.10gb --gpus 1 -- true
expect_exit 64 "shell with two words" submit --shell -- echo hi
expect_exit 64 "unknown flag" queue --frobnicate
expect_exit 64 "bad job id" cancel 12x
expect_exit 64 "logs without id" logs
expect_exit 75 "no agent" queue
check "no agent says how to start one" grep -q "gpuctl agent --pool" "$tmp/usage.err"

# --- an agent on 8 simulated H200 without processes, faults from a file
make_free_server h200x8 "$tmp/free8.json"
faults="$tmp/faults.json"
start_agent "$tmp/free8.json,faults=$faults" || exit 1
check "agent reports the pool" grep -q "gpuctl agent: pool on $sock" "$tmp/agent.log"

mkdir -p "$tmp/work dir"
cd "$tmp/work dir" || exit 1
id=$(MYVAR='a b $c' "$G" submit --id-only --name env -- sh -c 'echo "$CUDA_VISIBLE_DEVICES"; pwd; echo "$MYVAR"; echo "$GPUCTL_JOB_ID"; echo oops >&2')
cd "$tmp" || exit 1
check "submit prints an id" test -n "$id"
"$G" wait "$id" >"$tmp/wait.out"
check "wait: exit 0 for a done job" test $? -eq 0
check "wait says done" grep -q "job $id done" "$tmp/wait.out"
"$G" logs "$id" >"$tmp/out.txt"
uuid=$(sed -n 1p "$tmp/out.txt")
check "CUDA_VISIBLE_DEVICES is a GPU UUID of the server" grep -q "\"$uuid\"" "$tmp/free8.json"
check "runs in the submitting directory" test "$(sed -n 2p "$tmp/out.txt")" = "$tmp/work dir"
check "gets the submitting environment" test "$(sed -n 3p "$tmp/out.txt")" = 'a b $c'
check "GPUCTL_JOB_ID set" test "$(sed -n 4p "$tmp/out.txt")" = "$id"
check "stderr apart" test "$("$G" logs --stderr "$id")" = "oops"
check "logs --json has base64 data" test "$("$G" logs --json "$id" | jq -r .data_b64 | base64 -d | sed -n 4p)" = "$id"

# logs -f follows until the job ends: it has printed "first" while the job
# is held, then "second" once the job is released and ends
id=$("$G" submit --id-only -- sh -c "echo first; $(hold follow); echo second")
timeout 60 "$G" logs -f "$id" >"$tmp/follow.out" &
follow_pid=$!
check "logs -f prints while the job runs" wait_until 60 grep -qx first "$tmp/follow.out"
check "the job was running then" test "$(state_of "$id")" = running
release follow
wait "$follow_pid"
check "logs -f returns at the end: exit 0" test $? -eq 0
check "logs -f printed all" test "$(tr '\n' ' ' <"$tmp/follow.out")" = "first second "
check "the job had ended when logs -f returned" test "$(state_of "$id")" = done

# no shell unless asked
id=$("$G" submit --id-only -- echo '$HOME;' '`id`')
"$G" wait "$id" >/dev/null
check "no shell: words arrive as typed" test "$("$G" logs "$id")" = '$HOME; `id`'
id=$("$G" submit --id-only --shell -- 'echo $((6*7)) | tr 4 X')
"$G" wait "$id" >/dev/null
check "--shell runs /bin/sh -c" test "$("$G" logs "$id")" = "X2"

# exit codes, start failures
id=$("$G" submit --id-only -- sh -c 'exit 3')
"$G" wait "$id" >/dev/null
check "wait: exit 2 for a failed job" test $? -eq 2
check "failed state" test "$(state_of "$id")" = failed
check "exit code kept" test "$(jobfield "$id" exit_code)" = 3
id=$("$G" submit --id-only -- gpuctl-no-such-program)
"$G" wait "$id" >/dev/null
check "unknown command fails with the reason" sh -c "\"$G\" jobs --history --json | jq -r '.jobs[] | select(.id == $id) | .reason' | grep -q 'command not found'"
check "exit code 127 for it" test "$(jobfield "$id" exit_code)" = 127

# two 1-GPU jobs side by side on different GPUs (held until released); an
# 8-GPU job waits for them
a=$("$G" submit --id-only -- sh -c "$(hold ab)")
b=$("$G" submit --id-only -- sh -c "$(hold ab)")
c=$("$G" submit --id-only --gpus 8 --name all -- true)
check "job a running" wait_state "$a" running
check "job b running" wait_state "$b" running
ga=$(jobfield "$a" 'gpus[0]')
gb=$(jobfield "$b" 'gpus[0]')
check "side by side on different GPUs" test "$ga" != "$gb"
check "the 8-GPU job waits for free GPUs" wait_reason "$c" "waiting for 8 free GPUs"
"$G" queue >"$tmp/queue.txt"
check "queue shows the waiting reason" grep -q "waiting for 8 free GPUs" "$tmp/queue.txt"
check "queue --json has the pending job with its position" test "$("$G" queue --json | jq ".jobs[] | select(.id == $c) | .position")" = 1
release ab
"$G" wait "$c" >/dev/null
check "the 8-GPU job ran after both" test "$(jobfield "$c" start_ns)" -ge "$(jobfield "$a" end_ns)"
check "it had every GPU" test "$(jobfield "$c" 'gpus | length')" = 8

# priorities: with every GPU taken (until released), the higher priority starts first
blk=$("$G" submit --id-only --gpus 8 -- sh -c "$(hold blk)")
check "the blocker runs" wait_state "$blk" running
lo=$("$G" submit --id-only --gpus 8 --priority -5 -- true)
hi=$("$G" submit --id-only --gpus 8 --priority 10 -- true)
check "both wait behind the blocker" test "$(state_of "$lo") $(state_of "$hi")" = "pending pending"
release blk
"$G" wait "$blk" "$lo" "$hi" >/dev/null
check "higher priority started first" test "$(jobfield "$hi" start_ns)" -le "$(jobfield "$lo" start_ns)"
# --after: the dependent starts only once the first has ended
first=$("$G" submit --id-only -- sh -c "$(hold first)")
dep=$("$G" submit --id-only --after "$first" -- true)
check "dependent waits with the reason" wait_reason "$dep" "waiting for job $first to end"
release first
"$G" wait "$dep" >/dev/null
check "dependent started after" test "$(jobfield "$dep" start_ns)" -ge "$(jobfield "$first" end_ns)"

# cancel (running and pending), time limit
run=$("$G" submit --id-only -- sleep 60)
check "running before cancel" wait_state "$run" running
"$G" cancel "$run" >"$tmp/cancel.out"
check "cancel answers" grep -q "job $run cancelling" "$tmp/cancel.out"
check "cancelled" wait_state "$run" cancelled 15
held=$("$G" submit --id-only -- sh -c "$(hold held)")
pend=$("$G" submit --id-only --after "$held" -- true)
"$G" cancel "$pend" >/dev/null
check "pending job cancelled at once" test "$(state_of "$pend")" = cancelled
"$G" cancel "$held" >/dev/null
release held
"$G" cancel "$pend" 2>"$tmp/cancel.err"
check "cancel of an ended job: exit 65" test $? -eq 65
check "says it ended" grep -q "already ended" "$tmp/cancel.err"
tl=$("$G" submit --id-only --time 1s -- sh -c "$(hold tl)")
check "time limit kills" wait_state "$tl" timeout
release tl

# accounting in jobs --history: the job is held until the agent's metrics
# show energy counted on both its GPUs
port=$(sed -n 's/.*listening on http:\/\/127.0.0.1:\([0-9]*\)\/metrics.*/\1/p' "$tmp/agent.log" | head -1)
scrape() { curl -s --max-time 10 "http://127.0.0.1:$port/metrics" >"$tmp/scrape.txt"; }
scraped() { # scraped AWK-CONDITION: a scrape of /metrics has a line for which it holds
	scrape && awk "$1 { found = 1 } END { exit !found }" "$tmp/scrape.txt"
}
energy_on_both() { # energy_on_both JOB: two energy series of the job, both > 0
	scrape && [ "$(grep -c "^gpuctl_job_energy_joules{job=\"$1\".* [0-9.e+]*[1-9][0-9.e+]*$" "$tmp/scrape.txt")" = 2 ]
}
acc=$("$G" submit --id-only --gpus 2 -- sh -c "$(hold acc)")
check "energy counted while the job runs" wait_until 60 energy_on_both "$acc"
release acc
"$G" wait "$acc" >/dev/null
check "accounting per GPU" test "$(jobfield "$acc" 'accounting | length')" = 2
check "energy counted" test "$(jobfield "$acc" 'accounting | map(.energy_j) | min > 0')" = true
check "GPU-seconds are the wall time on each GPU" test "$(jobfield "$acc" \
	'start_ns as $s | (.accounting | map(.gpu_seconds) | add) - 2 * (.end_ns - $s) / 1e9 | fabs < 0.01')" = true
"$G" jobs --history >"$tmp/jobs.txt"
check "jobs table has units" grep -q " J " "$tmp/jobs.txt"
check "human output says SIMULATED" grep -q SIMULATED "$tmp/jobs.txt"
check "json says simulated" test "$("$G" queue --json | jq .simulated)" = true

# metrics with job and user labels while a job runs (held until cancelled)
m=$("$G" submit --id-only -- sh -c "$(hold m)")
check "metrics job running" wait_state "$m" running
check "the job's energy series appears" wait_until 60 scraped "/^gpuctl_job_energy_joules\{job=\"$m\"/"
cp "$tmp/scrape.txt" "$tmp/metrics.txt"
check "gpu-seconds series with job and user" grep -q "^gpuctl_job_gpu_seconds{job=\"$m\",user=\"$(id -un)\",gpu=\"" "$tmp/metrics.txt"
check "energy series" grep -q "^gpuctl_job_energy_joules{job=\"$m\"" "$tmp/metrics.txt"
check "pool job counts" grep -q '^gpuctl_pool_jobs{state="running"} 1' "$tmp/metrics.txt"
# the agent renders OpenMetrics from the tick after it is first asked for
om_has_job() {
	curl -s --max-time 10 -H 'Accept: application/openmetrics-text; version=1.0.0' \
		"http://127.0.0.1:$port/metrics" >"$tmp/om.txt" &&
		grep -q "^gpuctl_job_gpu_seconds{job=\"$m\"" "$tmp/om.txt"
}
check "OpenMetrics has the job series" wait_until 60 om_has_job
check "OpenMetrics still ends in # EOF" test "$(tail -1 "$tmp/om.txt")" = "# EOF"
"$G" cancel "$m" >/dev/null
check "metrics job cancelled" wait_state "$m" cancelled
release m

# XIDs and throttling seen during a job are in its accounting: the job is
# held until the agent's metrics show both counted for it
xj=$("$G" submit --id-only --gpu-ids 6 -- sh -c "$(hold xj)")
check "xid job running" wait_state "$xj" running
check "xid job sampled before the faults" wait_until 60 scraped "/^gpuctl_job_throttle_seconds\{job=\"$xj\".*reason=\"thermal\"/"
printf '{"faults":[{"kind":"xid","gpu":6,"xid":13},{"kind":"thermal","gpu":6}]}\n' >"$faults.tmp"
mv "$faults.tmp" "$faults"
check "the job's XID in its metrics" wait_until 60 scraped "/^gpuctl_job_xids\{job=\"$xj\".*xid=\"13\"\} 1$/"
check "its thermal throttle time in its metrics" wait_until 60 scraped "/^gpuctl_job_throttle_seconds\{job=\"$xj\".*reason=\"thermal\"/ && \$NF > 0"
release xj
"$G" wait "$xj" >/dev/null
rm -f "$faults"
check "the job's XID counted" test "$(jobfield "$xj" 'accounting[0].xids["13"]')" = 1
check "its throttling named" sh -c "\"$G\" jobs --history --json | jq -r '.jobs[] | select(.id == $xj) | .accounting[0].throttle_reasons' | grep -qi thermal"
check "thermal throttle time counted" test "$(jobfield "$xj" 'accounting[0].throttle_thermal_s > 0')" = true

# health gating: GPU 3 fails (row remap failure), GPU 5 runs a foreign process;
# the jobs are submitted once the agent's metrics show both
printf '{"faults":[{"kind":"remap_failure","gpu":3},{"kind":"foreign_process","gpu":5}]}\n' >"$faults.tmp"
mv "$faults.tmp" "$faults"
check "the agent sees GPU 3 failed" wait_until 60 scraped '/^gpuctl_gpu_health_status\{gpu="3"/ && $NF == 2'
check "the agent sees GPU 5's process" wait_until 60 scraped '/^gpuctl_gpu_process_memory_used_bytes\{gpu="5"/'
# the pool places from its own read of the sampler, at most 200 ms old
# (SNAP_MIN_AGE_NS in src/pool/pool.c): 0.3 s after the agent showed both, any
# placement reads a view that has them. A minimum age, not a guess of speed:
# a slower machine only makes the view newer.
sleep 0.3
h3=$("$G" submit --id-only --gpu-ids 3 -- true)
h5=$("$G" submit --id-only --gpu-ids 5 -- true)
six=$("$G" submit --id-only --gpus 6 -- true)
check "GPU 3's job waits" wait_reason "$h3" "GPU 3"
check "GPU 5's job waits" wait_reason "$h5" "GPU 5"
"$G" queue --json >"$tmp/q.json"
check "unhealthy GPU named" test "$(jq -r ".jobs[] | select(.id == $h3) | .reason" "$tmp/q.json")" = "GPU 3 unhealthy"
check "foreign process named" sh -c "jq -r '.jobs[] | select(.id == $h5) | .reason' '$tmp/q.json' | grep -qxE 'GPU 5 runs process [0-9]+, which the pool did not start'"
"$G" wait "$six" >/dev/null
check "6-GPU job avoided GPUs 3 and 5" test "$(jobfield "$six" 'gpus | map(select(. == 3 or . == 5)) | length')" = 0
rm -f "$faults"
check "GPU 3 used once healthy again" wait_state "$h3" done
check "GPU 5 used once the process is gone" wait_state "$h5" done

# hostile requests on the socket change nothing: one python3 sends each on a
# connection of its own (one process for all: python's start is the slow
# part) and prints each answer as one line, a JSON string
before=$("$G" jobs --history --all --limit 100000 --json | jq '.jobs | length')
send_each() { python3 - "$sock" "$@" <<'PY'
import json, socket, sys
for req in sys.argv[2:]:
    # one request's socket error is its own line (a failed check), not the end of the rest
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.connect(sys.argv[1])
            s.sendall(req.encode("latin-1"))
            s.shutdown(socket.SHUT_WR)
            answer = s.makefile("rb").read().decode("utf-8", "replace")
    except OSError as e:
        answer = "(socket error: %s)" % e
    print(json.dumps(answer), flush=True)
PY
}
if command -v python3 >/dev/null; then
	hostile=('garbage' '{"v":1,"op":"submit","cwd":"rel","argv":["true"]}'
		'{"v":1,"op":"submit","cwd":"/","argv":["true"],"gpus":99}'
		'{"v":1,"op":"submit","cwd":"/","argv":["true"],"env":["X"]}'
		'{"v":1,"op":"submit","cwd":"/","argv":["true"],"gpu_ids":[9]}'
		'{"v":1,"op":"submit","cwd":"/","argv":["true"],"mig":"1g.10gb"}'
		'{"v":1,"op":"submit","cwd":"/","argv":["true"],"after":999999}'
		'{"v":1,"op":"cancel","job":999999}' '{"v":1,"op":"logs","job":1,"stream":7}' '[]' '{"v":1}')
	mapfile -t answers < <(send_each "${hostile[@]}")
	for i in "${!hostile[@]}"; do
		checks=$((checks + 1))
		out="${answers[i]:-}"
		[ -n "$out" ] && jq -e 'fromjson | .ok == false and (.error | length > 0)' <<<"$out" >/dev/null 2>&1 ||
			fail "hostile '${hostile[i]}' -> ${out:-no answer}"
	done
	after=$("$G" jobs --history --all --limit 100000 --json | jq '.jobs | length')
	check "hostile requests created no job" test "$before" = "$after"
fi
stop_agent

# --- MIG: the simulated H100 with 3g.40gb, 2g.20gb, 2x 1g.10gb (a foreign process on gi 2 and 9)
rm -rf "$tmp/state"
start_agent h100pcie-mig || exit 1
m1=$("$G" submit --id-only --mig 1g.10gb -- sh -c "echo \"\$CUDA_VISIBLE_DEVICES\"; $(hold m1)")
m2=$("$G" submit --id-only --mig 1g.10gb -- true)
m3=$("$G" submit --id-only --mig 2g.20gb -- sh -c 'echo "$CUDA_VISIBLE_DEVICES"')
check "first 1g slice runs" wait_state "$m1" running
check "second waits: the other 1g slice has a foreign process" wait_reason "$m2" "waiting for a free MIG slice 1g.10gb"
check "the 2g slice is free: that job runs meanwhile" wait_state "$m3" done
check "the second still waits" test "$(state_of "$m2")" = pending
release m1
"$G" wait "$m1" "$m2" "$m3" >/dev/null
check "1g slice: its MIG UUID (gi 10)" test "$("$G" logs "$m1")" = "MIG-9a2e5bef-640f-4d6f-8ad6-1ccd3b9c97b2"
check "2g slice: its MIG UUID" test "$("$G" logs "$m3")" = "MIG-7ec25b04-4098-4264-b71d-00cadd7f5aaf"
check "slice recorded" test "$(jobfield "$m1" mig_instance.gi)" = 10
"$G" submit --mig 7g.80gb -- true 2>"$tmp/mig.err"
check "unknown profile refused: 65" test $? -eq 65
check "the pool never changes the layout" grep -q "never changes the MIG layout" "$tmp/mig.err"
"$G" submit --gpus 1 -- true 2>"$tmp/whole.err"
check "a whole GPU is refused where the only one is in MIG mode: 65" test $? -eq 65
check "it says the GPU is in MIG mode" grep -q "is in MIG mode" "$tmp/whole.err"
stop_agent

finish
