#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# agent_stop.sh - SIGTERM ends the agent within stop_timeout whatever its
# threads are doing (issue 39), with nothing lost from the pool's store.
# Each kind of thread is wedged on purpose, one run each:
#   - a sampler stuck in a simulated NVML call (hang_gpu: the call lasts an hour);
#   - an HTTP worker held inside a request (the test-only hook
#     GPUCTL_TEST_HOLD_HTTP: it waits for a lock this test holds);
#   - the pool's scheduler waiting on a lock in a pass, holding the pool's
#     own lock (GPUCTL_TEST_HOLD_SCHEDULER), with HTTP workers waiting
#     for that lock too (/api/v1/pool).
# A wedge is reached before the signal (the GPU shown down; the hook's
# PATH.waiting file, made when it finds the lock held), never by waiting a guessed time. In each run a running
# job (held) and a pending one (all 8 GPUs) are in the pool; after the stop a
# new agent finds the first re-attached and the second still pending.
# Before the bounded stop, the agent of the second and third runs never
# ended on SIGTERM.
#
# Run by CTest (GPUCTL = the binary). By hand:
#   GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/agent_stop.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/pool_lib.bash"
need curl flock
G="$GPUCTL"
make_free_server h200x8 "$tmp/free8.json"
srv="$tmp/free8.json"

agent_port() { sed -n 's/.*listening on http:\/\/127.0.0.1:\([0-9]*\)\/metrics.*/\1/p' "$tmp/agent.log" | tail -1; }
metric_says() { curl -s "http://127.0.0.1:$(agent_port)/metrics" | grep -q "$1"; }

# lock_hold NAME: a process that holds an flock on $tmp/NAME.lock until
# `release NAME`; returns once it holds it
lock_hold() {
	flock "$tmp/$1.lock" sh -c ": >'$tmp/$1.locked'; $(hold "$1")" &
	wait_until 60 test -e "$tmp/$1.locked"
}

# stop_within LIMIT_S: SIGTERM to the agent; sets $stop_rc (the agent's exit
# status, or "hung" if it had not ended LIMIT_S seconds later: then killed)
# and $stop_ms
stop_within() {
	local t0 t1
	t0=$(date +%s%N)
	kill -TERM "$agent_pid"
	if wait_until "$1" sh -c "! kill -0 $agent_pid 2>/dev/null"; then
		wait "$agent_pid"
		stop_rc=$?
	else
		kill -9 "$agent_pid" 2>/dev/null
		wait "$agent_pid" 2>/dev/null
		stop_rc=hung
	fi
	t1=$(date +%s%N)
	stop_ms=$(((t1 - t0) / 1000000))
	agent_pid=""
}

# stopped_at_timeout RUN STUCK: SIGTERM ends the agent with 75 at its
# stop_timeout (2 s; the bound leaves a loaded machine room), its log naming STUCK
stopped_at_timeout() {
	stop_within 60
	check "run $1: ended, exit 75 ($stop_rc after $stop_ms ms)" [ "$stop_rc" = 75 ]
	check "run $1: at stop_timeout, 2 s, not hung ($stop_ms ms)" [ "$stop_ms" -lt 15000 ]
	check "run $1: the log names what did not stop: $2" \
		grep -qF "not stopped within stop_timeout (2 s): $2 did not stop; exiting now" "$tmp/agent.log"
}

# jobs_then: a held running job ($run) and a pending one ($pend, all 8 GPUs)
jobs_then() {
	run=$("$G" submit --id-only -- sh -c "$(hold "job$1")")
	check "run $1: job $run running" wait_state "$run" running
	pend=$("$G" submit --id-only --gpus 8 -- true)
	check "run $1: job $pend pending" wait_state "$pend" pending
}
# store_kept N: a new agent (no wedge) finds both jobs as they were
store_kept() {
	start_agent "$srv" || exit 1
	check "run $1: the running job re-attached by the next agent" is_state "$run" running
	check "run $1: the pending job still pending" is_state "$pend" pending
	"$G" cancel "$pend" >/dev/null
	release "job$1"
	check "run $1: the re-attached job ends done" wait_state "$run" done
	stop_agent
}

# --- 1: a sampler stuck in a GPU call: the stop leaves it after 5 s and ends (0)
printf 'stop_timeout = 20s\n' >"$tmp/stop.conf"
start_agent "$srv,hang_gpu=3" --config "$tmp/stop.conf" || exit 1
jobs_then 1
check "run 1: GPU 3 is down (its sampler is in the hung call)" \
	wait_until 60 metric_says '^gpuctl_gpu_up{gpu="3"[^}]*} 0'
stop_within 60
check "run 1: stopped, exit 0 ($stop_rc after $stop_ms ms)" [ "$stop_rc" = 0 ]
check "run 1: within stop_timeout, 20 s ($stop_ms ms)" [ "$stop_ms" -lt 20000 ]
check "run 1: 'stopped (signal 15)'" grep -q "gpuctl agent: stopped (signal 15)" "$tmp/agent.log"
store_kept 1

# --- 2: an HTTP worker held in a request: exit 75 at stop_timeout, naming it
printf 'stop_timeout = 2s\n' >"$tmp/stop.conf"
export GPUCTL_TEST_HOLD_HTTP="$tmp/http.lock"
lock_hold http
start_agent "$srv" --config "$tmp/stop.conf" || exit 1
unset GPUCTL_TEST_HOLD_HTTP
jobs_then 2
curl -s -m 120 -o /dev/null -H "Host: localhost" "http://127.0.0.1:$(agent_port)/healthz" &
check "run 2: an HTTP worker is held" wait_until 60 test -e "$tmp/http.lock.waiting"
stopped_at_timeout 2 "the HTTP server (the door's thread, then libmicrohttpd's workers)"
release http
store_kept 2

# --- 3: the pool's scheduler waiting on a lock while holding the pool's:
# the pool's state cannot be taken; exit 75 at stop_timeout, naming the scheduler
export GPUCTL_TEST_HOLD_SCHEDULER="$tmp/sched.lock"
start_agent "$srv" --config "$tmp/stop.conf" || exit 1
unset GPUCTL_TEST_HOLD_SCHEDULER
jobs_then 3
lock_hold sched
check "run 3: the scheduler is wedged in a pass" wait_until 60 test -e "$tmp/sched.lock.waiting"
# HTTP workers waiting for the pool's lock too
for i in 1 2; do
	curl -s -m 120 -o /dev/null -H "Host: localhost" "http://127.0.0.1:$(agent_port)/api/v1/pool" &
done
stopped_at_timeout 3 "the pool's state (waiting for the pool's lock): the pool's scheduler (in a pass, holding the pool's lock)"
release sched
store_kept 3
wait
finish
