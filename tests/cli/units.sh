#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# units.sh - one grammar per kind of value, as a user meets it (docs/units.md;
# issues 35 and 36): a token length's K is 1024 (`plan train --seq 4k` is
# 4096), `plan cost --hours` takes a duration, a number alone is refused where
# it meant minutes (`submit --time 30`, `pool_log_retention = 30`) with the fix
# in the message, the agent's timeouts read durations, and the GPU-index lists
# of `submit --gpu-ids` and `slurm job-start --gpus` are core's one grammar.
# Each check compares two spellings of one value, so none can pass by a
# command printing nothing: a run that fails fails its check.
# By hand: GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/units.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
one_line() { checks=$((checks + 1)); [ "$(wc -l <<<"$err")" = 1 ] || fail "not one line: $err"; }
# same_out A -- B: both exit 0 with the same non-empty stdout
same_out() {
	local a=() b=()
	while [ "$1" != -- ]; do a+=("$1"); shift; done
	shift
	b=("$@")
	expect_exit 0 "$GPUCTL" "${a[@]}"
	local first="$out"
	expect_exit 0 "$GPUCTL" "${b[@]}"
	checks=$((checks + 1))
	[ -n "$first" ] && [ "$first" = "$out" ] || fail "'${a[*]}' and '${b[*]}' differ"
}

# ---- lengths in tokens: K is 1024 ---------------------------------------------------------------
model=(--model llama-2-7b --gpu 'H200 SXM' --json)
same_out plan train "${model[@]}" --seq 4k -- plan train "${model[@]}" --seq 4096
same_out plan train "${model[@]}" --seq 1.5k -- plan train "${model[@]}" --seq 1536
expect_exit 0 "$GPUCTL" plan train "${model[@]}" --seq 4000
four_thousand="$out"
expect_exit 0 "$GPUCTL" plan train "${model[@]}" --seq 4k
checks=$((checks + 1))
[ "$four_thousand" != "$out" ] || fail "--seq 4k is read as 4000"
same_out plan serve --model llama-2-7b --json --context 2k --prefill-tokens 8k -- \
	plan serve --model llama-2-7b --json --context 2048 --prefill-tokens 8192
for bad in 4B 4KB 1.5 1e3 0x10; do
	expect_exit 64 "$GPUCTL" plan train "${model[@]}" --seq "$bad"
	err_has "^gpuctl plan train: option '--seq': bad length '$bad' (whole tokens, e.g. 2048, 4k = 4096"
	one_line
done

# ---- plan cost --hours: hours or a duration -------------------------------------------------------
cost=(plan cost --instance p4d.24xlarge --json)
same_out "${cost[@]}" --hours 2h -- "${cost[@]}" --hours 2
same_out "${cost[@]}" --hours 90m -- "${cost[@]}" --hours 1.5
same_out "${cost[@]}" --hours 1d12h -- "${cost[@]}" --hours 36
expect_exit 64 "$GPUCTL" "${cost[@]}" --hours 1h30
err_has "^gpuctl plan cost: option '--hours': '1h30' is not a number from 0 to 1M$"
expect_exit 64 "$GPUCTL" "${cost[@]}" --hours 30m1h
err_has "is not a number of hours from 0 to 1M nor a duration (2h, 90m, 1d)$"
one_line

# ---- a number alone where it meant minutes: refused with the fix (before any pool is asked) ----
expect_exit 64 "$GPUCTL" submit --socket "$tmp/none.sock" --time 30 -- true
err_has "bad time limit '30': a number alone is ambiguous here; write 30m or 30s$"
one_line
printf 'pool_log_retention = 30\n' >"$tmp/retention.conf"
expect_exit 65 "$GPUCTL" --sim h200x8 agent --config "$tmp/retention.conf" --once
err_has "retention.conf:1: bad pool_log_retention '30': a number alone is ambiguous here; write 30m or 30s"
one_line

# ---- the agent's timeouts are durations in whole seconds ------------------------------------------
printf 'connection_timeout = 2m\nheader_timeout = 5s\npool_log_retention = 14d\n' >"$tmp/ok.conf"
expect_exit 0 "$GPUCTL" --sim h200x8 agent --config "$tmp/ok.conf" --once
out_has "^gpuctl_gpu_up{"
printf 'header_timeout = 1500ms\n' >"$tmp/frac.conf"
expect_exit 65 "$GPUCTL" --sim h200x8 agent --config "$tmp/frac.conf" --once
err_has "frac.conf:1: option 'header_timeout': '1500ms' is not whole seconds (e.g. 10s, 1m)"
one_line

# the settings are rows of one table: agent --help lists each with its range and default
expect_exit 0 "$GPUCTL" agent --help
out_has "^  connection_timeout  DURATION .*(1s to 1h) (default 10s)$"
out_has "^  max_connections     N        concurrent HTTP connections (1 to 65536) (default 256)$"

# ---- GPU-index lists: one grammar (core/gpu_select.h) -------------------------------------------
for bad in GPU-8f3e12ab 18:00.0 3-1 64 '1,,2'; do
	expect_exit 64 "$GPUCTL" submit --socket "$tmp/none.sock" --gpu-ids "$bad" -- true
	err_has "GPU"
	one_line
	expect_exit 64 "$GPUCTL" slurm job-start --socket "$tmp/none.sock" --job 7 --uid 1000 --gpus "$bad"
	err_has "GPU"
	one_line
done
expect_exit 64 "$GPUCTL" slurm job-start --socket "$tmp/none.sock" --job 7 --uid 1000 --gpus 0-64
err_has "GPU index 64 out of range (0-63)$"
finish
