#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# pool_container_hostile.sh - container job requests a hostile user would send
# (issue 38), refused before anything runs, with one line: through `gpuctl
# submit` (64: the client's own checks) and, as the same bytes on the pool's
# socket, by the agent (its checks do not trust the client): mounts with a
# relative path, a ".." component, /proc, /sys, /dev (a GPU's node not
# placed), the host's /, /run, the docker and podman sockets, the CDI spec
# directories, the pool's own state directory and socket, options through the
# mount string, DST over the runtime's /proc, /sys, /dev; image names that are
# options or transports (the host's files); environment entries the pool sets
# or with control characters; a runtime other than podman or docker; and
# fields the protocol does not know (a "devices", a "privileged", a misspelt
# "gpu"): refused, never ignored. No job is created by any of them; a sane
# container request is still queued. Needs no podman: nothing starts (the
# agent runs as whoever runs the test; the queued job waits on held GPUs).
#
# Run by CTest (GPUCTL = the binary). By hand:
#   GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/pool_container_hostile.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/pool_lib.bash"
need python3
G="$GPUCTL"

make_free_server h200x8 "$tmp/free8.json"
start_agent "$tmp/free8.json" || exit 1
state="$tmp/state"
# every GPU held, so that a container request that is accepted waits (no podman needed)
all=$("$G" submit --id-only --gpus 8 --shell -- "$(hold all8)")
check "a job holding every GPU" wait_state "$all" running
njobs() { "$G" jobs --history --all --limit 100000 --json | jq '.jobs | length'; }
before=$(njobs)

# --- through gpuctl submit: the client refuses (64), one line, naming why
refuse() { # refuse WHY-PATTERN SUBMIT-ARGS...: exit 64, one line matching the pattern
	local why="$1"; shift
	"$G" submit "$@" -- true >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	check "submit $* -> 64 (got $rc: $(head -c 200 "$tmp/err"))" test "$rc" = 64
	check "submit $*: one line" test "$(wc -l <"$tmp/err")" = 1
	check "submit $*: says '$why' ($(head -c 200 "$tmp/err"))" grep -q -- "$why" "$tmp/err"
}
refuse "absolute path" --image busybox --mount data:/data
refuse "'\.\.' component" --image busybox --mount /tmp/../etc:/etc2
refuse "'\.\.' component" --image busybox --mount "$tmp/x/..:/x"
refuse "within /proc" --image busybox --mount /proc:/hostproc
refuse "within /proc" --image busybox --mount /proc/1/root:/r
refuse "within /proc" --image busybox --mount //proc/./self:/r
refuse "within /sys" --image busybox --mount /sys/fs/cgroup:/cg
refuse "within /dev" --image busybox --mount /dev/nvidia3:/dev/nvidia0
refuse "within /dev" --image busybox --mount /dev:/hostdev
refuse "it holds /proc" --image busybox --mount /:/host
refuse "it holds" --image busybox --mount /run:/r
refuse "docker.sock" --image busybox --mount /var/run/docker.sock:/var/run/docker.sock
refuse "within /run/podman" --image busybox --mount /run/podman/podman.sock:/s
refuse "a container runtime's socket" --image busybox --mount /run/user/1000/podman/podman.sock:/s
refuse "within /var/run/cdi" --image busybox --mount /var/run/cdi:/cdi
refuse "within /var/lib/gpuctl" --image busybox --mount /var/lib/gpuctl/pool:/p
refuse "the option after DST is ro or rw" --image busybox --mount /tmp:/t:ro,exec
refuse "the option after DST is ro or rw" --image busybox --mount /tmp:/t:z
refuse "holds a control character or ','" --image busybox --mount "/tmp,ro:/t"
refuse "DST cannot be /" --image busybox --mount /tmp:/
refuse "DST cannot be within /proc" --image busybox --mount /tmp:/proc/sys
refuse "DST cannot be within /dev" --image busybox --mount /tmp:/dev/nvidia0
refuse "DST cannot be within /sys" --image busybox --mount /tmp:/sys
refuse "no transports" --image oci-archive:/etc/shadow
refuse "no transports" --image docker://busybox
refuse "no transports" --image dir:x/y
refuse "start with a letter or digit" --image _x
refuse "set by the pool" --image busybox --env CUDA_VISIBLE_DEVICES=0,1,2,3
refuse "set by the pool" --image busybox --env NVIDIA_VISIBLE_DEVICES=all
refuse "control character" --image busybox --env "X=$(printf 'a\033]0;x\007')"
refuse "variable name" --image busybox --env "LD PRELOAD=x"
refuse "unknown runtime" --image busybox --runtime runc
# the pool's own state: only the agent knows where it is (65: the agent refused)
"$G" submit --image busybox --mount "$state:/s" -- true >"$tmp/out" 2>"$tmp/err"
rc=$?
check "the pool's state directory as a mount: 65 (got $rc: $(cat "$tmp/err"))" test "$rc" = 65
check "it says why ($(cat "$tmp/err"))" grep -q "is refused (it is within $state)" "$tmp/err"
"$G" submit --image busybox --mount "$state/jobs:/s:ro" -- true >/dev/null 2>"$tmp/err"
check "a directory in it: 65 ($(cat "$tmp/err"))" grep -q "is refused (it is within $state)" "$tmp/err"
"$G" submit --image busybox --mount "$state/./jobs/:/s:ro" -- true >/dev/null 2>"$tmp/err"
check "written otherwise: 65 ($(cat "$tmp/err"))" grep -q "is refused (it is within $state)" "$tmp/err"
"$G" submit --image busybox --mount "$sock:/pool.sock" -- true >/dev/null 2>"$tmp/err"
check "its socket: 65 ($(cat "$tmp/err"))" grep -q "is refused" "$tmp/err"

