#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# pool_user_caps.sh - one user cannot take the pool from the others (issue
# 38): pool_user_job_limit (a user's pending and running jobs; a submission
# past it is refused, 65, while another uid still submits); the request data
# a uid's connections hold together (past 16 MiB the next request is refused
# at once, not read on); the answers a uid leaves unread (past 32 MiB its next
# request is refused, not answered in full); and with every one of the
# agent's 512 connections taken by users holding 64 each, a newcomer is
# answered and the connection closed is one of the user holding the most.
# Other uids are made with setuid in python3 (SO_PEERCRED is what the pool
# reads): no user accounts are needed, but root is.
#
# Run by CTest (GPUCTL = the binary). By hand, as root:
#   GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/pool_user_caps.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/pool_lib.bash"
need_root "connecting as other uids (setuid)"
need python3
G="$GPUCTL"
ulimit -n 4096 2>/dev/null # the agent keeps up to 512 clients, the test as many

make_free_server h200x8 "$tmp/free8.json"
printf 'pool_user_job_limit = 3\n' >"$tmp/agent.conf"
start_agent "$tmp/free8.json" --config "$tmp/agent.conf" || exit 1

# jq_true FILE FILTER: the filter gives true (jq -e alone passes an empty file)
jq_true() { [ "$(jq -r "$2" "$1" 2>/dev/null)" = true ]; }

# as_uid UID REQUEST: the request sent on the socket by a process of that uid; prints the answer
as_uid() { python3 - "$sock" "$1" "$2" <<'PY'
import os, socket, sys
os.setgroups([]); os.setgid(int(sys.argv[2])); os.setuid(int(sys.argv[2]))
with socket.socket(socket.AF_UNIX) as s:
    s.connect(sys.argv[1]); s.sendall(sys.argv[3].encode()); s.shutdown(socket.SHUT_WR)
    print(s.makefile("rb").read().decode("utf-8", "replace"), end="")
PY
}

# --- pool_user_job_limit = 3: root holds every GPU and has two more waiting
all=$("$G" submit --id-only --gpus 8 --shell -- "$(hold all8)")
check "a job holding every GPU" wait_state "$all" running
w1=$("$G" submit --id-only -- true)
w2=$("$G" submit --id-only -- true)
"$G" submit -- true >/dev/null 2>"$tmp/err"
rc=$?
check "a 4th job of one user: 65 (got $rc)" test "$rc" = 65
check "it says why ($(cat "$tmp/err"))" grep -q "refused: you have 3 jobs pending or running, the most one user may have here (pool_user_job_limit)" "$tmp/err"
other=$(as_uid 4242001 '{"v":1,"op":"submit","cwd":"/","argv":["true"],"env":[]}')
check "another uid still submits ($other)" test "$(jq -r '.ok' <<<"$other")" = true
"$G" cancel "$w2" >/dev/null
w3=$("$G" submit --id-only -- true 2>"$tmp/err")
check "once one of the three is gone, the user submits again ($(cat "$tmp/err"))" test -n "$w3"
"$G" cancel "$w1" "$w3" "$(jq -r .job <<<"$other")" >/dev/null 2>&1
release all8
check "the holding job ends" wait_state "$all" done

# --- request data: four connections of root each hold a 4 MiB request in
# progress (16 MiB); a fifth is refused at its first bytes while another uid's
# ping is answered
python3 - "$sock" >"$tmp/in.json" <<'PY'
import json, os, socket, sys
path = sys.argv[1]
big = []
for _ in range(4):
    s = socket.socket(socket.AF_UNIX); s.connect(path)
    s.sendall(b'{"v":1,"op":"ping","x":"' + b"a" * ((4 << 20) - 1024))
    big.append(s)
fifth = socket.socket(socket.AF_UNIX); fifth.settimeout(60); fifth.connect(path)
fifth.sendall(b'{"v":1,"op":"ping"}')   # not shut down: answered before the request is complete
answer = fifth.makefile("rb").readline().decode()
r, w = os.pipe()
if os.fork() == 0:
    os.setgid(4242002); os.setuid(4242002)
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(path); s.sendall(b'{"v":1,"op":"ping"}'); s.shutdown(socket.SHUT_WR)
        os.write(w, s.makefile("rb").read()); os._exit(0)
os.close(w)
other = os.read(r, 65536).decode()
os.wait()
print(json.dumps({"fifth": answer, "other": other}))
PY
check "a uid past 16 MiB of requests in progress is refused at once ($(head -c 300 "$tmp/in.json"))" \
	jq_true "$tmp/in.json" '.fifth | fromjson | .error | test("requests being sent hold more than 16 MiB")'
