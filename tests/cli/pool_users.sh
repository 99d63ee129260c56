#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# pool_users.sh - the pool with two real Unix users (created here with
# useradd, removed at the end; needs root, skips (exit 77) otherwise): a job
# runs as the user who submitted it (uid, gid, output files theirs), a user
# reads and cancels only their own jobs, sees no one else's command, root
# may do anything, and only root lists everyone's history.
#
# Run by CTest (GPUCTL = the binary). By hand, as root:
#   GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/pool_users.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/pool_lib.bash"
need_root "useradd, runuser"
need useradd runuser
G="$GPUCTL"
ua="gpt_a_$$"
ub="gpt_b_$$"
users_made=""
cleanup_users() { # the agent first: userdel refuses a user with processes
	stop_agent
	for u in $users_made; do userdel "$u" 2>/dev/null; done
}
on_exit cleanup_users
for u in "$ua" "$ub"; do
	useradd -M -d /nonexistent -s /bin/sh "$u" || { echo "FAIL: useradd $u"; exit 1; }
	users_made="$users_made $u"
done
# the users must reach the binary and the data (a build under /root may not be)
if ! runuser -u "$ua" -- test -x "$G" || ! runuser -u "$ua" -- test -r "$GPUCTL_DATA_DIR/sim/h200x8.json"; then
	skip "user $ua cannot run '$G' here"
fi
as() { # as USER gpuctl ARGS...
	local u="$1"; shift
	(cd "$tmp/shared" && runuser -u "$u" -- env GPUCTL_POOL_SOCKET="$sock" GPUCTL_DATA_DIR="$GPUCTL_DATA_DIR" "$G" "$@")
}
mkdir -p "$tmp/shared"
chmod 1777 "$tmp/shared"
make_free_server h200x8 "$tmp/free8.json"
start_agent "$tmp/free8.json" || exit 1
check "socket open to every user" test "$(stat -c %a "$sock")" = 666

ja=$(as "$ua" submit --id-only -- sh -c "id -u; id -g; $(hold ja)")
check "user A submitted" test -n "$ja"
check "A's job running" wait_state "$ja" running
two_lines() { [ "$(as "$ua" logs "$ja" | wc -l)" = 2 ]; }
check "A's job printed its ids" wait_until 60 two_lines
check "runs as A's uid" test "$(as "$ua" logs "$ja" | sed -n 1p)" = "$(id -u "$ua")"
check "with A's gid" test "$(as "$ua" logs "$ja" | sed -n 2p)" = "$(id -g "$ua")"
check "output file is A's, mode 600" test "$(stat -c '%U %a' "$tmp/state/jobs/$ja/stdout")" = "$ua 600"
check "job recorded with A's name" test "$(jobfield "$ja" user)" = "$ua"

as "$ub" logs "$ja" >/dev/null 2>"$tmp/b.err"
check "B cannot read A's logs: exit 65" test $? -eq 65
check "says whose" grep -q "belongs to another user" "$tmp/b.err"
as "$ub" cancel "$ja" >/dev/null 2>&1
check "B cannot cancel A's job" test $? -eq 65
check "A's job still running" test "$(state_of "$ja")" = running
check "B sees A's job in the queue" test "$(as "$ub" queue --json | jq "[.jobs[] | select(.id == $ja)] | length")" = 1
check "but no command in the queue" test "$(as "$ub" queue --json | jq ".jobs[] | select(.id == $ja) | has(\"command\")")" = false
check "A sees its own command" test "$(as "$ua" jobs --json | jq -r ".jobs[] | select(.id == $ja) | .command[0]")" = sh
as "$ub" jobs --json >"$tmp/bjobs.json"
check "B's job list holds none of A's" test "$(jq "[.jobs[] | select(.id == $ja)] | length" "$tmp/bjobs.json")" = 0
as "$ub" jobs --all >/dev/null 2>&1
check "only root lists everyone's jobs" test $? -eq 65
jb=$(as "$ub" submit --id-only -- true)
as "$ub" wait "$jb" >/dev/null
check "B's own job done" test $? -eq 0
check "B's history holds only B's jobs" test "$(as "$ub" jobs --history --json | jq "[.jobs[] | select(.user != \"$ub\")] | length")" = 0
"$G" cancel "$ja" >/dev/null
check "root cancels A's job" wait_state "$ja" cancelled
release ja
stop_agent

# per-user limit: A may hold 2 GPUs; B is not held back by A's queue
printf 'pool_user_gpu_limit = 2\n' >"$tmp/limit.conf"
start_agent "$tmp/free8.json" --config "$tmp/limit.conf" || exit 1
a1=$(as "$ua" submit --id-only --gpus 2 -- sh -c "$(hold a1)")
a2=$(as "$ua" submit --id-only --gpus 1 -- true)
b1=$(as "$ub" submit --id-only --gpus 2 -- true)
check "A's first job runs" wait_state "$a1" running
check "B's job runs past A's held one" wait_state "$b1" done
check "A's second waits: limit" test "$("$G" queue --json | jq -r ".jobs[] | select(.id == $a2) | .reason")" = "user limit of 2 GPUs reached"
"$G" cancel "$a1" >/dev/null
check "then it runs" wait_state "$a2" done
release a1
stop_agent

# an agent that is not root runs only its own user's jobs; its socket is 0600
usock="$tmp/shared/user.sock"
runuser -u "$ua" -- env GPUCTL_DATA_DIR="$GPUCTL_DATA_DIR" "$G" --sim "$tmp/free8.json" agent --listen 127.0.0.1:0 \
	--interval 100ms --kernel-log off --pool --pool-dir "$tmp/shared/ustate" --pool-socket "$usock" \
	>"$tmp/uagent.log" 2>&1 &
agent_pid=$!
user_agent_answers() { runuser -u "$ua" -- env GPUCTL_POOL_SOCKET="$usock" "$G" queue >/dev/null 2>&1; }
check "the user's agent answers its user" wait_until 60 user_agent_answers
check "user agent's socket is 0600" test "$(stat -c %a "$usock")" = 600
check "user agent has no cgroups or says why" grep -q "cgroups" "$tmp/uagent.log"
uj=$(cd "$tmp/shared" && runuser -u "$ua" -- env GPUCTL_POOL_SOCKET="$usock" "$G" submit --id-only -- id -u)
check "its own user submits" test -n "$uj"
(cd "$tmp/shared" && runuser -u "$ub" -- env GPUCTL_POOL_SOCKET="$usock" "$G" submit -- true) >/dev/null 2>"$tmp/ub.err"
check "another user cannot even connect: exit 75" test $? -eq 75
GPUCTL_POOL_SOCKET="$usock" "$G" submit -- true >/dev/null 2>"$tmp/root.err"
check "root is refused: 65" test $? -eq 65
check "with the reason" grep -q "runs only that user's jobs" "$tmp/root.err"
GPUCTL_POOL_SOCKET="$usock" "$G" wait "$uj" >/dev/null
check "the user's job ran as that user" test "$(GPUCTL_POOL_SOCKET="$usock" "$G" logs "$uj")" = "$(id -u "$ua")"
stop_agent
finish
