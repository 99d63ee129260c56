#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# slurm_cluster.sh - gpuctl with a real Slurm 22.05 cluster on loopback
# (labels cli and integration; docs/slurm.md, "The test cluster").
#
# Brings up, in a temporary directory: munge with its own key and socket,
# slurmctld, four slurmd (-N n1..n4, their own ports, NodeHostname=localhost),
# GPUs as character devices made with mknod, gres.conf written by `gpuctl
# slurm gres-conf` from a simulated server (tests/data/slurm-nvpairs.json:
# 4 GPUs, NVLink pairs 0-1 and 2-3 only), one gpuctl agent with its pool per
# node n1..n3 (n4 has none: its prolog says so and goes on), the contrib/slurm
# prolog, epilog and health check, and the SPANK plugin. Then checks:
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
#   - `gpuctl slurm sweep --level bench-quick --drain --max-drain 2` over n1..n4, each node a
#     simulated 8x H200 (through a wrapper of gpuctl): n2 carries pending row
#     remaps on GPU 3 (a rule with an action), n4 a power cap on GPU 5 (its
#     SIMULATED GEMM figure 18%
#     under the fleet's); the sweep names exactly n2 and n4, drains exactly
#     them ('gpuctl sweep: ...'), and the health check does not resume them;
#     a sweep of a node whose job fails (n1) and of one that never starts
#     (n3, drained by the administrator) names both and drains neither
#   - `srun --gpus=1 true` submit-to-finish latency, median of 20 (printed;
#     SLURM_BENCH_OUT=FILE also writes it there)
# The cluster is torn down by PID on exit, whatever happened. Needs root and
# Debian's slurmctld slurmd slurm-client munge (scripts/deps.sh installs them
# with GPUCTL_TEST_DEPS=1); without them it skips (exit 77), except in CI
# (CI=true or GPUCTL_TEST_DEPS=1: then a skip fails). Nothing waits a guessed
# time: a job that must hold a GPU runs until the test removes a file, and a
# health check the test must know has ended is counted in the hooks' log.
# SLURM_TEST_HOLD=N
# keeps the cluster up N seconds after it started (prints its directory; for
# debugging by hand with SLURM_CONF=DIR/slurm.conf).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
GPUCTL="$(readlink -f "$GPUCTL")"
build="${GPUCTL_BUILD_DIR:-$(dirname "$GPUCTL")}"
spank="$(readlink -f "$build/slurm/gpuctl_spank.so")"
unset GPUCTL_POOL_SOCKET SLURM_JOB_ID SLURM_JOBID SLURM_JOB_GPUS
need_root "slurmd, mknod"
need curl
for b in slurmctld slurmd munged srun sbatch scontrol sinfo squeue; do
	command -v "$b" >/dev/null 2>&1 || PATH="$PATH:/usr/sbin:/sbin" command -v "$b" >/dev/null 2>&1 ||
		skip "'$b' is not installed (apt-get install slurmctld slurmd slurm-client munge)"
done
export PATH="$PATH:/usr/sbin:/sbin"
[ -f "$spank" ] || skip "the SPANK plugin '$spank' was not built (libslurm-dev missing at configure time)"

export SLURM_CONF="$tmp/slurm.conf"
pids=()
ok() { checks=$((checks + 1)); }
deadline=$((SECONDS + 240)) # the whole test, cluster start included

teardown() {
	set +e
	pkill -P "$watchdog" sleep 2>/dev/null; kill "$watchdog" 2>/dev/null # the watchdog and its sleep, by PID
	if [ -S "$tmp/munge.sock" ] && [ -n "${ctld_port:-}" ]; then
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
	# slurmstepd daemonizes away from slurmd: any process holding a file in $tmp is ours
	# (one find, not a readlink per descriptor: thousands of them on a busy machine took minutes)
	for p in $(find /proc/[0-9]*/fd -maxdepth 1 -lname "$tmp/*" 2>/dev/null | cut -d/ -f3 | sort -u); do
		[ "$p" != $$ ] && kill -KILL "$p" 2>/dev/null
	done
	if [ "$fails" != 0 ] || [ -n "${KEEP_LOGS:-}" ]; then
		for f in "$tmp"/slurmctld.log "$tmp"/slurmd-n1.log "$tmp"/hooks.log; do
			[ -f "$f" ] && { echo "--- $f (last lines)"; tail -n 25 "$f"; }
		done
	fi
}
on_exit teardown
trap 'echo "FAIL: stopped (signal or the 270 s watchdog)"; fails=$((fails + 1)); exit 1' INT TERM
# the watchdog ends the test (and so tears the cluster down) before CTest's 300 s limit
(sleep 270 && kill -TERM $$) >/dev/null 2>&1 &
watchdog=$!

