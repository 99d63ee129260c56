#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# agent_rates.sh - health's rates in the agent, whose sampler reads the slow
# groups (ECC, PCIe, NVLink, violation counters) every 5th tick only
# (slow_group_every = 5): with a run-time fault of NVLink CRC errors at 30/s on
# GPU 0 (issue 20, item 1), /api/v1/health must say nvlink-crc-rate-warn at
# ~37.5 errors/s (30 flit + 7.5 data) at every tick, not nothing on four ticks
# and FAIL at 188/s on the fifth; gpuctl_gpu_health_status must not flap.
#
# Run by CTest (GPUCTL = the binary). By hand:
#   GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/agent_rates.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/agent_lib.bash"

printf '{"faults":[{"kind":"nvlink_errors","gpu":0,"rate_per_s":30}]}\n' >"$tmp/faults.json"
cat >"$tmp/agent.conf" <<CONF
listen = 127.0.0.1:0
interval = 200ms
slow_group_every = 5
kernel_log = off
CONF
"$GPUCTL" --sim "h200x8,faults=$tmp/faults.json" agent --config "$tmp/agent.conf" \
	>"$tmp/agent.out" 2>"$tmp/agent.err" &
agent_pid=$!
wait_agent_port
base="http://127.0.0.1:$port"

# One poll: records the tick's ("taken") GPU 0 CRC findings on a line of
# $tmp/ticks.txt if it is a new tick; succeeds once 12 ticks from the first
# one with a CRC finding on have been seen.
: >"$tmp/ticks.txt"
poll_tick() {
	curl -s --max-time 5 "$base/api/v1/health?gpu=0" >"$tmp/h.json" || return 1
	python3 - "$tmp/h.json" "$tmp/ticks.txt" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except ValueError:
    sys.exit(1)
lines = open(sys.argv[2]).read().splitlines()
taken = repr(d["taken"])
if taken not in {l.split(" ", 1)[0] for l in lines}:
    f = [x["rule"] + "|" + x["evidence"] for x in d["gpus"][0]["findings"] if x["rule"].startswith("nvlink-crc")]
    lines.append(taken + " " + (";".join(f) or "-"))
    with open(sys.argv[2], "a") as out:
        out.write(lines[-1] + "\n")
first = next((i for i, l in enumerate(lines) if not l.endswith(" -")), None)
sys.exit(0 if first is not None and len(lines) - first >= 12 else 1)
PY
}
wait_until 120 poll_tick
check "the CRC rate steady at every tick from the first one on" python3 - "$tmp/ticks.txt" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
first = next((i for i, l in enumerate(lines) if not l.endswith(" -")), None)
assert first is not None and len(lines) - first >= 12, lines
for l in lines[first:]:
    taken, f = l.split(" ", 1)
    assert f.startswith("nvlink-crc-rate-warn|"), l
    rate = float(re.search(r"= ([0-9.]+) errors/s", f).group(1))
    assert 30 <= rate <= 45, l
PY
[ "$fails" -eq 0 ] || cat "$tmp/ticks.txt"

finish
