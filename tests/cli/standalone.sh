#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# standalone.sh - a gpuctl copied alone to another machine works (issue 37):
# every file of data/ is compiled into the binary as the last place it is
# looked for (src/core/data_path.h), so the copy, with no GPUCTL_DATA_DIR and
# no installed data, runs a simulated server, looks GPUs up in the catalog
# (bench --results' datasheet ratios, plan, report), and `info --data` says
# "embedded" for every file; a data directory (GPUCTL_DATA_DIR, --data-dir)
# still wins, file by file.
#
# Run by CTest (GPUCTL = the binary). By hand:
#   GPUCTL=build/gpuctl bash tests/cli/standalone.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/results_lib.bash"
need jq

# the copy: one file in a folder of its own; run from there, with a HOME of
# its own and no data directory in the environment
node="$tmp/node"
mkdir -p "$node/bin" "$node/home"
cp "$GPUCTL" "$node/bin/gpuctl"
GPUCTL="$node/bin/gpuctl"
unset GPUCTL_DATA_DIR GPUCTL_KERNELS
export HOME="$node/home"
cd "$node" || exit 1
ndata=$(cd "$src/data" && find . -type f | wc -l)

# Nothing but the binary can hold the data: the places it searches on disk
# (the installed copy and /etc's overrides, compiled in) must not exist here.
expect 0 places -- info --data --json
installed=$(jq -r '.places[] | select(.place != "embedded" and .exists) | .dir' "$tmp/places.out")
[ -z "$installed" ] || skip "this machine has gpuctl's data installed at $installed: the copy would read it"
check "info --data --json: the data directory is not set" \
	jq -e '.places[0] | .place == "data-dir" and .dir == null' "$tmp/places.out" >/dev/null
check "info --data --json: every file of data/ ($ndata) is embedded" \
	jq -e --argjson n "$ndata" '(.files | length) == $n and all(.files[]; .source == "embedded" and .path == null)' \
	"$tmp/places.out" >/dev/null

expect 0 data -- info --data
has data.out "embedded   $ndata files built into this gpuctl"
grep -Eq '^catalog/gpus\.json +embedded +-$' "$tmp/data.out" || fail "info --data: catalog/gpus.json not embedded"
checks=$((checks + 1))
[ "$(grep -Ec '^[a-z/0-9.-]+\.json +embedded +-$' "$tmp/data.out")" = "$ndata" ] ||
	fail "info --data: not every file embedded: $(cat "$tmp/data.out")"
expect 0 version -- --version
has version.out "data: $ndata files, all built in"

# a simulated server, the catalog and the health rules from the binary alone
expect 0 sim -- --sim h200x8 info
has sim.out "host hgx-h200-01"
has sim.out "NVIDIA H200"
expect 0 health -- --sim h200x8 health
# report: the catalog's datasheet, the presets' planning figures
expect 0 report -- --sim h200x8 report
has report.out "== Planning (gpuctl plan;"
hasnt report.out "not in catalog"
hasnt report.out "not found"
# bench --results: the file's GPUs looked up in the catalog, ratios against the datasheet
expect 0 results -- bench --results "$fixture"
grep -Eq '^memory +copy +0 +4 GiB +4009 GB/s .* 4800 GB/s +0\.84 +ok$' "$tmp/results.out" ||
	fail "bench --results: no datasheet ratio for the memory copy: $(grep 'memory *copy' "$tmp/results.out")"
hasnt results.out "not in catalog"
# plan: the catalog, the model presets and the price tables
expect 0 plan -- plan train --model llama-3-8b --gpu 'H200 SXM'
has plan.out "model: llama-3-8b"
expect 0 cost -- plan cost --hours 10 --instance p5e.48xlarge
has cost.out "H200 SXM"
expect 66 nosim -- --sim no-such-server info
# the list is every server of data/sim, embedded (the binary has no other source here)
servers=$(cd "$GPUCTL_SRC_DIR/data/sim" && LC_ALL=C ls *.json | sed 's/\.json$//' | paste -sd, | sed 's/,/, /g')
has nosim.err "unknown simulated server 'no-such-server' (no sim/no-such-server.json in the data files; there are: $servers)"
one_line nosim.err

# A data directory still wins, file by file: a catalog whose H200 has twice the
# bandwidth, and a server only it has; every other file still from the binary.
over="$tmp/over"
mkdir -p "$over/catalog" "$over/sim"
sed 's/"total_mib": 143771, "type": "HBM3e", "bus_width_bits": 6016, "bandwidth_gbs": 4800/"total_mib": 143771, "type": "HBM3e", "bus_width_bits": 6016, "bandwidth_gbs": 9600/' \
	"$src/data/catalog/gpus.json" >"$over/catalog/gpus.json"
sed 's/"hgx-h200-01"/"override-box"/' "$src/data/sim/h200x8.json" >"$over/sim/mine.json"
export GPUCTL_DATA_DIR="$over"
expect 0 over-results -- bench --results "$fixture"
grep -Eq '^memory +copy +0 +4 GiB +4009 GB/s .* 9600 GB/s +0\.42 +ok$' "$tmp/over-results.out" ||
	fail "GPUCTL_DATA_DIR's catalog not used: $(grep 'memory *copy' "$tmp/over-results.out")"
expect 0 over-sim -- --sim mine info
has over-sim.out "host override-box"
expect 0 over-data -- info --data --json
check "info --data: the catalog from GPUCTL_DATA_DIR, by its path" \
	jq -e --arg p "$over/catalog/gpus.json" '.files[] | select(.file == "catalog/gpus.json") |
		.source == "data-dir" and .path == $p' "$tmp/over-data.out" >/dev/null
check "info --data: the rest still embedded" \
	jq -e '(.files | length) - ([.files[] | select(.source == "embedded")] | length) == 1' "$tmp/over-data.out" >/dev/null
expect 0 over-version -- --version
has over-version.out "data: $ndata files: 1 from $over, $((ndata - 1)) from the copy built in"
# --data-dir the same, over the environment's
unset GPUCTL_DATA_DIR
expect 0 flag-results -- --data-dir "$over" bench --results "$fixture"
grep -Eq ' 9600 GB/s +0\.42 +ok$' "$tmp/flag-results.out" || fail "--data-dir's catalog not used"
# a broken override is an error that names it, not a silent fallback
echo '{"gpus": [' >"$over/catalog/gpus.json"
expect 66 broken -- --data-dir "$over" bench --results "$fixture"
has broken.err "$over/catalog/gpus.json"
one_line broken.err

finish
