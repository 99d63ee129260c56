#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# lib.bash - the harness every CLI test (tests/cli/*.sh) sources; CTest runs
# tests/cli/*.sh only. It gives:
#   the environment: $GPUCTL and $GPUCTL_DATA_DIR made absolute, $here (this
#     directory), $src (the source tree), no GPUCTL_SIM from the caller;
#   $tmp, a temporary directory removed on exit, after the steps registered
#     with on_exit (newest first: stop what you started there);
#   fail, check and finish (the check counters; finish is the last command);
#   skip and need: a test that cannot run here exits 77 (CTest: SKIP_RETURN_CODE
#     77, reported as skipped); in CI (CI=true or GPUCTL_TEST_DEPS=1) a skip is
#     a failure, since CI installs every dependency;
#   wait_until, the one bounded poll, and hold/release: a job or process a
#     test needs "still running" runs until the test releases it (removes a
#     file), never for a guessed number of seconds.

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
src="${GPUCTL_SRC_DIR:-$here/../..}"
: "${GPUCTL:?set GPUCTL to the gpuctl binary}"
export GPUCTL_DATA_DIR="${GPUCTL_DATA_DIR:-$src/data}"
# the tests change directory: make both absolute
case "$GPUCTL" in /*) ;; *) GPUCTL="$PWD/$GPUCTL" ;; esac
case "$GPUCTL_DATA_DIR" in /*) ;; *) GPUCTL_DATA_DIR="$PWD/$GPUCTL_DATA_DIR" ;; esac
unset GPUCTL_SIM

fails=0
checks=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
check() { # check DESCRIPTION COMMAND...: the command must succeed
	checks=$((checks + 1))
	local what="$1"; shift
	"$@" || fail "$what"
}
expect_exit() { # expect_exit CODE COMMAND...: runs it, its stdout in $out and stderr in $err
	local want=$1
	shift
	out="$("$@" 2>"$tmp/expect_exit.err")"
	local rc=$?
	err="$(cat "$tmp/expect_exit.err")"
	checks=$((checks + 1))
	[ "$rc" = "$want" ] || fail "'$*' exited $rc, expected $want: $(head -c 800 <<<"$out$err")"
}
out_has() { grep -q -- "$1" <<<"$out" || fail "expected '$1' in: $(head -c 800 <<<"$out")"; }
err_has() { grep -q -- "$1" <<<"$err" || fail "expected '$1' on stderr: $(head -c 800 <<<"$err")"; }
finish() { # the last command of a test: its exit status
	echo "$checks checks, $fails failed"
	[ "$fails" -eq 0 ]
}

in_ci() { [ "${CI:-}" = true ] || [ "${GPUCTL_TEST_DEPS:-0}" = 1 ]; }
skip() { # skip REASON: exit 77, or fail in CI
	if in_ci; then
		echo "FAIL: $* (a skip is a failure in CI: CI=true or GPUCTL_TEST_DEPS=1)"
		exit 1
	fi
	echo "SKIP: $*"
	exit 77
}
need() { # need TOOL...: skip unless every tool is on PATH
	local t
	for t in "$@"; do
		command -v "$t" >/dev/null 2>&1 ||
			skip "'$t' is not installed (GPUCTL_TEST_DEPS=1 scripts/deps.sh installs it)"
	done
}
need_root() { # need_root WHY
	[ "$(id -u)" = 0 ] || skip "needs root ($*)"
}

# the temporary directory (mode 755: the pool's tests run jobs as other users)
tmp="$(mktemp -d "${TMPDIR:-/tmp}/gpuctl-$(basename "$0" .sh)-XXXXXX")"
chmod 755 "$tmp"
lib_cleanups=()
on_exit() { lib_cleanups+=("$*"); } # on_exit COMMAND: run on exit (eval'd)
lib_exit() {
	local rc=$? i
	set +e
	for ((i = ${#lib_cleanups[@]} - 1; i >= 0; i--)); do eval "${lib_cleanups[i]}"; done
	rm -rf "$tmp"
	exit "$rc"
}
trap lib_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# wait_until SECONDS COMMAND...: runs COMMAND every 0.1 s until it succeeds;
# returns 1 if it has not after SECONDS (generous: a bound, not a guess of speed)
wait_until() {
	local limit_us=$(($1 * 1000000)) start now
	shift
	start=${EPOCHREALTIME/./}
	while :; do
		"$@" && return 0
		now=${EPOCHREALTIME/./}
		[ $((now - start)) -ge "$limit_us" ] && return 1
		sleep 0.1
	done
}

# agent_port ERRFILE PID: waits (60 s at most) until the agent PID, started
# with --listen 127.0.0.1:0 and its stderr in ERRFILE, says its port, or exits;
# sets $port to the port ("" if it never said)
agent_port() {
	port=""
	wait_until 60 lib_agent_port_or_gone "$1" "$2"
}
lib_agent_port_or_gone() {
	port=$(sed -n 's/.*listening on http:\/\/127.0.0.1:\([0-9]*\)\/metrics.*/\1/p' "$1")
	[ -n "$port" ] || ! kill -0 "$2" 2>/dev/null
}

# prometheus_start JOB TARGET_PORT [RULES_FILE]: a Prometheus (in the
# background, its data and log in $tmp) scraping 127.0.0.1:TARGET_PORT every
# second as job JOB; sets $prom_pid and $api (its HTTP API's base URL)
prometheus_start() {
	local pport rules=""
	pport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	[ -n "${3:-}" ] && rules=$(printf 'rule_files:\n  - %s' "$3")
	cat >"$tmp/prometheus.yml" <<EOC
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
$rules
scrape_configs:
  - job_name: $1
    static_configs:
      - targets: ["127.0.0.1:$2"]
EOC
	prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/data" \
		--web.listen-address="127.0.0.1:$pport" >"$tmp/prom.log" 2>&1 &
	prom_pid=$!
	api="http://127.0.0.1:$pport/api/v1"
}

# hold NAME: makes the file $tmp/NAME.hold and prints a shell command that
# runs until `release NAME` removes it (for sh -c or a job's --shell)
hold() {
	: >"$tmp/$1.hold"
	printf "while [ -e '%s' ]; do sleep 0.05; done" "$tmp/$1.hold"
}
release() { rm -f "$tmp/$1.hold"; }
