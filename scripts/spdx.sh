#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# spdx.sh - the SPDX-License-Identifier line every source file carries (LICENSE:
# Apache-2.0; issue 37). tests/cli/spdx.sh runs the check.
#   scripts/spdx.sh [--check] [ROOT]  lists the source files without the line; exit 1 if any
#   scripts/spdx.sh --fix [ROOT]      adds the line where it is missing
# ROOT: the source tree (default: this script's); its tracked files when it is a
# git checkout, else every file. Source files: C and CUDA (.c .h .cu .cuh), CMake,
# shell (.sh .bash, the bash completion, any file starting with #!), Python,
# YAML, systemd units, web/'s .js .css .html. Not: data (JSON has no comments),
# fuzz corpora, recorded runs (bench/runs/), build folders.
# Where the line goes: first, as its own comment (/* */ in C and CSS, // in JS,
# #), after a #! line (and a Python coding line), after <!DOCTYPE html>: the
# existing header comment stays as it is, below it.
set -euo pipefail
mode=--check
case "${1:-}" in --check | --fix) mode=$1; shift ;; esac
root="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
tag="SPDX-License-Identifier: Apache-2.0"

list_files() {
	if [ -e "$root/.git" ]; then
		git -C "$root" ls-files
	else
		(cd "$root" && find . -type f | sed 's|^\./||')
	fi | grep -vE '^(\.git|build[^/]*|tests/fuzz/corpus|bench/runs)/'
}

# style FILE: sets $s to its comment style (c, js, html, hash), or to nothing if
# it is not source (no process per file: the tree has hundreds)
style() {
	local first=""
	s=""
	case "$1" in
	*.c | *.h | *.cu | *.cuh | *.css) s=c ;;
	*.js) s=js ;;
	*.html) s=html ;;
	*.py | *.sh | *.bash | *.cmake | CMakeLists.txt | */CMakeLists.txt | *.yml | *.yaml | *.service | *.bash-completion) s=hash ;;
	*)
		IFS= read -r -n 2 first <"$root/$1" 2>/dev/null || true
		[ "$first" != '#!' ] || s=hash
		;;
	esac
}

# add the line to file $1 of style $2
add() {
	local f="$root/$1" line after=0
	case "$2" in
	c) line="/* $tag */" ;;
	js) line="// $tag" ;;
	html) line="<!-- $tag -->"; head -1 "$f" | grep -qi '^<!doctype' && after=1 ;;
	hash)
		line="# $tag"
		if [ "$(head -c 2 "$f")" = '#!' ]; then
			after=1
			sed -n 2p "$f" | grep -qE '^#.*coding[:=]' && after=2
		fi
		;;
	esac
	if [ "$after" = 0 ]; then
		sed -i "1i $line" "$f"
	else
		sed -i "${after}a $line" "$f"
	fi
}

# the source files, then those of them without the line in their first 5 lines (one awk)
declare -A kind=()
while IFS= read -r f; do
	[ -f "$root/$f" ] || continue
	style "$f"
	[ -z "$s" ] || kind[$f]=$s
done < <(list_files)
missing=0
while IFS= read -r f; do
	[ -n "$f" ] || continue
	if [ "$mode" = --fix ]; then
		add "$f" "${kind[$f]}"
		echo "added: $f"
	else
		echo "no SPDX-License-Identifier line: $f"
		missing=$((missing + 1))
	fi
done < <(cd "$root" && printf '%s\0' "${!kind[@]}" | sort -z | xargs -0 -r awk -v tag="$tag" '
	FNR == 1 { if (f != "" && !ok) print f; f = FILENAME; ok = 0 }
	FNR <= 5 && index($0, tag) { ok = 1 }
	END { if (f != "" && !ok) print f }')
[ "$missing" -eq 0 ]
