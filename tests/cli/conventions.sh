#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# conventions.sh - docs/conventions.md, checked: every command's and
# subcommand's --help, and the text output of the commands on a simulated
# server, for the banned forms: e-notation in text ("1e+09 tokens"), "1 GPUs",
# a degree sign, a short flag letter whose long names are not its row in the
# doc's flag table, and simulated text output that does not start with the
# SIMULATED banner. The commands are taken from `gpuctl --help` and the
# subcommands from each command's usage lines, so a new one is walked too.
#
# Run by CTest (GPUCTL = the binary). By hand:
#   GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/conventions.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
need python3

# banned TEXT-FILE WHAT: e-notation, "1 GPUs", a degree sign
banned() {
	checks=$((checks + 1))
	local bad
	bad=$(grep -nE '[0-9]e[+-][0-9]|(^|[^0-9.])1 GPUs\b|°' "$1" | head -3)
	[ -z "$bad" ] || fail "$2: banned form: $bad"
}

# --- every command and subcommand's help
commands=$("$GPUCTL" --help | awk '/^commands:/{c=1;next} c && /^  [a-z]/{print $1} c && /^$/{exit}')
checks=$((checks + 1))
[ "$(wc -w <<<"$commands")" -ge 15 ] || fail "found only these commands in gpuctl --help: $commands"
: >"$tmp/flags"
for c in $commands; do
	"$GPUCTL" "$c" --help >"$tmp/help" 2>&1 || fail "$c --help exited $?"
	subs=$(grep -oE "^(usage:|      ) *gpuctl $c [a-z][a-z-]+" "$tmp/help" | awk '{print $NF}' | sort -u)
	for s in "" $subs; do
		# shellcheck disable=SC2086
		"$GPUCTL" $c $s --help >"$tmp/h" 2>&1 || fail "$c $s --help exited $?"
		banned "$tmp/h" "$c $s --help"
		# "-x, --long" or "-x ARG" without a long name
		grep -oE '^  -[a-zA-Z](, --[a-z0-9-]+| )' "$tmp/h" | sed "s|\$| $c${s:+ $s}|" >>"$tmp/flags"
	done
done
checks=$((checks + 1))
[ -s "$tmp/flags" ] || fail "no short flags found in any --help"

# --- the flag table of docs/conventions.md: each letter, its long names
python3 - "$src/docs/conventions.md" "$tmp/flags" >"$tmp/flagcheck" <<'PY'
import re, sys
table = {}
for line in open(sys.argv[1], encoding="utf-8"):
    m = re.match(r"\| `-([a-zA-Z])` \|.*\| (.*) \|$", line.strip())
    if m:
        table[m.group(1)] = set(re.findall(r"`(--[a-z0-9-]+)`", m.group(2))) | ({"(none)"} if "(none)" in m.group(2) else set())
seen = {}
for line in open(sys.argv[2]):
    m = re.match(r"  -([a-zA-Z])(?:, (--[a-z0-9-]+))? +(.*)$", line.rstrip("\n"))
    if not m:
        continue
    letter, long, cmd = m.group(1), m.group(2) or "(none)", m.group(3)
    seen.setdefault(letter, {}).setdefault(long, set()).add(cmd)
for letter, longs in sorted(seen.items()):
    if letter not in table:
        print(f"-{letter} is not in the flag table of docs/conventions.md (used as {', '.join(sorted(longs))})")
        continue
    for long, cmds in sorted(longs.items()):
        if long not in table[letter]:
            print(f"-{letter} means {long} in {', '.join(sorted(cmds))}; the table gives it {', '.join(sorted(table[letter]))}")
PY
checks=$((checks + 1))
[ -s "$tmp/flagcheck" ] && fail "flag letters: $(cat "$tmp/flagcheck")"

# --- text output on a simulated server: no banned form, the banner first
mkdir -p "$tmp/dev"
for i in 0 1 2 3 4 5 6 7; do : >"$tmp/dev/nvidia$i"; done
n=0
run() { # run ARGS...: gpuctl --sim h200x8 ARGS, exit 0..2 wanted; stdout+stderr checked
	n=$((n + 1))
	"$GPUCTL" --sim h200x8 "$@" >"$tmp/out.$n" 2>"$tmp/err.$n"
	local rc=$?
	checks=$((checks + 1))
	[ "$rc" -le 2 ] || fail "'$*' exited $rc: $(head -c 300 "$tmp/err.$n")"
	cat "$tmp/out.$n" "$tmp/err.$n" >"$tmp/all.$n"
	banned "$tmp/all.$n" "$*"
}
banner_first() { # the last run's stdout starts with the banner
	checks=$((checks + 1))
	head -1 "$tmp/out.$n" | grep -q "^\*\*\* SIMULATED server 'h200x8': not real hardware \*\*\*$" ||
		fail "'$*': stdout does not start with the SIMULATED banner: $(head -1 "$tmp/out.$n")"
}
for args in "info" "info -q" "topo" "health --window 0" "dmon -c 1 -d 100ms" "top --once" "diag -r 1" \
	"report --no-bench" "cdi list --dev-dir $tmp/dev"; do
	# shellcheck disable=SC2086
	run $args
	# shellcheck disable=SC2086
	banner_first $args
done
run slurm gres-conf
run plan train --model llama-2-7b --gpu 'H200 SXM' --tokens 1B
run plan train --model llama-2-7b --gpu 'H200 SXM' --tokens 1B --explain
run plan train --params 70B --gpu 'H200 SXM' --tokens 2T
run plan serve --model llama-3-70b --tp 8 --explain
run plan cost --hours 32900 --gpus 1
run plan cost --instance a3-highgpu-8g --hours 100
run plan mig --gpu 'H200 SXM' --request 3x1g.18gb,1x3g.71gb
run bench --results "$here/../data/results-h200x2.json"
run report --results "$here/../data/results-h200x2.json"
# the plan's time line: counts with suffixes, "1 GPU"
checks=$((checks + 1))
grep -q '^time for 1B tokens: .* FLOPs / (1 GPU x ' "$tmp/out.11" ||
	fail "plan train time line: $(grep '^time for' "$tmp/out.11")"
finish
