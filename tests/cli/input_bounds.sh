#!/usr/bin/env bash
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
finish
