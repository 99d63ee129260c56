#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# slurm_cli.sh - `gpuctl slurm` and `gpuctl jobs --slurm` without a Slurm
# cluster: gres.conf on the shipped simulated servers, the Slurm requests
# against a real agent with its pool (simulated server), the health check's
# drain/resume decisions through a stand-in scontrol that records what it is
# asked, and the errors and exit codes. (The real cluster: slurm_cluster.sh.)
# Run by CTest (GPUCTL = the binary). By hand:
#   GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/slurm_cli.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
need jq
unset GPUCTL_POOL_SOCKET SLURM_JOB_ID SLURM_JOB_GPUS SLURM_JOB_UID SLURM_JOB_USER SLURMD_NODENAME
agent=
on_exit '[ -n "$agent" ] && kill "$agent" 2>/dev/null && wait "$agent" 2>/dev/null'
# expect CODE CMD...: runs CMD, output in $out, checks the exit code
expect() {
	local want=$1
	shift
	out="$("$@" 2>&1)"
	local rc=$?
	checks=$((checks + 1))
	[ "$rc" = "$want" ] || fail "'$*' exited $rc, expected $want: $out"
}
has() { echo "$out" | grep -q -- "$1" || fail "expected '$1' in: $out"; }

# ---- usage ----------------------------------------------------------------------------
expect 64 "$GPUCTL" slurm
has "gpuctl slurm: a subcommand is needed (gres-conf, health-check, job-start, job-end, stats or sweep); see 'gpuctl slurm --help'"
expect 0 "$GPUCTL" slurm --help
has "gres-conf"
expect 64 "$GPUCTL" slurm frobnicate
has "gpuctl slurm: unknown subcommand 'frobnicate'; see 'gpuctl slurm --help'"

# ---- gres-conf --------------------------------------------------------------------------
expect 0 "$GPUCTL" --sim h200x8 slurm gres-conf --node gpu01
has "^NodeName=gpu01 Name=gpu Type=nvidia_h200 File=/dev/nvidia7 Cores=56-111,168-223 Links=18,18,18,18,18,18,18,-1$"
has "^# NodeName=gpu01 Gres=gpu:nvidia_h200:8$"
has "SIMULATED"
[ "$(echo "$out" | grep -c '^NodeName=gpu01 Name=gpu ')" = 8 ] || fail "8 GPU lines expected: $out"
expect 0 "$GPUCTL" --sim l40sx4 slurm gres-conf --no-fragment --type l40s --dev-dir /x/dev
has "^Name=gpu Type=l40s File=/x/dev/nvidia2 Cores=32-63,96-127 Links=0,0,-1,0$"
echo "$out" | grep -q "Gres=" && fail "--no-fragment printed the fragment"
expect 0 "$GPUCTL" --sim h100pcie-mig slurm gres-conf
has "MultipleFiles=/dev/nvidia0,/dev/nvidia-caps/nvidia-cap"
expect 64 "$GPUCTL" --sim h200x8 slurm gres-conf --type "a b"
has "bad type 'a b'"
expect 64 "$GPUCTL" --sim h200x8 slurm gres-conf --node
has "option '--node' needs a value"
expect 64 "$GPUCTL" --sim h200x8 slurm gres-conf --bogus
expect 66 "$GPUCTL" --sim nosuchserver slurm gres-conf

# ---- job-start / job-end / stats / jobs --slurm, errors without an agent ----------------
expect 75 "$GPUCTL" slurm job-start --job 5 --gpus 0 --uid 0 --socket "$tmp/none.sock"
expect 64 "$GPUCTL" slurm job-start --gpus 0 --uid 0 --socket "$tmp/none.sock"
has "which Slurm job"
expect 64 "$GPUCTL" slurm job-start --job 5 --gpus 0,x --uid 0 --socket "$tmp/none.sock"
has "bad GPU list '0,x'"
expect 64 "$GPUCTL" slurm job-start --job 0 --gpus 0 --uid 0 --socket "$tmp/none.sock"
expect 64 "$GPUCTL" slurm job-start --job 5 --gpus 0 --socket "$tmp/none.sock"
expect 64 "$GPUCTL" slurm job-end --job 5 --admin-comment --socket "$tmp/none.sock"
has "AdminComment"
expect 64 "$GPUCTL" jobs --slurm x12
has "needs a Slurm job id"

# ---- with an agent -------------------------------------------------------------------------
sock="$tmp/pool.sock"
GPUCTL_SIM="$here/../data/slurm-nvpairs.json" "$GPUCTL" agent --listen 127.0.0.1:0 --kernel-log off --pool --pool-dir "$tmp/pool" \
	--pool-socket "$sock" >"$tmp/agent.log" 2>&1 &
agent=$!
wait_until 60 "$GPUCTL" queue --socket "$sock" >/dev/null 2>&1 || fail "the agent did not answer: $(cat "$tmp/agent.log")"
expect 0 env SLURM_JOB_ID=4242 SLURM_JOB_GPUS=2,3 SLURM_JOB_UID=0 SLURM_JOB_USER=root \
	"$GPUCTL" slurm job-start --socket "$sock"
