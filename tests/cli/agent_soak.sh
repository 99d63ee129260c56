#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# agent_soak.sh - `gpuctl agent` under continuous scraping on the simulated
# 8x H200 while faults are injected every few seconds through the sim's fault
# file (GPU lost, hung call, XIDs, ECC errors, thermal, NVLink down, PCIe
# degraded, cleared again). Checks: every scrape answered (200), no missed
# series (8 gpuctl_gpu_up in every scrape; every GPU reported up has its
# power), the agent never dies, resident memory does not grow, and it exits 0
# on SIGTERM (under ASan: with no leak).
#
# CTest runs it with the default SOAK_SECONDS=60 (labels cli, soak); the
# 10-minute run of bench/RESULTS.md is:
#   SOAK_SECONDS=600 GPUCTL=build-release/gpuctl bash tests/cli/agent_soak.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/agent_lib.bash"
need python3
SOAK_SECONDS="${SOAK_SECONDS:-60}"
FAULT_EVERY="${FAULT_EVERY:-3}"

# a sanitizer build keeps freed memory in quarantine; bound it so RSS means something
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=8"
faults="$tmp/faults.json"
echo '{"faults": []}' >"$faults"
"$GPUCTL" --sim "h200x8,latency_us=2000,faults=$faults" agent --listen 127.0.0.1:0 --interval 250ms \
	--stale-after 1s --kernel-log off >"$tmp/agent.out" 2>"$tmp/agent.err" &
agent_pid=$!
wait_agent_port

python3 - "$port" "$agent_pid" "$faults" "$SOAK_SECONDS" "$FAULT_EVERY" <<'PY'
import http.client, json, os, random, re, sys, threading, time

port, pid, fault_path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
seconds, every = float(sys.argv[4]), float(sys.argv[5])
end = time.monotonic() + seconds
random.seed(1)
lock = threading.Lock()
stats = {"scrapes": 0, "json": 0, "errors": [], "down_seen": 0}

def note_error(msg):
    with lock:
        if len(stats["errors"]) < 20:
            stats["errors"].append(msg)

up_re = re.compile(r'^gpuctl_gpu_up\{gpu="(\d+)".*\} ([01])$', re.M)
power_re = re.compile(r'^gpuctl_gpu_power_watts\{gpu="(\d+)"', re.M)

def scraper(om):
    conn = None
    reused = False
    hdrs = {"Accept": "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"} if om else {}
    while time.monotonic() < end:
        try:
            if conn is None:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                reused = False
            try:
                conn.request("GET", "/metrics", headers=hdrs)
                r = conn.getresponse()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                if not reused:
                    raise
                # a server may close a persistent connection between two
                # requests (RFC 9112 9.6); clients retry an idempotent GET on
                # a new one, as Prometheus's does: counted, not an error
                with lock:
                    stats["reconnects"] = stats.get("reconnects", 0) + 1
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                conn.request("GET", "/metrics", headers=hdrs)
                r = conn.getresponse()
            reused = True
            body = r.read().decode()
            if r.status != 200:
                note_error("status %d" % r.status)
                continue
            ups = dict(up_re.findall(body))
            if sorted(ups) != [str(i) for i in range(8)]:
                note_error("missed series: gpuctl_gpu_up for %s" % sorted(ups))
            powered = set(power_re.findall(body))
            for g, v in ups.items():
                if v == "1" and g not in powered:
                    note_error("GPU %s up without a power value" % g)
            if "application/openmetrics-text" in r.getheader("Content-Type", "") and not body.endswith("# EOF\n"):
                note_error("OpenMetrics without # EOF")
            with lock:
                stats["scrapes"] += 1
                stats["down_seen"] += list(ups.values()).count("0")
        except Exception as e:
            note_error("scrape: %r" % e)
            conn = None
            time.sleep(0.05)
        time.sleep(0.01)

