#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# did_you_mean.sh - a mistyped name gets the nearest names from the same table
# it was looked up in (issue 36): options, catalog GPUs, model presets, dmon's
# columns, simulated servers (whose names are taken in any case).
#
# Run by CTest (GPUCTL = the binary). By hand:
#   GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/did_you_mean.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.bash"

# expect CODE TEXT DESCRIPTION ARGS...: exit CODE and TEXT (fixed string) on stderr
expect() {
	local code="$1" text="$2" what="$3"; shift 3
	checks=$((checks + 1))
	"$GPUCTL" "$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	if [ "$rc" -ne "$code" ]; then
		fail "$what: exit $rc, want $code ($(head -c 300 "$tmp/err"))"
	elif ! grep -qF -- "$text" "$tmp/err"; then
		fail "$what: stderr '$(head -c 300 "$tmp/err")' lacks '$text'"
	elif [ "$(wc -l <"$tmp/err")" -gt 2 ]; then
		fail "$what: more than a line and its 'see' hint on stderr"
	fi
}

expect 64 "unknown option '--jsn' (did you mean '--json'?)" "a mistyped option" --sim h200x8 info --jsn
expect 64 "unknown option '--gpu' (did you mean '--gpus'" "submit --gpu" --sim h200x8 submit --gpu 2 -- true
expect 64 "unknown option '--frobnicate'; see" "nothing near: no suggestion" --sim h200x8 info --frobnicate
expect 64 "unknown GPU 'h200' (did you mean 'H200 SXM' or 'H200 NVL'?)" "plan --gpu h200" \
	plan train --params 7B --gpu h200
expect 64 "unknown model 'llama3-8b' (did you mean 'llama-3-8b'?); presets: " "a mistyped preset" \
	plan train --model llama3-8b --gpu 'H200 SXM'
expect 64 "unknown column 'pwrr' (did you mean 'pwr'?); columns: " "dmon --columns pwrr" \
	--sim h200x8 dmon --columns pwrr -c 1

# simulated servers: any case is the shipped name; an unknown one lists them
checks=$((checks + 1))
"$GPUCTL" --sim H200X8 info >"$tmp/out" 2>"$tmp/err" || fail "--sim H200X8: $(head -c 200 "$tmp/err")"
grep -q "SIMULATED" "$tmp/out" "$tmp/err" || fail "--sim H200X8 is not labelled simulated"
checks=$((checks + 1))
"$GPUCTL" --sim h200 info >"$tmp/out" 2>"$tmp/err" && fail "--sim h200 (no such server) succeeded"
grep -q "h200x8" "$tmp/err" || fail "--sim h200: the shipped servers are not listed ($(head -c 200 "$tmp/err"))"

finish
