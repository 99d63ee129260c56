#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# escape.sh - names from the system or a user never drive the terminal (issue
# 38, item 4): a simulated server whose every string is hostile (process
# names and users with a newline, ESC ] 0 ; ... BEL, ESC [ 2 J, a C1 CSI and a
# bidi override; the server's name, hostname, serial and VBIOS the same:
# tests/data/hostile-server.json) through every text output that shows them:
# no raw ESC, BEL, C1 control or bidi control reaches stdout or stderr, and
# no injected line starts a line of its own ("?" stands for each). The JSON
# outputs stay valid JSON that holds the original text, escaped. Then the
# pool: a job whose name and command are hostile, through queue, jobs, wait
# and cancel. top is checked in a terminal by top_tmux.sh.
#
# Run by CTest (GPUCTL = the binary). By hand:
#   GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/escape.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/pool_lib.bash"
need python3
G="$GPUCTL"
srv="$src/tests/data/hostile-server.json"

# terminal_safe FILE [json]: no byte a terminal obeys (and no bidi control
# but in JSON, which holds valid text as it is), and no injected line ("FAKE...")
terminal_safe() {
	python3 - "$@" <<'EOF'
import sys
d = open(sys.argv[1], "rb").read()
raw = [b"\x1b", b"\x07", b"\r", b"\xc2\x9b"] + ([] if sys.argv[2:] == ["json"] else [b"\xe2\x80\xae"])
bad = [b for b in raw if b in d]
fake = [l for l in d.split(b"\n") if l.startswith(b"FAKE")]
if bad or fake:
    print("raw bytes %s, injected lines %s" % (bad, fake[:3]))
    sys.exit(1)
d.decode("utf-8")  # and valid UTF-8
EOF
}

# every text output that shows the server's strings
n=0
for args in "info" "info -q" "topo" "health --window 0 --idle" "diag -r 1" "report" "dmon -c 1" "cdi list" \
	"cdi generate -o $tmp/cdi.json"; do
	n=$((n + 1))
	# shellcheck disable=SC2086 # the words of args are the command's
	"$G" --sim "$srv" $args >"$tmp/out$n" 2>&1
	check "$args: nothing raw reaches the terminal" terminal_safe "$tmp/out$n"
done
# what the names became: one line, '?' for each character a terminal obeys
"$G" --sim "$srv" info >"$tmp/info" 2>&1
check "info: the banner on one line" grep -qF "*** SIMULATED server 'evil?]0;pwned??FAKE-SERVER': not real hardware ***" "$tmp/info"
check "info: the host on one line" grep -qF "host host?[31mred?FAKE-HOST  driver" "$tmp/info"
check "info: a process name with a newline" grep -qE "^  0  101  C +u\?FAKE-USER +a\?FAKE-LINE +100 MiB$" "$tmp/info"
check "info: ESC ] ... BEL" grep -qE "^  0  102  C +bob +\?\]0;pwned\?x +100 MiB$" "$tmp/info"
check "info: a C1 CSI and a bidi override" grep -qE "^  0  104  C +bob +c1\?31m\?rev +100 MiB$" "$tmp/info"
"$G" --sim "$srv" info -q >"$tmp/infoq" 2>&1
check "info -q: the serial" grep -qE "^ +Serial Number +: S\?\[2J\?FAKE-SERIAL$" "$tmp/infoq"
check "info -q: a process" grep -qE "^ +PID 101 +: C a\?FAKE-LINE, user u\?FAKE-USER, 100 MiB$" "$tmp/infoq"
"$G" --sim "$srv" health --window 0 --idle >"$tmp/health" 2>&1
check "health --idle: the process in the evidence" grep -qF "pid 101 (a?FAKE-LINE)" "$tmp/health"

# an error message that quotes what it was given is one clean line too
"$G" --sim "$srv" info -i $'GPU-\e[2J\nFAKE' >"$tmp/err" 2>&1
check "an error quoting a hostile -i: exit 64" test $? = 64
check "an error quoting a hostile -i: one line" test "$(wc -l <"$tmp/err")" = 1
check "an error quoting a hostile -i: nothing raw" terminal_safe "$tmp/err"

