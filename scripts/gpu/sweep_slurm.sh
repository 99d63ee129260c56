#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# sweep_slurm.sh - issue 19 on a real GPU server: `gpuctl slurm sweep` through a
# real one-node Slurm set up there, at diag2 and at bench-quick. Debian 12's
# Slurm 22.05 and munge (the ones CI's tests/cli/slurm_cluster.sh runs) are
# carried in: the device has no Slurm and no network.
#
#   scripts/gpu/sweep_slurm.sh pack   here, no GPU: slurmctld slurmd slurmstepd
#        sbatch squeue scontrol sinfo scancel munged munge, the libraries they
#        and Slurm's plugins load (ldd; glibc's own left out) and the plugin
#        directory into .device-carry/slurm/slurm.tar.xz
#   scripts/gpu/sweep_slurm.sh [run]  on the GPU machine (root): unpacks to a
#        /tmp directory, starts munged (its own key and socket), slurmctld and
#        one slurmd (NodeName = this host, CPUs = nproc, on loopback) as CI's
#        cluster test does, waits (bounded) for the node to be idle, runs
#        `gpuctl slurm sweep -w HOST --level diag2` and `--level bench-quick`
#        (gpuctl: the packed build of .device-carry/sweep, scripts/gpu/sweep.sh
#        pack), then stops the daemons by PID. Results under $OUT/sweep-slurm/:
#        summary.txt (PASS/FAIL per check, times, the sweeps' progress lines),
#        run.log (every step's output, slurm.conf and cgroup.conf, the daemons'
#        log tails), {diag2,bench}-fleet.{txt,json,html} (8 files: what one
#        device call brings back).
# Each carried binary runs through a wrapper that sets LD_LIBRARY_PATH: the
# daemons start their children (slurmstepd, the job) with their own
# environments. Here, without a GPU, `GPUCTL_SIM=h200x8 scripts/gpu/sweep_slurm.sh
# run` runs the same steps on a simulated server (its figures SIMULATED).
# Device tool: run(command="bash scripts/gpu/sweep_slurm.sh run",
#   carry=[".device-carry/slurm", ".device-carry/sweep"], kind="nvidia-h200", timeout_s=300).
# Exit: 0 every check passed, 1 some failed, 69 could not run.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
carry="$root/.device-carry/slurm"
sweep_pack="$root/.device-carry/sweep"
tools_sbin="slurmctld slurmd slurmstepd munged"
tools_bin="sbatch squeue scontrol sinfo scancel munge"
plugins=/usr/lib/x86_64-linux-gnu/slurm-wlm

