#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# agent_slowloris.sh - slow clients must not keep a scraper out: 300
# connections from ten addresses, each sending half a request and then a
# header line every second (reconnecting when closed), while /metrics is
# scraped from another address; a head trickled in is closed at the
# header_timeout (default 5 s) although it is never idle; the per-address
# limit is on by default. On 127.0.0.1/8 only; every loop is bounded.
#
# Run by CTest (GPUCTL = the binary). By hand:
#   GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/agent_slowloris.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
need python3 curl

. "$(dirname "${BASH_SOURCE[0]}")/http_lib.bash"
# the defaults (connection_timeout 10 s, header_timeout 5 s, max_connections
# 256, per_ip_connections 32)
start_http_agent

# One process: the tricklers (sources 127.0.0.11-20, 30 each, back at once
# when closed), the scraper (source 127.0.0.1, 20 scrapes 0.3 s apart, once
# the 300 are connected), then, once they are gone, a lone trickler from
# 127.0.0.2 whose head never completes. Prints
# "scrape STATUS MS" per scrape, "held N" (tricklers connected when the
# scrapes began) and "lone CLOSED_AFTER_S".
python3 - "$port" >"$tmp/run.out" 2>"$tmp/run.err" <<'PY'
import socket, sys, time, selectors
port = int(sys.argv[1])
sel = selectors.DefaultSelector()
def connect(src):
    s = socket.socket()
    s.setblocking(False)
    s.bind((src, 0))
    try:
        s.connect(("127.0.0.1", port))
    except BlockingIOError:
        pass
    return s
class Trickler:
    def __init__(self, src):
        self.src, self.sock, self.next, self.sent_first = src, None, 0.0, False
        self.opened = None
    def open(self, now):
        self.sock, self.sent_first, self.next, self.opened = connect(self.src), False, now, now
        sel.register(self.sock, selectors.EVENT_READ, self)
    def close(self):
        sel.unregister(self.sock)
        self.sock.close()
        self.sock = None
    def tick(self, now):
        if self.sock is None or now < self.next:
            return
        data = b"GET /metrics HTTP/1.1\r\nHost: localhost\r\n" if not self.sent_first else b"X-a: b\r\n"
        try:
            self.sock.send(data)
            self.sent_first = True
        except (BlockingIOError, InterruptedError):
            pass
        except OSError:
            pass
        self.next = now + 1.0
trick = [Trickler("127.0.0.%d" % (11 + i % 10)) for i in range(300)]
lone = Trickler("127.0.0.2")
t0 = time.monotonic()
for t in trick:
    t.open(t0)
lone_closed = None
def pump(until):
    global lone_closed
    while True:
        now = time.monotonic()
        if now >= until or (not flooding and lone_closed is not None):
            return
        for t in trick + [lone]:
            t.tick(now)
        for key, _ in sel.select(timeout=min(0.05, until - now)):
            t = key.data
            try:
                gone = t.sock.recv(4096) == b""
            except (BlockingIOError, InterruptedError):
                gone = False
            except OSError:
                gone = True
            if gone:
                t.close()
                if t is lone:
                    lone_closed = time.monotonic() - t.opened
        for t in trick:
            if flooding and t.sock is None:
                t.open(time.monotonic())  # a slowloris comes back at once
def scrape():
    s = socket.socket()
    s.settimeout(5)
    s.bind(("127.0.0.1", 0))
    t = time.monotonic()
    try:
        s.connect(("127.0.0.1", port))
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n")
        buf = b""
        while True:
            c = s.recv(65536)
            if not c:
                break
            buf += c
        status = buf.split(b" ", 2)[1].decode() if buf.startswith(b"HTTP/") else "none"
    except OSError as e:
        status = "error:" + type(e).__name__
    ms = (time.monotonic() - t) * 1000
    s.close()
    return status, ms
flooding = True
pump(t0 + 1.0)  # every trickler has connected and sent its first line
print("held %d" % sum(1 for t in trick if t.sock is not None), flush=True)
for i in range(20):
    st, ms = scrape()
    print("scrape %s %.1f" % (st, ms), flush=True)
    pump(time.monotonic() + 0.3)
