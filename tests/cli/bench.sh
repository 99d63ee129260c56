#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench.sh - `gpuctl bench` without a GPU: it refuses a simulated server and a
# machine without driver/module (one line, exit 69); it prints a saved results
# file as text, JSON and CSV; --min-ratio thresholds set the exit code; the
# results file round-trips through --save; usage errors exit 64/65/66
# (docs/bench.md). The measuring itself runs on the GPU machine
# (scripts/gpu/, kernels helper), never here.
#
# Run by CTest (GPUCTL = the binary). By hand:
#   GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/bench.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/results_lib.bash"

# never numbers from the simulator
expect 69 sim -- --sim h200x8 bench --quick
one_line sim.err
has sim.err "simulated server 'h200x8'"
[ -s "$tmp/sim.out" ] && fail "sim: printed figures: $(head -3 "$tmp/sim.out")"
GPUCTL_SIM=h200x8 "$GPUCTL" bench --json > "$tmp/simenv.out" 2>&1
[ $? = 69 ] || fail "GPUCTL_SIM: bench did not refuse"
grep -q '"results"' "$tmp/simenv.out" && fail "GPUCTL_SIM: printed results"

# no driver (CI) or, on a GPU machine, no kernels module at this path: one line, 69
expect 69 nodev -- bench --kernels "$tmp/no-such-module.so" --quick
one_line nodev.err
grep -q -- "--sim" "$tmp/nodev.err" && fail "nodev: suggests --sim, which bench refuses: $(cat "$tmp/nodev.err")"
[ -s "$tmp/nodev.out" ] && fail "nodev: printed something on stdout"

# a saved results file as text: figures with units, datasheet, ratio
expect 0 text -- bench --results "$fixture"
has text.out "gpuctl bench (quick): 2 GPUs, NVIDIA H200 (H200 SXM)"
has text.out "4009 GB/s"
has text.out "4800 GB/s"
has text.out "8.59 GB"
has text.out "794.6 TFLOP/s"
has text.out "989.4 TFLOP/s"
grep -E '^nccl +all_reduce .* 1 GiB +321\.4 GB/s .* 450\.0 GB/s +0\.71 +ok' "$tmp/text.out" > /dev/null ||
	fail "text: all-reduce 1 GiB line wrong: $(grep 'all_reduce' "$tmp/text.out" | tail -1)"
has text.out "52 results: 52 ok, 0 under threshold, 0 failed, 0 skipped"

# thresholds decide the exit code
expect 1 thr -- bench --results "$fixture" --min-ratio 0.8
has thr.out "LOW (< 0.80)"
expect 0 thr_mem -- bench --results "$fixture" --min-ratio memory=0.8
expect 1 thr_mem9 -- bench --results "$fixture" --min-ratio memory=0.9
grep -E '^memory +copy .*LOW \(< 0\.90\)' "$tmp/thr_mem9.out" > /dev/null || fail "thr_mem9: memory copy not LOW"
grep -E '^memory +read .* ok$' "$tmp/thr_mem9.out" > /dev/null || fail "thr_mem9: memory read (0.96) should pass"

# JSON is the results file; --save round-trips it exactly
expect 0 json -- bench --results "$fixture" --json
[ "$(jq -r .schema "$tmp/json.out")" = gpuctl-bench-results ] || fail "json: schema"
[ "$(jq -r .simulated "$tmp/json.out")" = false ] || fail "json: simulated"
[ "$(jq '.results | length' "$tmp/json.out")" = 52 ] || fail "json: result count"
[ "$(jq '[.results[] | select(.suite == "memory" and .test == "copy")][0].ratio * 1000 | round' "$tmp/json.out")" = 835 ] ||
	fail "json: memory copy ratio"
expect 0 save -- bench --results "$fixture" --save "$tmp/saved.json" --json
# a file gpuctl saved reads back to the same text (15 significant digits, docs/json.md: the
# fixture's 17-digit figures are rounded by the first save, and its ratios recomputed)
expect 0 again -- bench --results "$tmp/saved.json" --save "$tmp/saved2.json" --json
expect 0 again2 -- bench --results "$tmp/saved2.json" --json
cmp -s "$tmp/again.out" "$tmp/again2.out" || fail "round trip: JSON differs after --save and reload"
cmp -s "$tmp/saved.json" "$tmp/save.out" || fail "--save wrote something else than --json printed"