check "another uid is answered meanwhile" jq_true "$tmp/in.json" '.other | fromjson | .ok == true'

# --- unread answers: a job with 2 MB of output; 40 requests of 1 MiB of it
# each, none read until all are sent: past 32 MiB held the rest are refused
big=$("$G" submit --id-only --shell -- 'head -c 2000000 /dev/zero | tr "\0" x')
check "a job writing 2 MB" wait_state "$big" done
python3 - "$sock" "$big" >"$tmp/out.json" <<'PY'
import json, select, socket, sys
path, job = sys.argv[1], int(sys.argv[2])
conns = []
for _ in range(40):
    s = socket.socket(socket.AF_UNIX); s.settimeout(60); s.connect(path)
    s.sendall(json.dumps({"v": 1, "op": "logs", "job": job, "stream": 1, "offset": 0,
                          "max_bytes": 1 << 20}).encode())
    s.shutdown(socket.SHUT_WR)
    conns.append(s)
# then all are read at once (each makes progress: none waits out its deadline)
data = {s: b"" for s in conns}
open_ = set(conns)
while open_:
    for s in select.select(list(open_), [], [], 60)[0]:
        b = s.recv(1 << 20)
        if b:
            data[s] += b
        else:
            open_.discard(s)
full = refused = other = 0
for s in conns:
    try:
        a = json.loads(data[s])
    except ValueError:
        a = {"error": "cut short: %d bytes" % len(data[s])}
    if a.get("ok"):
        full += 1
    elif "answers not yet read" in a.get("error", ""):
        refused += 1
    else:
        other += 1
print(json.dumps({"full": full, "refused": refused, "other": other}))
PY
check "unread answers: some answered in full ($(cat "$tmp/out.json"))" jq_true "$tmp/out.json" '.full >= 10'
check "and the rest refused, past 32 MiB held" jq_true "$tmp/out.json" '.refused >= 1 and .other == 0'

# --- every connection taken: eight uids hold 64 each (512, the agent's most);
# a ninth uid's ping is answered, and the connection closed for it is one of
# a uid holding the most, told why
python3 - "$sock" "$agent_pid" >"$tmp/full.json" <<'PY'
import json, os, socket, sys, time
path, agent = sys.argv[1], sys.argv[2]
def fds():
    return len(os.listdir("/proc/%s/fd" % agent))
base = fds()
kids = []
for k in range(8):
    r, w = os.pipe()
    go_r, go_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        uid = 4242100 + k
        os.setgid(uid); os.setuid(uid)
        held = []
        for _ in range(64):
            s = socket.socket(socket.AF_UNIX); s.connect(path); held.append(s)
        os.write(w, b"r")
        os.read(go_r, 1)  # until the newcomer is done
        why = []
        for s in held:
            s.setblocking(False)
            try:
                d = s.recv(65536)
                if d:
                    why.append(json.loads(d).get("error"))
            except (BlockingIOError, ValueError):
                pass
        os.write(w, (json.dumps(why) + "\n").encode())
        os._exit(0)
    kids.append((pid, r, go_w))
for _, r, _ in kids:
    os.read(r, 1)
end = time.monotonic() + 30
while fds() < base + 512 and time.monotonic() < end:
    time.sleep(0.01)
full = fds() >= base + 512
rr, ww = os.pipe()
if os.fork() == 0:
    os.setgid(4242200); os.setuid(4242200)
    try:
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(60)
            s.connect(path); s.sendall(b'{"v":1,"op":"ping"}'); s.shutdown(socket.SHUT_WR)
            os.write(ww, s.makefile("rb").read() or b'"no answer"')
    except OSError as e:
        os.write(ww, json.dumps("socket error: %s" % e).encode())
    os._exit(0)
os.close(ww)
newcomer = os.read(rr, 65536).decode()
os.wait()
whys = []
for pid, r, go_w in kids:
    os.write(go_w, b"g")
    line = b""
    while not line.endswith(b"\n"):
        line += os.read(r, 65536)
    whys += json.loads(line)
    os.waitpid(pid, 0)
print(json.dumps({"full": full, "newcomer": newcomer, "why": whys}))
PY
check "512 connections were open ($(head -c 300 "$tmp/full.json"))" jq_true "$tmp/full.json" '.full'
check "a newcomer's ping is answered" jq_true "$tmp/full.json" '.newcomer | fromjson | .ok == true'
check "one connection of a uid holding the most was closed for it, saying why" jq_true "$tmp/full.json" \
	'[.why[] | select(. == "closed: the pool'"'"'s connections are all taken and this user holds the most")] | length >= 1' 
check "the agent still answers" "$G" queue >/dev/null
stop_agent
finish
