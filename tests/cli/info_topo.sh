#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# info_topo.sh - `gpuctl info` and `gpuctl topo` on every shipped simulated
# server (data/sim/*.json), compared with tests/cli/expected/, plus the error
# cases and their exit codes (docs/exit-codes.md).
#
# Run by CTest (GPUCTL = the binary). By hand:
#   GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/info_topo.sh
# Regenerate the expected files after an intended change (and review the diff):
#   UPDATE_EXPECTED=1 GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/info_topo.sh
#
# What changes between runs is normalised: timestamps and call durations, and
# the counters that grow with time (energy, NVLink bytes, throttle time). The
# simulator gets a fixed seed and a frozen model time (time_s=0): the same values
# however slow the machine.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
expected="$here/expected"

# Values that move between runs -> N; memory in bytes (a simulated process
# may leak a few KB/s) -> the nearest MiB.
normalise() {
	sed -E \
		-e 's/("(timestamp_ns|duration_ns|energy_mj|tx_bytes|rx_bytes|viol_[a-z_]+_ns)": )[0-9]+/\1N/' \
		-e 's/^( +Energy Since Driver Load +: )[0-9.]+ J/\1N J/' \
		-e 's/^( +(Power Cap|Thermal|Sync Boost|Board Limit|Low Utilization|Reliability) +: )[0-9.]+ s$/\1N s/' |
	awk '/"(mem_used_bytes|mem_free_bytes|used_mem_bytes)": [0-9]+/ {
		match($0, /[0-9]+/); v = substr($0, RSTART, RLENGTH)
		$0 = substr($0, 1, RSTART - 1) sprintf("%.0f MiB", v / 1048576) substr($0, RSTART + RLENGTH)
	} { print }'
}

# compare NAME ARGS...: run gpuctl ARGS, normalise, compare with expected/NAME.
compare() {
	local name="$1"; shift
	checks=$((checks + 1))
	if ! "$GPUCTL" "$@" >"$tmp/out" 2>"$tmp/err"; then
		fail "$name: gpuctl $* exited $? ($(head -c 300 "$tmp/err"))"
		return
	fi
	if [ -s "$tmp/err" ]; then
		fail "$name: gpuctl $* wrote to stderr: $(head -c 300 "$tmp/err")"
	fi
	normalise <"$tmp/out" >"$tmp/norm"
	if [ "${UPDATE_EXPECTED:-0}" = 1 ]; then
		mkdir -p "$expected"
		cp "$tmp/norm" "$expected/$name"
		return
	fi
	if [ ! -f "$expected/$name" ]; then
		fail "$name: no expected file (run with UPDATE_EXPECTED=1)"
		return
	fi
	if ! diff -u "$expected/$name" "$tmp/norm" >"$tmp/diff"; then
		fail "$name: output differs from expected/$name"
		head -40 "$tmp/diff"
	fi
}

# expect_error CODE MESSAGE ARGS...: gpuctl ARGS exits CODE, prints nothing on
# stdout and exactly the one line MESSAGE on stderr. A MESSAGE starting with
# '~' is a regular expression instead (for messages the simulator words: what
# matters here is the code and one line naming the file).
expect_error() {
	local code="$1" msg="$2"; shift 2
	checks=$((checks + 1))
	"$GPUCTL" "$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	[ "$rc" = "$code" ] || fail "gpuctl $*: exit $rc, expected $code"
	[ -s "$tmp/out" ] && fail "gpuctl $*: wrote to stdout on error"
	[ "$(wc -l <"$tmp/err")" = 1 ] || fail "gpuctl $*: stderr is not one line: $(cat "$tmp/err")"
	if [ "${msg#\~}" != "$msg" ]; then
		grep -Eq "${msg#\~}" "$tmp/err" || fail "gpuctl $*: stderr '$(cat "$tmp/err")' does not match '${msg#\~}'"
	else
		[ "$(cat "$tmp/err")" = "$msg" ] || fail "gpuctl $*: stderr '$(cat "$tmp/err")', expected '$msg'"
	fi
}

