#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# agent.sh - `gpuctl agent` on the simulated 8x H200 with a real HTTP client:
# the endpoints and their formats, faults injected at run time through the
# sim's fault file (a lost GPU -> up 0 while the others are served, a hung
# call -> stale), XIDs from a kernel-log file, malformed / oversized / slow
# requests answered with a proper error, and the usage errors.
#
# Run by CTest (GPUCTL = the binary). By hand:
#   GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/agent.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/agent_lib.bash"
need curl python3

# --- usage errors, with their exit codes (docs/exit-codes.md)
expect_exit() { # expect_exit CODE DESCRIPTION ARGS...
	local code="$1" what="$2"; shift 2
	checks=$((checks + 1))
	"$GPUCTL" --sim h200x8 agent "$@" >"$tmp/usage.out" 2>"$tmp/usage.err"
	local rc=$?
	[ "$rc" -eq "$code" ] || fail "$what: exit $rc, want $code ($(head -c 200 "$tmp/usage.err"))"
	grep -q '^gpuctl agent: ' "$tmp/usage.err" || fail "$what: no 'gpuctl agent:' message"
}
expect_exit 64 "bad listen" --listen 1.2.3.4:99999
expect_exit 64 "bad interval" --interval soon
expect_exit 64 "unknown flag" --frobnicate
expect_exit 64 "--openmetrics without --once" --openmetrics
expect_exit 66 "missing config" --config "$tmp/nope.conf"
printf 'interval = 1s\nwhat = 3\n' >"$tmp/bad.conf"
expect_exit 65 "malformed config" --config "$tmp/bad.conf"
check "malformed config names file and line" grep -q "bad.conf:2: unknown setting 'what'" "$tmp/usage.err"

# --- start the agent: port 0 = a free port, which it reports
faults="$tmp/faults.json"
klog="$tmp/kmsg.log"
: >"$klog"
cat >"$tmp/agent.conf" <<EOF
# test configuration
listen = 127.0.0.1:0
interval = 200ms
stale_after = 1s
label.cluster = test
connection_timeout = 2
max_connections = 8
kernel_log = $klog
EOF
"$GPUCTL" --sim "h200x8,latency_us=2000,faults=$faults" agent --config "$tmp/agent.conf" \
	>"$tmp/agent.out" 2>"$tmp/agent.err" &
agent_pid=$!
wait_agent_port
base="http://127.0.0.1:$port"
check "stderr says SIMULATED" grep -q 'SIMULATED' "$tmp/agent.err"
# a second agent on the same port: exit 74, one line with the errno's own message
expect_exit 74 "busy port" --listen "127.0.0.1:$port" --kernel-log off
check "busy port: the errno's message" grep -q "^gpuctl agent: cannot listen on 127.0.0.1:$port: Address already in use$" \
	"$tmp/usage.err"

metric() { # metric NAME LABELMATCH: prints the value of the first matching series
	curl -s --max-time 5 "$base/metrics" | grep "^$1{" | grep -- "$2" | head -1 | awk '{print $NF}'
}
metric_is() { [ "$(metric "$1" "$2")" = "$3" ]; }
wait_value() { # wait_value NAME LABELMATCH VALUE: until the series has VALUE (60 s at most)
	wait_until 60 metric_is "$1" "$2" "$3" && return 0
	echo "  ($1 $2 is '$(metric "$1" "$2")', want '$3')"
	return 1
}

