#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# pool_gpm.sh - the pool's profiling accounting and idle allocations (issue
# 32, docs/pool.md "Idle allocations"), on a simulated server whose GPUs run
# the profiling model's workloads: GPU 0 GEMM-bound, 1 memory-bound, 2 idle
# but allocated (H200s, GPM), 3 an A100 (no GPM: n/a). With a 1 s window:
# the job on GPU 2 is flagged in `queue` (text and --json), in the page's
# /api/v1/pool and in gpuctl_pool_job_idle_allocation; the others never are.
# `jobs` (and --json, the store after the jobs end) has each job's mean SM,
# tensor and DRAM activity, "not read" on the A100; a job on a MIG slice has
# its GPU instance's (and is flagged by them). With pool_idle_cancel on,
# the idle job ends cancelled with the reason. Jobs are held by files the
# test removes; the waits are bounded polls of states the pool reports.
#
# Run by CTest (GPUCTL = the binary). By hand:
#   GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/pool_gpm.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/pool_lib.bash"
need curl
G="$GPUCTL"

cat >"$tmp/gpm4.json" <<'J'
{
  "name": "gpm-pool",
  "hostname": "gpm-pool",
  "gpus": [
    {"model": "H200 SXM", "workload": "gemm"},
    {"model": "H200 SXM", "workload": "memory-bound"},
    {"model": "H200 SXM", "workload": "idle-allocated"},
    {"model": "A100 SXM 80GB", "workload": "idle-allocated"}
  ]
}
J
printf 'pool_idle_window = 1s\npool_idle_threshold = 5%%\n' >"$tmp/idle.conf"
start_agent "$tmp/gpm4.json" --config "$tmp/idle.conf" || exit 1
port=$(sed -n 's/.*listening on http:\/\/127.0.0.1:\([0-9]*\)\/metrics.*/\1/p' "$tmp/agent.log" | head -1)

gemm=$("$G" submit --id-only --gpu-ids 0 --name gemm -- sh -c "$(hold gemm)")
mem=$("$G" submit --id-only --gpu-ids 1 --name mem -- sh -c "$(hold mem)")
idle=$("$G" submit --id-only --gpu-ids 2 --name idle -- sh -c "$(hold idle)")
old=$("$G" submit --id-only --gpu-ids 3 --name old -- sh -c "$(hold old)")
for j in "$gemm" "$mem" "$idle" "$old"; do
	check "job $j running" wait_state "$j" running
done

warning_of() { "$G" queue --json | jq -r --argjson id "$1" '.jobs[] | select(.id == $id) | .warning // ""'; }
idle_flagged() { [ "$(warning_of "$idle")" = "idle allocation: SM activity < 5% for 1s" ]; }
check "the idle job is flagged in queue --json" wait_until 60 idle_flagged

# every job watched for more than twice the window: 10 samples or more over 2 s or more
sampled() { # sampled ID
	[ "$("$G" jobs --json | jq --argjson id "$1" '[.jobs[] | select(.id == $id) | .accounting[0] |
		.samples >= 10 and .gpu_seconds >= 2] | .[0] // false')" = true ]
}
for j in "$gemm" "$mem" "$old"; do
	check "job $j sampled" wait_until 60 sampled "$j"
done
# the A100 job's stretch never starts; the busy ones' never holds: after the
# idle job was flagged and every job is sampled, none of them is
check "idle job still flagged" idle_flagged
for j in "$gemm" "$mem" "$old"; do
	check "job $j not flagged" test -z "$(warning_of "$j")"
done
"$G" queue >"$tmp/queue.txt"
check "queue's table warns on the idle job" grep -qE "^ +$idle +.* idle allocation: SM activity < 5% for 1s" "$tmp/queue.txt"
check "and only on it" test "$(grep -c "idle allocation" "$tmp/queue.txt")" = 1

# the page's pool view reads /api/v1/pool
curl -s --max-time 10 "http://127.0.0.1:$port/api/v1/pool" >"$tmp/pool.json"
check "/api/v1/pool: the warning on the idle job" test "$(jq -r --argjson id "$idle" '.jobs[] | select(.id == $id) | .warning' "$tmp/pool.json")" = \
	"idle allocation: SM activity < 5% for 1s"
check "/api/v1/pool: no warning on the others" test "$(jq '[.jobs[] | select(.warning)] | length' "$tmp/pool.json")" = 1
check "the page shows the warning" grep -q 'j.warning' "$src/web/app.js"

# the metric: 1 for the idle job, 0 for the others
curl -s --max-time 10 "http://127.0.0.1:$port/metrics" >"$tmp/metrics.txt"
idle_series() { grep "^gpuctl_pool_job_idle_allocation{job=\"$1\"," "$tmp/metrics.txt" | awk '{ print $2 }'; }
check "metric: idle job 1" test "$(idle_series "$idle")" = 1
for j in "$gemm" "$mem" "$old"; do
	check "metric: job $j 0" test "$(idle_series "$j")" = 0