# free TCP ports on loopback
ports=()
p=$((20000 + RANDOM % 30000))
while [ ${#ports[@]} -lt 8 ]; do
	p=$((p + 1))
	(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null && continue
	ports+=("$p")
done
ctld_port=${ports[0]}

# ---- munge: its own key and socket --------------------------------------------------
mkdir -p "$tmp/munge" "$tmp/state" "$tmp/dev" "$tmp/spool"
chmod 700 "$tmp/munge"
dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$tmp/munge/munge.key"
munged -F --force --socket="$tmp/munge.sock" --key-file="$tmp/munge/munge.key" --pid-file="$tmp/munge/munged.pid" \
	--log-file="$tmp/munge/munged.log" --seed-file="$tmp/munge/seed" >/dev/null 2>&1 &
pids+=($!)

# ---- GPUs: character devices (NVIDIA's major 195) ----------------------------------
for i in 0 1 2 3; do mknod "$tmp/dev/nvidia$i" c 195 "$i" || skip "mknod failed (no CAP_MKNOD here)"; done

# ---- gres.conf from the simulated server -------------------------------------------
sim="$src/tests/data/slurm-nvpairs.json"
: >"$tmp/gres.conf"
for n in n1 n2 n3 n4; do
	"$GPUCTL" --sim "$sim" slurm gres-conf --node "$n" --dev-dir "$tmp/dev" >>"$tmp/gres.conf" ||
		fail "gpuctl slurm gres-conf for $n"
done
gres="$(sed -n 's/^# \(NodeName=n1 Gres=.*\)/\1/p' "$tmp/gres.conf" | sed 's/NodeName=n1 //')"
grep -q "^NodeName=n1 Name=gpu Type=nvidia_h100_80gb_hbm3 File=$tmp/dev/nvidia0 Cores=0-1 Links=-1,6,0,0$" "$tmp/gres.conf" &&
	grep -q "File=$tmp/dev/nvidia3 Cores=0-1 Links=0,0,6,-1$" "$tmp/gres.conf" && [ "$gres" = "Gres=gpu:nvidia_h100_80gb_hbm3:4" ] &&
	ok || fail "gres.conf lines: $(head -4 "$tmp/gres.conf" | tr '\n' '|')"

# ---- gpuctl: one agent with its pool per node, hooks' settings ------------------------
for k in 1 2 3; do
	n=n$k
	GPUCTL_SIM="$sim,faults=$tmp/faults-$n.json" "$GPUCTL" agent --listen "127.0.0.1:${ports[3 + k]}" --kernel-log off \
		--pool --pool-dir "$tmp/pool-$n" --pool-socket "$tmp/pool-$n.sock" >"$tmp/agent-$n.log" 2>&1 &
	pids+=($!)
done
cat >"$tmp/gpuctl.env" <<ENV
GPUCTL='$GPUCTL'
GPUCTL_DATA_DIR='$GPUCTL_DATA_DIR'
GPUCTL_SIM="$sim,faults=$tmp/faults-\$SLURMD_NODENAME.json"
GPUCTL_POOL_SOCKET="$tmp/pool-\$SLURMD_NODENAME.sock"
SLURM_CONF='$tmp/slurm.conf'
ENV
# each hook logs its start and its end in hooks.log (the test counts the health
# checks that started and ended); a node with DIR/no-healthcheck-NODE skips the
# periodic check (the --gpu-health test), after logging its start
for h in prolog epilog healthcheck; do
	cat >"$tmp/$h" <<HOOK
#!/bin/sh
echo "\$(date +%T) $h node=\$SLURMD_NODENAME job=\$SLURM_JOB_ID gpus=\$SLURM_JOB_GPUS" >>$tmp/hooks.log
rc=0
[ $h = healthcheck ] && [ -e $tmp/no-healthcheck-\$SLURMD_NODENAME ] ||
	GPUCTL_SLURM_ENV=$tmp/gpuctl.env $src/contrib/slurm/$h >>$tmp/hooks.log 2>&1 || rc=\$?
echo "$h-end node=\$SLURMD_NODENAME" >>$tmp/hooks.log
exit \$rc
HOOK
	chmod 755 "$tmp/$h"
done
touch "$tmp/no-healthcheck-n4" # n4 is there for the sweep only: its periodic check would only cost CPU
echo "optional $spank gpuctl=$GPUCTL socket=$tmp/pool-%n.sock sim=$sim,faults=$tmp/faults-%n.json admin_comment=1" >"$tmp/plugstack.conf"

# ---- Slurm ----------------------------------------------------------------------------
cat >"$tmp/slurm.conf" <<CONF
ClusterName=gpuctltest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=${ports[1]}
AuthType=auth/munge
AuthInfo=socket=$tmp/munge.sock
CryptoType=crypto/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool/%n
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd-%n.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd-%n.log
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
Prolog=$tmp/prolog
Epilog=$tmp/epilog
HealthCheckProgram=$tmp/healthcheck
HealthCheckInterval=2
HealthCheckNodeState=ANY
PlugStackConfig=$tmp/plugstack.conf
NodeName=n1 NodeHostname=localhost NodeAddr=127.0.0.1 Port=${ports[1]} CPUs=2 RealMemory=100 $gres State=UNKNOWN
NodeName=n2 NodeHostname=localhost NodeAddr=127.0.0.1 Port=${ports[2]} CPUs=2 RealMemory=100 $gres State=UNKNOWN
NodeName=n3 NodeHostname=localhost NodeAddr=127.0.0.1 Port=${ports[3]} CPUs=2 RealMemory=100 $gres State=UNKNOWN
NodeName=n4 NodeHostname=localhost NodeAddr=127.0.0.1 Port=${ports[7]} CPUs=2 RealMemory=100 $gres State=UNKNOWN
PartitionName=gpu Nodes=n[1-4] Default=YES MaxTime=10 State=UP
CONF
cp "$tmp/gres.conf" "$tmp/gres.conf.orig"

started=$SECONDS
slurmctld -D -i -f "$tmp/slurm.conf" >/dev/null 2>&1 &
pids+=($!)
for n in n1 n2 n3 n4; do
	slurmd -D -N "$n" -f "$tmp/slurm.conf" >/dev/null 2>&1 &
	pids+=($!)
done

# wait_for SECONDS CMD...: wait_until, quietly, and within the test's deadline
wait_for() {
	local secs=$1 left=$((deadline - SECONDS))
	shift
	[ "$secs" -le "$left" ] || secs=$left
	wait_until "$secs" "$@" >/dev/null 2>&1
}
hc_runs() { grep -c " healthcheck node=$1 " "$tmp/hooks.log"; } # health checks started on NODE
hc_ends() { grep -c "^healthcheck-end node=$1$" "$tmp/hooks.log"; } # and ended
# hc_idle NODE: every health check that started on NODE has ended
hc_idle() { [ "$(hc_runs "$1")" = "$(hc_ends "$1")" ]; }
nodes_idle() { [ "$(sinfo -h -N -o '%N %t' 2>/dev/null | sort -u | grep -c ' idle$')" = 4 ]; }
agents_up() { for n in n1 n2 n3; do "$GPUCTL" queue --socket "$tmp/pool-$n.sock" || return 1; done; }
if ! wait_for 60 nodes_idle || ! wait_for 60 agents_up; then
	fail "cluster not up: $(sinfo -h -N -o '%N %t %E' 2>&1 | tr '\n' '|')"
	exit 1
fi
echo "cluster up in $((SECONDS - started)) s: $(sinfo -h -N -o '%N:%t' | sort -u | tr '\n' ' ')"
[ -n "${SLURM_TEST_HOLD:-}" ] && { echo "$tmp"; sleep "$SLURM_TEST_HOLD"; }
scontrol show node n1 | grep -q "Gres=gpu:nvidia_h100_80gb_hbm3:4" && ok || fail "n1's GRES: $(scontrol show node n1 | grep Gres)"

# ---- a 2-GPU job gets an NVLink pair ------------------------------------------------------
hold="$(sbatch --parsable -w n1 --gpus=1 -c 1 -o /dev/null --wrap "$(hold gpu0)")"
wait_for 60 sh -c "[ \"\$(squeue -h -j $hold -o %T)\" = RUNNING ]" || fail "the holding job did not start"
held="$(scontrol show job -d "$hold" | sed -n 's/.*GRES=gpu[^(]*(IDX:\([0-9,-]*\)).*/\1/p' | head -1)"
pair="$(timeout 30 srun -w n1 --gpus=2 -c 1 sh -c 'echo $SLURM_STEP_GPUS' 2>"$tmp/srun.err")"
echo "holding job on GPU $held; the 2-GPU job got GPUs $pair"
if [ "$held" = 0 ]; then
	[ "$pair" = "2,3" ] && ok || fail "2-GPU job got '$pair' beside GPU 0 held (expected the NVLink pair 2,3): $(cat "$tmp/srun.err")"
else
	fail "the holding job got GPU '$held', expected 0"
fi

# ---- the hpc_job label while a job runs; statistics at its end ----------------------------
hpc_series() { curl -s "http://127.0.0.1:${ports[4]}/metrics" | grep -q "^gpuctl_job_gpu_seconds{.*hpc_job=\"$hold\"}"; }
wait_for 60 hpc_series && ok ||
	fail "no hpc_job=\"$hold\" series on n1's agent: $(curl -s "http://127.0.0.1:${ports[4]}/metrics" | grep -c gpuctl_job_) job lines; $(tail -3 "$tmp/hooks.log")"
scancel "$hold"
release gpu0
wait_for 60 sh -c "[ -z \"\$(squeue -h -j $hold -o %i 2>/dev/null)\" ]"

out="$(timeout 30 srun -w n1 --gpus=2 --gpu-stats sh -c 'sleep 2; echo ran' 2>&1)"
job="$(echo "$out" | sed -n 's/^Slurm job \([0-9]*\): gpuctl: .*/\1/p' | head -1)"
echo "$out" | grep -q "^Slurm job [0-9]*: gpuctl: 2 GPUs, [0-9.]* GPU-s, [0-9.]* J, util avg" && ok ||
	fail "srun --gpu-stats printed no statistics: $out"
if [ -n "$job" ]; then
	wait_for 60 sh -c "'$GPUCTL' jobs --slurm $job --socket '$tmp/pool-n1.sock' --json | grep -q '\"state\": \"done\"'" ||
		fail "the epilog did not end job $job's accounting"
	js="$("$GPUCTL" jobs --slurm "$job" --socket "$tmp/pool-n1.sock" --json)"
	echo "$js" | grep -q "\"slurm_job\": $job" && echo "$js" | grep -q '"gpu_seconds"' &&
		echo "$js" | grep -q '"energy_j"' && echo "$js" | grep -q '"state": "done"' && ok ||
		fail "gpuctl jobs --slurm $job --json: $js"
	table="$("$GPUCTL" jobs --slurm "$job" --socket "$tmp/pool-n1.sock")"
	echo "$table" | grep -q "slurm-$job .*done .* J" && ok || fail "gpuctl jobs --slurm $job: $table"
	# 2 GPUs held from the prolog to the epilog, around a 2 s step
	gsec="$(echo "$js" | sed -n 's/.*"gpu_seconds": \([0-9.]*\).*/\1/p' | awk '{ s += $1 } END { print s }')"
	awk -v s="$gsec" 'BEGIN { exit !(s >= 3.9 && s < 60) }' && ok || fail "GPU-seconds '$gsec' for a 2 s step on 2 GPUs"
	wait_for 60 sh -c "scontrol show job $job | grep -q 'AdminComment=gpuctl: 2 GPUs'" && ok ||
		fail "no AdminComment on job $job: $(scontrol show job "$job" | grep -i comment)"
else
	fail "no Slurm job id in srun's --gpu-stats output"
fi

# ---- --gpu-health=quick ----------------------------------------------------------------------
out="$(timeout 30 srun -w n3 --gpus=1 --gpu-health=quick sh -c 'echo healthy-ran' 2>&1)"
echo "$out" | grep -q healthy-ran && ok || fail "--gpu-health=quick on healthy GPUs: $out"
# every GPU of n3 failing (its periodic health check paused, so the node stays up)
touch "$tmp/no-healthcheck-n3"
wait_for 60 hc_idle n3 || fail "a health check on n3 still runs after 60 s"
ecc='{"kind": "ecc_uncorrectable", "gpu":'
echo "{\"faults\": [$ecc 0}, $ecc 1}, $ecc 2}, $ecc 3}]}" >"$tmp/faults-n3.json"
out="$(timeout 30 srun -w n3 --gpus=1 --gpu-health=quick sh -c 'echo unhealthy-ran' 2>&1)"
rc=$?
[ $rc != 0 ] && ! echo "$out" | grep -q unhealthy-ran && echo "$out" | grep -q "gpuctl: --gpu-health=quick: GPUs [0-3] on n3 FAIL" &&
	ok || fail "--gpu-health=quick let a task start on a failing GPU (exit $rc): $out"
rm -f "$tmp/faults-n3.json" "$tmp/no-healthcheck-n3"

# ---- health check: drain on a GPU fault, resume when it is gone ----------------------------
admin_reason="maintenance by the admin"
scontrol update NodeName=n3 State=DRAIN Reason="$admin_reason"
n3_runs=$(hc_runs n3)
printf '{"faults": [{"kind": "ecc_uncorrectable", "gpu": 1, "count": 2}]}\n' >"$tmp/faults-n2.json.tmp"
mv "$tmp/faults-n2.json.tmp" "$tmp/faults-n2.json"
drained() { scontrol show node "$1" | grep -q "State=[A-Z+]*DRAIN"; }
reason() { scontrol show node "$1" | sed -n 's/^ *Reason=\(.*\) \[.*/\1/p'; }
if wait_for 60 drained n2; then
	r="$(reason n2)"
	case "$r" in
	"gpuctl: GPU 1 uncorrectable ECC errors since the driver loaded"*) ok ;;
	*) fail "n2 drained with reason '$r'" ;;
	esac
else
	fail "n2 not drained after an ECC fault on GPU 1 ($(scontrol show node n2 | grep -E 'State|Reason' | tr -s ' '))"
fi
rm -f "$tmp/faults-n2.json"
undrained() { ! drained "$1"; }
wait_for 60 undrained n2 && ok || fail "n2 not resumed after the fault cleared: $(reason n2)"
# n3 was healthy all along, but an administrator drained it: it stays drained
# through a health check that started after the drain and has ended
# more checks ended than had started at the drain: one that started after it has ended
hc_ended_since() { [ "$(hc_ends "$1")" -gt "$2" ]; }
wait_for 60 hc_ended_since n3 "$n3_runs" || fail "no health check on n3 started after the admin's drain and ended"
drained n3 && [ "$(reason n3)" = "$admin_reason" ] && ok || fail "n3 (drained by the admin) lost its drain: $(reason n3)"

# ---- gpuctl slurm sweep: a job that fails, a node that never starts --------------------------
# The sweep's jobs run this wrapper: each node a simulated 8x H200 with its own
# fault file (sweep-faults-NODE.json); with DIR/sweep-fail-NODE the job fails.
cat >"$tmp/gpuctl-sweep" <<WRAP
#!/bin/sh
[ -e $tmp/sweep-fail-\$SLURMD_NODENAME ] && { echo "gpuctl-sweep: failing on purpose" >&2; exit 3; }
GPUCTL_DATA_DIR='$GPUCTL_DATA_DIR' GPUCTL_SIM="h200x8,faults=$tmp/sweep-faults-\$SLURMD_NODENAME.json" exec '$GPUCTL' "\$@"
WRAP
chmod 755 "$tmp/gpuctl-sweep"
touch "$tmp/sweep-fail-n1"
# n3 is drained (by the admin, above): its job stays pending until --start-timeout
out="$(timeout 60 "$GPUCTL" slurm sweep -w n1,n3 --window 0 --start-timeout 10s --timeout 50s --drain \
	--gpuctl "$tmp/gpuctl-sweep" --out "$tmp/sweep-bad" 2>"$tmp/sweep-bad.err")"
rc=$?
rm -f "$tmp/sweep-fail-n1"
[ $rc = 1 ] && grep -q "^  n1: not swept failed: job [0-9]* ended without a result: gpuctl-sweep: failing on purpose" <<<"$out" &&
	grep -q "^  n3: not swept not-started: job [0-9]* still pending after [0-9]* s (.*); cancelled" <<<"$out" &&
	! grep -q "^drained" <<<"$out" && ok || fail "sweep of a failing job and a drained node (exit $rc): $out $(tail -2 "$tmp/sweep-bad.err")"
undrained n1 && [ "$(reason n3)" = "$admin_reason" ] && ok || fail "the failed sweep drained n1 or touched n3's reason: $(reason n1) / $(reason n3)"
scontrol update NodeName=n3 State=RESUME
# and a job can run on n2 again, once slurmctld shows it idle (the drain
# flag clears before the node is offered again: an srun in between was
# refused once, "Required node not available")
node_idle() { [ "$(sinfo -h -n "$1" -o '%t' 2>/dev/null | sort -u)" = idle ]; }
wait_for 60 node_idle n2 || fail "n2 not idle after its resume: $(sinfo -h -n n2 -o '%t %E' 2>&1)"
out="$(timeout 30 srun -w n2 --gpus=1 true 2>&1)" && ok || fail "job on the resumed n2: $out"

# ---- gpuctl slurm sweep: the fleet's outliers, and only they, named and drained ---------------
echo '{"faults": [{"kind": "remap_pending", "gpu": 3}]}' >"$tmp/sweep-faults-n2.json"
echo '{"faults": [{"kind": "power", "gpu": 5}]}' >"$tmp/sweep-faults-n4.json"
wait_for 60 node_idle n3 || fail "n3 not idle after its resume: $(sinfo -h -n n3 -o '%t %E' 2>&1)"
s0=$SECONDS
out="$(timeout 90 "$GPUCTL" slurm sweep --level bench-quick --window 0 --drain --max-drain 2 --start-timeout 60s --timeout 80s \
	--gpuctl "$tmp/gpuctl-sweep" --out "$tmp/sweep" 2>"$tmp/sweep.err")"
rc=$?
n2_runs=$(hc_runs n2)
echo "gpuctl slurm sweep of 4 nodes at bench-quick: $((SECONDS - s0)) s (exit $rc)"
named="$(sed -n 's/^  \(n[0-9]\)\( GPU [0-9]*\)\{0,1\}: .*/\1/p' <<<"$out" | sort -u | tr '\n' ' ')"
[ $rc = 2 ] && [ "$named" = "n2 n4 " ] && ok || fail "the sweep (exit $rc) named '$named', not n2 and n4: $out $(tail -3 "$tmp/sweep.err")"
grep -q "^  n2 GPU 3: health row-remap-pending; action: reset_gpu$" <<<"$out" &&
	grep -q "^  n4 GPU 5: slow gemm_bf16_tflops [0-9.]* TFLOP/s, 1[0-9.]*% below the median [0-9.]*; action: drain$" <<<"$out" &&
	grep -q "^\*\*\* SIMULATED" <<<"$out" && grep -q "^outliers: 2$" <<<"$out" && ok || fail "the sweep's outliers: $out"
[ "$(sed -n 's/^drained \(n[0-9]\): .*/\1/p' <<<"$out" | tr '\n' ' ')" = "n2 n4 " ] &&
	[ "$(reason n2)" = "gpuctl sweep: GPU 3 a row remap is pending (takes effect at the next GPU reset)" ] &&
	[[ "$(reason n4)" == "gpuctl sweep: GPU 5 GEMM BF16 1"?"% below the median of its model" ]] &&
	undrained n1 && undrained n3 && ok || fail "drained: $(grep ^drained <<<"$out" | tr '\n' '|'); n2 '$(reason n2)', n4 '$(reason n4)'; n1 $(drained n1 && echo drained), n3 $(drained n3 && echo drained)"
# the health check (healthy on its own simulated server) leaves the sweep's drain alone
wait_for 60 hc_ended_since n2 "$n2_runs" || fail "no health check on n2 started after the sweep's drain and ended"
drained n2 && drained n4 && ok || fail "the health check resumed a node the sweep drained: n2 '$(reason n2)', n4 '$(reason n4)'"
[ "$(grep -c '<tr class="node outlier" data-node="n[24]">' "$tmp/sweep/fleet.html")" = 16 ] &&
	[ "$(grep -c '<tr class="node" data-node="n[13]">' "$tmp/sweep/fleet.html")" = 16 ] && ok ||
	fail "fleet.html: not every GPU row of n1..n4, or the wrong rows highlighted"
"$GPUCTL" slurm sweep --compare "$tmp/sweep/fleet.json" "$tmp/sweep/fleet.json" | grep -q ": 0 changes " && ok ||
	fail "--compare of a sweep with itself"
scontrol update NodeName=n2,n4 State=RESUME
wait_for 60 node_idle n2 && wait_for 60 node_idle n4 || fail "n2, n4 not idle after the sweep's drain was lifted"

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

echo "slurm_cluster: $((SECONDS - started)) s with the cluster up"
finish
