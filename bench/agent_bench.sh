#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# agent_bench.sh - `gpuctl agent` performance on simulated servers whose every
# NVML-like call takes latency_us (default 2000 us, as a real H200 call does):
# scrape latency median/p99 with one scraper once a second, one every 3 s, and
# CLIENTS concurrent scrapers (each once a second, then all back-to-back; for each ENCODING: gzip, as Prometheus asks,
# and plain, as curl without --compressed does), agent CPU and RSS
# idle (1 s interval) and under load, and where the RSS goes (smaps: libraries,
# heap, arenas, thread stacks) idle and under the first load, against one
# serial nvidia-smi-style sweep of the same fields; then `gpuctl top` on the
# same server in tmux (its CPU and RSS; TOP=0 skips it). At 8 and 64 simulated
# GPUs. Loopback only.
#
#   bench/agent_bench.sh                 # build (Release) and run
#   BUILD=build-rel CLIENTS=100 SECONDS_LOAD=10 GPUS="8 64" ENCODINGS="gzip plain" bench/agent_bench.sh
#   DCGM_COMPAT=on HISTORY=off ... bench/agent_bench.sh   # the dcgm-exporter names served too
#   GPUCTL=/path/gpuctl AGENT_BENCH=/path/agent_bench bench/agent_bench.sh   # built elsewhere: no build
#                                        # (scripts/gpu/agent_bench.sh, on the GPU machine)
# Output: plain text; copy the figures into bench/RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${BUILD:-build-release}"
CLIENTS="${CLIENTS:-100}"
SECONDS_LOAD="${SECONDS_LOAD:-10}"
SECONDS_IDLE="${SECONDS_IDLE:-20}"
SECONDS_SLOW="${SECONDS_SLOW:-24}" # the scraper every 3 s: 8 scrapes (at 8 and at 64 GPUs: 48 s)
LATENCY_US="${LATENCY_US:-2000}"
GPUS="${GPUS:-8 64}"
ENCODINGS="${ENCODINGS:-gzip plain}"
HISTORY="${HISTORY:-60m}" # the agent's history (/api/v1/history): its default (1 h), or off
DCGM_COMPAT="${DCGM_COMPAT:-off}" # on: /metrics also in dcgm-exporter's names (docs/metrics.md)
if [ -z "${GPUCTL:-}" ] && [ "${SKIP_BUILD:-0}" != 1 ]; then
	cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DGPUCTL_WITH_CUDA=OFF >/dev/null
	# agent_bench (CMakeLists.txt) links the layer libraries it needs: device and core
	cmake --build "$BUILD" -j"${JOBS:-2}" --target gpuctl agent_bench >/dev/null
fi
GPUCTL="${GPUCTL:-$BUILD/gpuctl}"
AGENT_BENCH="${AGENT_BENCH:-$BUILD/agent_bench}"
export GPUCTL_DATA_DIR="$PWD/data"
tmp=$(mktemp -d)
agent_pid=""
# (|| true: under set -e a failing command in the trap, tmux with no server,
# ended the script there with status 1 and left $tmp behind)
trap '[ -n "$agent_pid" ] && kill "$agent_pid" 2>/dev/null; tmux -S "$tmp/tmux" kill-server 2>/dev/null || true; rm -rf "$tmp"' EXIT

echo "date: $(date -u +%Y-%m-%dT%H:%MZ)  host: $(uname -n)  cpus: $(nproc)  $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
for gpus in $GPUS; do
	spec="h200x8,latency_us=$LATENCY_US,gpus=$gpus"
	echo "== $gpus simulated H200, every call ${LATENCY_US} us, interval 1 s, $CLIENTS scrapers, history $HISTORY, dcgm_compat $DCGM_COMPAT"
	# the scrapers all come from 127.0.0.1 but stand for as many Prometheus servers:
	# no per-address limit (per_ip_connections is 32 by default)
	printf 'per_ip_connections = 0\nhistory = %s\ndcgm_compat = %s\n' "$HISTORY" "$DCGM_COMPAT" >"$tmp/agent.conf"
	"$GPUCTL" --sim "$spec" agent --config "$tmp/agent.conf" --listen 127.0.0.1:0 --interval 1s \
		--kernel-log off 2>"$tmp/agent.err" &
	agent_pid=$!
	port=""
	for _ in $(seq 1 100); do
		port=$(sed -n 's/.*listening on http:\/\/127.0.0.1:\([0-9]*\)\/metrics.*/\1/p' "$tmp/agent.err")
		[ -n "$port" ] && break
		sleep 0.1
	done
	[ -n "$port" ] || { cat "$tmp/agent.err"; exit 1; }
	sleep 3 # settle: first ticks rendered
	# and the topology read at start (GPU pairs x one call: 8 s at 64 GPUs) finished
	for _ in $(seq 1 300); do
		grep -qx gpuctl-links /proc/"$agent_pid"/task/*/comm 2>/dev/null || break
		sleep 0.1
	done
	"$AGENT_BENCH" idle "$agent_pid" "$SECONDS_IDLE"
	"$AGENT_BENCH" smaps "$agent_pid"
	# one Prometheus scraping every second (the exposition rendered at every tick)
	"$AGENT_BENCH" scrape "$port" "$agent_pid" 1 "$SECONDS_IDLE" 1000 gzip
	# one slower than the tick, every 3 s: from its third scrape on, rendered at the
	# tick before each (src/agent/render_ahead.c), not while it waits (SECONDS_SLOW=0: skip)
	if [ "$SECONDS_SLOW" != 0 ]; then
		"$AGENT_BENCH" scrape "$port" "$agent_pid" 1 "$SECONDS_SLOW" 3000 gzip
	fi
	smaps=smaps # where the memory goes under the first load (its connections open)
	for enc in $ENCODINGS; do
		# 100 scrapers each once a second (independent Prometheus servers, at spread phases)
		"$AGENT_BENCH" scrape "$port" "$agent_pid" "$CLIENTS" "$SECONDS_LOAD" 1000 "$enc" $smaps
		smaps=""
		# the same 100 scraping back-to-back: saturation, the worst case
		"$AGENT_BENCH" scrape "$port" "$agent_pid" "$CLIENTS" "$SECONDS_LOAD" 0 "$enc"
	done
	"$AGENT_BENCH" idle "$agent_pid" 5
	kill "$agent_pid"
	wait "$agent_pid" 2>/dev/null || true
	agent_pid=""
	"$AGENT_BENCH" sweep "$spec" 5
	# gpuctl top on the same server in a terminal (tmux 200x60, its 1 s refresh):
	# its CPU and RSS over SECONDS_IDLE, once its first screen is up (TOP=0: skip)
	if [ "${TOP:-1}" = 1 ] && command -v tmux >/dev/null; then
		tmux -S "$tmp/tmux" -f /dev/null new-session -d -x 200 -y 60 \
			"exec env TERM=xterm-256color LANG=C.UTF-8 GPUCTL_DATA_DIR='$GPUCTL_DATA_DIR' '$GPUCTL' --sim '$spec' top"
		top_pid=$(tmux -S "$tmp/tmux" display -p '#{pane_pid}')
		for _ in $(seq 1 300); do
			tmux -S "$tmp/tmux" capture-pane -p | grep -q "GPU" && break
			sleep 0.1
		done
		sleep 3 # its first ticks (rates need two snapshots)
		echo "-- gpuctl top (pid $top_pid), 200x60 terminal:"
		"$AGENT_BENCH" idle "$top_pid" "$SECONDS_IDLE"
		tmux -S "$tmp/tmux" kill-server 2>/dev/null || true
	fi
done
