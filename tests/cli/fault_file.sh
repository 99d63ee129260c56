#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fault_file.sh - a run-time fault file (--sim NAME,faults=FILE) that cannot be
# applied is never silently ignored (issue 20, item 2): one-shot commands
# exit 65 with one line on stderr naming the file and what is wrong, before
# they start; the agent keeps running and says it in its log, in
# gpuctl_agent_sim_fault_file_error and as a sim-fault-file note on
# /api/v1/health, and says when the file is applied again.
#
# Run by CTest (GPUCTL = the binary). By hand:
#   GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/fault_file.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/agent_lib.bash"

# --- one-shot commands: exit 65, one line naming the file and the problem
bad() { # bad NAME CONTENT: the fault file $tmp/NAME.json
	printf '%s' "$2" >"$tmp/$1.json"
}
bad kind '{"faults":[{"kind":"nvlink_err","gpu":0}]}'
bad trunc '{"faults":[{"kind":"nvlink_errors","gpu":0'
head -c 256 /dev/urandom | tr -d '{[' >"$tmp/junk.json"
bad gpu '{"faults":[{"kind":"nvlink_errors","gpu":99}]}'
bad gpu8 '{"faults":[{"kind":"nvlink_errors","gpu":8}]}'
bad field '{"faults":[{"kind":"nvlink_errors","gpu":0,"rate":30}]}'
bad cannot '{"faults":[{"kind":"retired_pages","gpu":0,"sbe":3}]}'
mkdir "$tmp/dir.json"
one_shot() { # one_shot CASE WANT-IN-STDERR COMMAND...
	local name="$1" want="$2"; shift 2
	checks=$((checks + 1))
	"$GPUCTL" --sim "h200x8,faults=$tmp/$name.json" "$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	if [ "$rc" -ne 65 ] || [ "$(wc -l <"$tmp/err")" -ne 1 ] || ! grep -q -- "$want" "$tmp/err" ||
		! grep -q "$name.json" "$tmp/err" || [ -s "$tmp/out" ]; then
		fail "$name, $*: exit $rc, stderr '$(cat "$tmp/err")', want 65 and '$want'"
	fi
}
one_shot kind "unknown fault kind 'nvlink_err'" health
one_shot trunc "expected" health --window 0
one_shot junk "fault file" info
one_shot gpu "gpu: 99 is out of range" health --json
one_shot gpu8 "GPU 8 does not exist (the server has 8)" info -q
one_shot field "faults\[0\].rate: unknown field" diag --level 1
one_shot cannot "remaps rows instead of retiring pages" topo
one_shot dir "is not a regular file" health
one_shot kind "unknown fault kind" agent --once
printf '{"faults":[{"kind":"nvlink_errors","gpu":0,"rate_per_s":30}]}' >"$tmp/good.json"
checks=$((checks + 1))
"$GPUCTL" --sim "h200x8,faults=$tmp/good.json" health --window 0 >/dev/null 2>"$tmp/err"
[ $? -le 2 ] && [ ! -s "$tmp/err" ] || fail "a good fault file: stderr '$(cat "$tmp/err")'"

# --- the agent: reports a file that stops being applied, and when it is again
faults="$tmp/faults.json"
cp "$tmp/good.json" "$faults"
printf 'listen = 127.0.0.1:0\ninterval = 200ms\nkernel_log = off\n' >"$tmp/agent.conf"
"$GPUCTL" --sim "h200x8,faults=$faults" agent --config "$tmp/agent.conf" >"$tmp/agent.out" 2>"$tmp/agent.err" &
agent_pid=$!
wait_agent_port
base="http://127.0.0.1:$port"
metric_now() { # metric_now VALUE: gpuctl_agent_sim_fault_file_error is VALUE
	curl -s --max-time 5 "$base/metrics" | grep -q "^gpuctl_agent_sim_fault_file_error{.*} $1\$"
}
metric_is() { wait_until 30 metric_now "$1"; } # metric_is VALUE: it becomes VALUE
note_count() { # the sim-fault-file notes on /api/v1/health
	curl -s --max-time 5 "$base/api/v1/health" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(sum(1 for f in d["system"]["findings"] if f["rule"] == "sim-fault-file" and "unknown fault kind" in f["evidence"]))'
}
check "a good file: metric 0" metric_is 0
check "a good file: no note" [ "$(note_count)" = 0 ]
printf '{"faults":[{"kind":"nvlink_err","gpu":0}]}' >"$tmp/next.json"
mv "$tmp/next.json" "$faults"
check "a bad file: metric 1" metric_is 1
check "a bad file: a note on /api/v1/health" [ "$(note_count)" = 1 ]
check "a bad file: the log says why" wait_until 30 grep -q "gpuctl agent: fault file .*unknown fault kind 'nvlink_err'" "$tmp/agent.err"
check "the agent keeps serving" kill -0 "$agent_pid"
cp "$tmp/good.json" "$tmp/next.json"
mv "$tmp/next.json" "$faults"
check "fixed: metric 0" metric_is 0
check "fixed: the log says so" wait_until 30 grep -q "fault file is applied again" "$tmp/agent.err"

finish
