#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# web_page.sh - the agent's web page (issue 18, docs/agent.md "The web page")
# in headless Chromium against the agent on a simulated 8x H200: 8 cards with
# sparklines, values that change from one interval to a later one, a thermal
# fault injected through the run-time fault file shown as WARN on GPU 3 (and
# no other) in the page's data taken two intervals after the file was
# written, a process named `<script>...` shown as text (no element made of
# it), the 1 h detail of a GPU (#gpu=N), no console message at all, and a
# screenshot kept in the build directory (web_page.png). Also over HTTP: the
# page's headers (CSP, no CORS), its size, /api/v1/history's 400s. Then the
# job pool (an agent with --pool on the same server without its processes):
# /api/v1/pool is `gpuctl queue --json` with "pool": true, and the page shows
# a running job named `<script>...` (held by a file the test releases) and a
# pending one with its reason; without a pool the section stays hidden.
# Chromium comes from `GPUCTL_TEST_DEPS=1 scripts/deps.sh`.
#
# Run by CTest (GPUCTL = the binary). By hand:
#   GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/web_page.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/agent_lib.bash"
need curl python3 gzip jq
browser=""
for b in chromium chromium-browser google-chrome; do
	command -v "$b" >/dev/null && browser=$b && break
done
[ -n "$browser" ] || skip "chromium is not installed (GPUCTL_TEST_DEPS=1 scripts/deps.sh installs it)"
shot_dir="${GPUCTL_BUILD_DIR:-$tmp}"

faults="$tmp/faults.json"
"$GPUCTL" --sim "h200x8,faults=$faults" agent --listen 127.0.0.1:0 --interval 1s --kernel-log off \
	>/dev/null 2>"$tmp/agent.err" &
agent_pid=$!
wait_agent_port
base="http://127.0.0.1:$port"

# --- over HTTP
curl -s -D "$tmp/head" -o "$tmp/index.html" "$base/"
check "GET / is 200 text/html" grep -qi '^content-type: text/html' "$tmp/head"
check "GET / has the CSP" grep -qi "^content-security-policy: default-src 'none'; script-src 'self'" "$tmp/head"
check "no CORS header" bash -c "! grep -qi '^access-control' '$tmp/head'"
check "relative URLs only" bash -c "! grep -Eq '(src|href)=\"(/|https?:)' '$tmp/index.html'"
curl -s -o "$tmp/app.js" "$base/app.js"
curl -s -o "$tmp/app.css" "$base/app.css"
size=$(cat "$tmp/index.html" "$tmp/app.js" "$tmp/app.css" | gzip -9 | wc -c)
check "the page is under 100 KB gzip'd ($size bytes)" [ "$size" -lt 102400 ]
check "app.js sets no innerHTML" bash -c "! grep -q 'innerHTML\|outerHTML\|insertAdjacentHTML\|document.write\|eval(' '$tmp/app.js'"
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
check "history: bad since is 400" [ "$(code "$base/api/v1/history?since=abc")" = 400 ]
check "history: gpu past the last is 400" [ "$(code "$base/api/v1/history?gpu=8")" = 400 ]
check "history: unknown parameter is 400" [ "$(code "$base/api/v1/history?x=1")" = 400 ]
check "POST / is 405" [ "$(code -X POST "$base/")" = 405 ]
check "history of GPU 2 is JSON" python3 -c '
import json, sys, urllib.request
d = json.load(urllib.request.urlopen(sys.argv[1]))
g = d["gpus"]
assert len(g) == 1 and g[0]["index"] == 2 and d["simulated"] is True, d
# the default hour at 1 s: 120 points at 1 s, 348 of 10 s and the bucket being filled (docs/agent.md)
assert d["capacity"] == 469 and d["window_seconds"] == 3600, d
assert len(g[0]["t"]) >= 1, g[0]
# a fresh agent: no 10 s point yet, and min/max have a column of that many per series
assert g[0]["coarse"] == 0 and all(g[0][m][k] == [] for m in ("min", "max") for k in g[0]["min"]), g[0]
assert len(g[0]["min"]) == 10 and sorted(g[0]["min"]) == sorted(g[0]["max"]), g[0]
# the series are --json sample keys in their units (docs/json.md): power an integer of mW
for k in ("util_gpu_pct", "util_mem_pct", "mem_used_bytes", "power_mw", "temp_c", "sm_clock_mhz",
          "prof_sm_active_pct", "prof_sm_occupancy_pct", "prof_tensor_active_pct", "prof_dram_active_pct"):
    assert len(g[0][k]) == len(g[0]["t"]), (k, g[0])