has "Slurm job 4242: GPU accounting started"
expect 0 "$GPUCTL" slurm job-start --job 4242 --gpus 2,3 --uid 0 --socket "$sock" --json
has '"already": true'
expect 65 "$GPUCTL" slurm job-start --job 4243 --gpus 4 --uid 0 --socket "$sock"
has "names a GPU this server does not have"
# the pool places around the Slurm job's GPUs 2,3: 2 GPUs run on 0,1, then 3 GPUs wait
expect 0 "$GPUCTL" submit --socket "$sock" --gpus 2 -- true
has "^job [0-9]* submitted"
two="$(echo "$out" | sed -n 's/^job \([0-9]*\) submitted.*/\1/p')"
expect 0 timeout 60 "$GPUCTL" wait --socket "$sock" "$two"
expect 0 "$GPUCTL" jobs --history --socket "$sock" --json
echo "$out" | tr -d ' \n' | grep -q "\"id\":$two,[^}]*\"state\":\"done\"" || fail "the 2-GPU pool job did not run: $out"
expect 0 "$GPUCTL" jobs --history --socket "$sock"
echo "$out" | grep -q "^ *$two .* done .* 0,1 " || fail "the 2-GPU pool job ran elsewhere than 0,1: $out"
expect 0 "$GPUCTL" submit --socket "$sock" --gpus 3 -- true
wait3="$(echo "$out" | sed -n 's/^job \([0-9]*\) submitted.*/\1/p')"
# once the scheduler has placed what it could, the job's reason says it waits
# for GPUs, and which the Slurm job holds
reason_is() { "$GPUCTL" queue --socket "$sock" --json | jq -r ".jobs[] | select(.id == $wait3) | .reason" | grep -qx "$1"; }
wait_until 60 reason_is "waiting for 3 free GPUs: GPUs 2-3 held by Slurm job 4242" || fail "the 3-GPU job's reason: $("$GPUCTL" queue --socket "$sock" --json)"
expect 0 "$GPUCTL" queue --socket "$sock" --json
echo "$out" | tr -d ' \n' | grep -q "\"id\":$wait3,[^}]*\"state\":\"pending\"" ||
	fail "a 3-GPU pool job started beside the Slurm job's GPUs 2,3: $out"
expect 0 "$GPUCTL" cancel --socket "$sock" "$wait3"
# the agent samples every second: the stats have utilization once a sample is in
stats_sampled() { "$GPUCTL" slurm stats --job 4242 --socket "$sock" 2>&1 | grep -q "util avg [0-9]* %"; }
wait_until 60 stats_sampled || fail "no sampled stats for Slurm job 4242"
expect 0 "$GPUCTL" slurm stats --job 4242 --socket "$sock"
has "^Slurm job 4242: gpuctl: 2 GPUs, [0-9.]* GPU-s, [0-9.]* J, util avg [0-9]* % peak [0-9]* %, mem peak [0-9.]* GiB, XIDs none"
expect 0 "$GPUCTL" jobs --slurm 4242 --socket "$sock" --json
has '"slurm_job": 4242'
has '"state": "running"'
has '"name": "slurm-4242"'
expect 0 "$GPUCTL" slurm job-end --job 4242 --socket "$sock"
has "^Slurm job 4242: gpuctl: 2 GPUs"
expect 0 "$GPUCTL" jobs --slurm 4242 --socket "$sock"
has "slurm-4242 *done"
has "SIMULATED"
expect 0 "$GPUCTL" slurm job-end --job 4242 --socket "$sock" --json
expect 65 "$GPUCTL" jobs --slurm 999 --socket "$sock"
has "no Slurm job 999 recorded"
expect 65 "$GPUCTL" slurm job-end --job 999 --socket "$sock"
has "did its prolog run"
# the pool's own requests still work beside the Slurm ones
expect 0 "$GPUCTL" jobs --history --socket "$sock"
has "slurm-4242"

# ---- the contrib prolog and epilog as slurmd runs them ------------------------------------
src="$here/../.."
cat >"$tmp/gpuctl.env" <<ENV
GPUCTL='$GPUCTL'
GPUCTL_SIM='$here/../data/slurm-nvpairs.json,faults=$tmp/prolog-faults.json'
GPUCTL_POOL_SOCKET='$sock'
GPUCTL_PROLOG_DIAG=1
ENV
hook() { expect "$1" env -i PATH="$PATH" GPUCTL_DATA_DIR="$GPUCTL_DATA_DIR" GPUCTL_SLURM_ENV="$tmp/gpuctl.env" \
	SLURM_JOB_ID="$2" SLURM_JOB_GPUS=1 SLURM_JOB_UID=0 SLURM_JOB_USER=root sh "$src/contrib/slurm/$3"; }