# alone (in the flood it would be pushed out by newer connections long before)
flooding = False
for t in trick:
    if t.sock is not None:
        t.close()
lone.open(time.monotonic())
pump(time.monotonic() + 25.0)  # its head is long overdue by then, even on a loaded machine
print("lone %s" % ("%.1f" % lone_closed if lone_closed is not None else "open"), flush=True)
PY
cat "$tmp/run.err" >&2
scrapes=$(grep -c '^scrape ' "$tmp/run.out")
ok=$(grep -c '^scrape 200 ' "$tmp/run.out")
check "20 scrapes during the trickle ($scrapes)" [ "$scrapes" -eq 20 ]
check "every scrape answered 200 ($ok of $scrapes): $(grep '^scrape' "$tmp/run.out" | grep -v ' 200 ' | head -3 | tr '\n' ' ')" \
	[ "$ok" -eq "$scrapes" ]
median=$(awk '/^scrape/ { print $3 }' "$tmp/run.out" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
slowest=$(awk '/^scrape/ { print $3 }' "$tmp/run.out" | sort -n | tail -1)
echo "scrapes during 300 trickling connections: median $median ms, slowest $slowest ms ($(grep '^held' "$tmp/run.out"))"
# Before the front door every scrape waited out the whole trickle. The bound
# is far from that and from a loaded CI machine's scheduling delays alike; the
# figure itself (4-9 ms median on an unloaded 2-core machine, against the goal
# of 50 ms) is printed above and kept in docs/agent.md, not asserted.
check "median scrape under 1 s ($median ms)" awk -v m="$median" 'BEGIN { exit !(m < 1000) }'
lone=$(sed -n 's/^lone //p' "$tmp/run.out")
check "a head trickled in is closed at header_timeout, 5 s, though never idle ($lone s)" \
	awk -v s="$lone" 'BEGIN { exit !(s != "open" && s >= 4 && s < 20) }'

# a kept-alive connection: one request answered, then the next one's head
# trickled in; it too must be complete within header_timeout of the answer
check "a later head trickled on a kept-alive connection is closed at header_timeout too" python3 - "$port" <<'PY'
import socket, sys, time
port = int(sys.argv[1])
s = socket.socket()
s.bind(("127.0.0.4", 0))
s.connect(("127.0.0.1", port))
s.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
got = b""
while not got.endswith(b"ok\n"):
    got += s.recv(4096)
t0 = time.monotonic()
s.sendall(b"GET /metrics HTTP/1.1\r\nHost: localhost\r\n")
s.settimeout(0.2)
closed = None
while time.monotonic() - t0 < 25 and closed is None:
    try:
        if s.recv(4096) == b"":
            closed = time.monotonic() - t0
    except socket.timeout:
        pass
    except OSError:
        closed = time.monotonic() - t0
    if closed is None:
        try:
            s.sendall(b"X-a: b\r\n")  # never idle
        except OSError:
            closed = time.monotonic() - t0
        time.sleep(0.8)
print("closed after %s s" % closed)
sys.exit(0 if closed is not None and 4 <= closed < 20 else 1)
PY

# the per-address limit is on by default (32): a 33rd waiting connection from
# one address pushes out that address's oldest
check "per-address limit: the 33rd connection from one address closes its oldest" python3 - "$port" <<'PY'
import socket, sys, time
port = int(sys.argv[1])
def partial():
    s = socket.socket()
    s.bind(("127.0.0.3", 0))
    s.connect(("127.0.0.1", port))
    s.sendall(b"GET /metrics HTTP/1.1\r\n")
    return s
first = partial()  # accepted first (the listen queue is in order): the oldest
others = [partial() for _ in range(32)]
first.settimeout(4)  # header_timeout is 5 s: a close before it is the limit's
try:
    first.recv(100)
    closed = True
except socket.timeout:
    closed = False
except OSError:
    closed = True
sys.exit(0 if closed else 1)
PY
finish