# the profiling figures (GPM): whole percent, or null (the first sample has none)
for k in ("prof_sm_active_pct", "prof_sm_occupancy_pct", "prof_tensor_active_pct", "prof_dram_active_pct"):
    assert all(v is None or (isinstance(v, int) and 0 <= v <= 100) for v in g[0][k]), (k, g[0][k])
assert all(isinstance(p, int) and 50000 <= p <= 700000 for p in g[0]["power_mw"]), g[0]["power_mw"]' "$base/api/v1/history?gpu=2"

# --- in the browser
n=0
chrome() { # chrome ARGS...: one headless run, its stderr in $tmp/chrome.$n.err
	n=$((n + 1))
	timeout 120 "$browser" --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
		--disable-component-update --disable-sync --user-data-dir="$(mktemp -d -p "$tmp")" \
		--enable-logging=stderr --v=0 "$@" 2>"$tmp/chrome.$n.err"
}
# dump [URL-SUFFIX]: the page's DOM after its first updates, into $tmp/dom.txt as the
# probe (probe.py) reads it: one line per fact; the run also takes what
# $dump_also asks of chromium (a screenshot)
dump_also=()
dump() {
	chrome --virtual-time-budget=4000 "${dump_also[@]}" --dump-dom "$base/${1:-}" >"$tmp/dom.html" &&
		python3 "$tmp/probe.py" "$tmp/dom.html" >"$tmp/dom.txt"
}
cat >"$tmp/probe.py" <<'PY'
import sys
from html.parser import HTMLParser
# prints: updates N / taken T / sim VISIBLE TEXT / card I VERDICT SPARK-POINTS... | TEXT /
# proc CELLS... / scripts N / errors TEXT / detail HIDDEN POINTS... / pool HIDDEN / job CELLS...
class P(HTMLParser):
    def __init__(self):
        super().__init__()
        self.stack, self.cards, self.procs, self.scripts, self.charts = [], {}, [], 0, []
        self.sim = None; self.errors = ""; self.errors_hidden = True; self.detail_hidden = True
        self.body = {}; self.row = None; self.table = None; self.jobs = []; self.pool = None
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag not in ("br", "meta", "link", "input", "img"):
            self.stack.append((tag, a))
        if tag == "body": self.body = a
        if tag == "script": self.scripts += 1
        if tag == "article" and a.get("id", "").startswith("gpu-"):
            self.cards[a["id"]] = [a.get("data-verdict"), [], ""]
        if tag == "svg":
            card = self.card()
            if card and "spark" in a.get("class", ""): self.cards[card][1].append(a.get("data-points", "0"))
            if "chart" in a.get("class", ""): self.charts.append(a.get("data-points", "0"))
        if tag == "div" and a.get("id") == "sim": self.sim = "hidden" not in a
        if tag == "div" and a.get("id") == "errors": self.errors_hidden = "hidden" in a
        if tag == "section" and a.get("id") == "detail": self.detail_hidden = "hidden" in a
        if tag == "section" and a.get("id") == "pool": self.pool = "hidden" if "hidden" in a else "shown"
        if tag == "table" and a.get("id") in ("procs", "jobs"): self.table = a["id"]
        if tag == "tr" and self.table: self.row = []
        if tag == "td" and self.row is not None: self.row.append("")
    def handle_endtag(self, tag):
        while any(t == tag for t, _ in self.stack):
            t, _ = self.stack.pop()
            if t == tag: break
        if tag == "table": self.table = None
        if tag == "tr" and self.row is not None:
            if self.row: (self.procs if self.table == "procs" else self.jobs).append(self.row)
            self.row = None
    def card(self):
        for t, a in reversed(self.stack):
            if t == "article" and a.get("id", "").startswith("gpu-"): return a["id"]
        return None
    def handle_data(self, d):
        card = self.card()
        if card and not any(t == "svg" for t, _ in self.stack): self.cards[card][2] += d
        if self.row is not None and self.row: self.row[-1] += d
        if any(a.get("id") == "errors" for t, a in self.stack): self.errors += d
p = P()
p.feed(open(sys.argv[1], encoding="utf-8").read())
print("updates", p.body.get("data-updates", "0"))
print("taken", p.body.get("data-taken", "0"))
print("sim", p.sim)
for k in sorted(p.cards, key=lambda s: int(s[4:])):
    v, sp, text = p.cards[k]
    print("card", k[4:], v, " ".join(sp), "|", " ".join(text.split()))
