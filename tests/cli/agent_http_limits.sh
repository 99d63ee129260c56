#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# agent_http_limits.sh - more connections than the agent's limits, held
# open, must not lock its HTTP side up (issue 38, item 1): with
# max_connections = 4, eight connections that each send a request and stay
# open get four answers at once; the other four wait at the door and are
# answered as soon as the first four close; once all are gone, a new
# connection is answered within 1 s, and the agent holds no connection in
# CLOSE-WAIT. The same spread over ten addresses, and with a per-address
# limit (per_ip_connections = 2: a third connection from one address waits,
# one from another address is answered at once). Before the fix the door
# handed libmicrohttpd connections past its limit and its refusal locked its
# workers up: no answer ever again. A request that waits for a place until
# its header_timeout gets 503. Then the Host rule (item 6): a name that
# is not the agent's (DNS rebinding) gets 421.
#
# The agent's idle and head timeouts are an hour here, so that nothing but
# the clients' closing frees a place. Run by CTest (GPUCTL = the binary). By hand:
#   GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/agent_http_limits.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
need python3 curl flock
. "$(dirname "${BASH_SOURCE[0]}")/http_lib.bash"

# close_waits: the agent's sockets on $port in CLOSE-WAIT (state 08 in /proc/net/tcp*)
close_waits() {
	local hex
	hex=$(printf '%04X' "$port")
	cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk -v p=":$hex" '$2 ~ p"$" && $4 == "08"' | wc -l
}
no_close_wait() { [ "$(close_waits)" -eq 0 ]; }

# held_run SOURCES...: one connection per source address (in order), each
# sends GET /healthz with a Host header and stays open. Prints "answered N"
# once no more answers come without a place freed (all of the first
# max_connections are in), "waiting N" (connections with nothing received),
# then closes the answered ones and prints "later N MS" (the waiting ones
# answered after that, and the slowest's delay), then closes all and prints
# "fresh STATUS MS" for a new connection from 127.0.0.1.
held_run() {
	python3 - "$port" "$expect_served" "$@" <<'PY'
import socket, sys, time, select
port, served = int(sys.argv[1]), int(sys.argv[2])
srcs = sys.argv[3:]
req = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"
conns = []
for src in srcs:
    s = socket.socket()
    s.bind((src, 0))
    s.connect(("127.0.0.1", port))
    s.sendall(req)
    conns.append(s)
got = {s: b"" for s in conns}
def answered(s):
    return b"\r\n\r\nok\n" in got[s]
def pump(until, want):
    while time.monotonic() < until and sum(map(answered, conns)) < want:
        r, _, _ = select.select([s for s in conns if not answered(s)], [], [], 0.05)
        for s in r:
            try:
                c = s.recv(4096)
            except OSError:  # reset: as closed
                c = b""
            got[s] += c if c else b"<closed>"
# the first `served` are answered (bounded: 60 s on a loaded machine)
pump(time.monotonic() + 60, served)
first = [s for s in conns if answered(s)]
print("answered %d" % len(first), flush=True)
# the others have nothing: no place is free (the timeouts are an hour)
r, _, _ = select.select([s for s in conns if not answered(s)], [], [], 0)
print("waiting %d" % (len(conns) - len(first) - len(r)), flush=True)
t0 = time.monotonic()
for s in first:
    s.close()
rest = [s for s in conns if s not in first]
conns = rest
pump(time.monotonic() + 60, len(rest))
print("later %d %.0f" % (sum(map(answered, rest)), (time.monotonic() - t0) * 1000), flush=True)
for s in rest:
    s.close()
s = socket.socket()
s.settimeout(30)
t = time.monotonic()
try:
    s.connect(("127.0.0.1", port))
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    buf = b""
    while True:
        c = s.recv(4096)
        if not c:
            break
        buf += c
    st = buf.split(b" ", 2)[1].decode() if buf.startswith(b"HTTP/") else "none"
except OSError as e:
    st = "error:" + type(e).__name__
print("fresh %s %.0f" % (st, (time.monotonic() - t) * 1000), flush=True)
PY
}

# check_run NAME: the checks on $tmp/NAME.out (expect_served answered at
# once, expect_waiting waiting, then all of those answered within 1 s, a new
# connection within 1 s, no CLOSE-WAIT left)
check_run() {
	local out="$tmp/$1.out" n
	n=$(sed -n 's/^answered //p' "$out")
	check "$1: $expect_served connections answered at once ($n)" [ "$n" = "$expect_served" ]
	n=$(sed -n 's/^waiting //p' "$out")
	check "$1: the other $expect_waiting wait at the door ($n)" [ "$n" = "$expect_waiting" ]
	read -r n ms < <(sed -n 's/^later //p' "$out")
	check "$1: the waiting ones are answered once the first close ($n of $expect_waiting)" [ "$n" = "$expect_waiting" ]
	check "$1: ... within 1 s ($ms ms)" [ "${ms:-99999}" -lt 1000 ]
	read -r st ms < <(sed -n 's/^fresh //p' "$out")
	check "$1: a new connection after they closed is answered 200 ($st)" [ "$st" = 200 ]
	check "$1: ... within 1 s ($ms ms)" [ "${ms:-99999}" -lt 1000 ]
	check "$1: no connection left in CLOSE-WAIT ($(close_waits))" wait_until 30 no_close_wait
}

