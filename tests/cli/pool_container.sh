#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# pool_container.sh - container jobs (gpuctl submit --image; docs/containers.md)
# on a simulated server whose GPUs' device nodes are mknod fakes: a job's
# container sees exactly its GPUs' nodes; two 1-GPU container jobs run side by
# side on different GPUs; cancel removes the container; kill -9 of the agent
# during a container job, then a restart: re-attached, run once, and the
# container does not outlive it; an image needing a newer CUDA than the
# driver's is refused before it starts; bad --image/--mount/--env refused.
#
# podman, runc and busybox-static (scripts/deps.sh), as root (podman as root,
# mknod). podman's storage and configuration are this test's own ($tmp):
# nothing is pulled; the images are imported from a tar of busybox.
#
# Run by CTest (GPUCTL = the binary). By hand:
#   GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/pool_container.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/pool_lib.bash"
need podman runc busybox
need_root "podman as root and mknod"
G="$GPUCTL"

# --- podman of its own: storage, configuration (no resource limits: the OCI
# runtime may not set them on these machines), two images of busybox
export CONTAINERS_CONF="$tmp/containers.conf" CONTAINERS_STORAGE_CONF="$tmp/storage.conf"
printf '[containers]\ndefault_ulimits = []\n[engine]\nruntime = "runc"\n' >"$CONTAINERS_CONF"
printf '[storage]\ndriver = "vfs"\ngraphroot = "%s/storage"\nrunroot = "%s/run"\n' "$tmp" "$tmp" >"$CONTAINERS_STORAGE_CONF"
on_exit 'podman rm -f -a -t 0 >/dev/null 2>&1; podman rmi -a -f >/dev/null 2>&1'
busybox_rootfs_tar "$tmp/rootfs.tar"
# the simulated server's driver runs CUDA 13.0 (data/sim/h200x8.json)
podman import -q --change 'ENV NVIDIA_REQUIRE_CUDA="cuda>=12.4 brand=tesla,driver>=470,driver<471"' \
	--change 'ENV CUDA_VERSION=12.4.1' "$tmp/rootfs.tar" localhost/gpuctl-test/cuda12 >/dev/null ||
	{ echo "FAIL: podman import"; exit 1; }
podman import -q --change 'ENV NVIDIA_REQUIRE_CUDA=cuda>=99.0' "$tmp/rootfs.tar" localhost/gpuctl-test/cuda99 >/dev/null ||
	{ echo "FAIL: podman import"; exit 1; }

# --- the GPUs' nodes: fakes; the pool's CDI spec names them
mkdir -p "$tmp/dev"
for i in 0 1 2 3 4 5 6 7; do mknod "$tmp/dev/nvidia$i" c 195 "$i"; done
mknod "$tmp/dev/nvidiactl" c 195 255
printf 'pool_dev_dir = %s/dev\npool_kill_grace = 20s\n' "$tmp" >"$tmp/agent.conf"
make_free_server h200x8 "$tmp/free8.json"
srv="$tmp/free8.json"
our_spec() { grep -l "$tmp/dev/" /var/run/cdi/gpuctl-pool-*.json 2>/dev/null; } # the spec this pool writes
on_exit 'our_spec | xargs -r rm -f'
start_agent "$srv" --config "$tmp/agent.conf" || exit 1
container_gone() { [ -z "$(podman ps -a -q --filter "name=^gpuctl-job-$1\$")" ]; }

