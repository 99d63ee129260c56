#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# help.sh - every command and subcommand has help that lists its exit codes,
# reached three ways: `gpuctl COMMAND --help`, `gpuctl COMMAND SUB --help` and
# `gpuctl help COMMAND [SUB]` (the same text), with no driver and exit 0. The
# commands are walked from the command table (`gpuctl --help` prints it), the
# subcommands from each command's usage lines ("gpuctl COMMAND SUB ...").
#
# Run by CTest (GPUCTL = the binary). By hand:
#   GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/help.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.bash"

# help_ok WHAT ARGS...: exit 0, something on stdout, nothing on stderr, exit codes
# listed; the text in $help. Its lines are matched in bash, not by a grep or cmp
# each (hundreds of processes fewer): "\n" starts the text, so that "\nX" is a
# line starting with X
exit_line=$'\nexit( codes)?:' # grep -E '^exit( codes)?:'
usage_code=$'[\n ]64 '         # grep -E '(^| )64 '
help_ok() {
	local what="$1"; shift
	checks=$((checks + 1))
	"$GPUCTL" "$@" >"$tmp/h.out" 2>"$tmp/h.err"
	local rc=$?
	help=
	IFS= read -rd '' help <"$tmp/h.out"
	if [ "$rc" -ne 0 ] || [ -s "$tmp/h.err" ] || [ ! -s "$tmp/h.out" ]; then
		fail "$what: exit $rc, stderr '$(head -c 200 "$tmp/h.err")'"
		return 1
	fi
	[[ $'\n'$help =~ $exit_line && $'\n'$help =~ $usage_code ]] ||
		fail "$what: no 'exit codes:' line with 64 (usage)"
}
has_line_starting() { [[ $'\n'$1 == *$'\n'"$2"* ]]; } # has_line_starting TEXT PREFIX

commands=$("$GPUCTL" --help | sed -n '/^commands:/,/^$/s/^  \([a-z]*\) .*/\1/p')
checks=$((checks + 1))
[ "$(echo "$commands" | wc -w)" -ge 17 ] || fail "the command table has $(echo "$commands" | wc -w) commands"
for c in $commands; do
	help_ok "$c --help" "$c" --help || continue
	cp "$tmp/h.out" "$tmp/cmd.out"
	cmd_help=$help
	help_ok "help $c" help "$c"
	check "help $c is $c --help" test "$help" = "$cmd_help"
	help_ok "$c -h" "$c" -h
	# subcommands: usage lines "gpuctl CMD SUB ..." where SUB is a word, not an option
	subs=$(grep -oE "gpuctl $c [a-z][a-z-]*( |$)" "$tmp/cmd.out" | awk '{ print $3 }' | sort -u)
	for s in $subs; do
		help_ok "$c $s --help" "$c" "$s" --help || continue
		sub_help=$help
		check "$c $s --help is its own (starts 'usage: gpuctl $c $s')" \
			has_line_starting "$sub_help" "usage: gpuctl $c $s "
		check "$c $s --help is not the whole of $c --help" test "$sub_help" != "$cmd_help"
		help_ok "help $c $s" help "$c" "$s"
		check "help $c $s is $c $s --help" test "$help" = "$sub_help"
	done
done
# the ones with subcommands were found
for cs in "plan train" "plan serve" "plan cost" "plan mig" "slurm gres-conf" "slurm health-check" \
	"slurm job-start" "slurm job-end" "slurm stats"; do
	checks=$((checks + 1))
	"$GPUCTL" ${cs% *} --help | grep -q "gpuctl $cs " || fail "'gpuctl ${cs% *} --help' does not list $cs"
done

# what help is not
checks=$((checks + 1))
"$GPUCTL" help frobnicate >/dev/null 2>"$tmp/e"
[ $? -eq 64 ] && grep -q "'frobnicate' is not a gpuctl command" "$tmp/e" || fail "help of an unknown command: 64"
help_ok "help alone: the global help" help
check "help alone lists the commands" grep -q '^commands:' "$tmp/h.out"
# no driver, no simulated server: help needs neither
checks=$((checks + 1))
GPUCTL_DATA_DIR=/nonexistent "$GPUCTL" info --help >/dev/null 2>&1 || fail "info --help without data or driver"
# --version: the version and the commit the binary was built from, read at
# build time (cmake/commit.cmake), so a checkout's build names its HEAD
checks=$((checks + 1))
"$GPUCTL" --version >"$tmp/v" 2>&1 || fail "--version exits non-zero"
grep -qE '^gpuctl [0-9]+\.[0-9]+\.[0-9]+ \(commit ([0-9a-f]{12}|unknown)\)$' "$tmp/v" || fail "--version: $(cat "$tmp/v")"
# (a binary built before the latest commit names an ancestor of HEAD: a stale
# build, not a wrong commit; in CI's fresh clone it must be HEAD itself)
if command -v git >/dev/null && head=$(git -C "$src" rev-parse --short=12 HEAD 2>/dev/null); then
	built=$(sed -n 's/.*(commit \([0-9a-f]*\))$/\1/p' "$tmp/v")
	if [ "$built" != "$head" ] && [ "${CI:-}" != true ] && [ -n "$built" ] &&
		git -C "$src" merge-base --is-ancestor "$built" HEAD 2>/dev/null; then
		echo "note: the binary was built at $built, before HEAD $head: rebuild to check --version's commit"
	else
		check "--version names the checkout's commit $head" grep -q "(commit $head)" "$tmp/v"
	fi
fi
finish