for r in p.procs: print("proc", "\t".join(r))
print("scripts", p.scripts)
print("errors", "hidden" if p.errors_hidden else "shown", p.errors.strip())
print("detail", "hidden" if p.detail_hidden else "shown", " ".join(p.charts))
print("pool", p.pool)
for r in p.jobs: print("job", "\t".join(r))
PY
page_updated() { dump "${1:-}" && ! grep -q '^updates 0$' "$tmp/dom.txt"; }
check "the page loads and updates" wait_until 120 page_updated
cp "$tmp/dom.txt" "$tmp/first.txt"
cards=$(grep -c '^card ' "$tmp/first.txt")
check "8 cards (got $cards)" [ "$cards" = 8 ]
check "says SIMULATED" grep -q '^sim True$' "$tmp/first.txt"
check "every card has 5 sparklines, the first 4 drawn (the 5th, SM activity, needs two samples)" python3 -c '
import sys
for line in open(sys.argv[1]):
    if line.startswith("card "):
        pts = line.split("|")[0].split()[3:]
        assert len(pts) == 5 and all(int(p) >= 1 for p in pts[:4]), line' "$tmp/first.txt"
check "cards show watts and MHz" grep -q '^card 0 PASS .* W.* MHz' "$tmp/first.txt"

# values change: a later load shows other values (bounded wait; the simulated load varies)
cards_text() { grep '^card ' "$1" | sed 's/^card [0-9]* [A-Z/]* [0-9 ]*|//'; }
values_changed() { dump && [ "$(cards_text "$tmp/dom.txt")" != "$(cards_text "$tmp/first.txt")" ]; }
check "values change between intervals" wait_until 120 values_changed

# the thermal fault on GPU 3 and a process named <script>: in the page's data
# taken two intervals (2 s) after the file is in place
printf '%s' '{"faults": [{"kind": "thermal", "gpu": 3},
  {"kind": "foreign_process", "gpu": 5, "pid": 4242, "name": "<script>alert(1)</script>", "user": "<b>eve</b>"}]}' \
	>"$faults.tmp"
