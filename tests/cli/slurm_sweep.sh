#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# slurm_sweep.sh - `gpuctl slurm sweep --gather --drain` without Slurm, through
# a stand-in scontrol that records what it is asked (issue 38, items 2 and 3):
# node names from hostile result file names never reach scontrol; a mixed
# H200 + A100 fleet is compared model by model (its A100s are no outliers);
# the drain cap (10% of the nodes, at least 1; --max-drain N) and a GPU model's
# last node; drain reasons in words; /dev/zero and a symlink to it as inputs
# fail at once with one line. The results are made with `--run-node` on
# simulated servers, as each sweep job writes them.
# By hand: GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/slurm_sweep.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
unset SLURMD_NODENAME

mkdir -p "$tmp/bin"
cat >"$tmp/bin/scontrol" <<'SH'
#!/bin/sh
# stand-in: "show node N -o" says N is idle; every call is recorded
printf '%s\n' "$*" >>"$FAKE/calls"
case "$1" in
show) if [ -f "$FAKE/reason" ]; then # drained by someone else, for what $FAKE/reason says
	echo "NodeName=$3 Arch=x86_64 State=IDLE+DRAIN Partitions=gpu Reason=$(cat "$FAKE/reason") [ann@2026-12-08T00:00:00]"
else
	echo "NodeName=$3 Arch=x86_64 State=IDLE Partitions=gpu"
fi ;;
update) ;;
*) exit 2 ;;
esac
SH
chmod 755 "$tmp/bin/scontrol"
export FAKE="$tmp" PATH="$tmp/bin:$PATH"
calls() { cat "$tmp/calls" 2>/dev/null; }
updates() { grep '^update' "$tmp/calls" 2>/dev/null; }

# node SIM DIR NAME [FAULTS [WINDOW]]: one node's result, as its sweep job writes it
node() {
	local sim=$1
	[ -n "${4:-}" ] && sim="$1,faults=$tmp/$4"
	"$GPUCTL" --sim "$sim" slurm sweep --run-node --node "$3" --level bench-quick --window "${5:-0}" --out "$2" \
		>/dev/null 2>"$tmp/run.err" || fail "--run-node $3: $(cat "$tmp/run.err")"
}
echo '{"faults": [{"kind": "xid", "gpu": 1, "xid": 79}]}' >"$tmp/xid79.json"
echo '{"faults": [{"kind": "ecc_uncorrectable", "gpu": 2, "count": 1}]}' >"$tmp/ecc.json"

# ---- a mixed fleet: 8 H200 nodes and 2 A100 nodes, all healthy --------------------------------
for n in h01 h02 h03 h04 h05 h06 h07 h08; do node h200x8 "$tmp/mixed" $n; done
for n in a01 a02; do node a100x8 "$tmp/mixed" $n; done
: >"$tmp/calls"
expect_exit 0 "$GPUCTL" slurm sweep --gather --drain --out "$tmp/mixed"
out_has "^outliers: 0$"
out_has "allreduce_busbw_gbs *NVIDIA A100.* over 2$"
out_has "allreduce_busbw_gbs *NVIDIA H200.* over 8$"
[ -z "$(calls)" ] || fail "a healthy mixed fleet: scontrol was called: $(calls)"

# ---- hostile result file names: not nodes, never handed to scontrol ------------------------
node h200x8 "$tmp/hostile" h01
node h200x8 "$tmp/hostile" h02
node h200x8 "$tmp/hostile" h03 xid79.json 200ms
for name in 'gpu[01-64]' ALL all -x 'n5 State=RESUME' 'a,b'; do
	cp "$tmp/hostile/nodes/h03.json" "$tmp/hostile/nodes/$name.json"
done
: >"$tmp/calls"
expect_exit 2 "$GPUCTL" slurm sweep --gather --drain --out "$tmp/hostile"
for name in 'gpu\[01-64\]' ALL all -x 'n5 State=RESUME' 'a,b'; do
	err_has "ignored '.*/nodes/$name.json': not a node's name"
done
[ "$(updates)" = "update NodeName=h03 State=DRAIN Reason=gpuctl sweep: GPU 1 XID 79: GPU has fallen off the bus" ] ||
	fail "hostile names: scontrol was asked: $(calls)"
out_has "^drained h03: gpuctl sweep: GPU 1 XID 79: GPU has fallen off the bus$"
grep -v '^show node h03 -o$\|^update NodeName=h03 ' "$tmp/calls" | grep -q . && fail "scontrol calls beyond h03: $(calls)"
# and none at all of hostile names only
mkdir -p "$tmp/only/nodes"
cp "$tmp/hostile/nodes/h03.json" "$tmp/only/nodes/ALL.json"
: >"$tmp/calls"
expect_exit 66 "$GPUCTL" slurm sweep --gather --drain --out "$tmp/only"
err_has "no node result"
[ -z "$(calls)" ] || fail "ALL.json alone: scontrol was called: $(calls)"

