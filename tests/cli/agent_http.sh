#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# agent_http.sh - the agent's HTTP side against what libmicrohttpd 0.9.75 gets
# wrong on its own: a request without Host or with a bad Content-Length gets
# one status line and one set of headers (not two), on the first request of a
# connection and on a later kept-alive one; ?gpu= past the last GPU is 400 as
# docs/agent.md says; a connection that is not HTTP (binary, TLS) is closed at
# once, not held to the timeout. Raw sockets on 127.0.0.1 only.
#
# Run by CTest (GPUCTL = the binary). By hand:
#   GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/agent_http.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
need python3 curl

. "$(dirname "${BASH_SOURCE[0]}")/http_lib.bash"
# connection_timeout 30 s: anything the test sees end sooner was closed by design
printf 'connection_timeout = 30\n' >"$tmp/agent.conf"
start_http_agent --config "$tmp/agent.conf"
base="http://127.0.0.1:$port"

# raw PYTHON-BYTES [FIRST-PYTHON-BYTES]: sends the bytes (after a good first
# request and its answer when FIRST is given, on the same connection), reads
# until the server closes (at most 20 s), prints what came back and, on the
# last line, the seconds it took
raw() {
	python3 - "$port" "$1" "${2:-}" <<'PY'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=20)
if sys.argv[3]:
    s.sendall(eval(sys.argv[3]))
    got = b""
    while b"\r\n\r\n" not in got or not got.endswith(b"\n"):
        got += s.recv(65536)
t0 = time.monotonic()
s.sendall(eval(sys.argv[2]))
out = b""
try:
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        out += chunk
except OSError:
    pass
sys.stdout.write(out.decode("latin-1"))
print("\n%.2f" % (time.monotonic() - t0))
PY
}
# expect_once DESCRIPTION STATUS BYTES [FIRST]: exactly one status line, STATUS
expect_once() {
	local what="$1" want="$2"
	checks=$((checks + 1))
	raw "$3" "${4:-}" >"$tmp/raw.out"
	local lines status
	lines=$(grep -c '^HTTP/1\.[01] ' "$tmp/raw.out")
	status=$(grep -m1 '^HTTP/1\.[01] ' "$tmp/raw.out" | cut -d' ' -f2)
	if [ "$lines" != 1 ] || [ "$status" != "$want" ]; then
		fail "$what: $lines status lines, status '$status' (want one, $want): $(head -c 300 "$tmp/raw.out" | tr '\r\n' '  ')"
	fi
}
good='b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"'
expect_once "no Host" 400 'b"GET /healthz HTTP/1.1\r\n\r\n"'
expect_once "Content-Length: -1" 400 'b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nContent-Length: -1\r\n\r\n"'
expect_once "Content-Length: x" 400 'b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nContent-Length: x\r\n\r\n"'
expect_once "two Host headers" 400 'b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nHost: y\r\n\r\n"'
expect_once "HTTP/1.0 without Host is fine" 200 'b"GET /healthz HTTP/1.0\r\n\r\n"'
expect_once "kept alive, then no Host" 400 'b"GET /healthz HTTP/1.1\r\n\r\n"' "$good"
check "the refusal says why" grep -q 'needs a Host header' "$tmp/raw.out"

# ?gpu= past the last of the 8 GPUs
gstatus() { curl -s --max-time 5 -o "$tmp/g.body" -w '%{http_code}' "$base$1"; }
check "/api/v1/gpus?gpu=9 -> 400" [ "$(gstatus '/api/v1/gpus?gpu=9')" = 400 ]
check "  and says the range" grep -q 'GPU index 9 out of range (0-7)' "$tmp/g.body"
check "/api/v1/health?gpu=2,8 -> 400" [ "$(gstatus '/api/v1/health?gpu=2,8')" = 400 ]
check "/api/v1/gpus?gpu=7 -> 200" [ "$(gstatus '/api/v1/gpus?gpu=7')" = 200 ]
check "/api/v1/gpus?gpu=0-7 -> 200" [ "$(gstatus '/api/v1/gpus?gpu=0-7')" = 200 ]

# not HTTP: closed at once with no answer (the timeout is 30 s)
closed_fast() { # closed_fast DESCRIPTION BYTES
	checks=$((checks + 1))
	raw "$2" >"$tmp/bin.out"
	local secs
	secs=$(tail -1 "$tmp/bin.out")
	if [ "$(wc -l <"$tmp/bin.out")" -gt 2 ] || ! awk -v s="$secs" 'BEGIN { exit !(s < 5) }'; then
		fail "$1: answered or held $secs s: $(head -c 200 "$tmp/bin.out" | tr '\r\n' '  ')"
	fi
}
closed_fast "a TLS ClientHello" 'b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + bytes(range(32))'
closed_fast "binary with no line end" 'b"\x00\xff\xfe\x01"'
closed_fast "a NUL in the request line" 'b"GET /metr\x00ics HTTP/1.1\r\n"'
expect_once "a garbled request line" 400 'b"GET /metrics HTTP/1.1 extra\r\nHost: localhost\r\n\r\n"'
expect_once "HTTP/2 preface" 505 'b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"'

# what worked before still does
check "/metrics 200" [ "$(gstatus /metrics)" = 200 ]
check "keep-alive: two requests on one connection" [ "$(curl -s --max-time 5 -o /dev/null -o /dev/null \
	-w '%{http_code}%{num_connects}\n' "$base/healthz" "$base/healthz" | tr -d "\n")" = 20012000 ]
finish
