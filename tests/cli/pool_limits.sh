#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# pool_limits.sh - the pool under careless or hostile users (issue 20, items
# 3-7): `wait --timeout` on a job still running (an ASan build catches a
# freed string printed); --time in Slurm's forms only, a name that is not
# UTF-8, `cancel -- ID`, a program path that does not exist; 100 idle
# connections on the socket do not stall a ping (and a uid holds at most 64);
# requests no GPU here can ever meet are refused at submission, a waiting
# job's reason names who holds the GPUs, backfill and the expected start;
# each stream of a job's output kept within pool_log_limit as it is written (head and tail,
# `logs` says what was dropped), `logs` streaming 200 MB, ended jobs'
# directories removed after pool_log_retention.
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
expect_exit 64 "bad time limit '90': a number alone is ambiguous here; write 90m or 90s" submit --time 90 -- true
t=$("$G" submit --id-only --time 90m -- true)
check "90m is 90 minutes" test "$(jobfield "$t" time_limit_s)" = 5400

# --- a name that is not UTF-8 is refused (it was stored as "")
expect_exit 64 "not valid UTF-8" submit --name $'caf\xe9' -- true
expect_exit 64 "word 2 of the command is not valid UTF-8" submit -- echo $'\xff'
u=$(env BADVAR=$'\xff' GOODVAR=ok "$G" submit --id-only --shell -- 'echo "${BADVAR-unset} $GOODVAR"' 2>"$tmp/env.err")
check "an environment variable that is not UTF-8: warned" grep -qx "gpuctl submit: warning: the environment variable BADVAR is not valid UTF-8: the job does not get it" "$tmp/env.err"
check "the job ran without it, with the others" wait_state "$u" done
check "its output" test "$("$G" logs "$u")" = "unset ok"

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

# --- 100 idle connections (connected, sending nothing) do not stall the
# others: a ping answers at once (it once waited 5 s per idle client ahead of
# it), and one uid holds at most 64: its oldest idle ones are closed with why
python3 - "$sock" 100 >"$tmp/idle.json" <<'PY'
import json, select, socket, sys, time
path, n = sys.argv[1], int(sys.argv[2])
holders = []
for _ in range(n):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    holders.append(s)
def ping():
    t = time.monotonic()
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(60)
    s.connect(path)
    s.sendall(b'{"v":1,"op":"ping"}')
    s.shutdown(socket.SHUT_WR)
    data = b""
    while True:
        b = s.recv(65536)
        if not b:
            break
        data += b
    s.close()
    return json.loads(data).get("ok") is True, (time.monotonic() - t) * 1000
try:
    pings = [ping() for _ in range(5)]
except OSError as e:
    pings = [(False, -1.0)]
# the holders the agent closed: their answer says why (bounded wait, 30 s)
closed, why, end = set(), set(), time.monotonic() + 30
while len(closed) < n - 64 and time.monotonic() < end:
    r, _, _ = select.select([h for h in holders if h not in closed], [], [], 0.5)
    for h in r:
        closed.add(h)
        why.add(json.loads(h.recv(65536) or b'{"error":"EOF"}').get("error"))
print(json.dumps({"ok": all(p[0] for p in pings), "ms": [round(p[1], 2) for p in pings],
                  "closed": len(closed), "why": sorted(why)}))
PY
cat "$tmp/idle.json"
check "100 idle clients: every ping answered" test "$(jq .ok "$tmp/idle.json")" = true
# Served one at a time, each holder cost a ping up to its 5 s deadline (four
# held it 20 s). The bounds are far from that and from a loaded machine's
# delays alike; the measured figure (0.3-30 ms best of 5) is printed above.
check "100 idle clients: a ping under 500 ms (best of 5)" jq -e '.ms | min < 500' "$tmp/idle.json" >/dev/null
check "100 idle clients: no ping waits out a holder's 5 s deadline" jq -e '.ms | max < 4500' "$tmp/idle.json" >/dev/null
check "64 connections a uid: the oldest idle ones closed" jq -e '.closed >= 36' "$tmp/idle.json" >/dev/null
check "the closed ones told why" test "$(jq -c .why "$tmp/idle.json")" = \
	'["closed: this user holds too many connections to the pool"]'
check "the agent still answers" "$G" queue >/dev/null

# --- a request no GPU here can ever meet is refused (65), saying why
expect_exit 65 "only 0 GPUs here have that much memory in all" submit --mem-per-gpu 200G -- true
expect_exit 65 "asks for 9 GPUs; this server has 8" submit --gpus 9 -- true

# --- a waiting job names who holds the GPUs; backfill ahead of a blocked head;
# the head's expected start in queue
blk=$("$G" submit --id-only --gpus 6 --time 1h --shell -- "$(hold blocker)")
check "blocker running" wait_state "$blk" running
head=$("$G" submit --id-only --gpus 8 -- true)
check "the head names the blocker" wait_reason "$head" "waiting for 8 free GPUs: GPUs 0-5 held by pool job $blk"
short=$("$G" submit --id-only --gpus 1 --time 5m --shell -- "$(hold short)")
check "a job whose --time ends before the head can start backfills" wait_state "$short" running
long=$("$G" submit --id-only --gpus 1 -- true)
check "one without --time waits behind the head" wait_reason "$long" "GPUs reserved for job $head, ahead in the queue"
start_ns=$(jobfield "$blk" start_ns)
check "the head's expected start: the blocker's time limit" \
	test "$("$G" queue --json | jq ".jobs[] | select(.id == $head) | .est_start_ns")" = $((start_ns + 3600 * 1000000000))