# ---- the drain cap: 10 nodes, 2 of them failing: 1 drained unless --max-drain ---------------
mkdir -p "$tmp/cap/nodes"
cp "$tmp/mixed/nodes/"h0[1-8].json "$tmp/cap/nodes/"
node h200x8 "$tmp/cap" h09 xid79.json 200ms
node h200x8 "$tmp/cap" h10 ecc.json
: >"$tmp/calls"
expect_exit 2 "$GPUCTL" slurm sweep --gather --drain --out "$tmp/cap"
[ "$(updates | wc -l)" = 1 ] || fail "the default cap (1 of 10): $(updates)"
out_has "^drained h09: gpuctl sweep: GPU 1 XID 79: GPU has fallen off the bus$"
out_has "^not drained h10: the drain cap is reached (1 of 10 nodes; --max-drain N): gpuctl sweep: GPU 2 "
: >"$tmp/calls"
expect_exit 2 "$GPUCTL" slurm sweep --gather --drain --max-drain 2 --out "$tmp/cap"
[ "$(updates | sed 's/ State=.*//')" = "$(printf 'update NodeName=h09\nupdate NodeName=h10')" ] ||
	fail "--max-drain 2: $(updates)"
out_has "^drained h10: gpuctl sweep: GPU 2 uncorrectable"
expect_exit 64 "$GPUCTL" slurm sweep --gather --drain --max-drain 0 --out "$tmp/cap"

# ---- a GPU model's last node is never drained -------------------------------------------------
mkdir -p "$tmp/last/nodes"
cp "$tmp/mixed/nodes/"h0[1-8].json "$tmp/last/nodes/"
node a100x8 "$tmp/last" a09 ecc.json
: >"$tmp/calls"
expect_exit 2 "$GPUCTL" slurm sweep --gather --drain --max-drain 5 --out "$tmp/last"
out_has "^not drained a09: the last node of its GPU model in service: gpuctl sweep: GPU 2 "
[ -z "$(updates)" ] || fail "the last A100 node was drained: $(updates)"

# ---- text from result files and from scontrol never drives the terminal (issue 38) -----------
# a node drained by someone else, its reason with escapes and a line break
printf 'fan\033]0;pwned\007\033[2J\rbroken' >"$tmp/reason"
expect_exit 2 "$GPUCTL" slurm sweep --gather --drain --out "$tmp/cap"
rm -f "$tmp/reason"
out_has "^left h09 as it is: drained by someone else (fan?]0;pwned??\[2J?broken)$"
grep -q $'[\a\e\r]' <<<"$out" && fail "scontrol's reason reached the terminal raw: $(od -c <<<"$out" | head -5)"
# a fleet.json whose node name, GPU name and note hold escapes, compared with a clean one
jq '(.nodes[] | select(.node == "h01")) |= (.node += "\u001b]0;pwned\u0007\n\u001b[2J" | .note = "x\u009b2J\u001b[31m" |
	.gpus[0].name += "\u001b[5m")' "$tmp/cap/fleet.json" >"$tmp/evil.json" ||
	fail "cannot make a hostile fleet.json from $tmp/cap/fleet.json"
for pair in "$tmp/cap/fleet.json $tmp/evil.json" "$tmp/evil.json $tmp/cap/fleet.json"; do
	# shellcheck disable=SC2086
	expect_exit 0 "$GPUCTL" slurm sweep --compare $pair
	grep -q $'[\a\e]\|\xc2\x9b' <<<"$out" && fail "--compare $pair: escapes reached the terminal: $(od -c <<<"$out" | head -5)"
done
expect_exit 0 "$GPUCTL" slurm sweep --compare "$tmp/cap/fleet.json" "$tmp/evil.json"
out_has "h01?]0;pwned???\[2J"

# ---- unbounded inputs: /dev/zero, and a symlink to it among the results -----------------------
expect_exit 66 timeout 60 "$GPUCTL" slurm sweep --compare /dev/zero /dev/zero
[ "$(wc -l <<<"$err")" = 1 ] && err_has "'/dev/zero' is not a regular file" || fail "--compare /dev/zero: $err"
mkfifo "$tmp/fifo"
expect_exit 66 timeout 60 "$GPUCTL" slurm sweep --compare "$tmp/fifo" "$tmp/fifo"
err_has "is not a regular file"
ln -s /dev/zero "$tmp/mixed/nodes/z01.json"
: >"$tmp/calls"
expect_exit 1 timeout 60 "$GPUCTL" slurm sweep --gather --drain --out "$tmp/mixed"
err_has "node 'z01': '.*/nodes/z01.json' is not a regular file"
out_has "z01: not swept failed: its result cannot be read"
[ -z "$(calls)" ] || fail "a result that cannot be read: scontrol was called: $(calls)"
rm "$tmp/mixed/nodes/z01.json"
# other file options and operands given /dev/zero: one line, no hang, no growth
for cmd in "--sim /dev/zero info" "--sim h200x8,faults=/dev/zero info" "--sim h200x8 health --rules /dev/zero" \
	"plan cost --prices /dev/zero --gpu h100 --hours 1" "agent --config /dev/zero --once" "report --results /dev/zero"; do
	# shellcheck disable=SC2086
	out="$(timeout 60 "$GPUCTL" $cmd 2>&1)"
	rc=$?
	checks=$((checks + 1))
	case $rc in 64 | 65 | 66) ;; *) fail "'gpuctl $cmd' exited $rc: $out" ;; esac
	grep -q "/dev/zero' is not a regular file" <<<"$out" || fail "'gpuctl $cmd': $out"
done
finish
