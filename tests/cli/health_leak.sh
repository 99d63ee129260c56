#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# health_leak.sh - `gpuctl health --window N` applies the agent's leak rule
# over its window (issue 20, item 15): on a simulated server whose process
# grows its GPU memory by 400 MiB/s, the one-shot check (what the Slurm
# epilog and an admin at the prompt run) finds it: a WARN
# process-memory-leak finding on its GPU, exit 1; the steady process beside
# it and a server without a leak are not flagged; --window 0 judges no leak.
#
# Run by CTest (GPUCTL = the binary). By hand:
#   GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/health_leak.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.bash"

cat >"$tmp/leaky.json" <<'JSON'
{"name": "leaky test server", "hostname": "leaky",
 "gpus": [
  {"model": "H200 SXM", "processes": [
    {"pid": 4242, "name": "leaker", "user": "alice", "mem_mib": 1000, "leak_mib_per_s": 400},
    {"pid": 4343, "name": "steady", "user": "bob", "mem_mib": 2000}]},
  {"model": "H200 SXM", "processes": [
    {"pid": 4444, "name": "trainer", "user": "carol", "mem_mib": 60000}]}
 ]}
JSON

"$GPUCTL" --sim "$tmp/leaky.json" health --window 2 --json >"$tmp/h.json" 2>"$tmp/h.err"
rc=$?
check "a 400 MiB/s leak over a 2 s window: exit 1 (WARN), got $rc ($(cat "$tmp/h.err"))" [ "$rc" -eq 1 ]
check "the leaking process, and only it, is a process-memory-leak finding" python3 - "$tmp/h.json" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
gpus = {g["index"]: g for g in d["gpus"]}
leaks = {i: [f for f in g["findings"] if f["rule"] == "process-memory-leak"] for i, g in gpus.items()}
assert len(leaks[0]) == 1 and not leaks[1], leaks
f = leaks[0][0]
assert f["verdict"] == "WARN" and f["subsystem"] == "processes", f
assert "pid 4242 (leaker, user alice)" in f["evidence"], f
rate = float(re.search(r"\+([0-9.]+) MiB/s", f["evidence"]).group(1))
assert 360 <= rate <= 440, f
assert gpus[0]["verdict"] == "WARN" and gpus[1]["verdict"] == "PASS", gpus
PY
"$GPUCTL" --sim "$tmp/leaky.json" health --window 2 >"$tmp/h.txt" 2>&1
check "the table names the leak" grep -q "GPU 0 WARN processes \[process-memory-leak\]" "$tmp/h.txt"
"$GPUCTL" --sim "$tmp/leaky.json" health --window 0 >"$tmp/h0.txt" 2>&1
rc=$?
check "--window 0: no window, no leak judged (exit $rc)" [ "$rc" -eq 0 ]
check "--window 0: no leak finding" bash -c '! grep -q process-memory-leak "$0"' "$tmp/h0.txt"
"$GPUCTL" --sim a100x8 health --window 2 >"$tmp/a.txt" 2>&1
check "1.5 MiB/s over 2 s (under the agent's 256 MiB growth) is not a leak" \
	bash -c '! grep -q process-memory-leak "$0"' "$tmp/a.txt"

finish