# CSV: a header and one row per result, each with the header's field count
expect 0 csv -- bench --results "$fixture" --csv
python3 - "$tmp/csv.out" <<'PY' || fail "csv: malformed"
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
assert rows[0][:4] == ["suite", "test", "variant", "gpu"], rows[0]
assert len(rows) == 53, len(rows)
assert all(len(r) == len(rows[0]) for r in rows), "field counts differ"
mem = [r for r in rows if r[0] == "memory" and r[1] == "copy"][0]
h = rows[0]
assert abs(float(mem[h.index("median")]) - 4009.19) < 0.01, mem
assert mem[h.index("unit")] == "GB/s" and mem[h.index("status")] == "ok"
PY

# -s and -i select from a saved run (they were ignored before: all 52 results printed)
expect 0 sel_mem -- bench --results "$fixture" -s memory --json
[ "$(jq '.results | length' "$tmp/sel_mem.out")" = 5 ] || fail "-s memory: $(jq '.results | length' "$tmp/sel_mem.out") results, want 5"
[ "$(jq '[.results[] | select(.suite != "memory")] | length' "$tmp/sel_mem.out")" = 0 ] || fail "-s memory: other suites"
expect 0 sel_two -- bench --results "$fixture" -s memory,gemm
has sel_two.out "9 results: 9 ok"
# -i 1: GPU 1's results (the p2p ones towards it); results on all GPUs (nccl) go
expect 0 sel_gpu1 -- bench --results "$fixture" -i 1 --json
[ "$(jq '.results | length' "$tmp/sel_gpu1.out")" = 6 ] || fail "-i 1: $(jq '.results | length' "$tmp/sel_gpu1.out") results, want 6"
[ "$(jq '[.results[] | select(.gpu != 1 and .peer != 1)] | length' "$tmp/sel_gpu1.out")" = 0 ] || fail "-i 1: other GPUs"
expect 0 sel_gpu0 -- bench --results "$fixture" -i 00000000:00:06.0 -s memory,p2p --csv
[ "$(wc -l < "$tmp/sel_gpu0.out")" = 12 ] || fail "-i bus id -s memory,p2p: $(wc -l < "$tmp/sel_gpu0.out") lines, want 1 + 11"
expect 64 sel_gpu9 -- bench --results "$fixture" -i 9
one_line sel_gpu9.err
has sel_gpu9.err "2 GPUs"
# what only measuring uses is refused with a saved run
expect 64 sel_iters -- bench --results "$fixture" --iters 20
has sel_iters.err "option '--iters' is for measuring"

# usage and input errors
expect 64 iters -- bench --iters 5
has iters.err "option '--iters': '5' is not a whole number from 10 to 128"
expect 64 suite -- bench --suite copy,warp
has suite.err "unknown suite 'warp'"
expect 64 both -- bench --results "$fixture" --json --csv
expect 64 ratio -- bench --results "$fixture" --min-ratio copy=x
has ratio.err "option '--min-ratio': bad ratio"
expect 64 unknown -- bench --frobnicate
expect 66 missing -- bench --results "$tmp/none.json"
one_line missing.err
echo '{"schema": "gpuctl-bench-results", "version": 1, "results": [{"suite": 3}]}' > "$tmp/bad.json"
expect 65 bad -- bench --results "$tmp/bad.json"
has bad.err "results[0]: 'suite' is not a string"
expect 0 help -- bench --help
has help.out "--min-ratio"

# --data-dir reaches the catalog: a copy whose H200 memory bandwidth is 1234 GB/s
mkdir -p "$tmp/data"
cp -r "$src/data/." "$tmp/data/"
sed -i 's/"total_mib": 143771, "type": "HBM3e", "bus_width_bits": 6016, "bandwidth_gbs": 4800/"total_mib": 143771, "type": "HBM3e", "bus_width_bits": 6016, "bandwidth_gbs": 1234/' "$tmp/data/catalog/gpus.json"
expect 0 datadir -- --data-dir "$tmp/data" bench --results "$fixture"
has datadir.out "1234 GB/s"

finish
