#!/usr/bin/env bash
# slurm_cluster.sh - gpuctl with a real Slurm 22.05 cluster on loopback
# (labels cli and integration; docs/slurm.md, "The test cluster").
#
# Brings up, in a temporary directory: munge with its own key and socket,
# slurmctld, three slurmd (-N n1..n3, their own ports, NodeHostname=localhost),
# GPUs as character devices made with mknod, gres.conf written by `gpuctl
# slurm gres-conf` from a simulated server (tests/data/slurm-nvpairs.json:
# 4 GPUs, NVLink pairs 0-1 and 2-3 only), one gpuctl agent with its pool per
# node, the contrib/slurm prolog, epilog and health check, and the SPANK
# plugin. Then checks:
#   - gres.conf's Links rows, and the node's GRES in slurmctld
#   - a 2-GPU job, while GPU 0 is held by another job, receives the NVLink
#     pair 2,3 (first fit would give 1,2)
#   - a job's GPU statistics: srun --gpu-stats, `gpuctl jobs --slurm`,
#     AdminComment, the hpc_job label on the agent's metrics while it runs
#   - --gpu-health=quick lets a healthy step run and stops one on a failing GPU
#     (n3's periodic health check paused meanwhile, so the node stays up)
#   - an ECC fault in n2's simulated server: slurmd's HealthCheckProgram drains
#     n2 with "gpuctl: GPU 1 ..."; clearing the fault resumes it; a node an
#     administrator drained stays drained
#   - `srun --gpus=1 true` submit-to-finish latency, median of 20 (printed;
#     SLURM_BENCH_OUT=FILE also writes it there)
# The cluster is torn down by PID on exit, whatever happened. Needs root and
# Debian's slurmctld slurmd slurm-client munge (scripts/deps.sh installs them
# with GPUCTL_TEST_DEPS=1); without them it says SKIP and exits 0, unless
# GPUCTL_TEST_DEPS=1 (then missing packages fail the test). SLURM_TEST_HOLD=N
# keeps the cluster up N seconds after it started (prints its directory; for
# debugging by hand with SLURM_CONF=DIR/slurm.conf).
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
src="${GPUCTL_SRC_DIR:-$here/../..}"
: "${GPUCTL:?set GPUCTL to the gpuctl binary}"
GPUCTL="$(readlink -f "$GPUCTL")"
build="${GPUCTL_BUILD_DIR:-$(dirname "$GPUCTL")}"
spank="$(readlink -f "$build/slurm/gpuctl_spank.so")"
export GPUCTL_DATA_DIR="${GPUCTL_DATA_DIR:-$src/data}"
unset GPUCTL_SIM GPUCTL_POOL_SOCKET SLURM_JOB_ID SLURM_JOBID SLURM_JOB_GPUS

skip() {
	if [ "${GPUCTL_TEST_DEPS:-0}" = 1 ]; then
		echo "FAIL: $* (GPUCTL_TEST_DEPS=1: scripts/deps.sh should have installed it)"
		exit 1
	fi
	echo "SKIP: $*; Slurm integration not tested"
	exit 0
}
[ "$(id -u)" = 0 ] || skip "needs root (slurmd, mknod)"
for b in slurmctld slurmd munged srun sbatch scontrol sinfo squeue; do
	command -v "$b" >/dev/null 2>&1 || PATH="$PATH:/usr/sbin:/sbin" command -v "$b" >/dev/null 2>&1 ||
		skip "'$b' is not installed (apt-get install slurmctld slurmd slurm-client munge)"
done
export PATH="$PATH:/usr/sbin:/sbin"
[ -f "$spank" ] || skip "the SPANK plugin '$spank' was not built (libslurm-dev missing at configure time)"

t="$(mktemp -d /tmp/gpuctl-slurm.XXXXXX)"
chmod 755 "$t"
export SLURM_CONF="$t/slurm.conf"
pids=()
fails=0
checks=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { checks=$((checks + 1)); }
deadline=$((SECONDS + 240)) # the whole test, cluster start included