# --- bad requests: one line, exit 64, nothing queued
bad() { # bad WHAT ARGS...: refused with one line on stderr and exit 64
	local what="$1"; shift
	"$G" submit "$@" -- true >"$tmp/bad.out" 2>"$tmp/bad.err"
	local rc=$?
	check "$what: exit 64 (got $rc)" test "$rc" -eq 64
	check "$what: one line" test "$(wc -l <"$tmp/bad.err")" -eq 1
}
bad "image starting with -" --image=-v
bad "mount not absolute" --image localhost/gpuctl-test/cuda12 --mount data:/data
bad "mount with a bad option" --image localhost/gpuctl-test/cuda12 --mount /a:/b:rx
bad "env with a bad name" --image localhost/gpuctl-test/cuda12 --env "1X=2"
bad "env the pool sets" --image localhost/gpuctl-test/cuda12 --env CUDA_VISIBLE_DEVICES=0
bad "runtime crun" --image localhost/gpuctl-test/cuda12 --runtime crun
bad "mount without image" --mount /a:/b
check "nothing queued by the bad requests" test "$("$G" jobs --history --all --json | jq '.jobs | length')" -eq 0

# --- the driver/CUDA match: refused before start, with both versions
old=$("$G" submit --id-only --image localhost/gpuctl-test/cuda99 --mount "$tmp:$tmp" -- sh -c "echo ran >'$tmp/cuda99.ran'")
check "cuda99 image refused" wait_state "$old" failed
check "its reason names both versions" sh -c "\"$G\" jobs --history --json | jq -r '.jobs[] | select(.id == $old) | .reason' | grep -q 'needs CUDA 99.0; the driver supports CUDA 13.0'"
check "it never ran" test ! -e "$tmp/cuda99.ran"
check "the pool wrote its CDI spec in /var/run/cdi" test -n "$(our_spec)"

# --- two 1-GPU container jobs side by side, each held until released; each
# writes what it sees: its GPUs (pool's variable), its device nodes, its cgroup
job_cmd() { # job_cmd NAME: the shell command of a held job that reports what it sees
	printf 'echo started >>%s/%s.starts; { echo "gpus=$GPUCTL_JOB_GPUS"; echo "cvd=$CUDA_VISIBLE_DEVICES"; ls /dev | grep nvidia; } >%s/%s.seen; %s; echo %s-done' \
		"$tmp" "$1" "$tmp" "$1" "$(hold "$1")" "$1"
}
a=$("$G" submit --id-only --image localhost/gpuctl-test/cuda12 --mount "$tmp:$tmp" --env GREETING=hi -- sh -c "$(job_cmd a)")
b=$("$G" submit --id-only --image localhost/gpuctl-test/cuda12 --mount "$tmp:$tmp" -- sh -c "$(job_cmd b)")
check_two_container_jobs "$a" "$b" "$tmp"
check "a's CUDA_VISIBLE_DEVICES is its GPU's UUID" test "$(sed -n 's/^cvd=//p' "$tmp/a.seen")" = "$(jobfield "$a" cuda_visible_devices)"
check "a's container has its name" test -n "$(podman ps -q --filter "name=^gpuctl-job-$a\$")"

# --- cancel: the container is stopped and removed
"$G" cancel "$a" >/dev/null
check "a cancelled" wait_state "$a" cancelled 120
check "a's container removed" wait_until 120 container_gone "$a"
check "b still running" is_state "$b" running

# --- kill -9 of the agent during b, then a restart: re-attached, run once
crash_agent
start_agent "$srv" --config "$tmp/agent.conf" || exit 1
check "b re-attached" is_state "$b" running
check "b's reason says re-attached" sh -c "\"$G\" jobs --json | jq -r '.jobs[] | select(.id == $b) | .reason' | grep -q 're-attached'"
check "b's container still there, once" test "$(podman ps -q --filter "name=^gpuctl-job-$b\$" | wc -l)" -eq 1
release b
"$G" wait "$b" >/dev/null
check "b ends done" is_state "$b" done
check "b ran once" test "$(wc -l <"$tmp/b.starts")" -eq 1
check "b's output in its log" sh -c "\"$G\" logs $b | grep -qx b-done"
check "b has accounting" test "$(jobfield "$b" 'accounting | length')" = 1
check "b's container gone (podman run --rm)" wait_until 60 container_gone "$b"
check "no gpuctl container left" test -z "$(podman ps -a -q --filter name=gpuctl-job-)"
release a
finish
