#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# slurm_fleet_bench.sh - issue 19's goal, by hand (not in CI): a simulated fleet
# of N nodes on this one machine, swept by `gpuctl slurm sweep --level health`;
# how long it takes, per node, as N grows (docs/slurm.md, "Fleet sweep";
# figures in bench/RESULTS.md).
#
#   scripts/slurm_fleet_bench.sh GPUCTL [N ...]      (as root; default N: 64)
#
# For each N: a fresh Slurm in a temporary directory (munge with its own key
# and socket, slurmctld, N slurmd started with -N fNNN on ports of their own:
# Debian's slurmd is built with multiple-slurmd support), every node a
# simulated 8x H200 through a wrapper of GPUCTL (its own fault file per node),
# an XID 79 on GPU 3 of every 16th node (f005, f021, ...). Then one sweep,
# timed from its start to its report, which must name exactly those nodes.
# One line per N: nodes, seconds, seconds per node, the outliers, the load
# average. GPUCTL should be a Release build (a sanitizer build starts slowly).
# Everything it started is killed by PID at the end, whatever happened.
set -u
gpuctl="$(readlink -f "${1:?usage: $0 GPUCTL [N ...]}")"
shift
sizes=("${@:-64}")
src="$(cd "$(dirname "$0")/.." && pwd)"
export PATH="$PATH:/usr/sbin:/sbin"
export GPUCTL_DATA_DIR="${GPUCTL_DATA_DIR:-$src/data}"
for b in slurmctld slurmd munged sbatch squeue scontrol sinfo; do
	command -v "$b" >/dev/null || { echo "$b is not installed (apt-get install slurmctld slurmd slurm-client munge)"; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "run as root (slurmd)"; exit 1; }

