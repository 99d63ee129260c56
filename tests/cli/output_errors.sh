#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# output_errors.sh - output that cannot be written is exit 74 (docs/exit-codes.md),
# never a death by SIGPIPE (141): a pipe whose reader has gone (closed before
# gpuctl starts, so no race decides whether a write happens first) and a full
# disk (/dev/full, which must also say so on stderr).
#
# Run by CTest (GPUCTL = the binary). By hand:
#   GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/output_errors.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/pool_lib.bash"
need python3

# expect_closed_pipe DESCRIPTION ARGS...: gpuctl ARGS, run with stdout on a pipe
# whose read end is already closed (SIGPIPE at its default, as a shell leaves
# it), must exit 74. The cases are collected and run by closed_pipes, one
# python3 for all of them (its start-up is the slow part): it prints "rc=N" a
# line per case (N negative: killed by that signal), case I's stderr in $tmp/err.I
pipe_whats=()
pipe_args=()
expect_closed_pipe() {
	pipe_whats+=("$1")
	shift
	pipe_args+=("$@" ":::")
}
closed_pipes() {
	local got i=0
	python3 - "$tmp/err" "$GPUCTL" "${pipe_args[@]}" 2>"$tmp/py.err" <<'PY' >"$tmp/rcs"
import os, subprocess, sys
err, gpuctl, args = sys.argv[1], sys.argv[2], sys.argv[3:]
cases, cur = [], []
for a in args:
    if a == ":::":
        cases.append(cur)
        cur = []
    else:
        cur.append(a)
for i, case in enumerate(cases):
    r, w = os.pipe()
    os.close(r)
    with open("%s.%d" % (err, i), "wb") as e:
        p = subprocess.run([gpuctl] + case, stdout=w, stderr=e, stdin=subprocess.DEVNULL,
                           timeout=60, restore_signals=True)
    os.close(w)
    print("rc=%d" % p.returncode, flush=True)
PY
	while [ "$i" -lt "${#pipe_whats[@]}" ]; do
		checks=$((checks + 1))
		got=$(sed -n "$((i + 1))p" "$tmp/rcs")
		[ "$got" = "rc=74" ] || fail "${pipe_whats[i]}: ${got:-no result}, want rc=74 ($(head -c 300 "$tmp/err.$i" 2>/dev/null; head -c 300 "$tmp/py.err"))"
		i=$((i + 1))
	done
	pipe_whats=()
	pipe_args=()
}

expect_closed_pipe "info -q" --sim h200x8 info -q
expect_closed_pipe "info" --sim h200x8 info
expect_closed_pipe "info --json" --sim h200x8 info --json
expect_closed_pipe "topo --json" --sim h200x8 topo --json
expect_closed_pipe "health --json" --sim h200x8 health --json
expect_closed_pipe "agent --once" --sim h200x8 agent --once
expect_closed_pipe "dmon (endless)" --sim h200x8 dmon -d 0.1
expect_closed_pipe "dmon --json" --sim h200x8 dmon -d 0.1 -c 3 --json
expect_closed_pipe "report" --sim h200x8 report
expect_closed_pipe "plan --json" plan train --params 7B --dp 8 --json
closed_pipes

# a pool job's output (logs reads it in pieces from the agent)
make_free_server h200x8 "$tmp/free8.json"
if start_agent "$tmp/free8.json"; then
	id=$("$GPUCTL" submit --id-only -- seq 1 50000)
	"$GPUCTL" wait "$id" >/dev/null
	expect_closed_pipe "logs" logs "$id"
	expect_closed_pipe "logs --json" logs --json "$id"
	closed_pipes
	stop_agent
else
	fail "the pool agent did not start"
fi

# a full disk: 74 and one line that says what could not be written
full() { # full DESCRIPTION ARGS...
	local what="$1"; shift
	checks=$((checks + 1))
	"$GPUCTL" "$@" >/dev/full 2>"$tmp/full.err"
	local rc=$?
	[ "$rc" -eq 74 ] || fail "$what >/dev/full: exit $rc, want 74"
	grep -q '^gpuctl: cannot write the output: No space left on device$' "$tmp/full.err" ||
		fail "$what >/dev/full: no message ($(head -c 200 "$tmp/full.err"))"
}
full "info" --sim h200x8 info
full "info -q" --sim h200x8 info -q
full "report" --sim h200x8 report

finish
