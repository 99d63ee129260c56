#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# pool_devices.sh - a pool job can open its own GPUs' device nodes and gets
# EPERM on the others' (docs/pool.md, "What is isolated"). Fake NVIDIA nodes
# (char 195:N, mknod in a temporary directory; simulated GPU i is minor i)
# opened from jobs on a simulated 2-GPU server: with no driver behind them an
# allowed open fails with ENXIO, a denied one with EPERM. Covers the cgroup v2
# device program, the cgroup v1 devices fallback (pool_cgroup = off),
# pool_isolation = off, strict and best-effort when a job's limits cannot be
# set up, and the agent's and `queue --json`'s line about it.
#
# Needs root (mknod, cgroups, bpf): skips (exit 77) otherwise. Where
# the kernel allows neither method, checks the documented "devices not
# limited" line instead.
#   GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/pool_devices.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/pool_lib.bash"
need_root "mknod, cgroups, bpf"
G="$GPUCTL"
export LC_ALL=C

make_free_server rtx4090x2 "$tmp/two.json"
dev="$tmp/dev"
mkdir -p "$dev"
mknod "$dev/nvidia0" c 195 0 && mknod "$dev/nvidia1" c 195 1 && mknod "$dev/nvidiactl" c 195 255 &&
	mknod "$dev/nvidia-modeset" c 195 254 || { echo "FAIL: mknod"; exit 1; }