# --- /metrics, Prometheus text
code=$(curl -s --max-time 5 -o "$tmp/m.txt" -w '%{http_code} %{content_type}' "$base/metrics")
check "/metrics 200 text 0.0.4" [ "$code" = "200 text/plain; version=0.0.4; charset=utf-8" ]
check "8 gpuctl_gpu_up series equal to 1" [ "$(grep -c '^gpuctl_gpu_up{.*} 1$' "$tmp/m.txt")" -eq 8 ]
check "extra label on every GPU series" [ "$(grep '^gpuctl_gpu_up{' "$tmp/m.txt" | grep -c 'cluster="test"')" -eq 8 ]
check "every family has HELP and TYPE" [ "$(grep -c '^# HELP' "$tmp/m.txt")" -eq "$(grep -c '^# TYPE' "$tmp/m.txt")" ]
check "simulated in agent_info" grep -q '^gpuctl_agent_info{.*simulated="true"' "$tmp/m.txt"
check "power within the sim's range" awk '/^gpuctl_gpu_power_watts\{/ { n++; if ($NF < 50 || $NF > 700) bad++ } END { exit !(n == 8 && !bad) }' "$tmp/m.txt"
check "kernel log readable" grep -q '^gpuctl_agent_kernel_log_readable{.*} 1$' "$tmp/m.txt"
check "render time on the first scrape (rendered on request)" grep -q '^gpuctl_agent_render_seconds{.*} [0-9.e-]*$' "$tmp/m.txt"
if command -v promtool >/dev/null; then
	check "promtool check metrics" promtool check metrics <"$tmp/m.txt"
fi

# --- OpenMetrics when asked: rendered on the first request (each exposition is
# rendered at the tick only while it is being asked for, else on request)
om_accept='Accept: application/openmetrics-text;version=1.0.0,text/plain;q=0.5'
code=$(curl -s --max-time 5 -H "$om_accept" -o "$tmp/om.txt" -w '%{http_code} %{content_type}' "$base/metrics")
check "OpenMetrics content type" [ "$code" = "200 application/openmetrics-text; version=1.0.0; charset=utf-8" ]
check "OpenMetrics ends with # EOF" [ "$(tail -1 "$tmp/om.txt")" = "# EOF" ]
check "OpenMetrics counter family without _total" grep -q '^# TYPE gpuctl_gpu_energy_joules counter$' "$tmp/om.txt"

# --- gzip (Prometheus always asks for it), plain text for clients that do not
hdr() { sed -n "s/^$1: *\([^\r]*\).*/\1/ip" "$2"; } # hdr NAME FILE: a response header's value
curl -s --max-time 5 -D "$tmp/plain.h" -o "$tmp/plain.txt" "$base/metrics"
check "plain: no Content-Encoding" [ -z "$(hdr Content-Encoding "$tmp/plain.h")" ]
check "plain: Vary: Accept-Encoding" [ "$(hdr Vary "$tmp/plain.h")" = "Accept-Encoding" ]
check "plain: Content-Length is the text's" [ "$(hdr Content-Length "$tmp/plain.h")" = "$(wc -c <"$tmp/plain.txt")" ]
check "plain: 8 GPUs up" [ "$(grep -c '^gpuctl_gpu_up{.*} 1$' "$tmp/plain.txt")" -eq 8 ]
curl -s --max-time 5 -H 'Accept-Encoding: gzip' -D "$tmp/gz.h" -o "$tmp/gz.bin" "$base/metrics"
check "gzip: Content-Encoding: gzip" [ "$(hdr Content-Encoding "$tmp/gz.h")" = "gzip" ]
check "gzip: Vary: Accept-Encoding" [ "$(hdr Vary "$tmp/gz.h")" = "Accept-Encoding" ]
check "gzip: text 0.0.4" [ "$(hdr Content-Type "$tmp/gz.h")" = "text/plain; version=0.0.4; charset=utf-8" ]
check "gzip: Content-Length is the compressed body's" [ "$(hdr Content-Length "$tmp/gz.h")" = "$(wc -c <"$tmp/gz.bin")" ]
check "gzip: a valid gzip stream" gzip -t "$tmp/gz.bin"
gzip -dc "$tmp/gz.bin" >"$tmp/gz.txt" 2>/dev/null
check "gzip: at least 4x smaller" [ "$(wc -c <"$tmp/gz.bin")" -lt $(($(wc -c <"$tmp/gz.txt") / 4)) ]
names() { grep -v '^#' "$1" | sed 's/[{ ].*//' | sort -u; }
check "gzip: the same metrics as plain" diff <(names "$tmp/plain.txt") <(names "$tmp/gz.txt")
check "gzip: the same HELP and TYPE lines" diff <(grep '^# [HT]' "$tmp/plain.txt") <(grep '^# [HT]' "$tmp/gz.txt")
curl -s --max-time 5 --compressed -o "$tmp/curlz.txt" -w '%{size_download}' "$base/metrics" >"$tmp/curlz.size"
check "curl --compressed: 8 GPUs up" [ "$(grep -c '^gpuctl_gpu_up{.*} 1$' "$tmp/curlz.txt")" -eq 8 ]
check "curl --compressed: fetched compressed" [ "$(cat "$tmp/curlz.size")" -lt $(($(wc -c <"$tmp/curlz.txt") / 4)) ]
if command -v promtool >/dev/null; then
	check "promtool check metrics (gzip)" promtool check metrics <"$tmp/curlz.txt"
