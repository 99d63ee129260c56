#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# health_sim.sh - `gpuctl health` on the simulator: every fault kind the
# simulator can inject on an H200 server yields the right rule, verdict and
# action (and exit code); every shipped simulated server, healthy, passes;
# --json, -i, --window 0 and the usage errors (docs/health.md).
#
# Run by CTest (GPUCTL = the binary). By hand:
#   GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/health_sim.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
need jq
unset CUDA_VISIBLE_DEVICES

# Most runs here wait out a window (0.2 s to 1 s) doing next to nothing, so they
# run side by side, at most 5 at a time: bg NAME ARGS... starts gpuctl ARGS with
# stdout in $tmp/NAME.out, stderr in $tmp/NAME.err and its exit status in
# $tmp/NAME.rc; each section waits for all (wait) and then checks the files.
bg() {
	local name=$1
	shift
	while [ "$(jobs -pr | wc -l)" -ge 5 ]; do wait -n; done
	{ "$GPUCTL" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"; echo $? >"$tmp/$name.rc"; } &
}
rc_of() { cat "$tmp/$1.rc" 2>/dev/null || echo none; }

# run_fault NAME FAULT_JSON GPU RULE VERDICT ACTION EXIT [extra health args...]
# Injects one fault through a fault file and starts health on it; check_fault
# NAME GPU RULE VERDICT ACTION EXIT (after wait) checks GPU's finding for RULE.
fault_cases=()
run_fault() {
	local name=$1 fault=$2
	fault_cases+=("$1 $3 $4 $5 $6 $7")
	shift 7
	printf '{"faults": [%s]}\n' "$fault" > "$tmp/$name.json"
	# a short window keeps the test quick; cases that need time pass --window 1
	bg "$name" --sim "h200x8,seed=7,hang_ms=200,faults=$tmp/$name.json" health --json --window 0.4 "$@"
}
check_fault() {
	local name=$1 gpu=$2 rule=$3 verdict=$4 action=$5 want_rc=$6
	checks=$((checks + 1))
	local out="$tmp/$name.out" rc
	rc=$(rc_of "$name")
	if [ "$rc" != "$want_rc" ]; then
		fail "$name: exit $rc, want $want_rc ($(head -c 300 "$tmp/$name.err"))"
		return
	fi
	# one jq for the four facts, a line each: GPU's finding for RULE ("VERDICT
	# ACTION", the last of them sorted), the other GPUs' verdicts, "simulated",
	# whether the finding's evidence (the counter values) is there
	local got others sim evidence
	{ read -r got; read -r others; read -r sim; read -r evidence; } < <(jq -r --argjson g "$gpu" --arg r "$rule" '
		[.gpus[] | select(.index == $g) | .findings[] | select(.rule == $r)] as $f
		| ($f | map("\(.verdict) \(.action)") | unique | last // ""),
		  ([.gpus[] | select(.index != $g) | .verdict] | unique | join(",")),
		  .simulated,
		  ($f | map(.evidence | length > 0) | last // false)' "$out")
	[ "$got" = "$verdict $action" ] || fail "$name: GPU $gpu rule $rule: got '$got', want '$verdict $action'"
	# the other GPUs stay healthy
	[ "$others" = "PASS" ] || fail "$name: other GPUs are '$others', want PASS"
	[ "$sim" = "true" ] || fail "$name: JSON lacks \"simulated\": true"
	# evidence carries the counter values
	[ "$evidence" = true ] || fail "$name: no evidence"
}

# --- one case per fault kind (retired_pages needs a Volta/Turing GPU: unit-tested) ---
run_fault ecc_uncorrectable '{"kind": "ecc_uncorrectable", "gpu": 2, "count": 3}' 2 ecc-volatile-uncorrectable FAIL reset_gpu 2
# (errors that keep arriving: a window sees their rate however late it starts)
run_fault ecc_corrected '{"kind": "ecc_corrected", "gpu": 1, "rate_per_s": 500}' 1 ecc-correctable-rate WARN none 1
run_fault xid48 '{"kind": "xid", "gpu": 5, "xid": 48}' 5 xid-catalog FAIL reset_gpu 2
run_fault xid13 '{"kind": "xid", "gpu": 4, "xid": 13}' 4 xid-catalog WARN none 1
run_fault thermal '{"kind": "thermal", "gpu": 0}' 0 thermal-slowdown-active WARN drain 1
run_fault thermal_growing '{"kind": "thermal", "gpu": 0}' 0 thermal-violation-growing WARN none 1
run_fault thermal_temp '{"kind": "thermal", "gpu": 0}' 0 temperature-over-slowdown WARN drain 1
run_fault power '{"kind": "power", "gpu": 6}' 6 power-violation-growing WARN none 1
run_fault pcie_gen '{"kind": "pcie_degraded", "gpu": 3, "gen": 4}' 3 pcie-gen-below-max WARN drain 1
run_fault pcie_width '{"kind": "pcie_degraded", "gpu": 3, "gen": 5, "width": 8}' 3 pcie-width-below-max WARN drain 1
run_fault nvlink_down '{"kind": "nvlink_down", "gpu": 0, "link": 3}' 0 nvlink-down FAIL reset_gpu 2
run_fault nvlink_crc '{"kind": "nvlink_errors", "gpu": 7, "link": 2, "rate_per_s": 400}' 7 nvlink-crc-rate-fail FAIL reset_gpu 2
run_fault nvlink_replay '{"kind": "nvlink_errors", "gpu": 7, "link": 2, "rate_per_s": 400}' 7 nvlink-replay-growing FAIL reset_gpu 2
run_fault gpu_lost '{"kind": "gpu_lost", "gpu": 4}' 4 gpu-lost FAIL reboot 2
run_fault gpu_lost_xid79 '{"kind": "gpu_lost", "gpu": 4}' 4 xid-catalog FAIL reboot 2
run_fault remap_pending '{"kind": "remap_pending", "gpu": 1}' 1 row-remap-pending WARN reset_gpu 1
run_fault remap_failure '{"kind": "remap_failure", "gpu": 1}' 1 row-remap-failure FAIL replace_board 2
run_fault persistence_off '{"kind": "persistence_off", "gpu": 2}' 2 persistence-off WARN none 1
run_fault foreign_process '{"kind": "foreign_process", "gpu": 7, "pid": 66666, "name": "miner"}' 7 foreign-compute-process FAIL drain 2 --allow-uid 1001,1002
run_fault hang '{"kind": "hang", "gpu": 5}' 5 gpu-lost FAIL reboot 2

# --- system-wide: fabric manager stopped, NVML/driver mismatch (server files) ---
jq '.fabric_manager = "stopped"' "$GPUCTL_DATA_DIR/sim/h200x8.json" > "$tmp/srv_fm.json"
jq '.nvml_version = "13.575.57.08"' "$GPUCTL_DATA_DIR/sim/h200x8.json" > "$tmp/srv_mismatch.json"
for case in fm mismatch; do
	bg "$case" --sim "$tmp/srv_$case.json" health --json
done

# --- every shipped simulated server, healthy: PASS everywhere ---------------
# (rtx4090x2 describes a workstation with persistence mode off: that one WARN is expected;
# h200-workloads has a job holding GPU 2 idle, h200x8 jobs on GPUs 4 and 5 that start idle:
# allocated-gpu-idle notes there, PASS)
for srv in "$GPUCTL_DATA_DIR"/sim/*.json; do
	name=$(basename "$srv" .json)
	bg "ok_$name" --sim "$name" health --json --window 0.5
	bg "t_$name" --sim "$name" health --window 0.2
done

# --- selection: a fault on GPU 1, -i 0,2 and -i 1
printf '{"faults": [{"kind": "remap_failure", "gpu": 1}]}\n' > "$tmp/sel.json"
bg sel --sim "h200x8,faults=$tmp/sel.json" health -i 0,2 --json
bg sel1 --sim "h200x8,faults=$tmp/sel.json" health -i 1

# --- every run above has ended: their checks
wait
for c in "${fault_cases[@]}"; do
	# shellcheck disable=SC2086 # six words, none with a space
	check_fault $c
done
# a --json run writes nothing on stderr (the JSON says "simulated"); the
# table's run had stderr and stdout in one file
for f in fm mismatch sel; do
	[ ! -s "$tmp/$f.err" ] || fail "$f: --json wrote on stderr: $(head -c 300 "$tmp/$f.err")"
done
cat "$tmp/sel1.err" >>"$tmp/sel1.out"

for case in fm mismatch; do
	checks=$((checks + 1))
	if [ $case = fm ]; then
		rule=fabric-manager-missing; action=none
	else
		rule=driver-library-mismatch; action=reboot
	fi
	rc=$(rc_of "$case")
	[ "$rc" = 1 ] || fail "$case: exit $rc, want 1"
	got=$(jq -r --arg r "$rule" '.system.findings[] | select(.rule == $r) | "\(.verdict) \(.action)"' "$tmp/$case.out")
	[ "$got" = "WARN $action" ] || fail "$case: system finding '$got', want 'WARN $action'"
	eff=$(jq -r '[.gpus[].effective_verdict] | unique | join(",")' "$tmp/$case.out")
	[ "$eff" = "WARN" ] || fail "$case: every GPU's effective verdict should be WARN, got '$eff'"
done

for srv in "$GPUCTL_DATA_DIR"/sim/*.json; do
	name=$(basename "$srv" .json)
	checks=$((checks + 1))
	rc=$(rc_of "ok_$name")
	# the findings' rules and the GPUs' subsystems' verdicts, a line each
	{ read -r rules; read -r subs; } < <(jq -r '([.system.findings[].rule, .gpus[].findings[].rule] | unique | join(",")),
		([.gpus[].subsystems[]] | unique | join(","))' "$tmp/ok_$name.out")
	want_rules="" want_rc=0
	[ "$name" = rtx4090x2 ] && want_rules="persistence-off" && want_rc=1
	case "$name" in h200-workloads | h200x8) want_rules="allocated-gpu-idle" ;; esac
	[ "$rc" = "$want_rc" ] || fail "healthy $name: exit $rc, want $want_rc: $(head -c 300 "$tmp/ok_$name.err")"
	[ "$rules" = "$want_rules" ] || fail "healthy $name: findings '$rules', want '$want_rules'"
	if [ "$name" = h200-workloads ]; then # the idle job's GPU only, not the busy ones
		[ "$(jq -c '[.gpus[] | select(.findings | length > 0) | .index]' "$tmp/ok_$name.out")" = "[2]" ] ||
			fail "h200-workloads: allocated-gpu-idle on GPUs other than 2 (the idle-allocated one)"
	fi
	if [ "$name" != rtx4090x2 ]; then
		case "$subs" in *WARN*|*FAIL*) fail "healthy $name: subsystems '$subs'";; esac
	fi
	# the table says SIMULATED and ends with the verdict (stderr and stdout in one file)
	cat "$tmp/t_$name.err" >>"$tmp/t_$name.out"
	grep -q SIMULATED "$tmp/t_$name.out" || fail "healthy $name: table lacks SIMULATED"
	grep -Eq '^health: (PASS|WARN)' "$tmp/t_$name.out" || fail "healthy $name: no verdict line"
done

# --- selection, single snapshot, the table, usage errors ----------------------
checks=$((checks + 1))
rc=$(rc_of sel)
[ "$rc" = 0 ] || fail "-i 0,2 with a fault on GPU 1: exit $rc, want 0"
[ "$(jq -r '[.gpus[].index] | join(",")' "$tmp/sel.out")" = "0,2" ] || fail "-i 0,2 lists other GPUs"
rc=$(rc_of sel1)
[ "$rc" = 2 ] || fail "-i 1 with remap failure: exit $rc, want 2"
grep -q 'row-remap-failure' "$tmp/sel1.out" || fail "table lacks the rule id"
grep -q 'action:   replace the board' "$tmp/sel1.out" || fail "table lacks the action"
grep -q 'evidence: remap_failure = 1' "$tmp/sel1.out" || fail "table lacks the evidence"

checks=$((checks + 1))
"$GPUCTL" --sim h200x8 health --window 0 --json > "$tmp/w0.out" 2>&1
[ "$(jq -r .window_s "$tmp/w0.out")" = null ] || fail "--window 0 should have no window"
[ "$(jq -r .xid_events_watched "$tmp/w0.out")" = false ] || fail "--window 0 watched events"
[ "$(jq -r '.gpus[0].subsystems.xid' "$tmp/w0.out")" = "N/A" ] || fail "--window 0: XID must be N/A, not PASS"

# --need-cuda: the simulated driver supports CUDA 13.0
checks=$((checks + 1))
"$GPUCTL" --sim h200x8 health --window 0 --need-cuda 13.1 --json > "$tmp/cuda.out" 2>&1
rc=$?
[ $rc = 1 ] || fail "--need-cuda 13.1: exit $rc, want 1"
[ "$(jq -r '.system.findings[0].rule' "$tmp/cuda.out")" = cuda-too-old ] || fail "--need-cuda 13.1: no cuda-too-old finding"
"$GPUCTL" --sim h200x8 health --window 0 --need-cuda 12.4 > /dev/null 2>&1 || fail "--need-cuda 12.4 should pass"

checks=$((checks + 1))
for bad in "--need-cuda x" "--need-cuda 13.0.1" "--window -1" "--window x" "-i 9" "--allow-uid abc" "--bogus" "extra"; do
	# shellcheck disable=SC2086
	"$GPUCTL" --sim h200x8 health $bad > "$tmp/bad.out" 2> "$tmp/bad.err"
	rc=$?
	[ $rc = 64 ] || fail "health $bad: exit $rc, want 64"
	[ "$(wc -l < "$tmp/bad.err")" = 1 ] || fail "health $bad: want one line of error, got: $(cat "$tmp/bad.err")"
	grep -q '^gpuctl health: ' "$tmp/bad.err" || fail "health $bad: error not prefixed: $(cat "$tmp/bad.err")"
done
echo '{"version": 1, "rules": [{"id": "x"}]}' > "$tmp/badrules.json"
"$GPUCTL" --sim h200x8 health --rules "$tmp/badrules.json" > /dev/null 2> "$tmp/bad.err"
rc=$?
[ $rc = 65 ] || fail "bad rules file: exit $rc, want 65"
"$GPUCTL" --sim h200x8 health --rules "$tmp/nonexistent.json" > /dev/null 2>&1
rc=$?
[ $rc = 66 ] || fail "missing rules file: exit $rc, want 66"
"$GPUCTL" health --help > "$tmp/help.out" 2>&1 || fail "health --help failed"
grep -q '69 could not check' "$tmp/help.out" || fail "help lacks the exit codes"

# docs/health.md lists every shipped rule and every XID of the catalog
checks=$((checks + 1))
doc="${GPUCTL_SRC_DIR:-$here/../..}/docs/health.md"
for id in $(jq -r '.rules[].id' "$GPUCTL_DATA_DIR/health/rules.json"); do
	grep -q "| \`$id\` |" "$doc" || fail "docs/health.md lacks rule '$id'"
done
for code in $(jq -r '.xids[].code' "$GPUCTL_DATA_DIR/health/xid.json"); do
	grep -Eq "^\| $code \|" "$doc" || fail "docs/health.md lacks XID $code"
done

finish