if [ "${1:-run}" = pack ]; then
	stage="$(mktemp -d)"
	trap 'rm -rf "$stage"' EXIT
	mkdir -p "$stage/bin" "$stage/lib"
	for t in $tools_sbin $tools_bin; do
		p="$(PATH="$PATH:/usr/sbin:/sbin" command -v "$t")" || { echo "no $t here (apt-get install slurmctld slurmd slurm-client munge)" >&2; exit 70; }
		cp "$p" "$stage/bin/"
	done
	cp -r "$plugins" "$stage/slurm-wlm"
	# the tools' and the plugins' libraries, glibc's own excepted (they must match the machine's libc)
	for f in "$stage"/bin/* "$stage"/slurm-wlm/*.so; do ldd "$f"; done | awk '/=> \// { print $3 }' | sort -u |
		grep -Ev '/(libc|libm|libpthread|libdl|librt|libresolv|libgcc_s)\.so' | grep -v /slurm-wlm/ |
		while read -r lib; do cp -L "$lib" "$stage/lib/"; done
	mkdir -p "$carry"
	tar -C "$stage" -cJf "$carry/slurm.tar.xz" bin lib slurm-wlm
	echo "packed into $carry/slurm.tar.xz ($(du -h "$carry/slurm.tar.xz" | cut -f1))"
	exit 0
fi

out="${OUT:-$root/sweep-slurm-out}/sweep-slurm"
mkdir -p "$out"
log="$out/run.log"
sum="$out/summary.txt"
: >"$log"
: >"$sum"
fails=0
check() { # NAME EXIT-CODE-OF-CONDITION DETAIL
	if [ "$2" = 0 ]; then echo "PASS $1" >>"$sum"; else echo "FAIL $1: $3" >>"$sum"; fails=$((fails + 1)); fi
}
[ "$(id -u)" = 0 ] || { echo "sweep_slurm.sh: needs root (slurmd)" | tee -a "$log"; exit 69; }
[ -f "$carry/slurm.tar.xz" ] || { echo "sweep_slurm.sh: no $carry/slurm.tar.xz (scripts/gpu/sweep_slurm.sh pack)" | tee -a "$log"; exit 69; }
[ -x "$sweep_pack/gpuctl" ] || { echo "sweep_slurm.sh: no packed gpuctl (scripts/gpu/sweep.sh pack)" | tee -a "$log"; exit 69; }
simulated=0
if [ -n "${GPUCTL_SIM:-}" ]; then
	simulated=1
else
	command -v nvidia-smi >/dev/null || { echo "sweep_slurm.sh: no nvidia-smi here (GPUCTL_SIM=h200x8 to try it without a GPU)" | tee -a "$log"; exit 69; }
fi

T="$(mktemp -d /tmp/gpuctl-slurm.XXXXXX)" # the carried Slurm, its state, the sweeps' DIRs: one path every job sees
# wait_until SECS COMMAND...: polls every 0.5 s, at most SECS
wait_until() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.5
	done
}

step() { # step WHAT COMMAND...: the command, its output and its status into run.log; returns the status
	echo "== $1: ${*:2}" >>"$log"
	timeout 60 "${@:2}" >>"$log" 2>&1
	set -- $?
	echo "-- rc=$1" >>"$log"
	return "$1"
}
pids=()
teardown() {
	set +e
	[ -S "$T/munge.sock" ] && timeout 5 "$T/w/scancel" --quiet --user=root 2>/dev/null
	kill -TERM "${pids[@]}" 2>/dev/null
	none_alive() { ! kill -0 "${pids[@]}" 2>/dev/null; }
	wait_until 5 none_alive || kill -KILL "${pids[@]}" 2>/dev/null
	# slurmstepd daemonizes away from slurmd: a process holding a file in $T is ours
	for p in $(find /proc/[0-9]*/fd -maxdepth 1 -lname "$T/*" 2>/dev/null | cut -d/ -f3 | sort -u); do
		[ "$p" != $$ ] && kill -KILL "$p" 2>/dev/null
	done
	# the cgroups slurmd and slurmstepd made below the slice this script made, deepest first
	[ -n "${made_slice:-}" ] && find "$made_slice" -depth -type d -exec rmdir {} + 2>>"$log"
	for f in slurmctld.log slurmd.log munge/munged.log; do
		[ -f "$T/$f" ] && { echo "--- $f (last lines)"; tail -n 30 "$T/$f"; } >>"$log"
	done
	rm -rf "$T"
}
trap teardown EXIT
step "unpack" tar -C "$T" -xJf "$carry/slurm.tar.xz"
check "the carried Slurm unpacks" $? "see run.log"
mkdir -p "$T/w"
for t in $tools_sbin $tools_bin; do
	printf '#!/bin/sh\nLD_LIBRARY_PATH="%s/lib:%s/slurm-wlm" exec "%s/bin/%s" "$@"\n' "$T" "$T" "$T" "$t" >"$T/w/$t"