pids=()
tmp=""
stop_all() {
	for ((k = ${#pids[@]} - 1; k >= 0; k--)); do kill -TERM "${pids[k]}" 2>/dev/null; done
	sleep 1
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
	# slurmstepd daemonizes away from slurmd: what holds a file in $tmp is ours
	[ -n "$tmp" ] && for p in $(find /proc/[0-9]*/fd -maxdepth 1 -lname "$tmp/*" 2>/dev/null | cut -d/ -f3 | sort -u); do
		[ "$p" != $$ ] && kill -KILL "$p" 2>/dev/null
	done
	pids=()
	[ -n "$tmp" ] && rm -rf "$tmp"
	tmp=""
}
trap stop_all EXIT
trap 'exit 1' INT TERM

# until CMD succeeds, at most SECONDS
until_ok() {
	local end=$((SECONDS + $1))
	shift
	until "$@" >/dev/null 2>&1; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.5
	done
}

run_one() {
	local n=$1
	tmp="$(mktemp -d /tmp/gpuctl-fleet-bench.XXXXXX)"
	mkdir -p "$tmp/munge" "$tmp/state" "$tmp/spool" "$tmp/sweep"
	chmod 700 "$tmp/munge"
	dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 status=none
	chmod 400 "$tmp/munge/munge.key"
	munged -F --force --socket="$tmp/munge.sock" --key-file="$tmp/munge/munge.key" \
		--pid-file="$tmp/munge/munged.pid" --log-file="$tmp/munge/log" --seed-file="$tmp/munge/seed" >/dev/null 2>&1 &
	pids+=($!)
	local base=$((20000 + RANDOM % 20000)) nodes=() expect=()
	for ((i = 1; i <= n; i++)); do
		nodes+=("$(printf 'f%03d' "$i")")
		if [ $((i % 16)) = 5 ]; then
			expect+=("${nodes[-1]}")
			echo '{"faults": [{"kind": "xid", "gpu": 3, "xid": 79}]}' >"$tmp/faults-${nodes[-1]}.json"
		fi
	done
	{
		printf '%s\n' "ClusterName=fleetbench" "SlurmctldHost=localhost(127.0.0.1)" "SlurmctldPort=$base" \
			"SlurmdPort=$((base + 1))" "AuthType=auth/munge" "AuthInfo=socket=$tmp/munge.sock" "CryptoType=crypto/munge" \
			"SlurmUser=root" "SlurmdUser=root" "StateSaveLocation=$tmp/state" "SlurmdSpoolDir=$tmp/spool/%n" \
			"SlurmctldPidFile=$tmp/slurmctld.pid" "SlurmdPidFile=$tmp/slurmd-%n.pid" \
			"SlurmctldLogFile=$tmp/slurmctld.log" "SlurmdLogFile=$tmp/slurmd-%n.log" "ProctrackType=proctrack/linuxproc" \
			"TaskPlugin=task/none" "SelectType=select/cons_tres" "SelectTypeParameters=CR_Core" "MpiDefault=none" \
			"ReturnToService=2" "AccountingStorageType=accounting_storage/none" "JobAcctGatherType=jobacct_gather/none" \
			"SlurmdParameters=config_overrides" "MessageTimeout=30" "SlurmdTimeout=300" "MinJobAge=300" \
			"MaxJobCount=10000" "KillWait=2"
		for ((i = 0; i < n; i++)); do
			echo "NodeName=${nodes[i]} NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((base + 2 + i)) CPUs=2 RealMemory=100 State=UNKNOWN"
		done
		echo "PartitionName=fleet Nodes=f[001-$(printf '%03d' "$n")] Default=YES MaxTime=10 State=UP"
	} >"$tmp/slurm.conf"
	export SLURM_CONF="$tmp/slurm.conf"
	cat >"$tmp/gpuctl-node" <<WRAP
#!/bin/sh
GPUCTL_SIM="h200x8,faults=$tmp/faults-\$SLURMD_NODENAME.json" exec '$gpuctl' "\$@"
WRAP
	chmod 755 "$tmp/gpuctl-node"
	slurmctld -D -i -f "$tmp/slurm.conf" >/dev/null 2>&1 &
	pids+=($!)
	for node in "${nodes[@]}"; do
		slurmd -D -N "$node" -f "$tmp/slurm.conf" >/dev/null 2>&1 &
		pids+=($!)
	done
	local up=$SECONDS
	all_idle() { [ "$(sinfo -h -N -o '%N %t' | grep -c ' idle$')" = "$n" ]; }
	if ! until_ok 600 all_idle; then
		echo "N=$n: the cluster did not come up in 600 s: $(sinfo -h -o '%t %D' | tr '\n' ' ')"
		stop_all
		return 1
	fi
	up=$((SECONDS - up))
	local t0 t1 out rc
	t0=$(date +%s.%N)
	out="$("$gpuctl" slurm sweep --level health --gpuctl "$tmp/gpuctl-node" --out "$tmp/sweep" 2>"$tmp/sweep.err")"
	rc=$?
	t1=$(date +%s.%N)
	local named want
	named="$(sed -n 's/^  \(f[0-9]*\)\( GPU [0-9]*\)\{0,1\}: .*/\1/p' <<<"$out" | sort -u | tr '\n' ' ')"
	want="$(printf '%s ' "${expect[@]}")"
	local verdict="OK"
	[ "$named" = "$want" ] || verdict="WRONG (named: $named; injected: $want)"
	awk -v n="$n" -v a="$t0" -v b="$t1" -v up="$up" -v rc="$rc" -v v="$verdict" -v load="$(cut -d' ' -f1-3 /proc/loadavg)" \
		'BEGIN { printf "N=%d nodes: sweep %.1f s, %.3f s/node (exit %d; cluster up in %d s); outliers %s; load %s\n", n, b - a, (b - a) / n, rc, up, v, load }'
	[ "$verdict" = OK ] || tail -3 "$tmp/sweep.err"
	stop_all
}

for n in "${sizes[@]}"; do
	run_one "$n"
done
