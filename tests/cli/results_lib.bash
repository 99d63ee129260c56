#!/usr/bin/env bash
# results_lib.bash - what bench.sh and report.sh share; sourced (CTest runs
# tests/cli/*.sh only): the environment, the saved results fixture, a
# temporary directory and the expect/has/hasnt/one_line checks.

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
: "${GPUCTL:?set GPUCTL to the gpuctl binary}"
export GPUCTL_DATA_DIR="${GPUCTL_DATA_DIR:-$here/../../data}"
unset GPUCTL_SIM GPUCTL_KERNELS
fixture="$here/../data/results-h200x2.json"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# expect RC NAME -- args...: runs gpuctl, keeps stdout/stderr in $tmp/NAME.{out,err}
expect() {
	local want=$1 name=$2
	shift 3
	"$GPUCTL" "$@" > "$tmp/$name.out" 2> "$tmp/$name.err"
	local rc=$?
	[ "$rc" = "$want" ] || fail "$name: exit $rc, want $want: $(head -c 300 "$tmp/$name.err")"
}
has() { grep -qF -- "$2" "$tmp/$1" || fail "$1 lacks '$2'"; }
hasnt() { grep -qF -- "$2" "$tmp/$1" && fail "$1 has '$2'"; }
one_line() { [ "$(wc -l < "$tmp/$1")" = 1 ] || fail "$1: want one line, got: $(cat "$tmp/$1")"; }