teardown() {
	set +e
	pkill -P "$watchdog" sleep 2>/dev/null; kill "$watchdog" 2>/dev/null # the watchdog and its sleep, by PID
	if [ -S "$t/munge.sock" ] && [ -n "${ctld_port:-}" ]; then
		timeout 5 scancel --quiet --user=root 2>/dev/null
		for _ in $(seq 50); do
			[ -z "$(timeout 2 squeue -h -o %i 2>/dev/null)" ] && break
			sleep 0.1
		done
	fi
	# daemons and agents, newest first: TERM, then KILL what is left
	for ((k = ${#pids[@]} - 1; k >= 0; k--)); do kill -TERM "${pids[k]}" 2>/dev/null; done
	for _ in $(seq 50); do
		alive=0
		for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
		[ $alive = 0 ] && break
		sleep 0.1
	done
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
	# slurmstepd daemonizes away from slurmd: any process holding a file in $t is ours
	for fd in /proc/[0-9]*/fd/*; do
		case "$(readlink "$fd" 2>/dev/null)" in
		"$t"/*) p="${fd#/proc/}"; p="${p%%/*}"; [ "$p" != $$ ] && kill -KILL "$p" 2>/dev/null ;;
		esac
	done
	if [ "$fails" != 0 ] || [ -n "${KEEP_LOGS:-}" ]; then
		for f in "$t"/slurmctld.log "$t"/slurmd-n1.log "$t"/hooks.log; do
			[ -f "$f" ] && { echo "--- $f (last lines)"; tail -n 25 "$f"; }
		done
	fi
	rm -rf "$t"
}
trap teardown EXIT
trap 'echo "FAIL: stopped (signal or the 270 s watchdog)"; fails=$((fails + 1)); exit 1' INT TERM
# the watchdog ends the test (and so tears the cluster down) before CTest's 300 s limit
(sleep 270 && kill -TERM $$) >/dev/null 2>&1 &
watchdog=$!

# free TCP ports on loopback
ports=()
p=$((20000 + RANDOM % 30000))
while [ ${#ports[@]} -lt 7 ]; do
	p=$((p + 1))
	(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null && continue
	ports+=("$p")
done
ctld_port=${ports[0]}

# ---- munge: its own key and socket --------------------------------------------------
mkdir -p "$t/munge" "$t/state" "$t/dev" "$t/spool"
chmod 700 "$t/munge"
dd if=/dev/urandom of="$t/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$t/munge/munge.key"
munged -F --force --socket="$t/munge.sock" --key-file="$t/munge/munge.key" --pid-file="$t/munge/munged.pid" \
	--log-file="$t/munge/munged.log" --seed-file="$t/munge/seed" >/dev/null 2>&1 &
pids+=($!)

# ---- GPUs: character devices (NVIDIA's major 195) ----------------------------------
for i in 0 1 2 3; do mknod "$t/dev/nvidia$i" c 195 "$i" || skip "mknod failed (no CAP_MKNOD here)"; done

# ---- gres.conf from the simulated server -------------------------------------------
sim="$src/tests/data/slurm-nvpairs.json"
: >"$t/gres.conf"
for n in n1 n2 n3; do
	"$GPUCTL" --sim "$sim" slurm gres-conf --node "$n" --dev-dir "$t/dev" >>"$t/gres.conf" ||
		fail "gpuctl slurm gres-conf for $n"
done
gres="$(sed -n 's/^# \(NodeName=n1 Gres=.*\)/\1/p' "$t/gres.conf" | sed 's/NodeName=n1 //')"
grep -q "^NodeName=n1 Name=gpu Type=nvidia_h100_80gb_hbm3 File=$t/dev/nvidia0 Cores=0-1 Links=-1,6,0,0$" "$t/gres.conf" &&
	grep -q "File=$t/dev/nvidia3 Cores=0-1 Links=0,0,6,-1$" "$t/gres.conf" && [ "$gres" = "Gres=gpu:nvidia_h100_80gb_hbm3:4" ] &&
	ok || fail "gres.conf lines: $(head -4 "$t/gres.conf" | tr '\n' '|')"

# ---- gpuctl: one agent with its pool per node, hooks' settings ------------------------
for k in 1 2 3; do
	n=n$k
	GPUCTL_SIM="$sim,faults=$t/faults-$n.json" "$GPUCTL" agent --listen "127.0.0.1:${ports[3 + k]}" --kernel-log off \
		--pool --pool-dir "$t/pool-$n" --pool-socket "$t/pool-$n.sock" >"$t/agent-$n.log" 2>&1 &
	pids+=($!)
done
cat >"$t/gpuctl.env" <<ENV
GPUCTL='$GPUCTL'
GPUCTL_DATA_DIR='$GPUCTL_DATA_DIR'
GPUCTL_SIM="$sim,faults=$t/faults-\$SLURMD_NODENAME.json"
GPUCTL_POOL_SOCKET="$t/pool-\$SLURMD_NODENAME.sock"
SLURM_CONF='$t/slurm.conf'
ENV
for h in prolog epilog healthcheck; do
	# a node with DIR/no-healthcheck-NODE skips the periodic check (the --gpu-health test)
	printf '#!/bin/sh\n[ %s = healthcheck ] && [ -e %s/no-healthcheck-$SLURMD_NODENAME ] && exit 0\necho "$(date +%%T) %s node=$SLURMD_NODENAME job=$SLURM_JOB_ID gpus=$SLURM_JOB_GPUS" >>%s/hooks.log\nGPUCTL_SLURM_ENV=%s/gpuctl.env exec %s/contrib/slurm/%s >>%s/hooks.log 2>&1\n' \
		"$h" "$t" "$h" "$t" "$t" "$src" "$h" "$t" >"$t/$h"
	chmod 755 "$t/$h"
done
echo "optional $spank gpuctl=$GPUCTL socket=$t/pool-%n.sock sim=$sim,faults=$t/faults-%n.json admin_comment=1" >"$t/plugstack.conf"

# ---- Slurm ----------------------------------------------------------------------------
cat >"$t/slurm.conf" <<CONF
ClusterName=gpuctltest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=${ports[1]}
AuthType=auth/munge
AuthInfo=socket=$t/munge.sock
CryptoType=crypto/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$t/state
SlurmdSpoolDir=$t/spool/%n
SlurmctldPidFile=$t/slurmctld.pid
SlurmdPidFile=$t/slurmd-%n.pid
SlurmctldLogFile=$t/slurmctld.log
SlurmdLogFile=$t/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
SchedulerType=sched/builtin
MpiDefault=none
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
SlurmdParameters=config_overrides
MessageTimeout=5
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=300
KillWait=2
Prolog=$t/prolog
Epilog=$t/epilog
HealthCheckProgram=$t/healthcheck
HealthCheckInterval=2
HealthCheckNodeState=ANY
PlugStackConfig=$t/plugstack.conf
NodeName=n1 NodeHostname=localhost NodeAddr=127.0.0.1 Port=${ports[1]} CPUs=2 RealMemory=100 $gres State=UNKNOWN
NodeName=n2 NodeHostname=localhost NodeAddr=127.0.0.1 Port=${ports[2]} CPUs=2 RealMemory=100 $gres State=UNKNOWN
NodeName=n3 NodeHostname=localhost NodeAddr=127.0.0.1 Port=${ports[3]} CPUs=2 RealMemory=100 $gres State=UNKNOWN
PartitionName=gpu Nodes=n[1-3] Default=YES MaxTime=10 State=UP
CONF
cp "$t/gres.conf" "$t/gres.conf.orig"

started=$SECONDS
slurmctld -D -i -f "$t/slurm.conf" >/dev/null 2>&1 &
pids+=($!)
for n in n1 n2 n3; do
	slurmd -D -N "$n" -f "$t/slurm.conf" >/dev/null 2>&1 &
	pids+=($!)
done

# wait_for SECONDS CMD...: until CMD succeeds (bounded)
wait_for() {
	local until=$((SECONDS + $1))
	shift
	while [ $SECONDS -lt $until ] && [ $SECONDS -lt $deadline ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	return 1
}
nodes_idle() { [ "$(sinfo -h -N -o '%N %t' 2>/dev/null | sort -u | grep -c ' idle$')" = 3 ]; }
agents_up() { for n in n1 n2 n3; do "$GPUCTL" queue --socket "$t/pool-$n.sock" || return 1; done; }
if ! wait_for 60 nodes_idle || ! wait_for 20 agents_up; then
	fail "cluster not up: $(sinfo -h -N -o '%N %t %E' 2>&1 | tr '\n' '|')"
	exit 1
fi
echo "cluster up in $((SECONDS - started)) s: $(sinfo -h -N -o '%N:%t' | sort -u | tr '\n' ' ')"
[ -n "${SLURM_TEST_HOLD:-}" ] && { echo "$t"; sleep "$SLURM_TEST_HOLD"; }
scontrol show node n1 | grep -q "Gres=gpu:nvidia_h100_80gb_hbm3:4" && ok || fail "n1's GRES: $(scontrol show node n1 | grep Gres)"

# ---- a 2-GPU job gets an NVLink pair ------------------------------------------------------
hold="$(sbatch --parsable -w n1 --gpus=1 -c 1 -o /dev/null --wrap 'sleep 60')"
wait_for 20 sh -c "[ \"\$(squeue -h -j $hold -o %T)\" = RUNNING ]" || fail "the holding job did not start"
held="$(scontrol show job -d "$hold" | sed -n 's/.*GRES=gpu[^(]*(IDX:\([0-9,-]*\)).*/\1/p' | head -1)"
pair="$(timeout 30 srun -w n1 --gpus=2 -c 1 sh -c 'echo $SLURM_STEP_GPUS' 2>"$t/srun.err")"
echo "holding job on GPU $held; the 2-GPU job got GPUs $pair"
if [ "$held" = 0 ]; then
	[ "$pair" = "2,3" ] && ok || fail "2-GPU job got '$pair' beside GPU 0 held (expected the NVLink pair 2,3): $(cat "$t/srun.err")"
else
	fail "the holding job got GPU '$held', expected 0"
fi

# ---- the hpc_job label while a job runs; statistics at its end ----------------------------
hpc_series() { curl -s "http://127.0.0.1:${ports[4]}/metrics" | grep -q "^gpuctl_job_gpu_seconds{.*hpc_job=\"$hold\"}"; }
wait_for 10 hpc_series && ok ||
	fail "no hpc_job=\"$hold\" series on n1's agent: $(curl -s "http://127.0.0.1:${ports[4]}/metrics" | grep -c gpuctl_job_) job lines; $(tail -3 "$t/hooks.log")"
scancel "$hold"
wait_for 20 sh -c "[ -z \"\$(squeue -h -j $hold -o %i 2>/dev/null)\" ]"

out="$(timeout 30 srun -w n1 --gpus=2 --gpu-stats sh -c 'sleep 2; echo ran' 2>&1)"
job="$(echo "$out" | sed -n 's/^Slurm job \([0-9]*\): gpuctl: .*/\1/p' | head -1)"
echo "$out" | grep -q "^Slurm job [0-9]*: gpuctl: 2 GPUs, [0-9.]* GPU-s, [0-9.]* J, util avg" && ok ||
	fail "srun --gpu-stats printed no statistics: $out"
if [ -n "$job" ]; then
	wait_for 15 sh -c "'$GPUCTL' jobs --slurm $job --socket '$t/pool-n1.sock' --json | grep -q '\"state\": \"done\"'" ||
		fail "the epilog did not end job $job's accounting"
	js="$("$GPUCTL" jobs --slurm "$job" --socket "$t/pool-n1.sock" --json)"
	echo "$js" | grep -q "\"slurm_job\": $job" && echo "$js" | grep -q '"gpu_seconds"' &&
		echo "$js" | grep -q '"energy_j"' && echo "$js" | grep -q '"state": "done"' && ok ||
		fail "gpuctl jobs --slurm $job --json: $js"
	table="$("$GPUCTL" jobs --slurm "$job" --socket "$t/pool-n1.sock")"
	echo "$table" | grep -q "slurm-$job .*done .* J" && ok || fail "gpuctl jobs --slurm $job: $table"
	# 2 GPUs held from the prolog to the epilog, around a 2 s step
	gsec="$(echo "$js" | sed -n 's/.*"gpu_seconds": \([0-9.]*\).*/\1/p' | awk '{ s += $1 } END { print s }')"
	awk -v s="$gsec" 'BEGIN { exit !(s >= 3.9 && s < 60) }' && ok || fail "GPU-seconds '$gsec' for a 2 s step on 2 GPUs"
	wait_for 10 sh -c "scontrol show job $job | grep -q 'AdminComment=gpuctl: 2 GPUs'" && ok ||
		fail "no AdminComment on job $job: $(scontrol show job "$job" | grep -i comment)"
else
	fail "no Slurm job id in srun's --gpu-stats output"
fi

# ---- --gpu-health=quick ----------------------------------------------------------------------
out="$(timeout 30 srun -w n3 --gpus=1 --gpu-health=quick sh -c 'echo healthy-ran' 2>&1)"
echo "$out" | grep -q healthy-ran && ok || fail "--gpu-health=quick on healthy GPUs: $out"
# every GPU of n3 failing (its periodic health check paused, so the node stays up)
touch "$t/no-healthcheck-n3"
sleep 2.5
ecc='{"kind": "ecc_uncorrectable", "gpu":'
echo "{\"faults\": [$ecc 0}, $ecc 1}, $ecc 2}, $ecc 3}]}" >"$t/faults-n3.json"
out="$(timeout 30 srun -w n3 --gpus=1 --gpu-health=quick sh -c 'echo unhealthy-ran' 2>&1)"
rc=$?
[ $rc != 0 ] && ! echo "$out" | grep -q unhealthy-ran && echo "$out" | grep -q "gpuctl: --gpu-health=quick: GPUs [0-3] on n3 FAIL" &&
	ok || fail "--gpu-health=quick let a task start on a failing GPU (exit $rc): $out"
rm -f "$t/faults-n3.json" "$t/no-healthcheck-n3"

# ---- health check: drain on a GPU fault, resume when it is gone ----------------------------
admin_reason="maintenance by the admin"
scontrol update NodeName=n3 State=DRAIN Reason="$admin_reason"
printf '{"faults": [{"kind": "ecc_uncorrectable", "gpu": 1, "count": 2}]}\n' >"$t/faults-n2.json.tmp"
mv "$t/faults-n2.json.tmp" "$t/faults-n2.json"
drained() { scontrol show node "$1" | grep -q "State=[A-Z+]*DRAIN"; }
reason() { scontrol show node "$1" | sed -n 's/^ *Reason=\(.*\) \[.*/\1/p'; }
if wait_for 30 drained n2; then
	r="$(reason n2)"
	case "$r" in
	"gpuctl: GPU 1 ecc-volatile-uncorrectable"*) ok ;;
	*) fail "n2 drained with reason '$r'" ;;
	esac
else
	fail "n2 not drained after an ECC fault on GPU 1 ($(scontrol show node n2 | grep -E 'State|Reason' | tr -s ' '))"
fi
rm -f "$t/faults-n2.json"
undrained() { ! drained "$1"; }
wait_for 30 undrained n2 && ok || fail "n2 not resumed after the fault cleared: $(reason n2)"
# n3 was healthy all along, but an administrator drained it: it stays drained
sleep 3
drained n3 && [ "$(reason n3)" = "$admin_reason" ] && ok || fail "n3 (drained by the admin) lost its drain: $(reason n3)"
scontrol update NodeName=n3 State=RESUME
# and a job can run on n2 again
out="$(timeout 30 srun -w n2 --gpus=1 true 2>&1)" && ok || fail "job on the resumed n2: $out"

# ---- latency: srun --gpus=1 true, submit to finish ------------------------------------------
lat=()
for i in $(seq 20); do
	s=$(date +%s%N)
	timeout 30 srun --gpus=1 true >/dev/null 2>&1 || fail "srun --gpus=1 true (run $i)"
	lat+=($((($(date +%s%N) - s) / 1000000)))
done
median="$(printf '%s\n' "${lat[@]}" | sort -n | awk '{ v[NR] = $1 } END { print (v[10] + v[11]) / 2 }')"
echo "srun --gpus=1 true, submit to finish: median $median ms over 20 (min $(printf '%s\n' "${lat[@]}" | sort -n | head -1) ms, max $(printf '%s\n' "${lat[@]}" | sort -n | tail -1) ms)"
[ -n "${SLURM_BENCH_OUT:-}" ] && echo "$median" >"$SLURM_BENCH_OUT"
ok

echo "slurm_cluster: $checks checks passed, $fails failed ($((SECONDS - started)) s with the cluster up)"
[ "$fails" = 0 ]