# ---- every shipped simulated server ----
servers=0
for f in "$GPUCTL_DATA_DIR"/sim/*.json; do
	s="$(basename "$f" .json)"
	servers=$((servers + 1))
	sim="--sim=$s,seed=1,time_s=0"
	compare "$s.info.txt" "$sim" info
	compare "$s.info-q.txt" "$sim" info -q
	compare "$s.info.json" "$sim" info --json
	compare "$s.topo.txt" "$sim" topo
	compare "$s.topo.json" "$sim" topo --json
done
[ "$servers" -ge 5 ] || fail "expected at least 5 simulated servers in $GPUCTL_DATA_DIR/sim, found $servers"

# ---- selection with -i: indexes, ranges, UUIDs, bus ids ----
compare "h200x8.info-i.txt" --sim=h200x8,seed=1,time_s=0 info -i 0-1,GPU-e156ceb2,00000000:DB:00.0
compare "h200x8.topo-i.txt" --sim=h200x8,seed=1,time_s=0 topo --id=0,4
compare "l40sx4.topo-i.json" --sim=l40sx4,seed=1,time_s=0 topo --json -i 2-3

# ---- faults: a GPU fallen off the bus, a hot GPU, an NVLink down ----
cat >"$tmp/faults.json" <<'EOF'
{"faults": [
  {"kind": "gpu_lost", "gpu": 3},
  {"kind": "thermal", "gpu": 0, "temp_c": 95},
  {"kind": "nvlink_down", "gpu": 1, "link": 3},
  {"kind": "pcie_degraded", "gpu": 2, "gen": 3, "width": 8}
]}
EOF
fsim="--sim=h200x8,seed=1,faults=$tmp/faults.json"
compare "h200x8-faults.info.txt" "$fsim" info
compare "h200x8-faults.info-q.txt" "$fsim" info -q -i 0-3
compare "h200x8-faults.info.json" "$fsim" info --json -i 0-3
compare "h200x8-faults.topo.txt" "$fsim" topo

# The JSON says SIMULATED, and -i picks exactly the GPUs named.
"$GPUCTL" --sim=h200x8,seed=1 info --json -i 2,5 >"$tmp/sel.json"
checks=$((checks + 1))
grep -q '^  "simulated": true,$' "$tmp/sel.json" || fail "info --json: no top-level \"simulated\": true"
[ "$(grep -c '^      "index": ' "$tmp/sel.json")" = 2 ] || fail "info --json -i 2,5: not 2 GPUs"
grep -q '^      "index": 5,$' "$tmp/sel.json" || fail "info --json -i 2,5: GPU 5 missing"

# ---- help ----
for c in info topo; do
	checks=$((checks + 1))
	"$GPUCTL" "$c" --help >"$tmp/help" 2>&1 || fail "gpuctl $c --help: exit $?"
	head -1 "$tmp/help" | grep -q "^usage: gpuctl $c" || fail "gpuctl $c --help: no usage line"
	grep -q "exit codes" "$tmp/help" || fail "gpuctl $c --help: exit codes not listed"
done

# ---- errors: one line, documented exit code ----
expect_error 64 "gpuctl: 'frobnicate' is not a gpuctl command; see 'gpuctl --help'" frobnicate
expect_error 64 "gpuctl info: unknown option '--bogus'; see 'gpuctl info --help'" --sim=h200x8 info --bogus
expect_error 64 "gpuctl topo: unknown option '-x'; see 'gpuctl topo --help'" --sim=h200x8 topo -x
expect_error 64 "gpuctl info: unexpected argument 'gpu0'; see 'gpuctl info --help'" --sim=h200x8 info gpu0
expect_error 64 "gpuctl info: -q and --json cannot be used together" --sim=h200x8 info -q --json
expect_error 64 "gpuctl info: option '-i' needs a value" --sim=h200x8 info -i
expect_error 64 "gpuctl info: GPU index 9 out of range (0-7)" --sim=h200x8 info -i 9
expect_error 64 "gpuctl topo: bad GPU range '3-1': start after end" --sim=h200x8 topo -i 3-1
expect_error 64 "gpuctl info: unknown GPU 'GPU-ffffffff'" --sim=h200x8 info -i GPU-ffffffff
expect_error 64 "gpuctl topo: no GPU at bus id '00000000:99:00.0'" --sim=h200x8 topo -i 00000000:99:00.0
expect_error 66 "~^gpuctl: .*'$tmp/missing.json'" --sim="$tmp/missing.json" info
expect_error 66 "~^gpuctl: .*'nosuchserver'" --sim=nosuchserver topo
printf '{ "name": "broken", ' >"$tmp/broken.json"
expect_error 65 "~^gpuctl: .*'$tmp/broken.json'" --sim="$tmp/broken.json" info

# Without --sim on a machine without the NVIDIA driver: 69 and one line.
if ! ldconfig -p 2>/dev/null | grep -q 'libnvidia-ml\.so\.1'; then
	for c in info topo; do
		expect_error 69 "gpuctl: cannot load libnvidia-ml.so.1: NVIDIA driver not found (use --sim NAME to run on a simulated server)" "$c"
	done
else
	echo "skip: this machine has libnvidia-ml.so.1, the no-driver case is not checked"
fi

if [ "${UPDATE_EXPECTED:-0}" = 1 ]; then
	echo "expected files written to $expected"
fi
echo "on $servers simulated servers"
finish
