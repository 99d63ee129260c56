#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# top_batch.sh - `gpuctl top --once`, `-b/--batch` and `-n N`: plain text on
# stdout without a terminal (like top -b -n 1 and nvitop --once), the number
# of frames, -i and --user filters, and the errors.
# Run by CTest (GPUCTL = the binary). By hand:
#   GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/top_batch.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
frames() { grep -c '^gpuctl top ' <<<"$out"; }
gpu_rows() { awk '/^GPU +MODEL/{g=1;next} /^$/{g=0} g' <<<"$out" | wc -l; }
proc_rows() { awk '/^GPU +PID/{p=1;next} /^$/{p=0} p' <<<"$out" | wc -l; }

# --once: one frame, no terminal (stdin and stdout are not ttys here)
expect_exit 0 "$GPUCTL" --sim h200x8 top --once </dev/null
out_has "^\*\*\* SIMULATED server 'h200x8'"
out_has '^8 GPUs  power '
out_has '^GPU MODEL'
out_has '^GPU      PID USER'
out_has 'CPU%.*HOST-MEM.*TIME.*COMMAND'
checks=$((checks + 1)); [ "$(frames)" = 1 ] || fail "--once printed $(frames) frames"
checks=$((checks + 1)); [ "$(gpu_rows)" = 8 ] || fail "--once: $(gpu_rows) GPU rows, expected 8"
nproc=$(proc_rows)
checks=$((checks + 1)); [ "$nproc" -gt 0 ] || fail "--once: no process rows"
# the summary counts the rows listed
out_has "  $nproc process"
# a GPU row: index, model, util %, used/total memory, temperature, power/limit
out_has '^  0 H200 SXM  *[0-9]*% *[0-9.]*[KMGT]/[0-9.]*[KMGT] *[0-9]*C *[0-9]*/[0-9]* W$'
# a simulated server's pids are made up: no host figures from /proc for them
checks=$((checks + 1))
awk '/^GPU +PID/{p=1;next} /^$/{p=0} p && ($6 != "-" || $7 != "-" || $8 != "-")' <<<"$out" | grep -q . &&
	fail "a simulated process got host figures: $out"
# the scientific notation and "1 GPUs" are never printed
checks=$((checks + 1)); grep -Eq '[0-9]e[+-][0-9]|\b1 GPUs\b' <<<"$out" && fail "bad number form: $out"

# -b -n 3: three frames, a refresh apart; -n alone implies batch; --batch spelled out
expect_exit 0 "$GPUCTL" --sim h200x8 top -b -n 3 -d 100ms
checks=$((checks + 1)); [ "$(frames)" = 3 ] || fail "-b -n 3 printed $(frames) frames"
expect_exit 0 "$GPUCTL" --sim h200x8 top -n 2 -d 100ms
checks=$((checks + 1)); [ "$(frames)" = 2 ] || fail "-n 2 printed $(frames) frames"
expect_exit 0 "$GPUCTL" --sim h200x8 top --batch --iterations 1
checks=$((checks + 1)); [ "$(frames)" = 1 ] || fail "--batch --iterations 1 printed $(frames) frames"

# -i: only those GPUs, and only their processes
expect_exit 0 "$GPUCTL" --sim h200x8 top --once -i 2,5
checks=$((checks + 1)); [ "$(gpu_rows)" = 2 ] || fail "-i 2,5: $(gpu_rows) GPU rows"
out_has '^2 GPUs  power '
checks=$((checks + 1))
awk '/^GPU +PID/{p=1;next} /^$/{p=0} p && $1 != 2 && $1 != 5' <<<"$out" | grep -q . && fail "-i 2,5 listed another GPU's process: $out"

# --user: only that user's processes; a user with none lists none
expect_exit 0 "$GPUCTL" --sim h200x8 top --once
user=$(awk '/^GPU +PID/{p=1;next} p && NF {print $3; exit}' <<<"$out")
all=$(proc_rows)
expect_exit 0 "$GPUCTL" --sim h200x8 top --once --user "$user"
mine=$(proc_rows)
checks=$((checks + 1)); [ "$mine" -gt 0 ] && [ "$mine" -le "$all" ] || fail "--user $user: $mine of $all rows"
checks=$((checks + 1))
awk -v u="$user" '/^GPU +PID/{p=1;next} /^$/{p=0} p && $3 != u' <<<"$out" | grep -q . && fail "--user $user listed others: $out"
expect_exit 0 "$GPUCTL" --sim h200x8 top --once --user no-such-user
checks=$((checks + 1)); [ "$(proc_rows)" = 0 ] || fail "--user no-such-user listed $(proc_rows) rows"
out_has '  0 processes'

# errors: no terminal without batch mode says how; screen-only options; bad counts; stdout full
expect_exit 64 "$GPUCTL" --sim h200x8 top </dev/null
err_has "top --once"
expect_exit 64 "$GPUCTL" --sim h200x8 top --once --no-charts
err_has 'not batch mode'
expect_exit 64 "$GPUCTL" --sim h200x8 top -n 0
expect_exit 64 "$GPUCTL" --sim h200x8 top -n x
if [ -w /dev/full ]; then
	checks=$((checks + 1))
	"$GPUCTL" --sim h200x8 top --once >/dev/full 2>"$tmp/full.err"
	rc=$?
	[ "$rc" = 74 ] || fail "--once >/dev/full exited $rc, expected 74: $(cat "$tmp/full.err")"
fi
finish
