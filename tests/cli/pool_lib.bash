#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# pool_lib.bash - what the pool's CLI tests (tests/cli/pool*.sh) share, on
# top of lib.bash; sourced (CTest runs tests/cli/*.sh only). Starts
# `gpuctl agent --pool` on a temporary state directory and socket, and stops
# it by its pid (also on exit).

. "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
need jq
unset GPUCTL_POOL_SOCKET
agent_pid=""
on_exit stop_agent

# A simulated server without the shipped files' own processes (they are
# foreign to the pool and would hold GPUs): $tmp/free8.json from h200x8.
make_free_server() { # make_free_server NAME OUT
	jq 'del(.gpus[].processes)' "$GPUCTL_DATA_DIR/sim/$1.json" >"$2"
}

# start_agent SIMSPEC [extra agent flags...]: state in $tmp/state, socket $sock;
# returns once the agent answers `queue`
agent_answers() { kill -0 "$agent_pid" 2>/dev/null && "$GPUCTL" queue >/dev/null 2>&1; }
start_agent() {
	local spec="$1"; shift
	sock="$tmp/pool.sock"
	export GPUCTL_POOL_SOCKET="$sock"
	# the socket answers before the agent prints its pool line (re-attached,
	# settled at start): checks that read that line wait for this start's
	local before
	before=$(pool_lines)
	"$GPUCTL" --sim "$spec" agent --listen 127.0.0.1:0 --interval 100ms --kernel-log off \
		--pool --pool-dir "$tmp/state" --pool-socket "$sock" "$@" >>"$tmp/agent.log" 2>&1 &
	agent_pid=$!
	wait_until 60 agent_answers && wait_until 60 pool_line_after "$before" && return 0
	echo "agent did not come up:"; cat "$tmp/agent.log"
	return 1
}
pool_lines() {
	local n
	n=$(grep -c "gpuctl agent: pool on" "$tmp/agent.log" 2>/dev/null)
	echo "${n:-0}"
}
pool_line_after() { [ "$(pool_lines)" -gt "$1" ]; }
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
# the reason `queue --json` gives for job ID
reason_of() { "$GPUCTL" queue --json | jq -r --argjson id "$1" '.jobs[] | select(.id == $id) | .reason'; }
is_state() { [ "$(state_of "$1")" = "$2" ]; }
# wait_state ID STATE [SECONDS]: until the job is in STATE (default: 60 s)
wait_state() {
	wait_until "${3:-60}" is_state "$1" "$2" && return 0
	echo "job $1 is $(state_of "$1"), want $2"
	return 1
}
# wait_reason ID TEXT [SECONDS]: until queue --json gives job ID a reason holding TEXT
has_reason() { reason_of "$1" | grep -qF -- "$2"; }
wait_reason() {
	wait_until "${3:-60}" has_reason "$1" "$2" && return 0
	echo "job $1's reason is '$(reason_of "$1")', want '$2'"
	return 1
}

# container_sees_only_its_gpu SEEN: a container job's report (SEEN: "gpus=N"
# and the lines of `ls /dev | grep nvidia`) names exactly its GPU's node (on
# the simulator, minor = index) and nvidiactl (pool_container.sh, pool_docker.sh)
container_sees_only_its_gpu() {
	local g nodes
	g=$(sed -n 's/^gpus=//p' "$1")
	nodes=$(grep '^nvidia' "$1" | tr '\n' ' ')
	[ -n "$g" ] && [ "$nodes" = "nvidia$g nvidiactl " ] && return 0
	echo "$1: on GPU '$g' sees: $nodes"
	return 1
}

# check_two_container_jobs A B DIR: the checks of two held 1-GPU container
# jobs A and B side by side whose commands wrote DIR/a.seen and DIR/b.seen:
# both running at once, each sees exactly its GPU's node, different GPUs
check_two_container_jobs() {
	local a="$1" b="$2" dir="$3"
	check "a running" wait_state "$a" running
	check "b running" wait_state "$b" running
	check "a's container reported" wait_until 120 test -s "$dir/a.seen"
	check "b's container reported" wait_until 120 test -s "$dir/b.seen"
	check "both running at once" test "$(state_of "$a")/$(state_of "$b")" = running/running
	check "a sees exactly its GPU's node" container_sees_only_its_gpu "$dir/a.seen"
	check "b sees exactly its GPU's node" container_sees_only_its_gpu "$dir/b.seen"
	check "a and b on different GPUs" test "$(grep gpus= "$dir/a.seen")" != "$(grep gpus= "$dir/b.seen")"
}

# busybox_rootfs_tar OUT: a tar of a root filesystem of busybox-static and its
# shell tools (sh ls cat echo sleep grep wc test id), for `podman|docker import`
busybox_rootfs_tar() {
	local r="$tmp/rootfs" c
	mkdir -p "$r/bin" "$r/dev" "$r/proc" "$r/sys" "$r/tmp"
	cp "$(command -v busybox)" "$r/bin/busybox"
	for c in sh ls cat echo sleep grep wc test id; do ln -sf busybox "$r/bin/$c"; done
	tar -C "$r" -cf "$1" .
}

# make_test_user PREFIX: a Unix user PREFIX_PID in $u (useradd; userdel on
# exit); skips when that user cannot run $GPUCTL (a build under /root)
make_test_user() {
	u="$1_$$"
	useradd -M -d /nonexistent -s /bin/sh "$u" || { echo "FAIL: useradd $u"; exit 1; }
	on_exit 'userdel "$u" 2>/dev/null'
	runuser -u "$u" -- test -x "$GPUCTL" || skip "user $u cannot run '$GPUCTL' here"
}
