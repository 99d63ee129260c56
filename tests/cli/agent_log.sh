#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# agent_log.sh - the agent's own log (stderr) says what happens as it happens:
# a GPU that falls off the bus and comes back, an XID (with its name from the
# catalog), a pool job that starts and one that ends (docs/agent.md, "The
# log"). Before, only the API knew. The faults come from a run-time fault
# file the test rewrites; the job runs until the test releases it.
#
# Run by CTest (GPUCTL = the binary). By hand:
#   GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/agent_log.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/pool_lib.bash"

make_free_server h200x8 "$tmp/free8.json"
faults="$tmp/faults.json"
echo '{"faults": []}' >"$faults"
start_agent "$tmp/free8.json,faults=$faults" || { finish; exit 1; }
log="$tmp/agent.log"
in_log() { grep -q -- "$1" "$log"; }
# expect_log DESCRIPTION REGEX: the line comes (bounded poll)
expect_log() {
	checks=$((checks + 1))
	wait_until 30 in_log "$2" || fail "$1: no /$2/ in the log: $(cat "$log")"
}
checks=$((checks + 1))
grep -Eq 'stopped answering|XID|started on' "$log" && fail "a quiet start logged events: $(cat "$log")"

# GPU 4 falls off the bus (one XID 79 with it), GPU 1 raises XID 48
set_faults() { printf '%s' "$1" >"$faults.new" && mv "$faults.new" "$faults"; }
set_faults '{"faults": [{"kind": "gpu_lost", "gpu": 4}, {"kind": "xid", "gpu": 1, "xid": 48}]}'
expect_log "GPU lost" '^gpuctl agent: GPU 4 (.*) stopped answering: '
expect_log "XID 79 of the lost GPU" '^gpuctl agent: GPU 4 .*: XID 79 (.*), 1 new, 1 in all$'
expect_log "XID 48 named from the catalog" '^gpuctl agent: GPU 1 (.*): XID 48 ([A-Za-z_]*: .*), 1 new, 1 in all$'
checks=$((checks + 1))
[ "$(grep -c 'GPU 4 .*stopped answering' "$log")" = 1 ] || fail "the loss was logged more than once: $(cat "$log")"
# it comes back when the fault goes
set_faults '{"faults": []}'
expect_log "GPU back" '^gpuctl agent: GPU 4 (.*) answers again$'

# a job starts on its GPU, and ends with its exit code
id=$("$GPUCTL" submit --id-only --name logjob --gpus 1 -- sh -c "$(hold job); exit 3")
expect_log "job started" "^gpuctl agent: job $id ([a-z0-9_.-]*: logjob) started on GPU [0-9]\$"
# a job that cannot start (all 8 GPUs while one is held) and is cancelled ends too, never started
id2=$("$GPUCTL" submit --id-only --name later --gpus 8 -- true)
"$GPUCTL" cancel "$id2" >/dev/null
expect_log "cancelled job" "^gpuctl agent: job $id2 ([a-z0-9_.-]*: later) ended: cancelled"
checks=$((checks + 1))
in_log "job $id2 (.*) started on" && fail "the cancelled job was logged as started: $(cat "$log")"
checks=$((checks + 1))
in_log "job $id .* ended" && fail "the job ended before it was released: $(cat "$log")"
release job
expect_log "job ended" "^gpuctl agent: job $id ([a-z0-9_.-]*: logjob) ended: failed, exit 3"
stop_agent
finish
