#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# input_errors.sh - bad input is refused with the right exit code and a
# message that names the right thing (issue 20, item 11): a --rules file's
# own name, a gres.conf node name that would break the file, plan's numbers
# (hex, fractions, past 1e9, inf shown as n/a like --json's null), --prices
# where it is not read, a GPU's numa_node the server file does not list, one
# range message for --sim gpus=, an unterminated quote in the agent's
# configuration, a UUID prefix too short to use.
#
# Run by CTest (GPUCTL = the binary). By hand:
#   GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/input_errors.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
need jq

# expect CODE PATTERN DESCRIPTION ARGS...: exit CODE and stderr matching PATTERN (grep -E)
expect() {
	local code="$1" pat="$2" what="$3"; shift 3
	checks=$((checks + 1))
	"$GPUCTL" "$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	if [ "$rc" -ne "$code" ]; then
		fail "$what: exit $rc, want $code ($(head -c 200 "$tmp/err"))"
	elif ! grep -qE -- "$pat" "$tmp/err"; then
		fail "$what: stderr '$(head -c 200 "$tmp/err")' does not match '$pat'"
	fi
}

# health --rules FILE: the error names FILE, not the shipped rules.json
head -c 300 "$GPUCTL_DATA_DIR/health/rules.json" >"$tmp/trunc.json"
expect 65 "^gpuctl health: $tmp/trunc.json: line [0-9]+: " "truncated --rules file" \
	--sim h200x8 health --rules "$tmp/trunc.json"
jq '.rules[0].op = "~"' "$GPUCTL_DATA_DIR/health/rules.json" >"$tmp/badop.json"
expect 65 "^gpuctl health: $tmp/badop.json: rule '" "bad rule in a --rules file" \
	--sim h200x8 health --rules "$tmp/badop.json"

# slurm gres-conf --node: validated as --type is (nothing that ends key=value)
expect 64 "bad node name 'a b'" "node name with a space" --sim h200x8 slurm gres-conf --node 'a b'
expect 64 "bad node name" "node name with a newline" --sim h200x8 slurm gres-conf --node $'n1\nNodeName=evil'
expect 64 "bad node name" "node name with '='" --sim h200x8 slurm gres-conf --node 'n1=x'
checks=$((checks + 1))
"$GPUCTL" --sim h200x8 slurm gres-conf --node 'gpu[01-02]' >"$tmp/gres" 2>&1 || fail "a host list is a good node name"

# plan: numbers are decimal and within their option's range, counts whole
expect 64 "option '--gpus': '1e30' is not a number from 0 to 1M" "plan cost --gpus 1e30" \
	plan cost --instance p4d.24xlarge --hours 12 --gpus 1e30
expect 64 "--gpus must be a whole number" "plan cost --gpus 1.5" plan cost --instance p4d.24xlarge --hours 12 --gpus 1.5
expect 64 "--instances must be a whole number" "plan cost --instances 2.5" \
	plan cost --instance p4d.24xlarge --hours 12 --instances 2.5
expect 64 "option '--micro-batch': '0x10' is not a number from 0 to 1M" "plan train --micro-batch 0x10" \
	plan train --params 7B --micro-batch 0x10
expect 64 "option '--hours': 'inf' is not a number from 0 to 1M" "plan cost --hours inf" \
	plan cost --instance p4d.24xlarge --hours inf
# a cost past what a double holds cannot be asked for (it printed n/a, which means no such price)
expect 64 "option '--hours': '1e308' is not a number from 0 to 1M" "plan cost --hours 1e308" \
	plan cost --instance p4d.24xlarge --hours 1e308 --instances 1000
# --prices: an error where it is read, a usage error where it is not
expect 64 "'--prices' goes with plan train and plan cost" "plan mig --prices" \
	plan mig --gpu 'H200 SXM' --request 1x1g.18gb --prices /nonexistent
expect 66 "cannot open '/nonexistent'" "plan cost --prices missing" \
	plan cost --instance p4d.24xlarge --hours 1 --prices /nonexistent
expect 66 "cannot open '/nonexistent'" "plan train --prices missing (no --tokens)" \
	plan train --params 7B --prices /nonexistent

# a server file: a GPU's numa_node must be one of numa_nodes
jq 'del(.numa_nodes) | .gpus[0].numa_node = 5' "$GPUCTL_DATA_DIR/sim/h200x8.json" >"$tmp/nonuma.json"
expect 65 "gpus\[0\]\.numa_node: node 5 is not in numa_nodes \(the file has none\)" "numa_node without numa_nodes" \
	--sim "$tmp/nonuma.json" info
jq '.gpus[3].numa_node = 7' "$GPUCTL_DATA_DIR/sim/h200x8.json" >"$tmp/badnuma.json"
expect 65 "gpus\[3\]\.numa_node.*node 7" "numa_node not among numa_nodes" --sim "$tmp/badnuma.json" info
# shipped servers still load
for s in "$GPUCTL_DATA_DIR"/sim/*.json; do
	checks=$((checks + 1))
	"$GPUCTL" --sim "$s" info -q >/dev/null 2>"$tmp/err" || fail "$(basename "$s") does not load: $(cat "$tmp/err")"
done

# --sim gpus=: one range, one message
expect 64 "sim option 'gpus': '0' is not a whole number from 1 to 64" "gpus=0" --sim h200x8,gpus=0 info -q
expect 64 "sim option 'gpus': '65' is not a whole number from 1 to 64" "gpus=65" --sim h200x8,gpus=65 info -q

# agent configuration: a quote at one end only is an error, not part of the value
printf 'label.rack = "r 12\n' >"$tmp/q1.conf"
expect 65 "q1.conf:1: unterminated quote in the value of 'label.rack'" "unterminated quote" \
	--sim h200x8 agent --once --config "$tmp/q1.conf"
printf 'hostname = node7"\n' >"$tmp/q2.conf"
expect 65 "q2.conf:1: unterminated quote" "closing quote only" --sim h200x8 agent --once --config "$tmp/q2.conf"
printf 'label.rack = " r 12 "\n' >"$tmp/q3.conf"
checks=$((checks + 1))
"$GPUCTL" --sim h200x8 agent --once --config "$tmp/q3.conf" 2>"$tmp/err" | grep -q 'rack=" r 12 "' ||
	fail "a quoted value keeps its spaces ($(head -c 200 "$tmp/err"))"

# -i with a UUID prefix: too short is said as such (h200x8's GPU 0 is GPU-f768064f-...)
expect 64 "GPU UUID prefix 'GPU-f768' too short \(at least 8 hex digits after 'GPU-'\)" "short UUID prefix" \
	--sim h200x8 info -i GPU-f768
expect 64 "unknown GPU 'GPU-0000'" "short prefix of no GPU" --sim h200x8 info -i GPU-0000
checks=$((checks + 1))
"$GPUCTL" --sim h200x8 info -q -i GPU-f768064f >/dev/null 2>&1 || fail "an 8-digit prefix selects"
finish
