#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# slurm_sweep_html.sh - the fleet report of `gpuctl slurm sweep` (fleet.html)
# renders in headless Chromium: every node's row is on the page with a
# non-zero box, the outliers' rows (and only theirs) are highlighted, and the
# SIMULATED banner shows. The results are made without Slurm: four nodes'
# `--run-node` on simulated 8x H200s (n2 with pending row remaps on GPU 3, n4 with a
# power cap on GPU 5) and `--gather`, as after a sweep (the sweep itself runs
# in slurm_cluster.sh). The page has no script: a probe is added to a copy,
# loaded with --dump-dom, and its output read. Chromium from
# `GPUCTL_TEST_DEPS=1 scripts/deps.sh`; without it the test skips (exit 77;
# a failure in CI).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
browser=""
for b in chromium chromium-browser google-chrome; do
	command -v "$b" >/dev/null && browser=$b && break
done
[ -n "$browser" ] || skip "chromium is not installed (GPUCTL_TEST_DEPS=1 scripts/deps.sh installs it)"

echo '{"faults": [{"kind": "remap_pending", "gpu": 3}]}' >"$tmp/faults-n2.json"
echo '{"faults": [{"kind": "power", "gpu": 5}]}' >"$tmp/faults-n4.json"
for n in n1 n2 n3 n4; do
	"$GPUCTL" --sim "h200x8,faults=$tmp/faults-$n.json" slurm sweep --run-node --node "$n" --level bench-quick \
		--window 0 --out "$tmp/sweep" >/dev/null 2>"$tmp/run.err" || fail "--run-node on $n: $(cat "$tmp/run.err")"
done
"$GPUCTL" slurm sweep --gather --out "$tmp/sweep" >"$tmp/fleet.txt" 2>"$tmp/gather.err"
rc=$?
checks=$((checks + 1))
[ $rc = 2 ] && [ -s "$tmp/sweep/fleet.html" ] || fail "--gather: exit $rc (expected 2: outliers), $(cat "$tmp/gather.err")"

# the probe: per row of the nodes' table, its node, class, box and background colour
probe='<pre id="probe"></pre><script>
var out = [];
document.querySelectorAll("#nodes tr[data-node]").forEach(function (tr) {
  var r = tr.getBoundingClientRect(), bg = getComputedStyle(tr.cells[1]).backgroundColor;
  out.push(tr.dataset.node + " " + (tr.classList.contains("outlier") ? "outlier" : "normal") + " " +
           (r.width > 0 && r.height > 0 ? "shown" : "hidden") + " " + bg.replace(/ /g, ""));
});
var banner = document.getElementById("simulated");
out.push("banner " + (banner && banner.getBoundingClientRect().height > 0 ? "shown" : "missing"));
document.getElementById("probe").textContent = "PROBE\n" + out.join("\n") + "\nEND";
</script></body>'
shopt -u patsub_replacement 2>/dev/null # bash 5.2: '&' in the replacement would be the match
page="$(<"$tmp/sweep/fleet.html")"
printf '%s\n' "${page/<\/body>/$probe}" >"$tmp/probe.html"
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
	--disable-sync --no-first-run --user-data-dir="$(mktemp -d -p "$tmp")" --virtual-time-budget=5000 \
	--dump-dom "file://$tmp/probe.html" >"$tmp/dom.html" 2>"$tmp/chrome.err"
sed -n '/id="probe">PROBE$/,/^END</p' "$tmp/dom.html" | sed '1d;$d' >"$tmp/probe.txt"
checks=$((checks + 1))
[ -s "$tmp/probe.txt" ] || fail "no probe output from $browser: $(tail -3 "$tmp/chrome.err")"
for n in n1 n2 n3 n4; do
	checks=$((checks + 2))
	[ "$(grep -c "^$n .* shown " "$tmp/probe.txt")" = 8 ] || fail "$n: not its 8 GPU rows shown: $(grep "^$n " "$tmp/probe.txt" | tr '\n' '|')"
	case $n in n2 | n4) want=outlier ;; *) want=normal ;; esac
	[ "$(grep -c "^$n $want " "$tmp/probe.txt")" = 8 ] || fail "$n: its rows are not all $want: $(grep "^$n " "$tmp/probe.txt" | tr '\n' '|')"
done
# highlighted: the outliers' rows have a background of their own, the others none
out_bg="$(awk '$2 == "outlier" { print $4 }' "$tmp/probe.txt" | sort -u)"
norm_bg="$(awk '$2 == "normal" { print $4 }' "$tmp/probe.txt" | sort -u)"
checks=$((checks + 2))
[ "$(wc -l <<<"$out_bg")" = 1 ] && [ "$(wc -l <<<"$norm_bg")" = 1 ] && [ "$out_bg" != "$norm_bg" ] ||
	fail "outlier rows' background '$out_bg' is not one colour apart from the others' '$norm_bg'"
[ "$norm_bg" = "rgba(0,0,0,0)" ] || fail "rows that are no outlier are coloured: $norm_bg"
grep -q "^banner shown$" "$tmp/probe.txt" && checks=$((checks + 1)) || fail "no SIMULATED banner on the page"
echo "rows: $(grep -c ' shown ' "$tmp/probe.txt") shown; outlier background $out_bg"
finish