mv "$faults.tmp" "$faults"
written=$(date +%s.%N)
# (each try removes the last try's picture first: the one kept is the try whose DOM passed)
data_after() { rm -f "$shot_dir/web_page.png" && dump && python3 -c '
import sys
t = float(open(sys.argv[1]).read().split("taken ")[1].split()[0])
sys.exit(0 if t >= float(sys.argv[2]) + 2 else 1)' "$tmp/dom.txt" "$written"; }
# the same chromium run takes the picture of the page with the fault (below),
# kept in the build directory: one start of chromium fewer (seconds each)
rm -f "$shot_dir/web_page.png"
# shellcheck disable=SC2054 # 1400,1800 is one argument
dump_also=(--window-size=1400,1800 --screenshot="$shot_dir/web_page.png")
check "the page shows data taken 2 intervals after the fault" wait_until 120 data_after
dump_also=()
cp "$tmp/dom.txt" "$tmp/fault.txt"
check "GPU 3 is WARN: $(grep '^card 3 ' "$tmp/fault.txt" | cut -c1-60)" grep -q '^card 3 WARN ' "$tmp/fault.txt"
check "no other GPU is WARN or FAIL" bash -c "[ \$(grep -c '^card [0-9] PASS ' '$tmp/fault.txt') = 7 ]"
check "GPU 3's card names the thermal throttling" grep -q '^card 3 .*HW thermal' "$tmp/fault.txt"
check "the process named <script> is text" grep -qF "$(printf 'proc 5\t4242\t<b>eve</b>\t<script>alert(1)</script>')" "$tmp/fault.txt"
check "no element made from data (one script element)" grep -q '^scripts 1$' "$tmp/fault.txt"
check "the findings list GPU 3's thermal finding" grep -q '>3</td><td>WARN</td>' "$tmp/dom.html"

# the detail of GPU 3: ten 1 h charts (six series and the four GPM figures), drawn
detail_drawn() { dump "#gpu=3" && grep -Eq '^detail shown( [1-9][0-9]*){10}$' "$tmp/dom.txt"; }
check "the detail of GPU 3 draws its 10 charts" wait_until 120 detail_drawn

check "no pool: its section stays hidden" grep -q '^pool hidden$' "$tmp/fault.txt"
check "no pool: /api/v1/pool says so" [ "$(curl -s "$base/api/v1/pool")" = '{"pool":false}' ]
check "the page showed no error" bash -c "! grep -v '^errors hidden $' '$tmp/first.txt' '$tmp/fault.txt' | grep -q ':errors'"
check "no console message in any load" bash -c "! grep -h 'CONSOLE' '$tmp'/chrome.*.err"
grep -h 'CONSOLE' "$tmp"/chrome.*.err | head -5

# the picture of the page with the fault, taken with its DOM above
png=$(head -c 8 "$shot_dir/web_page.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')
check "a PNG screenshot in $shot_dir/web_page.png" [ "$png" = 89504e470d0a1a0a ]
check "the screenshot is not blank ($(stat -c %s "$shot_dir/web_page.png" 2>/dev/null) bytes)" \
	[ "$(stat -c %s "$shot_dir/web_page.png" 2>/dev/null || echo 0)" -gt 50000 ]

# --- the job pool: the same server without its own processes, the agent with
# a pool; a job named <script> runs on one GPU until released, a job for all
# 8 GPUs waits for it with its reason; both on the page, as text
kill "$agent_pid"
wait "$agent_pid" 2>/dev/null
python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
for g in s["gpus"]: g.pop("processes", None)
json.dump(s, open(sys.argv[2], "w"))' "$GPUCTL_DATA_DIR/sim/h200x8.json" "$tmp/free8.json"
export GPUCTL_POOL_SOCKET="$tmp/pool.sock"
"$GPUCTL" --sim "$tmp/free8.json" agent --listen 127.0.0.1:0 --interval 1s --kernel-log off \
	--pool --pool-dir "$tmp/pool" --pool-socket "$GPUCTL_POOL_SOCKET" >/dev/null 2>"$tmp/agent.err" &
agent_pid=$!
wait_agent_port
base="http://127.0.0.1:$port"
on_exit 'release webjob'
held=$("$GPUCTL" submit --id-only --gpus 1 --name '<script>alert(2)</script>' -- sh -c "$(hold webjob)")
big=$("$GPUCTL" submit --id-only --gpus 8 --name all8 -- true)
# pool_has ID STATE [REASON]: /api/v1/pool lists job ID in STATE (with REASON);
# a jq, not a python3, each poll (python's start takes seconds on a loaded machine)
pool_has() { curl -s "$base/api/v1/pool" | jq -e --argjson id "$1" --arg state "$2" --arg reason "${3:-}" '
	[.jobs[] | select(.id == $id)] as $j
	| .pool == true and ($j | length > 0) and $j[0].state == $state and ($j[0].reason | contains($reason))' >/dev/null 2>&1; }
check "pool: the held job runs" wait_until 60 pool_has "$held" running
check "pool: the 8-GPU job waits for it" wait_until 60 pool_has "$big" pending "waiting for 8 free GPUs"
check "pool: /api/v1/pool is gpuctl queue --json with \"pool\": true first" python3 -c '
import json, subprocess, sys, urllib.request
api = urllib.request.urlopen(sys.argv[1] + "/api/v1/pool").read()
pretty = json.loads(urllib.request.urlopen(sys.argv[1] + "/api/v1/pool?pretty=1").read())
d = json.loads(api)
assert list(d)[0] == "pool" and d.pop("pool") is True, api
q = json.loads(subprocess.run([sys.argv[2], "queue", "--json"], capture_output=True, check=True).stdout)
assert d == q and pretty == dict(pool=True, **q), (d, q)
assert d["running"] == 1 and d["pending"] == 1, d' "$base" "$GPUCTL"
check "pool: ?gpu= is not a parameter there (400)" [ "$(code "$base/api/v1/pool?gpu=0")" = 400 ]
check "pool: POST is 405" [ "$(code -X POST "$base/api/v1/pool")" = 405 ]
pool_shown() { dump && grep -q '^pool shown$' "$tmp/dom.txt" && [ "$(grep -c '^job ' "$tmp/dom.txt")" = 2 ]; }
check "pool: the page shows its section with both jobs" wait_until 120 pool_shown
grep '^job ' "$tmp/dom.txt"
check "pool: the running job, its <script> name as text, on 1 GPU" \
	grep -qP "^job $held\t[^\t]+\t<script>alert\(2\)</script>\trunning\t[0-7]\t" "$tmp/dom.txt"
check "pool: the pending job with its reason" \
	grep -qP "^job $big\t[^\t]+\tall8\tpending\t\(8\)\t.*\twaiting for 8 free GPUs" "$tmp/dom.txt"
check "pool: no element made from data (one script element)" grep -q '^scripts 1$' "$tmp/dom.txt"
check "pool: no console message" bash -c "! grep -h 'CONSOLE' '$tmp'/chrome.*.err"
release webjob
pool_empty() { [ "$(curl -s "$base/api/v1/pool" | jq '.jobs | length')" = 0 ]; }
check "pool: both jobs end once released" wait_until 60 pool_empty
finish
