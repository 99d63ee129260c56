#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# threadcpu.sh - where a running gpuctl spends its CPU, thread by thread, on the
# real GPUs. Reads only; about 150 s.
#   1. `gpuctl agent` with each metric-group set in turn, 12 s each after 3 s of
#      start-up: the process's CPU share and each thread's CPU seconds from
#      /proc/PID/task/*/stat (sampler threads are gpuctl-gpuN, gpuctl-events,
#      gpuctl-links; unnamed ones are the main thread, libmicrohttpd's or
#      NVML's). The slow groups (ecc, pcie, nvlink, throttle) are read every
#      tick here (slow_group_every = 1) so that each one's cost per read shows;
#      then all groups at the defaults, as a user runs it.
#   2. `gpuctl top` in tmux for 20 s, the same per-thread figures.
#   `threadcpu.sh defaults`: instead, the agent (all groups, defaults), then
#      top, 65 s each (a whole NVLink counter minute): each one's CPU, and the
#      agent's NVLink and energy series counted from /metrics: about 140 s.
#   `threadcpu.sh groups`: instead, what each metric group costs a 1 s sampler:
#      `gpuctl dmon` with each column selection (the groups of its columns,
#      every tick, no process list), then top, 30 s each after 5 s: about 4 min.
# Output: $OUT/threadcpu/threads.txt (groups: groups.txt).
set -uo pipefail
out="${OUT:-./threadcpu-out}/threadcpu"
mkdir -p "$out"
GPUCTL="${GPUCTL:?set GPUCTL}"
tck=$(getconf CLK_TCK)

# threads PID LABEL SECONDS: CPU of the whole process and of each thread
threads() {
	local pid=$1 label=$2 secs=$3 t0 t1 name ut st
	t0=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
	sleep "$secs"
	t1=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
	awk -v l="$label" -v a="$t0" -v b="$t1" -v h="$tck" -v s="$secs" \
		'BEGIN { printf "== %s: %.2f %% of one core over %d s (after start-up)\n", l, 100 * (b - a) / h / s, s }'
	for t in /proc/$pid/task/*; do
		name=$(cat "$t/comm")
		read -r ut st < <(sed 's/^.*) //' "$t/stat" | awk '{ print $12, $13 }')
		awk -v n="$name" -v tid="${t##*/}" -v u="$ut" -v s="$st" -v h="$tck" \
			'BEGIN { printf "   %-8s %-16s user %6.2f s  system %6.2f s\n", tid, n, u / h, s / h }'
	done
}

# top_threads SECONDS: top in tmux, measured like threads()
top_threads() {
	command -v tmux >/dev/null || return 0
	tmux new-session -d -s tcpu -x 160 -y 50 "$GPUCTL top"
	sleep 3
	# the gpuctl process itself (the packed wrapper execs it), not tmux's server
	local tpid
	tpid=$(pgrep -n -x gpuctl)
	[ -n "$tpid" ] && threads "$tpid" "top (1 s refresh, pid $tpid)" "$1"
	tmux kill-session -t tcpu 2>/dev/null
}

if [ "${1:-}" = groups ]; then
	for sel in p pt pe pn pv; do
		case $sel in
		p) what="the basic group only" ;;
		pt) what="+ PCIe throughput every tick" ;;
		pe) what="+ ECC and PCIe every tick" ;;
		pn) what="+ NVLink state and error counters every tick" ;;
		pv) what="+ violation counters every tick" ;;
		esac
		"$GPUCTL" dmon -s "$sel" -d 1 -c 40 >/dev/null 2>>"$out/dmon.err" &
		pid=$!
		sleep 5
		threads "$pid" "dmon -s $sel ($what)" 30
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done >"$out/groups.txt" 2>&1
	top_threads 30 >>"$out/groups.txt" 2>&1
	cat "$out/groups.txt"
	exit 0
fi

if [ "${1:-}" = defaults ]; then
	# one after the other: two processes asking the same GPUs slow each other's NVML calls
	port=19477
	"$GPUCTL" agent --listen 127.0.0.1:$port >"$out/agent-defaults.out" 2>"$out/agent-defaults.err" &
	apid=$!
	sleep 3
	threads "$apid" "agent, all groups, defaults (pid $apid)" 65 >"$out/threads.txt" 2>&1
	curl -s "http://127.0.0.1:$port/metrics" >"$out/metrics.txt"
	kill "$apid"
	wait "$apid" 2>/dev/null
	top_threads 65 >>"$out/threads.txt" 2>&1
	{
		echo "nvlink error series: $(grep -c '^gpuctl_gpu_nvlink_errors_total{' "$out/metrics.txt")" \
			"(type=crc_flit $(grep -c '^gpuctl_gpu_nvlink_errors_total{.*type="crc_flit"' "$out/metrics.txt")," \
			"replay $(grep -c '^gpuctl_gpu_nvlink_errors_total{.*type="replay"' "$out/metrics.txt")," \
			"recovery $(grep -c '^gpuctl_gpu_nvlink_errors_total{.*type="recovery"' "$out/metrics.txt")," \
			"crc_data $(grep -c '^gpuctl_gpu_nvlink_errors_total{.*type="crc_data"' "$out/metrics.txt"))"
		echo "nvlink up series: $(grep -c '^gpuctl_gpu_nvlink_up{' "$out/metrics.txt"), down: $(grep '^gpuctl_gpu_nvlink_up{' "$out/metrics.txt" | grep -c ' 0$')"
		echo "energy series: $(grep -c '^gpuctl_gpu_energy_joules_total{' "$out/metrics.txt")"
	} >>"$out/threads.txt"
	cat "$out/threads.txt"
	exit 0
fi

every1="$out/every1.conf"
echo "slow_group_every = 1" >"$every1"

agent_variant() {
	local label=$1
	shift
	"$GPUCTL" agent --listen 127.0.0.1:0 "$@" >"$out/agent-$label.out" 2>"$out/agent-$label.err" &
	local pid=$!
	sleep 3
	threads "$pid" "agent $label ($*)" 12
	kill "$pid"
	wait "$pid" 2>/dev/null
}

{
	agent_variant basic --metrics basic
	for g in ecc pcie nvlink throttle mig xid processes health; do
		agent_variant "basic-$g-every-tick" --config "$every1" --metrics "basic,$g"
	done
	agent_variant all-defaults
	top_threads 20
} >"$out/threads.txt" 2>&1

cat "$out/threads.txt"
