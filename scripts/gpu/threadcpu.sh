#!/usr/bin/env bash
# threadcpu.sh - where a running gpuctl spends its CPU, thread by thread: starts
# `gpuctl agent` on the real GPUs for 20 s and prints each thread's name and
# CPU seconds from /proc/PID/task/*/stat (sampler threads are gpuctl-gpuN,
# gpuctl-events; unnamed ones are the main thread, libmicrohttpd's or NVML's).
# Output: $OUT/threadcpu/threads.txt. Reads only.
set -uo pipefail
out="${OUT:-./threadcpu-out}/threadcpu"
mkdir -p "$out"
GPUCTL="${GPUCTL:?set GPUCTL}"
"$GPUCTL" agent --listen 127.0.0.1:0 >"$out/agent.out" 2>"$out/agent.err" &
pid=$!
sleep 20
tck=$(getconf CLK_TCK)
{
	echo "gpuctl agent pid $pid after 20 s: thread, CPU seconds (user+system)"
	for t in /proc/$pid/task/*; do
		name=$(cat "$t/comm")
		# fields 14 and 15 of stat, after the (comm) field
		read -r ut st < <(sed 's/^.*) //' "$t/stat" | awk '{ print $12, $13 }')
		awk -v n="$name" -v tid="${t##*/}" -v u="$ut" -v s="$st" -v h="$tck" \
			'BEGIN { printf "%-8s %-16s %7.2f s\n", tid, n, (u + s) / h }'
	done
} >"$out/threads.txt"
kill "$pid"
wait "$pid" 2>/dev/null
cat "$out/threads.txt"
