#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# input_bounds.sh - inputs out of their range or cut short give one line and
# the documented exit code (issue 38, items 7, 8 and 10): a truncated or
# malformed health rules file (data directory or --rules FILE: 65 both, and
# `agent --once` fails instead of printing an exposition without its health
# series); simulated CPU lists that are not CPU lists; pool_log_limit = 0;
# numeric options past their bounds.
# By hand: GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/input_bounds.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
need jq
# the error: one line on stderr
one_line() { checks=$((checks + 1)); [ "$(wc -l <<<"$err")" = 1 ] || fail "not one line: $err"; }

# ---- item 7: a health rules file cut short -----------------------------------------------------
cp -r "$GPUCTL_DATA_DIR" "$tmp/data"
head -c 300 "$GPUCTL_DATA_DIR/health/rules.json" >"$tmp/data/health/rules.json"
cut=(env GPUCTL_DATA_DIR="$tmp/data" "$GPUCTL" --sim h200x8)
expect_exit 65 "${cut[@]}" agent --once
err_has "rules.json"
one_line
expect_exit 65 "${cut[@]}" health --window 0
err_has "rules.json"
one_line
expect_exit 65 "$GPUCTL" --sim h200x8 health --window 0 --rules "$tmp/data/health/rules.json"
one_line
# the whole file: the exposition has its health series
expect_exit 0 "$GPUCTL" --sim h200x8 agent --once
out_has "^gpuctl_gpu_health_status{"

# ---- item 10: simulated CPU lists, pool_log_limit = 0 ----------------------------------------
for cpus in '5-1,,,-' '0-99999999' '' '1,,2' '3-' '-4' ',0' '0,'; do
	jq --arg c "$cpus" '.numa_nodes[0].cpus = $c' "$GPUCTL_DATA_DIR/sim/h200x8.json" >"$tmp/numa.json"
	expect_exit 65 "$GPUCTL" --sim "$tmp/numa.json" topo
	err_has "numa_nodes\[0\].cpus"
	one_line
done
jq '.numa_nodes[0].cpus = "0-3,8,10-11"' "$GPUCTL_DATA_DIR/sim/h200x8.json" >"$tmp/numa.json"
expect_exit 0 "$GPUCTL" --sim "$tmp/numa.json" info
for v in 0 1K 65535; do
	printf 'pool_log_limit = %s\n' "$v" >"$tmp/agent.conf"
	expect_exit 65 "$GPUCTL" --sim h200x8 agent --config "$tmp/agent.conf" --once
	err_has "bad value '$v' for 'pool_log_limit' (at least 64K, or off)"
	one_line
done
for v in 64K off; do
	printf 'pool_log_limit = %s\n' "$v" >"$tmp/agent.conf"
	expect_exit 0 "$GPUCTL" --sim h200x8 agent --config "$tmp/agent.conf" --once
done
# ---- a FIFO for a file option: refused at once, never a wait for a writer (item 3) -----------
mkfifo "$tmp/fifo"
for cmd in "plan train --model gpt2-small --bench-results $tmp/fifo" "--sim $tmp/fifo info" \
	"--sim h200x8 health --window 0 --rules $tmp/fifo" "--sim h200x8 agent --config $tmp/fifo --once" \
	"plan cost --hours 1 --prices $tmp/fifo" "report --results $tmp/fifo"; do
	# shellcheck disable=SC2086
	expect_exit 66 timeout 60 "$GPUCTL" $cmd
	err_has "not a regular file"
	one_line
done

# ---- item 8: every numeric option has a range, in its table, that --help shows ---------------
expect_exit 64 "$GPUCTL" plan cost --instance p4d.24xlarge --hours 1e308
err_has "^gpuctl plan cost: option '--hours': '1e308' is not a number from 0 to 1M$"
one_line
for bad in "plan cost --hours 1e-400x" "plan cost --hours 12 --gpus 1e30" "plan cost --hours 12 --pue 1e308" \
	"plan train --params 7B --mfu 2" "plan train --params 1e300" "plan serve --model gpt2-small --mem-util 1e9" \
	"slurm sweep --gather --out x --threshold 1e308" "slurm sweep --gather --out x --threshold nan" \
	"--sim h200x8 diag --variation 1e9" "--sim h200x8 diag --timeout-scale inf"; do
	# shellcheck disable=SC2086
	expect_exit 64 "$GPUCTL" $bad
	err_has "is not a number from "
	one_line
done
expect_exit 0 "$GPUCTL" plan cost --help
out_has "^ *--hours H  *the job's hours: a number (1.5) or a duration (90m, 2h, 1d) (0 to 1M)$"
out_has "^ *--pue X  *--buy: power usage effectiveness (1 to 10) (default 1.4)$"
expect_exit 0 "$GPUCTL" slurm sweep --help
out_has "^ *--threshold PCT .*(0 to 100) (default 8)$"
# inf never shows as n/a (n/a: no such price): the largest job the ranges allow is finite
expect_exit 0 "$GPUCTL" plan cost --instance p4d.24xlarge --hours 1e6 --instances 1e6
grep -qi "inf\|too large" <<<"$out" && fail "a cost printed as inf: $out"
finish
