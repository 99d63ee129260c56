#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# http_lib.bash - for the tests of the agent's HTTP side (agent_http.sh,
# agent_slowloris.sh), on top of lib.bash; sourced (CTest runs *.sh only).
# start_http_agent [AGENT FLAGS...]: `gpuctl agent` on the simulated 8x H200
# listening on 127.0.0.1 (a free port, set in $port), stopped on exit; returns
# once /metrics answers.

agent_pid=""
stop_http_agent() { [ -n "$agent_pid" ] && kill "$agent_pid" 2>/dev/null && wait "$agent_pid" 2>/dev/null; agent_pid=""; }
on_exit stop_http_agent
http_agent_port() {
	port=$(sed -n 's/.*listening on http:\/\/127.0.0.1:\([0-9]*\)\/metrics.*/\1/p' "$tmp/agent.err")
	[ -n "$port" ]
}
start_http_agent() {
	"$GPUCTL" --sim h200x8 agent --listen 127.0.0.1:0 --interval 200ms --kernel-log off "$@" \
		>"$tmp/agent.out" 2>"$tmp/agent.err" &
	agent_pid=$!
	if ! wait_until 30 http_agent_port; then
		echo "FAIL: the agent did not start: $(cat "$tmp/agent.err")"
		exit 1
	fi
	wait_until 30 curl -sf -o /dev/null "http://127.0.0.1:$port/metrics" || fail "no /metrics after 30 s"
}