# --- the same and more as raw requests on the socket: the agent checks them
# itself. One python3 sends each on a connection of its own and prints each
# answer as one line (a JSON string)
send_each() { python3 - "$sock" "$@" <<'PY'
import json, socket, sys
for req in sys.argv[2:]:
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.connect(sys.argv[1])
            s.sendall(req.encode("utf-8", "surrogateescape"))
            s.shutdown(socket.SHUT_WR)
            answer = s.makefile("rb").read().decode("utf-8", "replace")
    except OSError as e:
        answer = "(socket error: %s)" % e
    print(json.dumps(answer), flush=True)
PY
}
base='"v":1,"op":"submit","cwd":"/","argv":["true"],"image":"busybox"'
hostile=(
	"{$base,\"devices\":[\"/dev/nvidia3\"]}"         "unknown field 'devices' in a submit request"
	"{$base,\"privileged\":true}"                    "unknown field 'privileged'"
	"{$base,\"gpu\":2}"                              "unknown field 'gpu'"
	"{$base,\"cap_add\":[\"SYS_ADMIN\"]}"            "unknown field 'cap_add'"
	"{$base,\"network\":\"host\"}"                   "unknown field 'network'"
	"{$base,\"job\":1}"                              "unknown field 'job' in a submit request"
	'{"v":1,"op":"ping","image":"x"}'                "unknown field 'image' in a ping request"
	'{"v":1,"op":"cancel","job":1,"all_users":true}' "unknown field 'all_users' in a cancel request"
	"{$base,\"mounts\":[\"rel:/data\"]}"             "absolute path"
	"{$base,\"mounts\":[\"/data/../../etc:/e\"]}"    "'..' component"
	"{$base,\"mounts\":[\"/proc/self/root:/r\"]}"    "within /proc"
	"{$base,\"mounts\":[\"/sys:/s\"]}"               "within /sys"
	"{$base,\"mounts\":[\"/dev/nvidia7:/dev/nvidia0\"]}" "within /dev"
	"{$base,\"mounts\":[\"/:/host\"]}"               "it holds"
	"{$base,\"mounts\":[\"/run/docker.sock:/d\"]}"   "docker.sock"
	"{$base,\"mounts\":[\"/tmp:/t:ro,suid\"]}"       "ro or rw"
	"{$base,\"mounts\":[\"/tmp:/t\",\"/x:/y:rw:z\"]}" "ro or rw"
	"{$base,\"mounts\":[\"$state:/s\"]}"             "is refused (it is within $state)"
	"{$base,\"mounts\":[\"$state/../state/jobs:/s\"]}" "'..' component"
	"{$base,\"mounts\":[\"/tmp\"]}"                  "SRC:DST"
	"{$base,\"mounts\":\"/tmp:/t\"}"                 "'mounts' must be an array"
	"{$base,\"mounts\":[\"/tmp:/proc\"]}"            "DST cannot be within /proc"
	'{"v":1,"op":"submit","cwd":"/","argv":["true"],"image":"oci-archive:/etc/shadow"}' "no transports"
	'{"v":1,"op":"submit","cwd":"/","argv":["true"],"image":"-v"}' "start with a letter or digit"
	'{"v":1,"op":"submit","cwd":"/","argv":["true"],"image":"a b"}' "letters, digits"
	"{$base,\"container_env\":[\"GPUCTL_JOB_GPUS=0-7\"]}" "set by the pool"
	"{$base,\"container_env\":[\"X=a\\u001b[2J\"]}"  "control character"
	"{$base,\"runtime\":\"crun\"}"                   "unknown runtime"
	'{"v":1,"op":"submit","cwd":"/","argv":["true"],"mounts":["/tmp:/t"]}' "go with 'image'"
)
reqs=() whys=()
for ((i = 0; i < ${#hostile[@]}; i += 2)); do
	reqs+=("${hostile[i]}")
	whys+=("${hostile[i + 1]}")
done
mapfile -t answers < <(send_each "${reqs[@]}")
for i in "${!reqs[@]}"; do
	out="${answers[i]:-}"
	checks=$((checks + 1))
	err=$(jq -er 'fromjson | select(.ok == false) | .error' <<<"$out" 2>/dev/null) ||
		{ fail "${reqs[i]} -> not refused: ${out:-no answer}"; continue; }
	grep -qF -- "${whys[i]}" <<<"$err" || fail "${reqs[i]} -> '$err', want '${whys[i]}'"
	[ "$(wc -l <<<"$err")" = 1 ] || fail "${reqs[i]}: the error is not one line: $err"
done
check "no hostile request created a job" test "$(njobs)" = "$before"

# --- a sane container request is accepted (it waits for the GPUs held above)
mkdir -p "$tmp/data"
ok=$("$G" submit --id-only --image localhost/gpuctl-test/cuda12:latest --mount "$tmp/data:/data:ro" \
	--mount "$tmp/data:/work" --env OMP_NUM_THREADS=4 -- true 2>"$tmp/err")
check "a sane container job is queued ($(cat "$tmp/err"))" test -n "$ok"
check "and waits for a GPU" wait_reason "$ok" "waiting for"
"$G" cancel "$ok" >/dev/null
release all8
check "the holding job ends" wait_state "$all" done
stop_agent
finish