fi
curl -s --max-time 5 -H 'Accept-Encoding: gzip;q=0, deflate' -D "$tmp/q0.h" -o "$tmp/q0.txt" "$base/metrics"
check "gzip;q=0: plain" [ -z "$(hdr Content-Encoding "$tmp/q0.h")" ] && check "gzip;q=0: text" grep -q '^gpuctl_gpu_up{' "$tmp/q0.txt"
curl -s --max-time 5 -H 'Accept-Encoding: gzip' -H "$om_accept" -D "$tmp/omgz.h" -o "$tmp/omgz.bin" "$base/metrics"
check "OpenMetrics gzip: content type and encoding" [ "$(hdr Content-Type "$tmp/omgz.h") $(hdr Content-Encoding "$tmp/omgz.h")" = \
	"application/openmetrics-text; version=1.0.0; charset=utf-8 gzip" ]
check "OpenMetrics gzip: ends with # EOF" [ "$(gzip -dc "$tmp/omgz.bin" | tail -1)" = "# EOF" ]
curl -s --max-time 5 -I -H 'Accept-Encoding: gzip' -o "$tmp/headgz.h" "$base/metrics"
check "HEAD gzip: 200 with Content-Encoding" [ "$(head -1 "$tmp/headgz.h" | cut -d' ' -f2) $(hdr Content-Encoding "$tmp/headgz.h")" = "200 gzip" ]
curl -s --max-time 5 -I -o "$tmp/head.h" "$base/metrics"
check "HEAD plain: the text's length" [ "$(hdr Content-Length "$tmp/head.h")" -gt "$(wc -c <"$tmp/gz.bin")" ]

# --- JSON API and /healthz
curl -s --max-time 5 "$base/api/v1/gpus" >"$tmp/gpus.json"
check "/api/v1/gpus: 8 GPUs, simulated" python3 -c '
import json,sys; d=json.load(open(sys.argv[1]))
assert d["simulated"] is True and len(d["gpus"]) == 8, d.keys()
assert all(g["up"] and g["sample"]["power_mw"] > 0 and g["uuid"].startswith("GPU-") for g in d["gpus"])
assert all(isinstance(g["sample"]["clock_event_reasons"], list) and "unavailable" not in g for g in d["gpus"])
assert not any("power_watts" in g or "last_error" in g for g in d["gpus"])  # the old keys: gone (issue 35)' "$tmp/gpus.json"
curl -s --max-time 5 "$base/api/v1/gpus?gpu=2,5&pretty=1" >"$tmp/gpus25.json"
check "/api/v1/gpus?gpu=2,5 selects two" python3 -c '
import json,sys; d=json.load(open(sys.argv[1])); assert [g["index"] for g in d["gpus"]] == [2, 5]' "$tmp/gpus25.json"
curl -s --max-time 5 "$base/api/v1/health" >"$tmp/health.json"
check "/api/v1/health: a verdict per GPU" python3 -c '
import json,sys; d=json.load(open(sys.argv[1])); assert len(d["gpus"]) == 8
assert all(g["verdict"] in ("PASS","WARN","FAIL","N/A") for g in d["gpus"]), d' "$tmp/health.json"
check "/healthz 200 ok" [ "$(curl -s --max-time 5 -w '%{http_code}' "$base/healthz" | tr -d '\n')" = "ok200" ]

