#!/usr/bin/env bash
# pool_limits.sh - the pool under careless or hostile users (issue 20, items
# 3-7): `wait --timeout` on a job still running (an ASan build catches a
# freed string printed), ...
#
# Run by CTest (GPUCTL = the binary). By hand:
#   GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/pool_limits.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/pool_lib.bash"
G="$GPUCTL"

make_free_server h200x8 "$tmp/free8.json"
start_agent "$tmp/free8.json" || exit 1

# --- wait --timeout on a job that is still running names its state (the
# state string once came from an answer already freed: garbage, or an ASan abort)
j=$("$G" submit --id-only --shell -- "$(hold waited)")
check "held job running" wait_state "$j" running
"$G" wait --timeout 0.3 "$j" >"$tmp/wait.out" 2>"$tmp/wait.err"
rc=$?
check "wait --timeout: exit 75 (got $rc)" test "$rc" = 75
check "wait --timeout: names the state" grep -qx "gpuctl wait: job $j still running after the timeout" "$tmp/wait.err"
check "wait --timeout: no sanitizer report" bash -c "! grep -q Sanitizer '$tmp/wait.err'"
release waited
check "released job done" wait_state "$j" done

stop_agent
finish
