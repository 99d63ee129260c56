#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# top_dmon.sh - on a real GPU server (the lead runs it; issue 3's "done when" for
# top and dmon): gpuctl dmon next to nvidia-smi dmon / --query-gpu at the same
# moment, dmon's CSV and JSON lines, and gpuctl top driven in tmux (screens
# captured: start, help, sorted, 30 s CPU share at 1 s refresh via --measure-cpu).
# Results under $OUT/top_dmon/ (default ./top-dmon-out/top_dmon/): summary.txt,
# run.log, dmon_*.txt|csv|jsonl, nvsmi_*.txt|csv, top_*.screen, top_cpu.txt.
#
# gpuctl: $GPUCTL if set; else the packed build of scripts/gpu/foundation.sh
# (`scripts/gpu/foundation.sh pack` here first); else a cmake build in /tmp/gpuctl-build.
# Device tool, about 2 minutes on 2x H200 (plus a build if there is no packed one):
#   run(command="scripts/gpu/top_dmon.sh", carry=[".device-carry"], kind="nvidia-h200-x2", timeout_s=600)
# Exit: 0 every expectation met, 1 some not (see summary.txt), 69 nothing could run.
# Reads only; sends no signal (top's kill key is not pressed), changes no setting.
set -u -o pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="${OUT:-$root/top-dmon-out}/top_dmon"
mkdir -p "$out"
log="$out/run.log"
: >"$log"
export GPUCTL_DATA_DIR="$root/data"
unset GPUCTL_SIM
{ date -u '+%Y-%m-%d %H:%M:%S UTC'; uname -a; nproc; } >>"$log" 2>&1
command -v nvidia-smi >/dev/null || { echo "top_dmon.sh: no nvidia-smi here" | tee -a "$log" >&2; exit 69; }

# --- gpuctl ---------------------------------------------------------------
. "$root/scripts/gpu/lib.sh"
find_gpuctl top_dmon.sh

results=()
note() { echo "$*" >>"$log"; results+=("$*"); }
ok=1
expect() { # DESCRIPTION COMMAND...
	local what="$1"; shift
	if "$@"; then note "ok   $what"; else note "FAIL $what"; ok=0; fi
}

# --- dmon next to nvidia-smi, the same seconds ------------------------------
nvidia-smi dmon -c 5 -s pucvmet >"$out/nvsmi_dmon.txt" 2>>"$log" &
nv=$!
t0=$(date +%s.%N)
"$GPUCTL" dmon -c 5 -s pucvmetns -o T >"$out/dmon_text.txt" 2>>"$log"
rc_text=$?
t1=$(date +%s.%N)
wait $nv
nvidia-smi --query-gpu=index,power.draw,temperature.gpu,temperature.memory,utilization.gpu,utilization.memory,clocks.sm,clocks.mem,memory.used,pstate,clocks_event_reasons.active \
	--format=csv >"$out/nvsmi_query.csv" 2>>"$log"
"$GPUCTL" dmon -c 1 --csv -s pucms >"$out/dmon.csv" 2>>"$log"
rc_csv=$?
"$GPUCTL" dmon -c 3 --json -s pucvmetns >"$out/dmon.jsonl" 2>>"$log"
rc_json=$?
ngpu=$(nvidia-smi -L | grep -c '^GPU ')
expect "dmon text exits 0" [ "$rc_text" -eq 0 ]
expect "dmon text: 5 lines per GPU ($ngpu GPUs)" [ "$(grep -vc '^[#*]' "$out/dmon_text.txt")" -eq $((5 * ngpu)) ]
expect "dmon text: no SIMULATED banner on real GPUs" [ "$(grep -c SIMULATED "$out/dmon_text.txt")" -eq 0 ]
expect "dmon: 5 intervals of 1 s in 5 to 8 s" awk -v a="$t0" -v b="$t1" 'BEGIN { exit !(b - a >= 5 && b - a < 8) }'
expect "dmon csv exits 0, one row per GPU, simulated=false" \
	sh -c "[ $rc_csv -eq 0 ] && [ \$(tail -n +2 '$out/dmon.csv' | awk -F, '\$NF == \"false\"' | wc -l) -eq $ngpu ]"
expect "dmon json exits 0 and parses" sh -c "[ $rc_json -eq 0 ] && python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert rows and all(r[\"simulated\"] is False and r[\"up\"] for r in rows)
' '$out/dmon.jsonl'"
# power and temperature of dmon against nvidia-smi --query-gpu a second later
python3 - "$out/dmon.csv" "$out/nvsmi_query.csv" >"$out/compare.txt" 2>>"$log" <<'PY'
import csv, sys
g = list(csv.DictReader(open(sys.argv[1])))
n = list(csv.reader(open(sys.argv[2])))[1:]
print("gpu  gpuctl W / C / SM MHz / MiB      nvidia-smi W / C / SM MHz / MiB")
for row, nv in zip(g, n):
    nv = [x.strip() for x in nv]
    print(f"{row['gpu']:>3}  {row['power_w']} / {row['gpu_temp_c']} / {row['sm_clock_mhz']} / {row['fb_used_mib']}"
          f"      {nv[1]} / {nv[2]} / {nv[6]} / {nv[8]}")
PY
cat "$out/compare.txt" >>"$log"

# --- top in tmux -----------------------------------------------------------
if command -v tmux >/dev/null; then
	tm() { tmux -S "$out/tmux.sock" -f /dev/null "$@"; }
	tm kill-server 2>/dev/null
	tm new-session -d -x 160 -y 50 "TERM=xterm-256color LANG=C.UTF-8 '$GPUCTL' top --exit-after 40 --measure-cpu '$out/top_cpu.txt'; echo EXITED \$?; sleep 30"
	sleep 4
	tm capture-pane -p -t 0 >"$out/top_start.screen"
	tm send-keys -t 0 '?'; sleep 1
	tm capture-pane -p -t 0 >"$out/top_help.screen"
	tm send-keys -t 0 Escape; sleep 0.5; tm send-keys -t 0 s; sleep 1
	tm capture-pane -p -t 0 >"$out/top_sorted.screen"
	sleep 38
	tm capture-pane -p -t 0 >"$out/top_end.screen"
	tm kill-server 2>/dev/null
	rm -f "$out/tmux.sock"
	expect "top: title without SIMULATED" sh -c "grep -q '^gpuctl top' '$out/top_start.screen'"
	expect "top: every GPU on screen" sh -c "[ \$(grep -Ec '^ *[0-9]+ .+ GPU\\[' '$out/top_start.screen') -eq $ngpu ]"
	expect "top: help box" grep -q 'gpuctl top - keys' "$out/top_help.screen"
	expect "top: sorted by pid" grep -q 'sorted by pid' "$out/top_sorted.screen"
	expect "top: quit by itself with 0" grep -q '^EXITED 0' "$out/top_end.screen"
	pct=$(awk '$1 == "cpu_pct_of_one_core" { print $2 }' "$out/top_cpu.txt" 2>/dev/null)
	expect "top: CPU at 1 s refresh under 2 % of a core (measured ${pct:-?} %)" \
		awk -v p="${pct:--1}" 'BEGIN { exit !(p >= 0 && p < 2) }'
else
	note "SKIP top: tmux is not installed on this machine"
fi

{ echo "top_dmon.sh on $(hostname), $(date -u '+%Y-%m-%d %H:%M UTC'), $ngpu GPUs"; printf '%s\n' "${results[@]}"; echo; cat "$out/compare.txt"; } >"$out/summary.txt"
cat "$out/summary.txt"
[ "$ok" -eq 1 ]
