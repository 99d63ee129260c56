#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# results_lib.bash - what bench.sh and report.sh share, on top of lib.bash;
# sourced (CTest runs tests/cli/*.sh only): the saved results fixture and the
# expect/has/hasnt/one_line checks.

. "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
unset GPUCTL_KERNELS
fixture="$here/../data/results-h200x2.json"

# expect RC NAME -- args...: runs gpuctl, keeps stdout/stderr in $tmp/NAME.{out,err}
expect() {
	local want=$1 name=$2
	shift 3
	checks=$((checks + 1))
	"$GPUCTL" "$@" > "$tmp/$name.out" 2> "$tmp/$name.err"
	local rc=$?
	[ "$rc" = "$want" ] || fail "$name: exit $rc, want $want: $(head -c 300 "$tmp/$name.err")"
}
has() { checks=$((checks + 1)); grep -qF -- "$2" "$tmp/$1" || fail "$1 lacks '$2'"; }
hasnt() { checks=$((checks + 1)); ! grep -qF -- "$2" "$tmp/$1" || fail "$1 has '$2'"; }
one_line() { checks=$((checks + 1)); [ "$(wc -l < "$tmp/$1")" = 1 ] || fail "$1: want one line, got: $(cat "$tmp/$1")"; }
