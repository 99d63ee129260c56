#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# report_html.sh - the HTML report renders in headless Chromium and its four
# SVG charts are drawn: every data mark (line, dot, bar, heat-map cell) of
# each chart has a non-zero box on the page, and a screenshot is produced.
# The report has no script of its own: this test adds a probe script to a
# copy of it, loads the copy with --dump-dom and reads the probe's output.
# Chromium comes from `GPUCTL_TEST_DEPS=1 scripts/deps.sh`; without it the
# test skips (exit 77; a failure in CI).
#
# Run by CTest (GPUCTL = the binary). By hand:
#   GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/report_html.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
need python3
fixture="$here/../data/results-h200x2.json"
browser=""
for b in chromium chromium-browser google-chrome; do
	command -v "$b" > /dev/null && browser=$b && break
done
[ -n "$browser" ] || skip "chromium is not installed (GPUCTL_TEST_DEPS=1 scripts/deps.sh installs it)"
chrome() {
	timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-background-networking \
		--disable-component-update --disable-sync --no-first-run --user-data-dir="$(mktemp -d -p "$tmp")" \
		"$@" 2> "$tmp/chrome.err"
}

"$GPUCTL" --sim h200x8 report --results "$fixture" --html "$tmp/report.html" > /dev/null 2> "$tmp/report.err" ||
	{ echo "FAIL: gpuctl report: $(cat "$tmp/report.err")"; exit 1; }

# the probe: per chart, its size and how many data marks have a non-zero box
probe='<pre id="probe"></pre><script>
var out = [];
document.querySelectorAll("svg.chart").forEach(function (svg) {
  var r = svg.getBoundingClientRect(), marks = svg.querySelectorAll(".data"), drawn = 0;
  marks.forEach(function (m) { var b = m.getBBox(); if (b.width > 0 || b.height > 0) drawn++; });
  out.push(svg.id + " " + Math.round(r.width) + "x" + Math.round(r.height) + " " + drawn + "/" + marks.length);
});
document.getElementById("probe").textContent = "PROBE\n" + out.join("\n") + "\nEND";
</script></body>'
python3 - "$tmp/report.html" "$tmp/probe.html" "$probe" <<'PY'
import sys
s = open(sys.argv[1]).read()
assert s.count("</body>") == 1
open(sys.argv[2], "w").write(s.replace("</body>", sys.argv[3]))
PY
chrome --virtual-time-budget=5000 --dump-dom "file://$tmp/probe.html" > "$tmp/dom.html"
sed -n '/id="probe">PROBE$/,/^END</p' "$tmp/dom.html" | sed '1d;$d' > "$tmp/probe.txt"
checks=$((checks + 1))
[ -s "$tmp/probe.txt" ] || fail "no probe output from $browser: $(tail -3 "$tmp/chrome.err")"
for id in chart-bw chart-roofline chart-p2p chart-gemm; do
	line=$(grep "^$id " "$tmp/probe.txt")
	if [ -z "$line" ]; then
		fail "$id: not rendered"
		continue
	fi
	checks=$((checks + 3))
	read -r _ size marks <<< "$line"
	w=${size%x*} h=${size#*x} drawn=${marks%/*} total=${marks#*/}
	[ "$w" -gt 100 ] && [ "$h" -gt 100 ] || fail "$id: rendered $size"
	[ "$total" -gt 0 ] || fail "$id: no data marks"
	[ "$drawn" = "$total" ] || fail "$id: only $drawn of $total data marks drawn"
done
# the counts the fixture implies: 16 kernels on GPU 0's roofline, 1 P2P cell (0->1), 9 GEMM bars
checks=$((checks + 3))
grep -q '^chart-roofline .* 16/16$' "$tmp/probe.txt" || fail "roofline: $(grep roofline "$tmp/probe.txt")"
grep -q '^chart-p2p .* 1/1$' "$tmp/probe.txt" || fail "p2p: $(grep p2p "$tmp/probe.txt")"
grep -q '^chart-gemm .* 9/9$' "$tmp/probe.txt" || fail "gemm: $(grep gemm "$tmp/probe.txt")"

# and a picture of the page as a user would get it (the report without the probe)
chrome --window-size=1000,3000 --screenshot="$tmp/report.png" "file://$tmp/report.html" > /dev/null
checks=$((checks + 1))
if [ ! -s "$tmp/report.png" ] || [ "$(head -c 8 "$tmp/report.png" | od -An -tx1 | tr -d ' \n')" != 89504e470d0a1a0a ]; then
	fail "no PNG screenshot: $(tail -3 "$tmp/chrome.err")"
elif [ "$(stat -c %s "$tmp/report.png")" -lt 50000 ]; then
	fail "screenshot suspiciously small ($(stat -c %s "$tmp/report.png") bytes): blank page?"
fi
echo "charts: $(tr '\n' ';' < "$tmp/probe.txt")"
finish
