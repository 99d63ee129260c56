#!/usr/bin/env bash
# groupcpu.sh - on a real GPU server: what each metric group costs a 1 s
# sampler in CPU, measured on `gpuctl dmon` (which reads the groups of the
# columns it shows, every tick, and no process list) with each selection in
# turn, and on `gpuctl top` (basic group and process list every tick, ECC,
# PCIe and NVLink state every 5 s), each alone for MEASURE_S seconds after a
# 5 s start, from /proc/PID/stat (user + system) and per thread.
# Results: $OUT/groupcpu/summary.txt (default ./groupcpu-out/groupcpu/).
# Device tool: part of scripts/gpu/all.sh (`all.sh run groupcpu`), about 4 minutes.
# Reads only; changes no setting.
set -u -o pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="${OUT:-$root/groupcpu-out}/groupcpu"
mkdir -p "$out"
log="$out/run.log"
: >"$log"
export GPUCTL_DATA_DIR="$root/data"
unset GPUCTL_SIM
. "$root/scripts/gpu/lib.sh"
find_gpuctl groupcpu.sh
MEASURE_S="${MEASURE_S:-30}"
summary="$out/summary.txt"
hz=$(getconf CLK_TCK)

# ticks PID: utime + stime of the process, in clock ticks
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
# threads PID: each thread's name and system time, ticks
threads() {
	local t
	for t in /proc/"$1"/task/*; do
		printf '    %-18s user %5s  system %5s ticks\n' "$(cat "$t/comm")" \
			"$(awk '{ print $14 }' "$t/stat")" "$(awk '{ print $15 }' "$t/stat")"
	done
}
# measure LABEL COMMAND...: starts it, waits 5 s, measures MEASURE_S s, stops it
measure() {
	local label=$1
	shift
	"$@" >/dev/null 2>>"$log" &
	local pid=$!
	sleep 5
	local a b
	a=$(ticks "$pid")
	sleep "$MEASURE_S"
	b=$(ticks "$pid")
	{
		awk -v l="$label" -v d=$((b - a)) -v hz="$hz" -v s="$MEASURE_S" \
			'BEGIN { printf "%-44s %6.2f %% of one core over %d s\n", l, 100 * d / hz / s, s }'
		threads "$pid"
	} >>"$summary"
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}

{ date -u '+%Y-%m-%d %H:%M:%S UTC'; nvidia-smi -L; } >"$summary" 2>&1
count=$((MEASURE_S + 10))
measure "dmon -s p (basic group only)" "$GPUCTL" dmon -s p -d 1 -c "$count"
measure "dmon -s pt (+ PCIe throughput every tick)" "$GPUCTL" dmon -s pt -d 1 -c "$count"
measure "dmon -s pe (+ ECC and PCIe every tick)" "$GPUCTL" dmon -s pe -d 1 -c "$count"
measure "dmon -s pn (+ NVLink state and errors every tick)" "$GPUCTL" dmon -s pn -d 1 -c "$count"
measure "dmon -s pv (+ violation counters every tick)" "$GPUCTL" dmon -s pv -d 1 -c "$count"
if command -v tmux >/dev/null; then
	tmux kill-session -t groupcpu 2>/dev/null
	tmux new-session -d -s groupcpu -x 200 -y 50 "$GPUCTL top --exit-after $((MEASURE_S + 10))"
	sleep 1
	tpid=$(pgrep -n -x gpuctl)
	if [ -n "$tpid" ]; then
		sleep 4
		a=$(ticks "$tpid")
		sleep "$MEASURE_S"
		b=$(ticks "$tpid")
		{
			awk -v d=$((b - a)) -v hz="$hz" -v s="$MEASURE_S" \
				'BEGIN { printf "%-44s %6.2f %% of one core over %d s\n", "top (1 s refresh)", 100 * d / hz / s, s }'
			threads "$tpid"
		} >>"$summary"
	fi
	tmux kill-session -t groupcpu 2>/dev/null
fi
cat "$summary"
