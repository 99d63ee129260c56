#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# diag_sim.sh - `gpuctl diag` on the simulator: level 1 runs in full (health,
# software and environment checks) on every shipped server; levels 2-4 stop
# with one line and exit 69 (they need real GPUs: never invented numbers);
# a fault makes level 1 fail; environment problems are found (docs/diag.md).
#
# Run by CTest (GPUCTL = the binary). By hand:
#   GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/diag_sim.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
need jq
unset CUDA_VISIBLE_DEVICES CUDA_DEVICE_ORDER CUDA_LAUNCH_BLOCKING NCCL_P2P_DISABLE NCCL_SHM_DISABLE

verdict_of() { # FILE TEST GPU -> verdict of that result
	jq -r --arg t "$2" --argjson g "$3" '.tests[] | select(.test == $t and .gpu == $g) | .verdict' "$1"
}

for srv in "$GPUCTL_DATA_DIR"/sim/*.json; do
	name=$(basename "$srv" .json)
	checks=$((checks + 1))
	"$GPUCTL" --sim "$name" diag -r 1 --json > "$tmp/$name.out" 2> "$tmp/$name.err"
	rc=$?
	# a busy simulated server warns about its running processes; nothing fails
	case $rc in 0|1) ;; *) fail "diag -r 1 on $name: exit $rc: $(head -c 300 "$tmp/$name.err")";; esac
	# the result's facts, a line each, from one jq (not one per fact and GPU):
	# simulated, level, the driver, CUDA context and CUDA_VISIBLE_DEVICES
	# verdicts, the GPUs, the persistence checks, the failed checks, and each
	# GPU's compute_processes verdict ("-" for none); verdicts of one test and
	# GPU are joined with ","
	{ read -r sim; read -r level; read -r driver; read -r context; read -r cvd; read -r n; read -r np; read -r fails_json
	  read -r -a cp_verdicts; } < <(jq -r '
		def verdicts($t; $g): [.tests[] | select(.test == $t and .gpu == $g) | .verdict] | join(",");
		.simulated, .level, verdicts("driver"; null), verdicts("cuda_context"; null), verdicts("cuda_visible_devices"; null),
		(.health.gpus | length), ([.tests[] | select(.test == "persistence")] | length),
		([.tests[] | select(.verdict == "FAIL")] | length),
		([range(.health.gpus | length) as $g | verdicts("compute_processes"; $g) | if . == "" then "-" else . end] | join(" "))' \
		"$tmp/$name.out")
	[ "$sim" = true ] || fail "$name: not marked simulated"
	[ "$level" = 1 ] || fail "$name: level"
	[ "$driver" = PASS ] || fail "$name: driver check"
	[ "$context" = N/A ] || fail "$name: CUDA context must be N/A on a simulator"
	[ "$cvd" = PASS ] || fail "$name: CUDA_VISIBLE_DEVICES unset should pass"
	[ "$n" = "$np" ] || fail "$name: a persistence check per GPU ($np of $n)"
	[ "$fails_json" = 0 ] || fail "$name: $fails_json failed checks on a healthy server"
	# processes running -> WARN, none -> PASS, per GPU, from the simulated server's own process list
	read -r -a server_procs < <(jq -r '[.gpus[] | [.processes // [] | .[] | select((.type // "C") == "C")] | length] | join(" ")' "$srv")
	for ((g = 0; g < ${n:-0}; g++)); do
		procs=${server_procs[g]:-0}
		want=PASS; [ "$procs" -gt 0 ] && want=WARN
		got=${cp_verdicts[g]:--}
		[ "$got" = "$want" ] || fail "$name GPU $g: compute_processes $got, want $want ($procs processes)"
	done
	# levels 2-4: one line, exit 69, nothing on stdout
	for level in 2 3 4; do
		"$GPUCTL" --sim "$name" diag -r $level > "$tmp/l.out" 2> "$tmp/l.err"
		rc=$?
		[ $rc = 69 ] || fail "diag -r $level on $name: exit $rc, want 69"
		[ ! -s "$tmp/l.out" ] || fail "diag -r $level on $name printed results on a simulator"
		# (stderr's lines and words in bash: no wc or grep per run)
		IFS= read -rd '' err <"$tmp/l.err"
		newlines=${err//[!$'\n']/}
		[ "${#newlines}" = 1 ] || fail "diag -r $level on $name: want one line, got $err"
		[[ "$err" == *needs* || "$err" == *"real GPUs"* ]] || fail "diag -r $level: message '$err'"
	done
done

# a fault found by level 1's health part
checks=$((checks + 1))
printf '{"faults": [{"kind": "ecc_uncorrectable", "gpu": 3, "count": 1}]}\n' > "$tmp/f.json"
"$GPUCTL" --sim "h200x8,faults=$tmp/f.json" diag -r 1 > "$tmp/f.out" 2>&1
rc=$?
[ $rc = 2 ] || fail "diag -r 1 with an uncorrectable ECC error: exit $rc, want 2"
grep -q 'ecc-volatile-uncorrectable' "$tmp/f.out" || fail "diag table lacks the health finding"
grep -q '^diag level 1: FAIL' "$tmp/f.out" || fail "diag: no final verdict line"
grep -q SIMULATED "$tmp/f.out" || fail "diag table lacks SIMULATED"

# environment problems
checks=$((checks + 1))
CUDA_VISIBLE_DEVICES=0,9 CUDA_LAUNCH_BLOCKING=1 NCCL_P2P_DISABLE=1 \
	"$GPUCTL" --sim l40sx4 diag -r 1 -i 1 --json > "$tmp/env.out" 2>&1
rc=$?
[ $rc = 1 ] || fail "env problems: exit $rc, want 1"
[ "$(verdict_of "$tmp/env.out" cuda_visible_devices null)" = WARN ] || fail "CUDA_VISIBLE_DEVICES=0,9 on 4 GPUs must warn"
jq -r '.tests[] | select(.test == "cuda_visible_devices") | .detail' "$tmp/env.out" | grep -q "'9' names no GPU" ||
	fail "CUDA_VISIBLE_DEVICES detail"
[ "$(verdict_of "$tmp/env.out" cuda_launch_blocking null)" = WARN ] || fail "CUDA_LAUNCH_BLOCKING=1 must warn"
[ "$(verdict_of "$tmp/env.out" nccl_p2p_disable null)" != "" ] || fail "NCCL_P2P_DISABLE=1 not reported"
[ "$(jq '[.tests[] | select(.gpu == 0)] | length' "$tmp/env.out")" = 0 ] || fail "-i 1 reported GPU 0"

# usage errors
checks=$((checks + 1))
for bad in "-r 5" "-r x" "--variation 0" "--timeout-scale -1" "--nope"; do
	# shellcheck disable=SC2086
	"$GPUCTL" --sim h200x8 diag $bad > /dev/null 2> "$tmp/bad.err"
	rc=$?
	[ $rc = 64 ] || fail "diag $bad: exit $rc, want 64"
	grep -q '^gpuctl diag: ' "$tmp/bad.err" || fail "diag $bad: message '$(cat "$tmp/bad.err")'"
done

finish
