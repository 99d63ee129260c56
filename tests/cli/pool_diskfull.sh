#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# pool_diskfull.sh - the pool when the disk that holds its state fills up
# (issue 20 item 4): on a 16 MiB tmpfs, a job waits with the reason while
# less than pool_min_free is left, a submission on a full disk is refused
# with SQLite's reason (65), the agent keeps answering, and once space is
# back every job runs and every record is there and intact. Without the
# reserve (pool_min_free = 0), on a disk full to the last block: a job that
# ends writes its exit record all the same (its space was reserved at its
# start), a job that cannot start fails saying so, and both rows reach
# jobs.db once there is room again.
#
# Run by CTest (GPUCTL = the binary); needs root (mount). By hand:
#   GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/pool_diskfull.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/pool_lib.bash"
need_root "mounting a small tmpfs for the pool's state"
need sqlite3
G="$GPUCTL"

mkdir -p "$tmp/state"
mount -t tmpfs -o size=16m gpuctl-pool-test "$tmp/state" || skip "cannot mount a tmpfs here"
on_exit "umount -l '$tmp/state'"
make_free_server h200x8 "$tmp/free8.json"
printf 'pool_min_free = 4M\n' >"$tmp/agent.conf"
start_agent "$tmp/free8.json" --config "$tmp/agent.conf" || exit 1

held=$("$G" submit --id-only --shell -- "$(hold held)")
check "a job running before the disk fills" wait_state "$held" running
# fill the disk but 1 MiB: below pool_min_free, room for SQLite
avail_kib=$(df -k --output=avail "$tmp/state" | tail -1)
dd if=/dev/zero of="$tmp/state/fill" bs=1K count=$((avail_kib - 1024)) status=none
w=$("$G" submit --id-only -- true)
check "submitted below pool_min_free" test -n "$w"
check "it waits, saying the disk is full" wait_reason "$w" "not started: the pool's disk is full ("
check "and how much is free and needed" sh -c "\"$G\" queue --json | jq -r '.jobs[] | select(.id == $w) | .reason' | grep -q 'MiB free in .*; jobs start above 4.0 MiB, pool_min_free)'"

# fill it up entirely: a submission cannot be recorded, and says so
dd if=/dev/zero of="$tmp/state/fill2" bs=1K status=none 2>/dev/null
"$G" submit -- true >/dev/null 2>"$tmp/full.err"
check "a submission on a full disk: 65" test $? = 65
check "it says the disk is full" grep -qi "full" "$tmp/full.err"
check "the agent still answers queue" "$G" queue >/dev/null
check "and jobs" "$G" jobs --history >/dev/null

# space back: the waiting job runs, the held one ends, every record is there
rm -f "$tmp/state/fill" "$tmp/state/fill2"
check "the waiting job runs once there is room" wait_state "$w" done
release held
check "the held job ends done" wait_state "$held" done
check "both records kept" test "$("$G" jobs --history --json | jq -c '[.jobs[].id] | sort')" = "[$held,$w]"
stop_agent
check "the database is intact" test "$(sqlite3 "$tmp/state/jobs.db" 'PRAGMA integrity_check')" = ok

printf 'pool_min_free = 0\n' >"$tmp/noreserve.conf"
start_agent "$tmp/free8.json" --config "$tmp/noreserve.conf" || exit 1
all=$("$G" submit --id-only --gpus 8 --shell -- "$(hold all8)")
check "a job holding every GPU" wait_state "$all" running
next=$("$G" submit --id-only -- true)
check "the next waits for a GPU" wait_reason "$next" "waiting for 1 free GPU"
dd if=/dev/zero of="$tmp/state/fill" bs=1K status=none 2>/dev/null
release all8
# both leave the queue while the disk is full: the first ended, the next tried to start
queue_empty() { test "$("$G" queue --json | jq '.jobs | length')" = 0; }
check "both settled on the full disk" wait_until 60 queue_empty
rm -f "$tmp/state/fill"
check "the ended job is done (its exit record had room)" wait_state "$all" done
check "the one that could not start failed" wait_state "$next" failed
check "saying why" sh -c "\"$G\" jobs --history --json | jq -r '.jobs[] | select(.id == $next) | .reason' | grep -q \"^could not start: no room for the job's records in .*: No space left on device\""
stop_agent
check "the database is intact" test "$(sqlite3 "$tmp/state/jobs.db" 'PRAGMA integrity_check')" = ok
check "jobs.db has the ended job done" test "$(sqlite3 "$tmp/state/jobs.db" "SELECT state FROM jobs WHERE id = $all")" = done
check "and the one that could not start failed, with why" \
	test "$(sqlite3 "$tmp/state/jobs.db" "SELECT state || ': ' || substr(reason, 1, 46) FROM jobs WHERE id = $next")" = \
	"failed: could not start: no room for the job's records"
finish
