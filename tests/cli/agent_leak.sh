#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# agent_leak.sh - the agent's memory-leak watch on the simulated DGX A100
# (data/sim/a100x8.json: GPUs 6 and 7 run a notebook whose GPU memory grows
# 1.5 MiB/s; the other GPUs run steady processes). With a 3 s window the
# leaking processes must appear on /api/v1/health (a `leaks` entry and a WARN
# finding in the processes subsystem) and on /metrics
# (gpuctl_process_memory_growth_bytes_per_second) with a rate near 1.5 MiB/s;
# the steady processes must not. Bad leak settings are usage errors.
#
# Run by CTest (GPUCTL = the binary). By hand:
#   GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/agent_leak.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/agent_lib.bash"
need curl python3

# --- bad settings: exit 64 (flags) / 65 (file), with the key named
printf 'leak_min_rate = 1MiB/h\n' >"$tmp/bad.conf"
checks=$((checks + 1))
"$GPUCTL" --sim a100x8 agent --config "$tmp/bad.conf" >/dev/null 2>"$tmp/bad.err"
rc=$?
[ "$rc" -eq 65 ] || fail "bad leak_min_rate: exit $rc, want 65"
check "bad leak_min_rate names file and line" grep -q "bad.conf:1: bad rate '1MiB/h'" "$tmp/bad.err"
printf 'leak_window = 0.5s\n' >"$tmp/bad2.conf"
checks=$((checks + 1))
"$GPUCTL" --sim a100x8 agent --config "$tmp/bad2.conf" >/dev/null 2>"$tmp/bad2.err"
rc=$?
[ "$rc" -eq 65 ] || fail "leak_window below 1 s: exit $rc, want 65"

# --- the agent on the simulated a100x8 with a leak window of WINDOW
start_leak_agent() { # start_leak_agent WINDOW
	cat >"$tmp/agent.conf" <<CONF
listen = 127.0.0.1:0
interval = 200ms
kernel_log = off
leak_window = $1
leak_min_rate = 512KiB/s
leak_min_growth = 1MiB
CONF
	: >"$tmp/agent.err"
	"$GPUCTL" --sim a100x8 agent --config "$tmp/agent.conf" >"$tmp/agent.out" 2>"$tmp/agent.err" &
	agent_pid=$!
	wait_agent_port
	base="http://127.0.0.1:$port"
}
# health_has CONDITION: /api/v1/health (in $tmp/h.json) holds for the Python CONDITION on d
health_has() {
	curl -s --max-time 10 "$base/api/v1/health" >"$tmp/h.json" && python3 -c '
import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if eval(sys.argv[2]) else 1)' "$tmp/h.json" "$1" 2>/dev/null
}

# Before a window has passed nothing is flagged: an agent whose window (60 m)
# cannot pass during the test, asked once it tracks every process
start_leak_agent 60m
check "the 60 m agent tracks the processes" wait_until 60 health_has 'd["leak_watch"]["tracked_processes"] >= 8'
cp "$tmp/h.json" "$tmp/h0.json"
check "no leak before the window has passed" python3 -c '
import json,sys; d=json.load(open(sys.argv[1]))
assert d["leak_watch"]["window_seconds"] == 3600.0, d["leak_watch"]
assert all(g["leaks"] == [] for g in d["gpus"]), [g["leaks"] for g in d["gpus"]]' "$tmp/h0.json"
curl -s --max-time 10 "$base/metrics" >"$tmp/m0.txt"
check "no growth series before the window has passed" \
	bash -c '! grep -q "^gpuctl_process_memory_growth_bytes_per_second{" "$0"' "$tmp/m0.txt"
kill "$agent_pid" && wait "$agent_pid"
agent_pid=""

# The window (3 s) and 5 samples: flagged within about 4 s (60 s at most).
start_leak_agent 3s
check "leaks reported" wait_until 60 health_has 'sum(len(g["leaks"]) for g in d["gpus"]) >= 2'
check "/api/v1/health: the two leaking notebooks, a plausible rate, a WARN finding" python3 -c '
import json,sys; d=json.load(open(sys.argv[1]))
mib = 1024 * 1024
assert d["simulated"] is True
leaks = [l for g in d["gpus"] for l in g["leaks"]]
assert sorted(l["gpu"] for l in leaks) == [6, 7], leaks
for g in d["gpus"]:
    for l in g["leaks"]:
        assert l["gpu"] == g["index"], (l, g["index"])
        assert l["name"] == "jupyter-kernel" and l["user"] == "carol", l
        assert 1.3 * mib <= l["growth_bytes_per_second"] <= 1.7 * mib, l
        assert 3.0 <= l["window_seconds"] <= 4.0, l
        assert l["used_mem_bytes"] > 2048 * mib, l
        f = [f for f in g["findings"] if f["rule"] == "process-memory-leak"]
        assert len(f) == 1 and f[0]["subsystem"] == "processes" and f[0]["verdict"] == "WARN", g["findings"]
        assert "pid %d " % l["pid"] in f[0]["evidence"] and "MiB/s" in f[0]["evidence"], f[0]
        assert g["verdict"] in ("WARN", "FAIL"), g["verdict"]
# the steady processes on GPUs 0-5: tracked, not reported, no finding
for g in d["gpus"][:6]:
    assert g["leaks"] == [], g
    assert not [f for f in g["findings"] if f["rule"] == "process-memory-leak"], g["findings"]
assert d["leak_watch"]["tracked_processes"] >= 8, d["leak_watch"]
' "$tmp/h.json"

curl -s --max-time 5 "$base/metrics" >"$tmp/m.txt"
check "/metrics: a growth series for GPUs 6 and 7 only, near 1.5 MiB/s" python3 -c '
import re,sys
rows = [l for l in open(sys.argv[1]) if l.startswith("gpuctl_process_memory_growth_bytes_per_second{")]
gpus = sorted(re.search(r"gpu=\"(\d+)\"", l).group(1) for l in rows)
assert gpus == ["6", "7"], rows
for l in rows:
    assert "comm=\"jupyter-kernel\"" in l and "user=\"carol\"" in l and "pid=\"" in l, l
    v = float(l.rsplit(" ", 1)[1])
    assert 1.3 * 1048576 <= v <= 1.7 * 1048576, l
' "$tmp/m.txt"
check "growth family has HELP and TYPE gauge" grep -q '^# TYPE gpuctl_process_memory_growth_bytes_per_second gauge$' "$tmp/m.txt"
check "health status of GPU 6 is a warning" grep -q '^gpuctl_gpu_health_status{gpu="6",.*} [12]$' "$tmp/m.txt"
check "health status of GPU 0 stays healthy" grep -q '^gpuctl_gpu_health_status{gpu="0",.*} 0$' "$tmp/m.txt"
if command -v promtool >/dev/null; then
	check "promtool check metrics" promtool check metrics <"$tmp/m.txt"
fi

finish
