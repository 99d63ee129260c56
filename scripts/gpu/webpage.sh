#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# webpage.sh - on a real GPU server (issue 18's device check): what the agent's
# web page shows equals nvidia-smi's at the same moment. The page draws its
# cards from /api/v1/gpus and its charts from /api/v1/history; three rounds
# each read both (and the page itself, once) and run nvidia-smi --query-gpu
# right after, then compare power, memory, temperature and clocks per GPU with
# the tolerances of scripts/gpu/agent.sh (values that move between two reads
# get room), the history's newest point within its quantization (4 MiB,
# 0.1 W) on top. Results: $OUT/webpage.txt (one line per round, GPU and field,
# then a verdict), $OUT/webpage/ (gpus_N.json, history_N.json, nvsmi_N.csv,
# index.html, run.log, agent.err).
#
# gpuctl: $GPUCTL if set; else the packed build of scripts/gpu/foundation.sh
# (`scripts/gpu/foundation.sh pack` here first); else a cmake build in /tmp/gpuctl-build.
# Device tool, about 30 s on one H200 (plus a build if there is no packed one):
#   run(command="scripts/gpu/webpage.sh", carry=[".device-carry"], kind="nvidia-h200", timeout_s=600)
# Exit: 0 every field agrees, 1 some do not (webpage.txt), 69 nothing could
# run. Reads only; changes no GPU setting.
set -u -o pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
outdir="${OUT:-$root/webpage-out}"
out="$outdir/webpage"
mkdir -p "$out"
log="$out/run.log"
: >"$log"
. "$root/scripts/gpu/lib.sh"
gpu_script_start webpage.sh

"$GPUCTL" agent --listen 127.0.0.1:0 --interval 1s >/dev/null 2>"$out/agent.err" &
agent_pid=$!
trap 'kill "$agent_pid" 2>/dev/null; wait "$agent_pid" 2>/dev/null' EXIT
port=""
for _ in $(seq 1 150); do
	port=$(sed -n 's/.*listening on http:\/\/127.0.0.1:\([0-9]*\)\/metrics.*/\1/p' "$out/agent.err")
	[ -n "$port" ] && break
	kill -0 "$agent_pid" 2>/dev/null || break
	sleep 0.1
done
if [ -z "$port" ]; then
	echo "webpage.sh: the agent did not start (agent.err)" | tee -a "$log" >&2
	exit 69
fi
base="http://127.0.0.1:$port"
sleep 3 # a few points of history
curl -s --max-time 5 -D "$out/index.head" -o "$out/index.html" "$base/"
fields=index,power.draw,power.limit,temperature.gpu,memory.used,memory.total,clocks.sm,clocks.mem,utilization.gpu
for r in 1 2 3; do
	since=$(date +%s)
	since=$((since - 5))
	curl -s --max-time 5 "$base/api/v1/gpus" >"$out/gpus_$r.json"
	curl -s --max-time 5 "$base/api/v1/history?since=$since" >"$out/history_$r.json"
	nvidia-smi --query-gpu=$fields --format=csv,noheader,nounits >"$out/nvsmi_$r.csv" 2>>"$log"
	sleep 2
done

python3 - "$out" <<'PY' >"$outdir/webpage.txt"
import csv, json, sys
out = sys.argv[1]
bad, lines = 0, []
def num(x):
    try:
        return float(x.strip())
    except ValueError:
        return None
def cmp(r, src, gpu, what, mine, theirs, tol_abs, tol_rel=0.0):
    global bad
    ok = mine is not None and theirs is not None and abs(mine - theirs) <= max(tol_abs, tol_rel * abs(theirs))
    if mine is None and theirs is None:
        ok = True
    bad += not ok
    lines.append("r%d gpu%s %-8s %-18s gpuctl=%s nvidia-smi=%s %s" % (r, gpu, src, what, mine, theirs, "ok" if ok else "DIFFERS"))
mib = lambda b: None if b is None else b / 1048576
watts = lambda mw: None if mw is None else mw / 1000
# /api/v1/gpus's sample and /api/v1/history's series have the same keys and units (docs/json.md)
def card(g):
    return g.get("sample", {}).get
for r in (1, 2, 3):
    gpus = {g["index"]: g for g in json.load(open("%s/gpus_%d.json" % (out, r)))["gpus"]}
    hist = {g["index"]: g for g in json.load(open("%s/history_%d.json" % (out, r)))["gpus"]}
    for row in csv.reader(open("%s/nvsmi_%d.csv" % (out, r))):
        if len(row) < 9:
            continue
        i = int(row[0])
        g = card(gpus.get(i, {}))
        h = hist.get(i, {})
        last = lambda k: h[k][-1] if h.get(k) else None
        if not h.get("t"):
            bad += 1
            lines.append("r%d gpu%d history: no point in the last 5 s" % (r, i))
        for src, get in (("cards", g), ("history", last)):
            q = 0 if src == "cards" else 1  # the history's quantization on top
            cmp(r, src, i, "power.draw W", watts(get("power_mw")), num(row[1]), 25 + 0.05 * q, 0.10)
            cmp(r, src, i, "temperature.gpu C", get("temp_c"), num(row[3]), 3)
            cmp(r, src, i, "memory.used MiB", mib(get("mem_used_bytes")), num(row[4]), 64 + 2 * q, 0.02)
            cmp(r, src, i, "clocks.sm MHz", get("sm_clock_mhz"), num(row[6]), 100, 0.10)
            cmp(r, src, i, "utilization.gpu %", get("util_gpu_pct"), num(row[8]), 20)
        cmp(r, "cards", i, "power.limit W", watts(g("power_limit_mw")), num(row[2]), 1)
        cmp(r, "cards", i, "memory.total MiB", mib(g("mem_total_bytes")), num(row[5]), 1)
        cmp(r, "cards", i, "clocks.mem MHz", g("mem_clock_mhz"), num(row[7]), 1)
    if not gpus:
        bad += 1
        lines.append("r%d: /api/v1/gpus had no GPU" % r)
page = open("%s/index.html" % out, errors="replace").read()
head = open("%s/index.head" % out, errors="replace").read().lower()
page_ok = "app.js" in page and "content-security-policy" in head and "access-control" not in head
bad += not page_ok
lines.append("page at /: %s" % ("served with its CSP, no CORS" if page_ok else "MISSING or without CSP"))
print("\n".join(lines))
print("verdict: %s (%d differing)" % ("agree" if bad == 0 else "DIFFER", bad))
sys.exit(1 if bad else 0)
PY
rc=$?
tail -1 "$outdir/webpage.txt"
exit "$rc"