long="connection_timeout = 3600
header_timeout = 60"
printf 'max_connections = 4\nper_ip_connections = 0\n%s\n' "$long" >"$tmp/four.conf"
start_http_agent --config "$tmp/four.conf"

# 8 held connections from one address against max_connections = 4
expect_served=4 expect_waiting=4
held_run 127.0.0.1 127.0.0.1 127.0.0.1 127.0.0.1 127.0.0.1 127.0.0.1 127.0.0.1 127.0.0.1 >"$tmp/one.out" 2>&1
cat "$tmp/one.out"
check_run one

# 8 spread over 127.0.0.10-17 (on the same agent: the first run left no place taken)
srcs=(); for i in $(seq 0 7); do srcs+=("127.0.0.$((10 + i))"); done
expect_served=4 expect_waiting=4
held_run "${srcs[@]}" >"$tmp/spread.out" 2>&1
cat "$tmp/spread.out"
check_run spread
stop_http_agent

# per_ip_connections = 2: three from 127.0.0.10 (one waits), then one from
# 127.0.0.11 answered at once although the third waits
printf 'max_connections = 8\nper_ip_connections = 2\nallowed_hosts = metrics.example.org, gpu-a\n%s\n' "$long" >"$tmp/perip.conf"
start_http_agent --config "$tmp/perip.conf"
expect_served=3 expect_waiting=1
held_run 127.0.0.10 127.0.0.10 127.0.0.10 127.0.0.11 >"$tmp/perip.out" 2>&1
cat "$tmp/perip.out"
check_run perip

# The Host rule (item 6, DNS rebinding): IP literals, localhost, the
# machine's name and allowed_hosts are answered; any other name gets 421,
# on every path, also on a later request of a kept-alive connection.
status_for() { curl -s -o /dev/null -w '%{http_code}' -H "Host: $1" "http://127.0.0.1:$port$2"; }
for path in /api/v1/gpus /api/v1/pool /metrics /healthz /; do
	st=$(status_for "attacker.example:$port" "$path")
	check "Host attacker.example:$port on $path: 421 ($st)" [ "$st" = 421 ]
done
for h in "127.0.0.1:$port" "localhost:$port" "[::1]:$port" "10.0.0.7" "$(hostname)" "metrics.example.org:$port" "GPU-A."; do
	st=$(status_for "$h" /api/v1/gpus)
	check "Host $h: 200 ($st)" [ "$st" = 200 ]
done
body=$(curl -s -H "Host: attacker.example" "http://127.0.0.1:$port/api/v1/gpus")
check "the 421 says why in one line ($body)" [ "$body" = "gpuctl agent: this agent does not answer to that Host name (add it to allowed_hosts)" ]
check "a later request on a kept-alive connection with another Host: 421" python3 - "$port" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
def ask(host):
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: " + host + b"\r\n\r\n")
    buf = b""
    while b"\r\n\r\n" not in buf:
        buf += s.recv(4096)
    head, rest = buf.split(b"\r\n\r\n", 1)
    n = int([l.split(b":")[1] for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")][0])
    while len(rest) < n:
        rest += s.recv(4096)
    return head.split(b" ")[1]
sys.exit(0 if ask(b"localhost") == b"200" and ask(b"attacker.example") == b"421" else 1)
PY
check "agent still running" kill -0 "$agent_pid"
stop_http_agent

# 503 while full: max_connections = 1, its one connection held inside its
# request (the test-only hook GPUCTL_TEST_HOLD_HTTP waits for a lock this
# test holds); a second connection's request waits at the door until its
# header_timeout (1 s) and gets 503; once the lock is let go the first is answered.
printf 'max_connections = 1\nheader_timeout = 1\nconnection_timeout = 3600\n' >"$tmp/one.conf"
GPUCTL_TEST_HOLD_HTTP="$tmp/http.lock" start_http_agent --config "$tmp/one.conf"
flock "$tmp/http.lock" sh -c ": >'$tmp/http.locked'; $(hold http)" &
wait_until 60 test -e "$tmp/http.locked" || fail "could not take the lock"
curl -s -o "$tmp/first.out" -H "Host: localhost" "http://127.0.0.1:$port/healthz" &
first=$!
check "the one connection is held in its request" wait_until 60 test -e "$tmp/http.lock.waiting"
st=$(curl -s -o "$tmp/second.out" -w '%{http_code}' -H "Host: localhost" "http://127.0.0.1:$port/healthz")
check "a second one gets 503 at its header_timeout ($st: $(cat "$tmp/second.out"))" [ "$st" = 503 ]
check "... saying why" grep -q "too many connections" "$tmp/second.out"
release http
wait "$first"
check "the held one is answered once let go ($(cat "$tmp/first.out"))" [ "$(cat "$tmp/first.out")" = ok ]
finish