done
check "metric: the GEMM job's SM activity" awk -v j="$gemm" '$1 ~ "^gpuctl_job_sm_active_avg_ratio\\{job=\"" j "\"" && $2 > 0.85 { f = 1 } END { exit !f }' "$tmp/metrics.txt"
check "metric: no GPM series for the A100 job" test "$(grep -c "^gpuctl_job_[a-z_]*active_avg_ratio{job=\"$old\"" "$tmp/metrics.txt")" = 0

# the jobs' means while they run, then from the store once they ended
check_means() { # check_means WHEN
	"$G" jobs --history --json >"$tmp/jobs.json"
	acct() { jq -r --argjson id "$1" ".jobs[] | select(.id == \$id) | .accounting[0].$2" "$tmp/jobs.json"; }
	check "$1: GEMM job: SM >= 85, tensor >= 80, DRAM <= 25" awk -v s="$(acct "$gemm" sm_active_avg_pct)" \
		-v t="$(acct "$gemm" tensor_active_avg_pct)" -v d="$(acct "$gemm" dram_active_avg_pct)" \
		'BEGIN { exit !(s >= 85 && t >= 80 && d <= 25) }'
	check "$1: memory-bound job: DRAM >= 75, tensor 0" awk -v d="$(acct "$mem" dram_active_avg_pct)" \
		-v t="$(acct "$mem" tensor_active_avg_pct)" 'BEGIN { exit !(d >= 75 && t == 0) }'
	check "$1: idle job: a measured 0" test "$(acct "$idle" sm_active_avg_pct)" = 0
	check "$1: A100 job: not read, never 0" test "$(acct "$old" 'unavailable.sm_active_avg_pct'),$(acct "$old" sm_active_avg_pct)" = "not read,null"
}
check_means running
"$G" jobs >"$tmp/jobs.txt"
check "jobs: the SM/TENSOR/DRAM column" grep -q "SM/TENSOR/DRAM" "$tmp/jobs.txt"
check "jobs: n/a on the A100 job" grep -qE "^ +$old .* n/a/n/a/n/a %" "$tmp/jobs.txt"
for j in gemm mem idle old; do release "$j"; done
for j in "$gemm" "$mem" "$idle" "$old"; do
	check "job $j done" wait_state "$j" done
done
check_means ended
stop_agent

# --- pool_idle_cancel: the idle job is ended, the reason recorded; a busy one is not
printf 'pool_idle_window = 1s\npool_idle_cancel = on\n' >"$tmp/cancel.conf"
start_agent "$tmp/gpm4.json" --config "$tmp/cancel.conf" || exit 1
busy=$("$G" submit --id-only --gpu-ids 0 --name busy -- sh -c "$(hold busy)")
idle2=$("$G" submit --id-only --gpu-ids 2 --name idle2 -- sh -c "$(hold idle2)")
check "the idle job is cancelled" wait_state "$idle2" cancelled
check "with the reason" sh -c "\"$G\" jobs --history --json | jq -r '.jobs[] | select(.id == $idle2) | .reason' | grep -q '^idle allocation: SM activity < 5% for 1s; '"
check "the busy job still runs" is_state "$busy" running
release busy
release idle2
check "busy job done" wait_state "$busy" done
stop_agent

# --- a job on a MIG slice: its GPU instance's figures (h100pcie-mig: the free
# 1g.10gb slice is GI 10, which runs nothing: SM activity a measured 0)
rm -rf "$tmp/state"
start_agent h100pcie-mig --config "$tmp/idle.conf" || exit 1
slice=$("$G" submit --id-only --mig 1g.10gb --name slice -- sh -c "$(hold slice)")
check "MIG job running" wait_state "$slice" running
slice_flagged() { [ "$(warning_of "$slice")" = "idle allocation: SM activity < 5% for 1s" ]; }
check "the idle MIG job is flagged by its instance's SM activity" wait_until 60 slice_flagged
check "MIG job sampled" wait_until 60 sampled "$slice"
"$G" jobs --json >"$tmp/mig_jobs.json"
check "MIG job: its instance's mean, a measured 0 (not n/a)" test \
	"$(jq -r --argjson id "$slice" '.jobs[] | select(.id == $id) | .accounting[0].sm_active_avg_pct' "$tmp/mig_jobs.json")" = 0
release slice
check "MIG job done" wait_state "$slice" done
stop_agent

# --- bad settings: one line, the agent does not start
printf 'pool_idle_threshold = lots\n' >"$tmp/bad.conf"
expect_exit 65 "$G" --sim "$tmp/gpm4.json" agent --once --config "$tmp/bad.conf"
err_has "bad.conf:1: bad value 'lots' for 'pool_idle_threshold'"
check "bad value: one line" test "$(wc -l <<<"$err")" = 1
finish
