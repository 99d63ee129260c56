#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# pool_crash.sh - kill -9 of the pool's agent loses no job and runs none
# twice: during submission (a burst of submits while the agent dies), during
# start (jobs starting as it dies), during a run (jobs re-attached on
# restart; one that ends while the agent is down is settled from its exit
# record; one whose shim is killed while it is down is marked lost with the
# reason).
#
# Run by CTest (GPUCTL = the binary). By hand:
#   GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/pool_crash.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/pool_lib.bash"
G="$GPUCTL"
make_free_server h200x8 "$tmp/free8.json"
srv="$tmp/free8.json"
ran="$tmp/ran.txt" # every job appends its id when it runs
: >"$ran"

# --- during a run: every job is held until the test releases it
start_agent "$srv" || exit 1
long=$("$G" submit --id-only -- sh -c "$(hold long)")
short=$("$G" submit --id-only -- sh -c "$(hold short); echo short-done")
victim=$("$G" submit --id-only -- sh -c "$(hold victim)")
check "long running" wait_state "$long" running
check "short running" wait_state "$short" running
check "victim running" wait_state "$victim" running
vshim=$(jobfield "$victim" shim_pid)
vpid=$(jobfield "$victim" pid)
crash_agent
kill -9 "$vshim" "$vpid" 2>/dev/null # the victim's shim and job die while no agent watches
# the short job ends while no agent runs: its shim leaves the exit record
release short
check "short job's exit record written while the agent is down" \
	wait_until 60 test -e "$tmp/state/jobs/$short/exit"
start_agent "$srv" || exit 1
check "start line: the long job re-attached, short and victim settled at start" \
	grep -q "1 jobs re-attached, 2 settled at start" "$tmp/agent.log"
check "long job re-attached" test "$(state_of "$long")" = running
check "re-attached reason" sh -c "\"$G\" jobs --json | jq -r '.jobs[] | select(.id == $long) | .reason' | grep -q 're-attached'"
check "short job settled from its exit record" test "$(state_of "$short")" = done
check "its output kept" test "$("$G" logs "$short")" = "short-done"
check "victim lost with the reason" test "$(state_of "$victim")" = lost
check "lost reason" sh -c "\"$G\" jobs --history --json | jq -r '.jobs[] | select(.id == $victim) | .reason' | grep -q 'shim is gone without an exit record'"
release long
"$G" wait "$long" >/dev/null
check "re-attached job ends done" test $? -eq 0
check "re-attached job has accounting" test "$(jobfield "$long" 'accounting | length')" = 1
# cancel still reaches a re-attached job's processes
again=$("$G" submit --id-only -- sh -c "$(hold again)")
check "again running" wait_state "$again" running
crash_agent
start_agent "$srv" || exit 1
"$G" cancel "$again" >/dev/null
check "re-attached job cancelled" wait_state "$again" cancelled
release again

# --- during start: a burst of 12 held jobs on 8 GPUs; the agent dies once the
# first has started (the others are starting or pending), and the jobs are
# released after the restart
ids=()
burst=$(hold burst)
for i in $(seq 1 12); do
	ids+=("$("$G" submit --id-only -- sh -c "echo \$GPUCTL_JOB_ID >>'$ran'; $burst")")
done
check "a job of the burst started" wait_until 60 test -s "$ran"
crash_agent
start_agent "$srv" || exit 1
release burst
"$G" wait "${ids[@]}" >/dev/null
check "every job of the burst ended done" test $? -eq 0
for id in "${ids[@]}"; do
	checks=$((checks + 1))
	n=$(grep -cx "$id" "$ran")
	[ "$n" -eq 1 ] || fail "job $id ran $n times"
done

# --- during submission: submits racing the crash
: >"$tmp/got.txt"
(
	for i in $(seq 1 60); do # until the first refused after the crash
		"$G" submit --id-only -- true >>"$tmp/got.txt" 2>/dev/null || break
	done
) &
sub_pid=$!
check "a submission was answered" wait_until 60 test -s "$tmp/got.txt"
crash_agent
wait "$sub_pid"
start_agent "$srv" || exit 1
got=$(wc -l <"$tmp/got.txt")
check "some submissions were answered before the crash" test "$got" -gt 0
for id in $(cat "$tmp/got.txt"); do
	checks=$((checks + 1))
	s=$(state_of "$id")
	[ -n "$s" ] || fail "job $id was acknowledged but is gone"
done
"$G" jobs --history --all --limit 100000 --json >"$tmp/all.json"
check "no job left half-started" test "$(jq '[.jobs[] | select(.state == "starting")] | length' "$tmp/all.json")" = 0
check "database still answers after three crashes" test "$(jq '.jobs | length' "$tmp/all.json")" -ge "$got"
# a second agent on the same state directory is refused (it would run the same jobs)
"$G" --sim "$srv" agent --listen 127.0.0.1:0 --kernel-log off --pool --pool-dir "$tmp/state" \
	--pool-socket "$tmp/other.sock" >"$tmp/other.log" 2>&1
check "second agent on the same state: exit 74" test $? -eq 74
check "says why" grep -q "another agent runs the pool of state directory" "$tmp/other.log"
check "the first still answers" "$G" queue
stop_agent
finish