"$G" queue >"$tmp/q.txt"
check "queue shows the expected start" grep -qE "^ *$head .*waiting for 8 free GPUs: .*; expected start [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8}$" "$tmp/q.txt"
release short
"$G" cancel "$blk" "$head" "$long" >/dev/null 2>&1
release blocker
check "blocker ended" wait_state "$blk" cancelled
stop_agent

# --- on the shipped 8x H200, whose GPUs 0-5 run processes the pool did not
# start: the reason names the process
start_agent h200x8 || exit 1
f=$("$G" submit --id-only --gpu-ids 2 -- true)
check "a foreign process is named with its pid" wait_reason "$f" "GPU 2 runs process 48215, which the pool did not start"
"$G" cancel "$f" >/dev/null
stop_agent

# --- on h100pcie-mig, whose only GPU is in MIG mode: a whole GPU is refused
start_agent h100pcie-mig || exit 1
expect_exit 65 "1 of the 1 GPUs it may use is in MIG mode" submit --gpus 1 -- true

# --- output past pool_log_limit: the first and the last half of the limit
# are kept, the disk space of the rest given back; logs says what it dropped
stop_agent
printf 'pool_log_limit = 1M\n' >"$tmp/limits.conf"
start_agent "$tmp/free8.json" --config "$tmp/limits.conf" || exit 1
big=$("$G" submit --id-only --shell -- 'head -c 30000000 /dev/zero | tr "\0" x; echo; echo END')
check "30 MB writer done" wait_state "$big" done
out="$tmp/state/jobs/$big/stdout"
check "its file keeps its size" test "$(stat -c %s "$out")" = 30000005
check "but holds about 1 MiB on disk (got $(($(stat -c %b "$out") * 512)))" test $(($(stat -c %b "$out") * 512)) -le $((1024 * 1024 + 65536))
"$G" logs "$big" >"$tmp/big.out"
check "logs: the head first (512 KiB of x)" test "$(head -c 524288 "$tmp/big.out" | tr -d x | wc -c)" = 0
check "logs: then says what was dropped" grep -qE '^\[gpuctl logs: [0-9]+ bytes dropped here: the job.s output passed the pool.s limit of 1.0 MiB a stream \(pool_log_limit\); its first and last 0.5 MiB are kept\]$' "$tmp/big.out"
check "logs: the tail last" test "$(tail -c 4 "$tmp/big.out")" = "END"
check "logs: about 1 MiB in all" test "$(wc -c <"$tmp/big.out")" -le $((1024 * 1024 + 8192))
check "logs --json: the head's chunk, nothing skipped yet" \
	test "$("$G" logs --json "$big" | jq -c '[.offset, .skipped, .size]')" = "[524288,0,30000005]"
# the limit holds while the job writes (issue 38, item 9): the shim copies the
# job's output into the file and trims it after each write. The job writes
# 64 MiB as fast as it can and, after each MiB, reads what its file holds on
# disk: never past the limit plus one write (64 KiB) and two blocks (an
# agent that looked every 200 ms let it reach 2x the limit and more)
fast=$("$G" submit --id-only --shell -- "f=$tmp/state/jobs/\$GPUCTL_JOB_ID/stdout; max=0
	for i in \$(seq 64); do head -c 1048576 /dev/zero; b=\$((\$(stat -c %b \$f) * 512)); [ \$b -gt \$max ] && max=\$b; done
	echo \$max >&2")
check "fast writer done" wait_state "$fast" done
max=$("$G" logs --stderr "$fast")
check "fast writer: never over 1 MiB + 72 KiB on disk as it wrote (got $max)" test "${max:-0}" -gt 0 -a "${max:-0}" -le $((1024 * 1024 + 65536 + 8192))

# --- ended jobs' directories go after pool_log_retention (an agent that keeps
# them 2 s after they end); the record stays
stop_agent
printf 'pool_log_retention = 2s\n' >"$tmp/retention.conf"
start_agent "$tmp/free8.json" --config "$tmp/retention.conf" || exit 1
check "its directory removed after the retention" wait_until 60 test ! -e "$tmp/state/jobs/$big"
"$G" logs "$big" >/dev/null 2>"$tmp/gone.err"
check "logs of it: 65" test $? = 65
check "logs says it was removed" grep -q "output was removed 2 s after it ended (pool_log_retention)" "$tmp/gone.err"
check "the job's record stays" test "$(state_of "$big")" = done
stop_agent

# --- logs streams: 200 MB (no limit) in one pass, not 1 MiB JSON chunks (12 s)
printf 'pool_log_limit = off\n' >"$tmp/nolimit.conf"
start_agent "$tmp/free8.json" --config "$tmp/nolimit.conf" || exit 1
huge=$("$G" submit --id-only --shell -- 'head -c 209715200 /dev/zero | tr "\0" y')
check "200 MB writer done" wait_state "$huge" done
t0=${EPOCHREALTIME/./}
"$G" logs "$huge" | wc -c >"$tmp/huge.n"
t1=${EPOCHREALTIME/./}
check "logs: all 200 MB" test "$(cat "$tmp/huge.n")" = 209715200
echo "logs of 200 MB: $(((t1 - t0) / 1000)) ms"
check "logs: 200 MB streamed (bound 30 s for a loaded machine; it took 12 s unloaded before, 0.5-2.7 s now; got $(((t1 - t0) / 1000)) ms)" test $((t1 - t0)) -lt 30000000
rm -f "$tmp/state/jobs/$huge/stdout"

stop_agent
finish