# --- malformed, oversized and slow requests
status() { curl -s --max-time 5 -o /dev/null -w '%{http_code}' "$@"; }
check "POST -> 405" [ "$(status -X POST -d x "$base/metrics")" = 405 ]
check "unknown path -> 404" [ "$(status "$base/nope")" = 404 ]
check "bad query -> 400" [ "$(status "$base/api/v1/gpus?gpu=zz")" = 400 ]
check "unknown parameter -> 400" [ "$(status "$base/metrics?debug=1")" = 400 ]
check "long target -> 414" [ "$(status "$base/$(head -c 2000 /dev/zero | tr '\0' a)")" = 414 ]
big=$(head -c 20000 /dev/zero | tr '\0' a)
code=$(status -H "X-Big: $big" "$base/metrics")
check "oversized header -> 4xx ($code)" [ "${code:0:1}" = 4 ]
check "GET with a body -> 413" [ "$(status -X GET -H 'Content-Type: text/plain' --data-binary hello "$base/metrics")" = 413 ]
raw() { # raw TEXT: sends raw bytes, prints the status line (empty if the server just closed)
	python3 - "$port" "$1" <<'PY'
import socket, sys, time
data = sys.argv[2].encode().decode("unicode_escape").encode("latin-1")
for attempt in range(3):
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
    s.sendall(data)
    buf = b""
    try:
        while b"\r\n" not in buf:
            chunk = s.recv(4096)
            if not chunk:
                break
            buf += chunk
    except OSError:
        pass  # a reset after the server answered and closed
    s.close()
    if buf:
        break
    time.sleep(0.1)
print(buf.split(b"\r\n")[0].decode("latin-1") if buf else "")
PY
}
# libmicrohttpd closes the connection on a request line it cannot split; either way it costs nothing
g=$(raw 'GARBAGE\r\n\r\n' | cut -d' ' -f2)
check "garbage request line -> 400 or closed (got '$g')" [ -z "$g" -o "$g" = 400 ]
check "bad HTTP version -> 505" [ "$(raw 'GET /metrics HTTP/9.9\r\nHost: localhost\r\n\r\n' | cut -d' ' -f2)" = 505 ]
check "malformed header line -> 400" [ "$(raw 'GET /metrics HTTP/1.1\r\nHost: localhost\r\nBad Header\r\n\r\n' | cut -d' ' -f2)" = 400 ]
check "still serving after garbage" [ "$(status "$base/metrics")" = 200 ]
check "HTTP/1.1 without Host -> 400" [ "$(raw 'GET /metrics HTTP/1.1\r\n\r\n' | cut -d' ' -f2)" = 400 ]
# a slow client: half a request, then nothing; the server drops it after
# connection_timeout (2 s): the connection ends (cat sees EOF, exit 0) long
# before our own 60 s bound (exit 124)
exec 4<>"/dev/tcp/127.0.0.1/$port"
printf 'GET /metrics HTTP/1.1\r\nHost: localhost\r\n' >&4
check "scrapes go on while a slow client holds a connection" [ "$(status "$base/metrics")" = 200 ]
timeout 60 cat <&4 >/dev/null
rc=$?
exec 4>&-
check "slow client dropped by the server (cat: exit $rc)" [ "$rc" -eq 0 ]

# connection limit (8): 8 kept-alive connections fill it, a ninth is refused;
# once they go, scrapes work. (8 silent ones do not: they wait at the door,
# where a new connection pushes out the oldest: agent_slowloris.sh)
check "the ninth connection is refused, and scrapes work once the others close" python3 - "$port" <<'PY'
import socket, sys, time, urllib.request
port = int(sys.argv[1])
held = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(8)]
for s in held:  # one answered request each: the server holds them, kept alive
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
    got = b""
    while not got.endswith(b"ok\n"):
        got += s.recv(4096)
refused = False
try:
    urllib.request.urlopen("http://127.0.0.1:%d/healthz" % port, timeout=1).read()
except Exception:
    refused = True
for s in held:
    s.close()
