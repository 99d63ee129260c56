#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# man_completion.sh - every command and option that --help names has its man
# page entry, and the bash completion offers every command, subcommand and
# option. The pages are generated here from this binary by
# packaging/manpages.py (what the build installs), rendered with man, and the
# options are walked from `gpuctl --help`, `gpuctl CMD --help` and
# `gpuctl CMD SUB --help`; the completion is run as bash runs it (COMP_WORDS).
#
# Run by CTest (GPUCTL = the binary). By hand:
#   GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/man_completion.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
need python3 man

export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
# manpages.py, the completion and this walk all ask the binary for the same
# help texts (each one up to three times): $once stands in for it, runs it once
# per distinct argument list and answers a later ask from that run (the same
# stdout, stderr and exit status), so every consumer reads the binary's texts
mkdir "$tmp/once"
once="$tmp/gpuctl-once"
cat >"$once" <<END
#!/usr/bin/env bash
printf -v a '%q ' "\$@"
r="$tmp/once/\${a//\//%}"
[ -e "\$r.rc" ] || { "$GPUCTL" "\$@" >"\$r.out" 2>"\$r.err"; echo \$? >"\$r.rc"; }
cat "\$r.out"
[ -s "\$r.err" ] && cat "\$r.err" >&2
read -r rc <"\$r.rc"
exit "\$rc"
END
chmod +x "$once"
python3 "$src/packaging/manpages.py" --gpuctl "$once" --docs "$src/docs" --out "$tmp/man" >"$tmp/gen.err" 2>&1 ||
	{ cat "$tmp/gen.err"; fail "manpages.py failed"; finish; exit; }

# the page as a reader sees it, one space between words
render() { MANWIDTH=2000 man -l "$1" 2>/dev/null | tr -s ' \t' '  '; }
# options named in a help text (outside the command table)
options_of() { sed '/^commands:/,/^$/d' | grep -oE '(^|[][ |,(])--?[A-Za-z][A-Za-z0-9-]*' | sed 's/^[][ |,(]//' | sort -u; }

# the completion, as bash calls it: complete WORDS... (the last one is the cursor's)
. "$src/packaging/gpuctl.bash-completion"
complete_words() {
	COMP_WORDS=("${completing_bin:-$once}" "$@")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	_gpuctl
	printf '%s\n' "${COMPREPLY[@]}"
}
offers() { # offers WHAT WORD WORDS...: the completion of WORDS includes WORD
	local what="$1" word="$2"; shift 2
	checks=$((checks + 1))
	complete_words "$@" | grep -qxF -- "$word" || fail "completion of '$*' does not offer $word ($what)"
}
offers_all() { # offers_all WHAT WORDS... <<<EXPECTED: one completion of WORDS offers each line (not in a pipe: fail counts)
	local what="$1" w; shift
	local offered
	complete_words "$@" >"$tmp/offered"
	IFS= read -rd '' offered <"$tmp/offered"
	offered=$'\n'$offered
	while read -r w; do
		checks=$((checks + 1))
		# a whole line of the completion (as grep -qxF; in bash: a thousand greps took seconds)
		[[ "$offered" == *$'\n'"$w"$'\n'* ]] || fail "completion of '$*' does not offer $w ($what)"
	done
}
declare -A page_text # rendered page -> its text, read once
has_entry() { # has_entry PAGE WORD: the rendered page names WORD
	checks=$((checks + 1))
	[ -n "${page_text[$1]+set}" ] || IFS= read -rd '' "page_text[$1]" <"$1"
	# grep -E's pattern on the whole text, in bash (a thousand greps took
	# seconds): a newline is a [^A-Za-z0-9-] too, so it matches where a line would
	[[ "${page_text[$1]}" =~ (^|[^A-Za-z0-9-])$2([^A-Za-z0-9-]|$) ]] || fail "$(basename "$1"): no entry for $2"
}

"$once" --help >"$tmp/top.help"
commands=$(sed -n '/^commands:/,/^$/s/^  \([a-z]*\) .*/\1/p' "$tmp/top.help")
checks=$((checks + 1))
[ "$(echo "$commands" | wc -w)" -ge 17 ] || fail "only $(echo "$commands" | wc -w) commands in gpuctl --help"

render "$tmp/man/gpuctl.1" >"$tmp/gpuctl.txt"
for o in $(options_of <"$tmp/top.help"); do
	has_entry "$tmp/gpuctl.txt" "$o"
done
offers_all "global option" - <<<"$(options_of <"$tmp/top.help")"
offers_all "command" "" <<<"$commands"
checks=$((checks + 1))
[ -s "$tmp/man/gpuctl-agent.conf.5" ] && render "$tmp/man/gpuctl-agent.conf.5" | grep -q 'pool_dir' ||
	fail "gpuctl-agent.conf(5) is missing or lacks the pool's settings"

for c in $commands; do
	page="$tmp/man/gpuctl-$c.1"
	checks=$((checks + 1))
	[ -s "$page" ] || { fail "no man page gpuctl-$c(1)"; continue; }
	render "$page" >"$tmp/$c.txt"
	has_entry "$tmp/gpuctl.txt" "gpuctl-$c"
	for section in NAME SYNOPSIS DESCRIPTION 'EXIT STATUS' FILES 'SEE ALSO'; do
		checks=$((checks + 1))
		grep -q "^$section\$" "$tmp/$c.txt" || fail "gpuctl-$c(1) has no $section section"
	done
	"$once" "$c" --help >"$tmp/h"
	for o in $(options_of <"$tmp/h"); do
		has_entry "$tmp/$c.txt" "$o"
	done
	offers_all "$c option" "$c" - <<<"$(options_of <"$tmp/h")"
	subs=$(grep -oE "gpuctl $c [a-z][a-z-]*( |$)" "$tmp/h" | awk '{ print $3 }' | sort -u)
	[ -z "$subs" ] || offers_all "$c subcommand" "$c" "" <<<"$subs"
	for s in $subs; do
		has_entry "$tmp/$c.txt" "$s"
		"$once" "$c" "$s" --help >"$tmp/hs"
		for o in $(options_of <"$tmp/hs"); do
			has_entry "$tmp/$c.txt" "$o"
		done
		offers_all "$c $s option" "$c" "$s" - <<<"$(options_of <"$tmp/hs")"
	done
done

# values: shipped simulators, the GPU ids a backend answers with, help's commands
offers "shipped simulator" h200x8 --sim ""
offers "GPU index from info --json" 3 --sim h200x8 info -i ""
uuid=$("$GPUCTL" --sim h200x8 info --json | jq -r '.gpus[0].uuid')
offers "GPU UUID from info --json" "$uuid" --sim h200x8 bench --id ""
offers "help's command" submit help ""
# job ids: from queue --json, here a stand-in agent's answer (no pool running)
cat >"$tmp/gpuctl-queue" <<END
#!/bin/sh
case "\$*" in *"queue --json"*) echo '{"jobs": [{"id": 41, "user": "ann"}, {"id": 42, "user": "bob"}]}' ;;
*) exec "$GPUCTL" "\$@" ;; esac
END
chmod +x "$tmp/gpuctl-queue"
completing_bin="$tmp/gpuctl-queue"
offers "job id from queue --json" 42 cancel ""
offers "job id from queue --json" 41 submit --after ""
completing_bin=
finish
