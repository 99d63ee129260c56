#!/usr/bin/env bash
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

# closed_pipe ARGS...: runs gpuctl with stdout on a pipe whose read end is
# already closed (SIGPIPE at its default, as a shell leaves it); prints
# "rc=N" (N negative: killed by that signal) and stderr to $tmp/err
closed_pipe() {
	python3 - "$GPUCTL" "$@" 2>"$tmp/py.err" <<'PY'
import os, subprocess, sys
r, w = os.pipe()
os.close(r)
p = subprocess.run(sys.argv[1:], stdout=w, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                   timeout=60, restore_signals=True)
sys.stderr.buffer.write(p.stderr)
print("rc=%d" % p.returncode)
PY
}
expect_closed_pipe() { # expect_closed_pipe DESCRIPTION ARGS...
	local what="$1" got; shift
	checks=$((checks + 1))
	got=$(closed_pipe "$@")
	[ "$got" = "rc=74" ] || fail "$what: $got, want rc=74 ($(head -c 300 "$tmp/py.err"))"
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

# a pool job's output (logs reads it in pieces from the agent)
make_free_server h200x8 "$tmp/free8.json"
if start_agent "$tmp/free8.json"; then
	id=$("$GPUCTL" submit --id-only -- seq 1 50000)
	"$GPUCTL" wait "$id" >/dev/null
	expect_closed_pipe "logs" logs "$id"
	expect_closed_pipe "logs --json" logs --json "$id"
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