done
G="$T/w/gpuctl"
kernels="$(ls "$sweep_pack"/*.so 2>/dev/null | head -1)"
{
	echo '#!/bin/sh'
	echo "export GPUCTL_DATA_DIR='$root/data' NCCL_NVLS_ENABLE=0${kernels:+ GPUCTL_KERNELS='$kernels'}"
	[ $simulated = 1 ] && echo "export GPUCTL_SIM='$GPUCTL_SIM'"
	echo "LD_LIBRARY_PATH='$sweep_pack/lib' exec '$sweep_pack/gpuctl' \"\$@\""
} >"$G"
chmod 755 "$T"/w/*
export PATH="$T/w:$PATH" SLURM_CONF="$T/slurm.conf"
unset SLURM_JOB_ID SLURM_JOBID
host="$(hostname -s)"
{
	echo "host $host, $(nproc) CPUs, $(uname -r), $(grep PRETTY_NAME /etc/os-release 2>/dev/null)"
	"$G" --version
	[ $simulated = 1 ] && echo "SIMULATED server: GPUCTL_SIM=$GPUCTL_SIM" || nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version --format=csv,noheader
} >>"$log" 2>&1
step "slurmctld -V" slurmctld -V
check "the carried slurmctld runs here" $? "see run.log"

# free TCP ports on loopback
ports=()
p=$((20000 + RANDOM % 30000))
while [ ${#ports[@]} -lt 2 ]; do
	p=$((p + 1))
	(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null && continue
	ports+=("$p")
done

# ---- munge: its own key and socket --------------------------------------------------
mkdir -p "$T/munge" "$T/state" "$T/spool"
chmod 700 "$T/munge"
dd if=/dev/urandom of="$T/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$T/munge/munge.key"
munged -F --force --socket="$T/munge.sock" --key-file="$T/munge/munge.key" --pid-file="$T/munge/munged.pid" \
	--log-file="$T/munge/munged.log" --seed-file="$T/munge/seed" >>"$log" 2>&1 &
pids+=($!)
wait_until 20 sh -c "munge -S '$T/munge.sock' -n >/dev/null 2>&1"
check "munged answers on its socket" $? "munge -n failed for 20 s"

# ---- Slurm: slurmctld and one slurmd, as tests/cli/slurm_cluster.sh ---------------------
# the minimal one: Slurm's defaults (auth and crypto munge, root as SlurmUser and
# SlurmdUser, no accounting, no MPI, log level info) are left to Slurm
cat >"$T/slurm.conf" <<CONF
ClusterName=gpuctlh200
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=${ports[0]}
SlurmdPort=${ports[1]}
AuthInfo=socket=$T/munge.sock
PluginDir=$T/slurm-wlm
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
ReturnToService=2
NodeName=$host NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=gpu Nodes=$host Default=YES MaxTime=30 State=UP
CONF
# slurmd 22.05 always starts its cgroup plugin; on cgroup v2 it asks systemd (dbus)
# for a scope, and the lent VM runs neither (the first call's slurmd stopped on
# "cannot connect to dbus system daemon"): it makes the scope itself
printf 'IgnoreSystemd=yes\nCgroupAutomount=yes\n' >"$T/cgroup.conf"
# and it makes its scope in system.slice, which it does not create (the second
# call: "Could not create scope directory /sys/fs/cgroup/system.slice/..."): made
# here when missing on cgroup v2, removed at the end
made_slice=""
if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] && [ ! -d /sys/fs/cgroup/system.slice ]; then
	mkdir /sys/fs/cgroup/system.slice && made_slice=/sys/fs/cgroup/system.slice
	echo "made $made_slice (absent: no systemd here)" >>"$log"
fi
for f in slurm.conf cgroup.conf; do echo "--- $f"; cat "$T/$f"; done >>"$log" # the device call brings 8 files back
step "cgroups here" sh -c 'stat -fc %T /sys/fs/cgroup; cat /proc/self/cgroup; cat /sys/fs/cgroup/cgroup.controllers /sys/fs/cgroup/cgroup.subtree_control 2>&1'
started=$SECONDS
slurmctld -D -i -f "$T/slurm.conf" >>"$log" 2>&1 &
pids+=($!)
# slurmd finds slurmstepd at its build's path unless told (-d): the wrapper
slurmd -D -N "$host" -f "$T/slurm.conf" -d "$T/w/slurmstepd" >>"$log" 2>&1 &
slurmd_pid=$!
pids+=($slurmd_pid)
node_idle() { [ "$(sinfo -h -n "$host" -o '%t' 2>/dev/null | sort -u)" = idle ]; }
idle_or_slurmd_gone() { node_idle || ! kill -0 "$slurmd_pid" 2>/dev/null; }
wait_until 60 idle_or_slurmd_gone
node_idle
rc=$?
echo "sinfo after $((SECONDS - started)) s: $(sinfo -h -N -o '%N %t %E' 2>&1 | tr '\n' '|')" | tee -a "$log" >>"$sum"
check "slurmctld and slurmd up, node $host idle" $rc "see run.log"
[ $rc = 0 ] || { cat "$sum"; exit 1; }
step "sinfo" sinfo -N -l
step "a first job through sbatch (sanity)" sh -c "j=\$(sbatch --parsable -o '$T/first.out' --wrap 'echo job-ran on \$(hostname)') &&
	for _ in \$(seq 120); do [ -s '$T/first.out' ] && [ -z \"\$(squeue -h -j \$j -o %i)\" ] && break; sleep 0.5; done; cat '$T/first.out'"
grep -q '^job-ran on' "$log"
check "a batch job runs through the carried slurmd and slurmstepd" $? "see run.log"

# ---- the sweeps -----------------------------------------------------------------------------
for level in diag2 bench-quick; do
	short=${level%-quick}
	s=$(date +%s.%N)
	timeout 280 "$G" slurm sweep -w "$host" --level "$level" --gpuctl "$G" --start-timeout 60s --timeout 250s \
		--out "$T/$short" >"$out/$short-fleet.txt" 2>"$T/$short-progress.txt"
	rc=$?
	secs=$(awk -v s="$s" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
	echo "$level: gpuctl slurm sweep exit $rc in $secs s (submit to report)" | tee -a "$log" >>"$sum"
	for f in fleet.json fleet.html; do cp "$T/$short/$f" "$out/$short-$f" 2>/dev/null; done
	{ echo "--- $level: the sweep's progress (stderr)"; cat "$T/$short-progress.txt"; } >>"$sum"
	cat "$T/$short/logs/$host.out" >>"$log" 2>/dev/null
	check "$level: the sweep swept $host (exit 0 no outlier or 2 an outlier)" $([ "$rc" = 0 ] || [ "$rc" = 2 ]; echo $?) "exit $rc: $(tail -2 "$T/$short-progress.txt" | tr '\n' ' ')"
	check "$level: fleet.json, fleet.html written" $([ -s "$out/$short-fleet.json" ] && [ -s "$out/$short-fleet.html" ]; echo $?) "missing"
	check "$level: the job's result came back (no node 'not swept')" $(! grep -q "not swept" "$out/$short-fleet.txt"; echo $?) "$(grep 'not swept' "$out/$short-fleet.txt")"
	grep -Eq "^sweep: 1 done, 0 running, 0 pending, 0 failed, 0 not started" "$T/$short-progress.txt"
	check "$level: progress reached 1 done" $? "$(tail -1 "$T/$short-progress.txt")"
	if [ $simulated = 0 ]; then
		grep -q SIMULATED "$out/$short-fleet.txt"
		check "$level: nothing SIMULATED on a real GPU" $([ $? != 0 ]; echo $?) "the report says SIMULATED"
	fi
done
python3 - "$out/diag2-fleet.json" "$out/bench-fleet.json" >>"$sum" 2>>"$log" <<'PY'
import json, sys
for path in sys.argv[1:]:
    f = json.load(open(path))
    for n in f.get("nodes", []):
        print(path.rsplit("/", 1)[-1] + ":", "level", f.get("level"), "node", n.get("node"), "state", n.get("state"),
              "health", n.get("verdict"), "diag", n.get("diag_verdict"), n.get("diag_fail") or "",
              "figures", n.get("figures_source") or "none", "GPUs", len(n.get("gpus", [])),
              "outliers", len(f.get("outliers", [])))
PY
if [ $simulated = 0 ]; then
	grep -Eq "^diag2-fleet.json: level diag2 node $host state done health [A-Z]+ diag (PASS|WARN|FAIL) " "$sum"
	check "diag2: gpuctl diag -r 2 ran in the job and was judged" $? "see summary.txt"
fi
sed -n '/^fleet median/,$p' "$out/bench-fleet.txt" >>"$sum"
grep -Eq "^  mem_bw_gbs .* GB/s over [0-9]+$" "$out/bench-fleet.txt" && grep -Eq "^  gemm_bf16_tflops .* over [0-9]+$" "$out/bench-fleet.txt"
check "bench-quick: memory bandwidth and GEMM BF16 in the fleet's statistics" $? "see bench-fleet.txt"
echo "checks failed: $fails" >>"$sum"
cat "$sum"
[ "$fails" = 0 ]
