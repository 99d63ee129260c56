#!/usr/bin/env bash
# agent_lib.bash - what the agent's CLI tests (tests/cli/agent*.sh) share;
# sourced (CTest runs tests/cli/*.sh only). A temporary directory $tmp removed
# on exit with the agent ($agent_pid) stopped, the check counters, and
# wait_agent_port to read the port the agent listens on from its stderr.

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
: "${GPUCTL:?set GPUCTL to the gpuctl binary}"
export GPUCTL_DATA_DIR="${GPUCTL_DATA_DIR:-$here/../../data}"
unset GPUCTL_SIM
tmp="$(mktemp -d)"
agent_pid=""
cleanup() {
	[ -n "$agent_pid" ] && kill "$agent_pid" 2>/dev/null && wait "$agent_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fails=0
checks=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
check() { # check DESCRIPTION COMMAND...
	checks=$((checks + 1))
	local what="$1"; shift
	"$@" || fail "$what"
}

# wait_agent_port: sets $port from "listening on http://127.0.0.1:PORT/metrics"
# in $tmp/agent.err (up to 10 s); exits 1 if the agent did not start.
wait_agent_port() {
	port=""
	for _ in $(seq 1 100); do
		port=$(sed -n 's/.*listening on http:\/\/127.0.0.1:\([0-9]*\)\/metrics.*/\1/p' "$tmp/agent.err")
		[ -n "$port" ] && break
		kill -0 "$agent_pid" 2>/dev/null || break
		sleep 0.1
	done
	if [ -z "$port" ]; then
		echo "FAIL: the agent did not start: $(cat "$tmp/agent.err")"
		exit 1
	fi
}