hook 0 5001 prolog
has "diag level 1: PASS"
has "Slurm job 5001: GPU accounting started"
hook 0 5001 epilog
has "Slurm job 5001: gpuctl: 1 GPU"
printf '{"faults": [{"kind": "ecc_uncorrectable", "gpu": 1}]}\n' >"$tmp/prolog-faults.json"
hook 1 5002 prolog
has "diag level 1: FAIL"
expect 65 "$GPUCTL" jobs --slurm 5002 --socket "$sock"
rm -f "$tmp/prolog-faults.json"
# an agent that is down never fails a job
sed -i "s|^GPUCTL_POOL_SOCKET=.*|GPUCTL_POOL_SOCKET='$tmp/none.sock'|; s|^GPUCTL_PROLOG_DIAG=1|GPUCTL_PROLOG_DIAG=0|" "$tmp/gpuctl.env"
hook 0 5003 prolog
has "no pool agent"
hook 0 5003 epilog

# ---- health-check through a stand-in scontrol -------------------------------------------
cat >"$tmp/scontrol" <<'SH'
#!/bin/sh
# stand-in: "show node N -o" prints $FAKE/node; "update ..." is recorded
case "$1" in
show) [ -f "$FAKE/fail" ] && { echo "slurm_load_node error: Unable to contact slurm controller" >&2; exit 1; }
	cat "$FAKE/node" ;;
update) [ -f "$FAKE/updfail" ] && { echo "Invalid node name specified" >&2; exit 1; }
	printf '%s\n' "$*" >>"$FAKE/calls" ;;
*) exit 2 ;;
esac
SH
chmod 755 "$tmp/scontrol"
export FAKE="$tmp"
hc() { expect "$1" env GPUCTL_SIM="h200x8,faults=$tmp/faults.json" SLURMD_NODENAME=gpu01 "$GPUCTL" slurm health-check \
	--window 0 --scontrol "$tmp/scontrol" "${@:2}"; }
calls() { cat "$tmp/calls" 2>/dev/null; }
: >"$tmp/calls"
echo "NodeName=gpu01 Arch=x86_64 State=IDLE Partitions=gpu" >"$tmp/node"
hc 0
has "gpu01: health PASS; node IDLE; action: none"
[ -z "$(calls)" ] || fail "a healthy idle node got: $(calls)"
printf '{"faults": [{"kind": "ecc_uncorrectable", "gpu": 3, "count": 1}]}\n' >"$tmp/faults.json"
hc 2
# the reason in words, not the rule's id
has "action: drain, gpuctl: GPU 3 uncorrectable ECC errors since the driver loaded"
[ "$(calls)" = "update NodeName=gpu01 State=DRAIN Reason=gpuctl: GPU 3 uncorrectable ECC errors since the driver loaded" ] ||
	fail "drain call: $(calls)"
: >"$tmp/calls"
hc 2 --dry-run
has "^would drain gpu01: gpuctl: GPU 3 uncorrectable ECC errors since the driver loaded$"
[ -z "$(calls)" ] || fail "--dry-run called scontrol update: $(calls)"
# a dry run needs no scontrol at all
hc 2 --dry-run --scontrol "$tmp/no-such-scontrol"
has "^would drain gpu01: gpuctl: GPU 3 uncorrectable"
# the node's name reaches scontrol: one node, not ALL, not an option
hc 64 --node ALL
has "bad node name 'ALL'"
hc 64 --node -x
hc 64 --node 'gpu[01-04]'
expect 64 env SLURMD_NODENAME='n5 State=RESUME' "$GPUCTL" --sim h200x8 slurm health-check --window 0 --scontrol "$tmp/scontrol"
[ -z "$(calls)" ] || fail "a bad node name reached scontrol: $(calls)"
echo "NodeName=gpu01 State=IDLE+DRAIN Reason=maintenance [admin@2026-11-30T01:00:00]" >"$tmp/node"
hc 2
has "action: keep"
[ -z "$(calls)" ] || fail "an admin's drain was overwritten: $(calls)"
rm -f "$tmp/faults.json"
hc 0
has "action: none"
[ -z "$(calls)" ] || fail "an admin's drain was resumed: $(calls)"
echo "NodeName=gpu01 State=IDLE+DRAIN Reason=gpuctl: GPU 3 ecc-volatile-uncorrectable [root@2026-11-30T01:00:00]" >"$tmp/node"
hc 0
has "action: resume"
[ "$(calls)" = "update NodeName=gpu01 State=RESUME" ] || fail "resume call: $(calls)"
# a failing scontrol: its exit status and the first line of its stderr in the one-line error
touch "$tmp/updfail"
hc 69
has "scontrol update NodeName=gpu01 State=RESUME' failed: exit status 1: Invalid node name specified$"
rm -f "$tmp/updfail"
touch "$tmp/fail"
hc 69
has "cannot read node 'gpu01' from '.*show node' (exit status 1: slurm_load_node error: Unable to contact slurm controller)$"
rm -f "$tmp/fail"
hc 64 --window x

finish
