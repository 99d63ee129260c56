#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# agent_lib.bash - what the agent's CLI tests (tests/cli/agent*.sh) share, on
# top of lib.bash; sourced (CTest runs tests/cli/*.sh only): the agent
# ($agent_pid) stopped on exit, and wait_agent_port to read the port the agent
# listens on from its stderr.

. "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
agent_pid=""
on_exit '[ -n "$agent_pid" ] && kill "$agent_pid" 2>/dev/null && wait "$agent_pid" 2>/dev/null'

# the port from "listening on http://127.0.0.1:PORT/metrics", or the agent is gone
agent_port_or_gone() {
	port=$(sed -n 's/.*listening on http:\/\/127.0.0.1:\([0-9]*\)\/metrics.*/\1/p' "$tmp/agent.err")
	[ -n "$port" ] || ! kill -0 "$agent_pid" 2>/dev/null
}
# wait_agent_port: sets $port from $tmp/agent.err (up to 60 s); exits 1 if the agent did not start
wait_agent_port() {
	port=""
	wait_until 60 agent_port_or_gone
	if [ -z "$port" ]; then
		echo "FAIL: the agent did not start: $(cat "$tmp/agent.err")"
		exit 1
	fi
}
