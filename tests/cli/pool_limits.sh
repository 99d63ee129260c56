#!/usr/bin/env bash
# pool_limits.sh - the pool under careless or hostile users (issue 20, items
# 3-7): `wait --timeout` on a job still running (an ASan build catches a
# freed string printed); --time in Slurm's forms only, a name that is not
# UTF-8, `cancel -- ID`, a program path that does not exist; ...
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

# --- --time: Slurm's forms and unambiguous units; the rest is refused (64)
expect_exit() { # expect_exit CODE STDERR-PATTERN ARGS...
	local want="$1" pat="$2"; shift 2
	"$G" "$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	check "$* -> $want (got $rc: $(head -c 200 "$tmp/err"))" test "$rc" = "$want"
	check "$*: stderr says '$pat'" grep -q -- "$pat" "$tmp/err"
}
expect_exit 64 "bad time limit '1h30'" submit --time 1h30 -- true
expect_exit 64 "0 to 59" submit --time 25:99:99 -- true
expect_exit 64 "0 to 23" submit --time 1-24 -- true
t=$("$G" submit --id-only --time 1-02:03 --gpus 1 -- true)
check "D-HH:MM is a time limit" test "$(jobfield "$t" time_limit_s)" = $((86400 + 2 * 3600 + 3 * 60))
t=$("$G" submit --id-only --time 90 -- true)
check "a lone number is minutes (as sbatch)" test "$(jobfield "$t" time_limit_s)" = 5400

# --- a name that is not UTF-8 is refused (it was stored as "")
expect_exit 64 "not valid UTF-8" submit --name $'caf\xe9' -- true
expect_exit 64 "word 2 of the command is not valid UTF-8" submit -- echo $'\xff'

# --- `cancel -- ID` and `wait -- ID`: after "--" only job ids
c=$("$G" submit --id-only --shell -- "$(hold cancelled)")
check "cancel -- ID" "$G" cancel -- "$c" >/dev/null
check "cancelled" wait_state "$c" cancelled
release cancelled
"$G" wait -- "$c" >/dev/null 2>&1
check "wait -- ID: exit 2 for a cancelled job" test $? = 2

# --- a program given as a path that does not exist is not blamed on PATH
n=$("$G" submit --id-only -- /nonexistent/cmd)
check "no such program: failed" wait_state "$n" failed
check "no such program: the reason names the file" test "$(jobfield "$n" reason)" = \
	"could not start: '/nonexistent/cmd' does not exist (as its user)"
n=$("$G" submit --id-only -- no-such-command-gpuctl)
check "not in PATH: failed" wait_state "$n" failed
check "not in PATH: the reason says PATH" test "$(jobfield "$n" reason)" = \
	"could not start: command not found (in the job's PATH, as its user)"

stop_agent
finish