# a results file's host and note (bench --results, report --results)
jq '.host = "h\u001b]0;t\u0007\nFAKE-HOST" | .note = "n\u001b[2J\nFAKE-NOTE"' \
	"$src/tests/data/results-h200x2.json" >"$tmp/results.json"
"$G" bench --results "$tmp/results.json" >"$tmp/bench" 2>&1
check "bench --results: exit 0" test $? = 0
check "bench --results: nothing raw" terminal_safe "$tmp/bench"
check "bench --results: the host on the first line" grep -qF "host h?]0;t??FAKE-HOST" "$tmp/bench"
"$G" --sim "$srv" report --results "$tmp/results.json" >"$tmp/report" 2>&1
check "report --results: nothing raw" terminal_safe "$tmp/report"
check "report --results: the note on one line" grep -qF "note: n?[2J?FAKE-NOTE" "$tmp/report"

# JSON: valid, with the original text, escaped (\u001b, \n), never raw
for args in "info --json" "topo --json" "health --window 0 --idle --json"; do
	# shellcheck disable=SC2086
	"$G" --sim "$srv" $args >"$tmp/j.json" 2>"$tmp/j.err"
	check "$args: valid JSON" jq -e . "$tmp/j.json" >/dev/null
	check "$args: nothing raw" terminal_safe "$tmp/j.json" json
done
"$G" --sim "$srv" info --json >"$tmp/info.json"
check "info --json: the hostname as it is, escaped" \
	test "$(jq -c '.system.hostname' "$tmp/info.json")" = '"host\u001b[31mred\nFAKE-HOST"'
check "info --json: a process name's newline, escaped" \
	test "$(jq -c '.gpus[0].processes[0].name' "$tmp/info.json")" = '"a\nFAKE-LINE"'

# --- the pool: a name with a bidi override (control characters, C1 too, are
# refused in names), a command with ESC sequences and newlines
make_free_server h200x8 "$tmp/free8.json"
start_agent "$tmp/free8.json" || exit 1
"$G" submit --name $'n\302\2332J' -- true >"$tmp/c1.out" 2>&1 # U+009B, a C1 CSI
check "a name with a C1 control: refused by the agent, exit 65" test $? = 65
check "a name with a C1 control: the reason" grep -q "'name' holds a control character" "$tmp/c1.out"
name=$'n2J\342\200\256gnp.exe' # U+202E in UTF-8
arg=$'x\e]0;pwned\a\e[2J\nFAKE-ARG'
held=$("$G" submit --id-only --name "$name" -- sh -c "$(hold a)" "$arg")
check "the hostile job runs" wait_state "$held" running
quick=$("$G" submit --id-only --name "$name" -- sh -c 'exit 0' "$arg")
check "a second one ends" wait_state "$quick" done
n=0
for args in "queue" "jobs" "jobs --history" "wait $quick" "queue --json" "jobs --history --json"; do
	n=$((n + 1))
	# shellcheck disable=SC2086
	"$G" $args >"$tmp/pool$n" 2>&1
	check "$args: nothing raw reaches the terminal" terminal_safe "$tmp/pool$n" "$(case $args in *--json) echo json ;; esac)"
done
"$G" queue >"$tmp/queue"
check "queue: the name, '?' for the override" grep -qE "^ *$held +[^ ]+ +n2J\?gnp\.exe +running" "$tmp/queue"
"$G" jobs --history --json >"$tmp/jobs.json"
check "jobs --json: the command as it was" \
	test "$(jq -r --argjson id "$held" '.jobs[] | select(.id == $id) | .command[3]' "$tmp/jobs.json")" = "$arg"
check "jobs --json: the name as it was" \
	test "$(jq -r --argjson id "$held" '.jobs[] | select(.id == $id) | .name' "$tmp/jobs.json")" = "$name"
"$G" cancel "$held" >"$tmp/cancel" 2>&1
check "cancel: nothing raw" terminal_safe "$tmp/cancel"
release a
stop_agent
finish