ok = False
end = time.monotonic() + 60  # until the server has seen them close
while not ok and time.monotonic() < end:
    try:
        ok = urllib.request.urlopen("http://127.0.0.1:%d/healthz" % port, timeout=5).status == 200
    except Exception:
        time.sleep(0.05)
sys.exit(0 if refused and ok else 1)
PY

# --- XIDs from the kernel log: GPU 2 is at PCI 00000000:3A:00.0 on h200x8
bus2=$(grep '^gpuctl_gpu_up{gpu="2"' "$tmp/m.txt" | sed 's/.*pci_bus_id="\([^"]*\)".*/\1/')
short="${bus2:4:10}" # 0000:3A:00
printf '6,100,5000000,-;NVRM: Xid (PCI:%s): 48, pid=77, name=app, An uncorrectable double bit error\n' "$short" >>"$klog"
check "kernel-log XID 48 counted on GPU 2" wait_value gpuctl_gpu_xid_errors_total 'gpu="2".*xid="48"' 1
printf '6,101,5000100,-;NVRM: Xid (PCI:%s): 48, pid=77, again\n' "$short" >>"$klog"
check "a second line: 2" wait_value gpuctl_gpu_xid_errors_total 'gpu="2".*xid="48"' 2

# --- a lost GPU: up 0, the others served, XID 79 counted
echo '{"faults": [{"kind": "gpu_lost", "gpu": 3}]}' >"$faults"
check "GPU 3 lost -> up 0" wait_value gpuctl_gpu_up 'gpu="3"' 0
curl -s --max-time 5 "$base/metrics" >"$tmp/m2.txt"
check "the 7 others still up" [ "$(grep -c '^gpuctl_gpu_up{.*} 1$' "$tmp/m2.txt")" -eq 7 ]
check "no power value served for the lost GPU" [ "$(grep -c '^gpuctl_gpu_power_watts{gpu="3"' "$tmp/m2.txt")" -eq 0 ]
check "XID 79 on GPU 3" wait_value gpuctl_gpu_xid_errors_total 'gpu="3".*xid="79"' 1
check "the JSON API says why (gpus and health: error)" python3 -c '
import json,sys,urllib.request
d=json.load(urllib.request.urlopen(sys.argv[1] + "/api/v1/gpus?gpu=3"))
g=d["gpus"][0]; assert not g["up"] and "fallen off" in g["error"], g
h=json.load(urllib.request.urlopen(sys.argv[1] + "/api/v1/health?gpu=3"))["gpus"][0]
assert h["index"] == 3 and not h["up"] and "fallen off" in h["error"], h' "$base"

# --- it comes back; then a hung call on GPU 5 makes it stale, alone
echo '{"faults": [{"kind": "hang", "gpu": 5}]}' >"$faults"
check "GPU 3 back -> up 1" wait_value gpuctl_gpu_up 'gpu="3"' 1
check "GPU 5 hung -> up 0 (stale)" wait_value gpuctl_gpu_up 'gpu="5"' 0
# the hung call lasts until the fault is cleared below: a scrape that waited
# on it would not end at all
check "a scrape does not wait on the hung call" curl -s --max-time 30 -o "$tmp/m3.txt" "$base/metrics"
check "the hang still holds in that scrape" grep -q '^gpuctl_gpu_up{gpu="5".*} 0$' "$tmp/m3.txt"
check "the 7 others still up during the hang" [ "$(grep -c '^gpuctl_gpu_up{.*} 1$' "$tmp/m3.txt")" -eq 7 ]
check "XID 79 count of GPU 3 kept" metric_is gpuctl_gpu_xid_errors_total 'gpu="3".*xid="79"' 1
echo '{"faults": []}' >"$faults"
check "GPU 5 back after the hang" wait_value gpuctl_gpu_up 'gpu="5"' 1

check "agent still running" kill -0 "$agent_pid"
kill -TERM "$agent_pid"
wait "$agent_pid"
rc=$?
agent_pid=""
check "SIGTERM -> exit 0 (got $rc)" [ "$rc" -eq 0 ]
finish
