#!/usr/bin/env bash
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

# the comment style of a source file: c, js, html, hash; nothing if not source
style() {
	case "$1" in
	*.c | *.h | *.cu | *.cuh | *.css) echo c ;;
	*.js) echo js ;;
	*.html) echo html ;;
	*.py | *.sh | *.bash | *.cmake | CMakeLists.txt | */CMakeLists.txt | *.yml | *.yaml | *.service | *.bash-completion) echo hash ;;
	*) [ "$(head -c 2 "$root/$1" 2>/dev/null)" = '#!' ] && echo hash || true ;;
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

missing=0
while IFS= read -r f; do
	[ -f "$root/$f" ] || continue
	s=$(style "$f")
	[ -n "$s" ] || continue
	head -n 5 "$root/$f" | grep -qF "$tag" && continue
	if [ "$mode" = --fix ]; then
		add "$f" "$s"
		echo "added: $f"
	else
		echo "no SPDX-License-Identifier line: $f"
		missing=$((missing + 1))
	fi
done < <(list_files)
[ "$missing" -eq 0 ]
