#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ci_stress.sh - CI as a loaded machine runs it (issue 23): N times, a fresh
# clone of COMMIT runs `CI=true bash .ci/run` with two CPU-bound processes
# beside it (stress-ng --cpu 2); it stops at the first failure.
#
#   scripts/ci_stress.sh [N [COMMIT [DIR]]]   N runs (10), COMMIT (HEAD),
#                                             logs in DIR (/tmp/gpuctl-ci-stress)
#
# DIR/summary.txt gets a line per run (commit, exit status, wall seconds, load)
# and test.sh's stage times; DIR/run-K.log is run K's whole output; a failed
# run's clone stays in DIR/run-K/ for its ctest logs. Needs stress-ng (Debian)
# and what .ci/run installs (it runs apt-get: root, or a machine that has the
# packages). Nothing else should run beside it: the load is the two workers.
# Exit: 0 every run passed, 1 one failed, 2 bad arguments or no stress-ng.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
n="${1:-10}"
[[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "ci_stress.sh: N must be a positive count, not '$n'" >&2; exit 2; }
command -v stress-ng >/dev/null || { echo "ci_stress.sh: stress-ng not found (apt-get install stress-ng)" >&2; exit 2; }
commit="$(git -C "$root" rev-parse --short=12 "${2:-HEAD}" 2>/dev/null)" || { echo "ci_stress.sh: no commit '${2:-HEAD}'" >&2; exit 2; }
out="${3:-${TMPDIR:-/tmp}/gpuctl-ci-stress}"
mkdir -p "$out" && out="$(cd "$out" && pwd)" || exit 2
stress=
trap '[ -n "$stress" ] && kill "$stress" 2>/dev/null' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
for i in $(seq 1 "$n"); do
	dir="$out/run-$i"
	rm -rf "$dir"
	git clone -q "$root" "$dir" && git -C "$dir" checkout -q "$commit" || exit 2
	stress-ng --cpu 2 --quiet &
	stress=$!
	echo "$(date -u +%FT%TZ) run $i of $n, $commit: started" >>"$out/summary.txt"
	start=$SECONDS
	(cd "$dir" && CI=true bash .ci/run) >"$out/run-$i.log" 2>&1
	rc=$?
	wall=$((SECONDS - start))
	kill "$stress"; wait "$stress" 2>/dev/null; stress=
	{
		echo "$(date -u +%FT%TZ) run $i of $n, $commit: exit $rc, ${wall} s, load $(cut -d' ' -f1-3 /proc/loadavg)"
		grep -E '^test\.sh: \[|tests passed|tests failed' "$out/run-$i.log" | sed 's/^/  /'
	} >>"$out/summary.txt"
	if [ "$rc" != 0 ]; then
		echo "ci_stress.sh: run $i failed (exit $rc): $out/run-$i.log, its clone in $dir" | tee -a "$out/summary.txt" >&2
		exit 1
	fi
	rm -rf "$dir"
done
echo "$(date -u +%FT%TZ) $n of $n runs of $commit passed" | tee -a "$out/summary.txt"
