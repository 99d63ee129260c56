#!/usr/bin/env bash
# pool_lib.bash - what the pool's CLI tests (tests/cli/pool*.sh) share;
# sourced (CTest runs tests/cli/*.sh only). Starts `gpuctl agent --pool` on a temporary state directory and socket,
# checks, and stops it by its pid.

: "${GPUCTL:?set GPUCTL to the gpuctl binary}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export GPUCTL_DATA_DIR="${GPUCTL_DATA_DIR:-$here/../../data}"
# the tests change directory: make both absolute
case "$GPUCTL" in /*) ;; *) GPUCTL="$PWD/$GPUCTL" ;; esac
case "$GPUCTL_DATA_DIR" in /*) ;; *) GPUCTL_DATA_DIR="$PWD/$GPUCTL_DATA_DIR" ;; esac
unset GPUCTL_SIM GPUCTL_POOL_SOCKET
tmp="$(mktemp -d /tmp/gpuctl-pooltest-XXXXXX)"
chmod 755 "$tmp"
agent_pid=""
fails=0
checks=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
check() { # check DESCRIPTION COMMAND...
	checks=$((checks + 1))
	local what="$1"; shift
	"$@" || fail "$what"
}
cleanup() {
	stop_agent
	rm -rf "$tmp"
}
trap cleanup EXIT

# A simulated server without the shipped files' own processes (they are
# foreign to the pool and would hold GPUs): $tmp/free8.json from h200x8.
make_free_server() { # make_free_server NAME OUT
	jq 'del(.gpus[].processes)' "$GPUCTL_DATA_DIR/sim/$1.json" >"$2"
}

# start_agent SIMSPEC [extra agent flags...]: state in $tmp/state, socket $sock
start_agent() {
	local spec="$1"; shift
	sock="$tmp/pool.sock"
	export GPUCTL_POOL_SOCKET="$sock"
	"$GPUCTL" --sim "$spec" agent --listen 127.0.0.1:0 --interval 100ms --kernel-log off \
		--pool --pool-dir "$tmp/state" --pool-socket "$sock" "$@" >>"$tmp/agent.log" 2>&1 &
	agent_pid=$!
	for _ in $(seq 1 300); do
		"$GPUCTL" queue >/dev/null 2>&1 && return 0
		kill -0 "$agent_pid" 2>/dev/null || break
		sleep 0.05
	done
	echo "agent did not come up:"; cat "$tmp/agent.log"
	return 1
}
stop_agent() {
	if [ -n "$agent_pid" ]; then
		kill "$agent_pid" 2>/dev/null
		wait "$agent_pid" 2>/dev/null
		agent_pid=""
	fi
}
crash_agent() { # kill -9, as a crash would
	kill -9 "$agent_pid" 2>/dev/null
	wait "$agent_pid" 2>/dev/null
	agent_pid=""
}

# jobfield ID KEY: a field of the job from `jobs --history --json`
jobfield() {
	"$GPUCTL" jobs --history --all --limit 100000 --json | jq -r --argjson id "$1" ".jobs[] | select(.id == \$id) | .$2"
}
# the state of job ID
state_of() { jobfield "$1" state; }
# wait_state ID STATE [SECONDS]: until the job is in STATE
wait_state() {
	local n=$(( ${3:-10} * 20 ))
	for _ in $(seq 1 "$n"); do
		[ "$(state_of "$1")" = "$2" ] && return 0
		sleep 0.05
	done
	echo "job $1 is $(state_of "$1"), want $2"
	return 1
}
finish() {
	echo "$checks checks, $fails failed"
	[ "$fails" -eq 0 ]
}
