#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# pool_queue.sh - `gpuctl queue` and `queue --json`, which read the agent's
# answer without a jansson tree (src/core/jscan.c, queue_view.c): the JSON is
# jansson's layout (what python's json.dumps(indent=2) also writes) with the
# agent's keys in its order, the table's rows and columns; and, against a
# fake agent, the paths that still go through jansson: the agent's error,
# a malformed or empty answer, an answer with reals.
#
# Run by CTest (GPUCTL = the binary). By hand:
#   GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/pool_queue.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/pool_lib.bash"
need python3
G="$GPUCTL"

# The text is exactly json.dumps(indent=2) of itself plus a newline (jansson's
# JSON_INDENT(2) layout: 2 spaces, ": ", one member a line, {} and [] empty).
same_layout() { # same_layout FILE
	python3 -c '
import json, sys
t = open(sys.argv[1], encoding="utf-8").read()
sys.exit(0 if t == json.dumps(json.loads(t), indent=2, ensure_ascii=False) + "\n" else 1)' "$1"
}

# --- a real agent: a job holding all 8 GPUs, three waiting
make_free_server h200x8 "$tmp/free8.json"
start_agent "$tmp/free8.json" || exit 1
blk=$("$G" submit --id-only --gpus 8 --name blocker -- sh -c "$(hold blk)")
check "blocker running" wait_state "$blk" running
p1=$("$G" submit --id-only --gpus 2 --nvlink --priority 5 --name 'q "x" \ café' -- true)
p2=$("$G" submit --id-only --gpus 1 -- true)
p3=$("$G" submit --id-only --after "$blk" -- true)
# the scheduler has seen all three once each has its reason
check "NVLink job's reason" wait_reason "$p1" "waiting for 2 NVLink-connected GPUs"
check "1-GPU job's reason" wait_reason "$p2" "waiting for 1 free GPU"
check "dependent job's reason" wait_reason "$p3" "waiting for job $blk to end"
"$G" queue --json >"$tmp/q.json"
check "queue --json: exit 0" test $? -eq 0
check "queue --json: jansson's layout" same_layout "$tmp/q.json"
check "no \"ok\" in it" test "$(jq 'has("ok")' "$tmp/q.json")" = false
check "four jobs, running first" test "$(jq -c '[.jobs[].id]' "$tmp/q.json")" = "[$blk,$p1,$p2,$p3]"
check "the name as submitted" test "$(jq -r ".jobs[1].name" "$tmp/q.json")" = 'q "x" \ café'
check "a job's keys in the documented order" test "$(jq -c '.jobs[1] | keys_unsorted' "$tmp/q.json")" = \
	'["id","name","user","uid","state","reason","priority","submit_ns","request","position"]'
check "request of the NVLink job" test "$(jq -c '.jobs[1].request' "$tmp/q.json")" = '{"gpus":2,"nvlink":true}'
check "submit_ns kept to the nanosecond" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
raw = open(sys.argv[1]).read()
sys.exit(0 if all(str(j["submit_ns"]) in raw and j["submit_ns"] > 10**18 for j in d["jobs"]) else 1)' "$tmp/q.json"
check "counts and devices at the end" test "$(jq -c '[keys_unsorted[1:], .pending, .running]' "$tmp/q.json")" = \
	'[["pending","running","devices","simulated"],3,1]'

"$G" queue >"$tmp/q.txt"
check "queue: exit 0" test $? -eq 0
check "table: SIMULATED banner" grep -q "^\*\*\* SIMULATED" "$tmp/q.txt"
check "table: header" grep -qE "^ *ID +USER +NAME +STATE +GPUS +PRIO +TIME +REASON$" "$tmp/q.txt"
check "table: the running job" grep -qE "^ *$blk +[^ ]+ +blocker +running +0,1,2,3,4,5,6,7 +0 +[0-9.]+ s *$" "$tmp/q.txt"
check "table: a pending NVLink job" grep -qE "^ *$p1 +[^ ]+ +q \"x\" \\\\ café +pending +\(2 NVLink\) +5 +waiting [0-9.]+ s +waiting for 2 NVLink-connected GPUs: GPUs 0-7 held by pool job $blk$" "$tmp/q.txt"
check "table: no name is -" grep -qE "^ *$p2 +[^ ]+ +- +pending +\(1\) +0 +waiting" "$tmp/q.txt"
check "table: dependency reason" grep -qE "^ *$p3 .*waiting for job $blk to end$" "$tmp/q.txt"
check "table: footer" test "$(tail -1 "$tmp/q.txt")" = "1 running, 3 pending"
check "table: one line per job" test "$(wc -l <"$tmp/q.txt")" = 7
"$G" cancel "$blk" >/dev/null
check "blocker cancelled" wait_state "$blk" cancelled
release blk
stop_agent

# --- a fake agent answering what a file holds (re-read for each connection)
fake="$tmp/fake.sock"
python3 -c '
import os, socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(8)
while True:
    c, _ = s.accept()
    while c.recv(65536):
        pass
    c.sendall(open(sys.argv[2], "rb").read())
    c.close()' "$fake" "$tmp/answer" &
fake_pid=$!
on_exit 'kill "$fake_pid" 2>/dev/null'
wait_until 60 test -S "$fake" || fail "the fake agent did not listen"
export GPUCTL_POOL_SOCKET="$fake"
answer() { printf '%s' "$1" >"$tmp/answer"; }
expect() { # expect CODE STDERR-PATTERN ARGS...
	local code="$1" pat="$2"; shift 2
	"$G" "$@" >"$tmp/f.out" 2>"$tmp/f.err"
	local rc=$?
	checks=$((checks + 1))
	[ "$rc" -eq "$code" ] && { [ -z "$pat" ] || grep -q "$pat" "$tmp/f.err"; } ||
		fail "$* with $(head -c 80 "$tmp/answer"): exit $rc, want $code and '$pat' ($(cat "$tmp/f.err"))"
}
answer '{"ok":false,"error":"the pool is off"}'
expect 65 "^gpuctl queue: the pool is off$" queue
expect 65 "^gpuctl queue: the pool is off$" queue --json
answer '{"ok":true,"jobs":[{"id":1'
expect 74 "^gpuctl queue: malformed answer from the agent: " queue
expect 74 "^gpuctl queue: malformed answer from the agent: " queue --json
answer '[1,2]'
expect 74 "malformed answer from the agent" queue
expect 74 "malformed answer from the agent" queue --json
answer ''
expect 74 "the agent closed the connection" queue --json
# valid, with what the fast path leaves to jansson (a real, a duplicate key)
answer '{"ok":true,"jobs":[{"id":3,"user":"u","state":"running","gpus":[2],"load":0.5}],"x":1,"x":2,"pending":0,"running":1}'
expect 0 "" queue --json
check "reals: printed through jansson" test "$(jq -c '[.jobs[0].load, .x, has("ok")]' "$tmp/f.out")" = "[0.5,2,false]"
check "reals: jansson's layout" same_layout "$tmp/f.out"
expect 0 "" queue
check "reals: the table still reads it" grep -qE "^ +3 +u +- +running +2 +0 +- *$" "$tmp/f.out"
kill "$fake_pid" 2>/dev/null
wait "$fake_pid" 2>/dev/null

finish
