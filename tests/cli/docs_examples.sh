#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# docs_examples.sh - the examples in docs/*.md are what gpuctl prints, so the
# docs cannot drift from the output. An example is a fenced block whose first
# line starts with "$ gpuctl": each "$ " line is a command (run from the source
# tree, on the simulated server it names; no driver here), the lines after it
# up to the next "$ " line are its output, stdout and stderr together. An
# output line ending in two or more spaces and "(N)" says the exit code is N
# (else it must be 0); a line "..." stands for any number of lines; trailing
# spaces do not count. Blocks of commands without "$" (usage sketches) are not
# examples.
#
# Run by CTest (GPUCTL = the binary). By hand:
#   GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/docs_examples.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
need python3

mkdir -p "$tmp/bin"
ln -s "$GPUCTL" "$tmp/bin/gpuctl"
cd "$src" || exit 1
PATH="$tmp/bin:$PATH" python3 - "$src"/docs/*.md >"$tmp/report" 2>&1 <<'PY'
import re, subprocess, sys

def examples(path):
    """(line number, command, expected lines, expected exit code) of a file"""
    lines = open(path, encoding="utf-8").read().split("\n")
    out, i = [], 0
    while i < len(lines):
        if not lines[i].startswith("```"):
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        block = lines[i + 1:j]
        i = j + 1
        if not block or not block[0].startswith("$ gpuctl"):
            continue
        k = 0
        while k < len(block):
            start, cmd = k, block[k][2:]
            k += 1
            exp = []
            while k < len(block) and not block[k].startswith("$ "):
                exp.append(block[k])
                k += 1
            code = 0
            for n, e in enumerate(exp):
                m = re.match(r"^(.*?\S)\s{2,}\((\d+)\)\s*$", e)
                if m:
                    code, exp[n] = int(m.group(2)), m.group(1)
            out.append((i - len(block) + start, cmd, exp, code))
    return out

def matches(exp, got):
    """exp's lines against got's, '...' matching any run of lines"""
    if not exp:
        return not got
    if exp[0] == "...":
        return any(matches(exp[1:], got[n:]) for n in range(len(got) + 1))
    return bool(got) and exp[0].rstrip() == got[0].rstrip() and matches(exp[1:], got[1:])

fails = total = 0
for path in sys.argv[1:]:
    for line, cmd, exp, code in examples(path):
        total += 1
        p = subprocess.run(["bash", "-c", cmd], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           stdin=subprocess.DEVNULL, timeout=120)
        got = p.stdout.decode("utf-8", "replace").rstrip("\n").split("\n")
        if got == [""]:
            got = []
        while exp and exp[-1].strip() == "":
            exp = exp[:-1]
        where = "%s:%d: $ %s" % (path.split("/")[-2] + "/" + path.split("/")[-1], line, cmd)
        if p.returncode != code:
            fails += 1
            print("FAIL: %s: exit %d, the doc says %d" % (where, p.returncode, code))
        if not matches(exp, got):
            fails += 1
            print("FAIL: %s: the output differs from the doc's:" % where)
            print("  --- doc\n" + "".join("  | %s\n" % e for e in exp) + "  --- gpuctl\n" +
                  "".join("  | %s\n" % g for g in got), end="")
print("examples %d failures %d" % (total, fails))
PY
cat "$tmp/report"
n=$(sed -n 's/^examples \([0-9]*\) failures \([0-9]*\)$/\1 \2/p' "$tmp/report")
checks=$((checks + 1))
[ -n "$n" ] || fail "the checker did not finish"
set -- $n
checks=$((checks + ${1:-0}))
[ "${1:-0}" -ge 8 ] || fail "only ${1:-0} examples found in docs/"
fails=$((fails + ${2:-1}))
finish