def json_poller():
    while time.monotonic() < end:
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            for path in ("/api/v1/gpus", "/api/v1/health", "/healthz"):
                c.request("GET", path)
                r = c.getresponse()
                b = r.read()
                if r.status != 200:
                    note_error("%s: status %d" % (path, r.status))
                elif path != "/healthz":
                    d = json.loads(b)
                    if len(d["gpus"]) != 8:
                        note_error("%s: %d GPUs" % (path, len(d["gpus"])))
            c.close()
            with lock:
                stats["json"] += 1
        except Exception as e:
            note_error("json: %r" % e)
        time.sleep(0.2)

kinds = [
    {"kind": "gpu_lost"}, {"kind": "hang", "duration_s": 2}, {"kind": "xid", "xid": 79},
    {"kind": "xid", "xid": 48}, {"kind": "ecc_uncorrectable", "count": 1}, {"kind": "ecc_corrected", "count": 5},
    {"kind": "thermal"}, {"kind": "nvlink_down", "link": 3}, {"kind": "pcie_degraded"}, {"kind": "power"},
]
def injector():
    n = 0
    while time.monotonic() < end - 1:
        time.sleep(every)
        # every kind in turn (so each is exercised), with up to two random others; every 4th change clears
        active = []
        if n % 4 != 3:
            for f in [kinds[n % len(kinds)]] + random.sample(kinds, random.randint(0, 2)):
                f = dict(f)
                f["gpu"] = random.randrange(8)
                active.append(f)
        tmpf = fault_path + ".new"
        with open(tmpf, "w") as fh:
            json.dump({"faults": active}, fh)
        os.rename(tmpf, fault_path)
        n += 1
    with open(fault_path + ".new", "w") as fh:
        json.dump({"faults": []}, fh)
    os.rename(fault_path + ".new", fault_path)
    stats["injections"] = n

def rss_kib():
    with open("/proc/%d/status" % pid) as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1

threads = [threading.Thread(target=scraper, args=(i % 2 == 0,)) for i in range(4)]
threads += [threading.Thread(target=json_poller), threading.Thread(target=injector)]
for t in threads:
    t.start()
rss = []
while time.monotonic() < end:
    time.sleep(1)
    try:
        rss.append(rss_kib())
    except OSError:
        note_error("the agent died")
        break
for t in threads:
    t.join()

ok = True
# memory: the last fifth against the fifth after a warm-up fifth
k = max(1, len(rss) // 5)
early = sorted(rss[k:2 * k])[len(rss[k:2 * k]) // 2] if len(rss) >= 3 * k else rss[0]
late = sorted(rss[-k:])[len(rss[-k:]) // 2]
growth = late - early
limit = max(4096, early // 10)
print("soak: %.0f s, %d scrapes, %d JSON rounds, %d fault changes, %d down-GPU series seen, rss %d -> %d KiB (max %d), %d kept-alive connections closed by the agent between requests"
      % (seconds, stats["scrapes"], stats["json"], stats.get("injections", 0), stats["down_seen"], early, late, max(rss),
         stats.get("reconnects", 0)))
if stats["errors"]:
    ok = False
    print("FAIL: %d problems, first: %s" % (len(stats["errors"]), "; ".join(stats["errors"][:5])))
if growth > limit:
    ok = False
    print("FAIL: resident memory grew by %d KiB (limit %d KiB)" % (growth, limit))
# a floor that proves the scrapers ran all along, not a throughput figure
# (two busy CPUs beside the sanitizer build must not fail it)
if stats["scrapes"] < seconds * 2:
    ok = False
    print("FAIL: only %d scrapes in %.0f s" % (stats["scrapes"], seconds))
if stats["down_seen"] == 0:
    ok = False
    print("FAIL: no fault ever showed as a GPU down (were faults injected?)")
sys.exit(0 if ok else 1)
PY
check "the soak's checks" test $? -eq 0
if ! kill -0 "$agent_pid" 2>/dev/null; then
	fail "the agent is not running at the end: $(tail -5 "$tmp/agent.err")"
else
	kill -TERM "$agent_pid"
	wait "$agent_pid"
	arc=$?
	agent_pid=""
	check "the agent exits 0 on SIGTERM (got $arc)" test "$arc" -eq 0
	[ "$arc" -eq 0 ] || tail -20 "$tmp/agent.err"
fi
finish
