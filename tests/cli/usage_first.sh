#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# usage_first.sh - every command that reads GPUs (info, topo, agent, health,
# dmon, top, diag, report) checks its options and arguments before it opens
# the backend: a bad flag or value (a malformed -i SPEC too) is a one-line
# usage error (exit 64) on a simulated server, without any driver, with a
# simulated-server file that does not exist (opening it would answer 66) and
# with a simulator whose every call takes 5 s; `--help` needs no driver. Once
# the options are good, a machine without the NVIDIA driver still gets the one
# clear line and 69 (docs/exit-codes.md).
#
# Run by CTest (GPUCTL = the binary). By hand:
#   GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/usage_first.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
commands="info topo agent health dmon top diag report"
missing="$tmp/no-such-server.json"
nodriver_msg="gpuctl: cannot load libnvidia-ml.so.1: NVIDIA driver not found (use --sim NAME to run on a simulated server)"


# expect CODE MESSAGE ARGS...: gpuctl ARGS exits CODE (within 30 s: not hung), prints
# nothing on stdout and exactly MESSAGE (one line) on stderr.
expect() {
	local code="$1" msg="$2"; shift 2
	checks=$((checks + 1))
	timeout 30 "$GPUCTL" "$@" </dev/null >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	if [ "$rc" = 124 ]; then
		fail "gpuctl $*: still running after 30 s (waiting on the backend?)"
		return
	fi
	[ "$rc" = "$code" ] || fail "gpuctl $*: exit $rc, expected $code: $(head -c 300 "$tmp/err")"
	[ -s "$tmp/out" ] && fail "gpuctl $*: wrote to stdout: $(head -c 300 "$tmp/out")"
	# stderr read and measured in bash (no wc or cat per case: a few hundred
	# processes fewer): its newlines, and the text without the trailing ones
	local err newlines
	IFS= read -rd '' err <"$tmp/err"
	newlines=${err//[!$'\n']/}
	[ "${#newlines}" = 1 ] || fail "gpuctl $*: stderr is not one line: $(head -c 600 "$tmp/err")"
	while [[ "$err" == *$'\n' ]]; do err=${err%$'\n'}; done
	[ "$err" = "$msg" ] || fail "gpuctl $*: stderr '$(head -c 300 "$tmp/err")', expected '$msg'"
}

# --- an unknown flag: 64 before any backend is opened
for c in $commands; do
	msg="gpuctl $c: unknown option '--bogus'; see 'gpuctl $c --help'"
	expect 64 "$msg" --sim h200x8 "$c" --bogus
	expect 64 "$msg" "$c" --bogus                      # no --sim: NVML (none on CI)
	expect 64 "$msg" "$c" --bogus --sim=h200x8         # global option after the command's
	expect 64 "$msg" --sim "$missing" "$c" --bogus     # opening it would be 66
	expect 64 "$msg" --or-sim "$missing" "$c" --bogus  # no driver: falls back to it, 66
	expect 64 "$msg" --sim h200x8,latency_us=5000000 "$c" --bogus # 5 s per backend call
	GPUCTL_SIM="$missing" expect 64 "$msg" "$c" --bogus
done

# --- bad values and combinations, without a driver and with an unopenable server
bad_values() { # bad_values GLOBAL...: every case run with these global options first
	expect 64 "gpuctl info: -q and --json cannot be used together" "$@" info -q --json
	expect 64 "gpuctl info: unexpected argument 'extra'; see 'gpuctl info --help'" "$@" info extra
	expect 64 "gpuctl topo: option '-i' needs a value" "$@" topo -i
	expect 64 "gpuctl agent: '--openmetrics' goes with '--once' (a server picks the format from Accept)" "$@" agent --openmetrics
	expect 64 "gpuctl agent: option '--listen' needs a value" "$@" agent --listen
	expect 64 "gpuctl health: option '--window': bad duration '-1' (e.g. 1.5s, 100ms, 2h, 1h30m; a number alone is seconds)" "$@" health --window -1
	expect 64 "gpuctl health: bad CUDA version 'x' (MAJOR.MINOR, e.g. 13.0)" "$@" health --need-cuda x
	expect 64 "gpuctl dmon: option '-c': '0' is not a whole number from 1 to 100000000" "$@" dmon -c 0
	expect 64 "gpuctl dmon: --csv and --json exclude each other" "$@" dmon --csv --json
	expect 64 "gpuctl top: option '--exit-after': bad duration 'x' (e.g. 1.5s, 100ms, 2h, 1h30m; a number alone is seconds)" "$@" top --exit-after x
	expect 64 "gpuctl top: unexpected argument 'extra'; see 'gpuctl top --help'" "$@" top extra
	expect 64 "gpuctl diag: unknown level '9' (1, 2, 3 or 4)" "$@" diag -r 9
	expect 64 "gpuctl diag: option '--timeout-scale': '0' is not a number from 0.05 to 100" "$@" diag --timeout-scale 0
	expect 64 "gpuctl report: unexpected argument 'extra'; see 'gpuctl report --help'" "$@" report extra
	expect 64 "gpuctl report: option '--results' needs a value" "$@" report --results
	# -i SPEC: its form is checked with the options; only whether the GPUs
	# are there waits for the backend
	expect 64 "gpuctl info: bad GPU range '3-1': start after end" "$@" info -i 3-1
	expect 64 "gpuctl topo: bad GPU range 'a-b'" "$@" topo --id=a-b
	expect 64 "gpuctl health: empty item in GPU list" "$@" health -i 1,,2
	expect 64 "gpuctl dmon: unknown GPU 'H300'" "$@" dmon -i H300
	expect 64 "gpuctl top: bad GPU range '1-'" "$@" top -i 1-
	expect 64 "gpuctl diag: unknown GPU '2a:00.9'" "$@" diag -i 2a:00.9
}
bad_values
bad_values --sim "$missing"

# --- --help: usage on stdout, exit 0, with no driver and with no server to open
for c in $commands; do
	for g in "" "--sim=$missing"; do
		checks=$((checks + 1))
		# shellcheck disable=SC2086 # $g: no word or one
		timeout 30 "$GPUCTL" $g "$c" --help </dev/null >"$tmp/out" 2>"$tmp/err"
		rc=$?
		[ "$rc" = 0 ] || fail "gpuctl $g $c --help: exit $rc: $(head -c 300 "$tmp/err")"
		[ -s "$tmp/err" ] && fail "gpuctl $g $c --help: wrote to stderr: $(head -c 300 "$tmp/err")"
		head -n 1 "$tmp/out" | grep -q "^usage: gpuctl $c" || fail "gpuctl $g $c --help: no usage line: $(head -c 200 "$tmp/out")"
	done
done

# --- good options on a machine without the NVIDIA driver: the backend opens
# then, and says so in one line (69); --or-sim still falls back
if ! ldconfig -p 2>/dev/null | grep -q 'libnvidia-ml\.so\.1'; then
	expect 69 "$nodriver_msg" info
	expect 69 "$nodriver_msg" topo --json
	expect 69 "$nodriver_msg" agent --once
	expect 69 "$nodriver_msg" health --window 0
	expect 69 "$nodriver_msg" dmon -c 1
	expect 69 "$nodriver_msg" diag
	expect 69 "$nodriver_msg" report --no-bench
	expect 69 "$nodriver_msg" info -i 9 # well formed: only the GPUs can say it is not there
	# top checks for a terminal (an option-level check, 64) before the backend
	expect 64 "gpuctl top: needs a terminal; for plain text use 'gpuctl top --once' or '-b', for a stream of lines 'gpuctl dmon'" top
	checks=$((checks + 1))
	"$GPUCTL" --or-sim h200x8 info >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" = 0 ] || fail "--or-sim h200x8 info without a driver: exit $rc: $(head -c 300 "$tmp/err")"
	grep -q "SIMULATED server 'h200x8'" "$tmp/out" || fail "--or-sim h200x8 info: no SIMULATED banner"
else
	echo "skip: this machine has libnvidia-ml.so.1, the no-driver case is not checked"
fi

finish