chmod 666 "$dev"/*

# The job: for each node, "NAME ok|EPERM|other:MESSAGE" (the shell's open of the node).
probe='echo "gpus $GPUCTL_JOB_GPUS"; for n in nvidia0 nvidia1 nvidiactl nvidia-modeset; do
	if msg=$( (: <"'"$dev"'/$n") 2>&1); then echo "$n ok";
	else case "$msg" in *"not permitted"*) echo "$n EPERM";; *) echo "$n other:$msg";; esac; fi; done'

# run_probe ARGS...: submits the probe with these submit options, waits, prints its output
run_probe() {
	local id
	id=$("$G" submit --id-only "$@" --shell -- "$probe") || return 1
	"$G" wait --timeout 60s "$id" >/dev/null
	"$G" logs "$id"
}

# expect OUT NODE WANT: WANT is EPERM or "not-EPERM"
expect() {
	local got
	got=$(sed -n "s/^$2 //p" "$1")
	checks=$((checks + 1))
	case "$3" in
	EPERM) [ "$got" = "EPERM" ] || fail "$4: $2 gave '$got', want EPERM" ;;
	*) [ -n "$got" ] && [ "$got" != "EPERM" ] || fail "$4: $2 gave '$got', want not EPERM" ;;
	esac
}

# limited WHAT: jobs on GPU 0, GPU 1 and both see only their own nodes
limited() {
	run_probe --gpu-ids 0 >"$tmp/g0.out"
	check "$1: job on GPU 0 ran" grep -q "^gpus 0$" "$tmp/g0.out"
	expect "$tmp/g0.out" nvidia0 not-EPERM "$1, GPU 0"
	expect "$tmp/g0.out" nvidia1 EPERM "$1, GPU 0"
	expect "$tmp/g0.out" nvidiactl not-EPERM "$1, GPU 0"
	expect "$tmp/g0.out" nvidia-modeset not-EPERM "$1, GPU 0"
	run_probe --gpu-ids 1 >"$tmp/g1.out"
	check "$1: job on GPU 1 ran" grep -q "^gpus 1$" "$tmp/g1.out"
	expect "$tmp/g1.out" nvidia0 EPERM "$1, GPU 1"
	expect "$tmp/g1.out" nvidia1 not-EPERM "$1, GPU 1"
	expect "$tmp/g1.out" nvidiactl not-EPERM "$1, GPU 1"
	run_probe --gpus 2 >"$tmp/g01.out"
	expect "$tmp/g01.out" nvidia0 not-EPERM "$1, both GPUs"
	expect "$tmp/g01.out" nvidia1 not-EPERM "$1, both GPUs"
}

# unlimited WHAT: a job on GPU 0 can open GPU 1's node
unlimited() {
	run_probe --gpu-ids 0 >"$tmp/u.out"
	check "$1: job ran" grep -q "^gpus 0$" "$tmp/u.out"
	expect "$tmp/u.out" nvidia1 not-EPERM "$1"
}

# pool_tag DIR: the tag in this pool's cgroup names (FNV-1a of its state
# directory, as pool_life.c makes it), so that the checks see this test's
# cgroups only, not another agent's or a killed earlier run's
pool_tag() {
	local s="$1" h=2166136261 i c
	for ((i = 0; i < ${#s}; i++)); do
		printf -v c '%d' "'${s:i:1}"
		h=$(((h ^ c) * 16777619 & 0xFFFFFFFF))
	done
	printf '%08x' "$h"
}

# the devices line: in the agent's start line and in queue --json
devices_line() { "$G" queue --json | jq -r .devices; }

# take_next_cgroup: the next job's cgroup name ($cg's, with the next id) is
# taken by a cgroup with a process in it, so the pool cannot make it
take_next_cgroup() {
	next=$(( $("$G" jobs --history --all --json | jq '[.jobs[].id] | max') + 1 ))
	busy="${cg%-job-*}-job-$next"
	mkdir "$busy"
	sh -c "$(hold busy)" &
	sleeper=$!
	echo "$sleeper" >"$busy/cgroup.procs"
}
free_next_cgroup() {
	release busy
	wait "$sleeper" 2>/dev/null
	sleeper=""
	rmdir "$busy"
}
sleeper=""
on_exit '[ -n "$sleeper" ] && free_next_cgroup'

# --- the default: cgroup v2 device program where the kernel loads one
start_agent "$tmp/two.json" || exit 1
line=$(devices_line)
check "queue --json says how devices are limited" test -n "$line"
check "the agent's start line says the same" grep -qF "$line" "$tmp/agent.log"
case "$line" in
*"cgroup v2 device program"*) limited "cgroup v2" ; v2=1 ;;
*"cgroup v1 devices"*) limited "cgroup v1 (chosen by the agent)" ; v2=0 ;;
"devices not limited: "*)
	echo "NOTE: this kernel allows neither a cgroup device program nor the v1 devices controller: $line"
	unlimited "no method"
	v2=0 ;;
*) fail "unexpected devices line '$line'"; v2=0 ;;
esac

if [ "$v2" = 1 ]; then
	# strict: a job whose cgroup cannot be made (its name is taken by a busy
	# cgroup) cannot get its device program, and fails to start
	cg=$(jobfield 1 cgroup)
	take_next_cgroup
	id=$("$G" submit --id-only --gpu-ids 0 -- true)
	check "strict: the job is that id" test "$id" = "$next"
	"$G" wait --timeout 60s "$id" >/dev/null
	check "strict: the job failed" test "$(state_of "$id")" = failed
	check "strict: it says why" sh -c "\"$G\" jobs --history --json | jq -r '.jobs[] | select(.id == $id) | .reason' | grep -q 'could not start: limiting its devices failed'"
	free_next_cgroup
	stop_agent

	# best-effort: the same job starts, unlimited, with the warning in its reason and stderr
	echo "pool_isolation = best-effort" >"$tmp/be.conf"
	start_agent "$tmp/two.json" --config "$tmp/be.conf" || exit 1
	take_next_cgroup
	id=$("$G" submit --id-only --gpu-ids 0 -- sh -c "$(hold be)")
	check "best-effort: the job runs" wait_state "$id" running
	check "best-effort: running with the warning as its reason" \
		sh -c "\"$G\" jobs --json | jq -r '.jobs[] | select(.id == $id) | .reason' | grep -q '^running; devices not limited: '"
	release be
	"$G" wait --timeout 60s "$id" >/dev/null
	check "best-effort: the job ran" test "$(state_of "$id")" = done
	check "best-effort: the warning is in its stderr" sh -c "\"$G\" logs --stderr $id | grep -q 'devices are not limited'"
	free_next_cgroup
fi
stop_agent

# --- cgroup v1 devices (no per-job cgroup v2: pool_cgroup = off)
echo "pool_cgroup = off" >"$tmp/v1.conf"
start_agent "$tmp/two.json" --config "$tmp/v1.conf" || exit 1
line=$(devices_line)
check "v1: agent line" grep -qF "$line" "$tmp/agent.log"
case "$line" in
*"cgroup v1 devices under "*)
	limited "cgroup v1"
	base=${line#*cgroup v1 devices under }
	base=${base%)}
	check "v1: the jobs' devices cgroups are removed at their end" \
		wait_until 30 sh -c "! ls -d '$base'/gpuctl-$(pool_tag "$tmp/state")-job-* 2>/dev/null | grep -q ."
	;;
"devices not limited: "*)
	check "v1: the line says why" grep -q "no per-job cgroup v2" <<<"$line"
	unlimited "no v1 devices controller" ;;
*) fail "v1: unexpected devices line '$line'" ;;
esac
stop_agent

# --- pool_isolation = off: never limited, and said so
echo "pool_isolation = off" >"$tmp/off.conf"
start_agent "$tmp/two.json" --config "$tmp/off.conf" || exit 1
check "off: the line says so" test "$(devices_line)" = "devices not limited (pool_isolation = off)"
unlimited "pool_isolation = off"
stop_agent

# --- a bad value is refused
echo "pool_isolation = maybe" >"$tmp/bad.conf"
"$G" --sim "$tmp/two.json" agent --listen 127.0.0.1:0 --pool --pool-dir "$tmp/state" --pool-socket "$tmp/bad.sock" \
	--config "$tmp/bad.conf" >"$tmp/bad.out" 2>&1
check "bad pool_isolation: exit non-zero" test $? -ne 0
check "bad pool_isolation: says the values" grep -q "strict, best-effort or off" "$tmp/bad.out"

[ -n "${POOL_DEVICES_VERBOSE:-}" ] && cat "$tmp"/*.out "$tmp/agent.log"
finish
