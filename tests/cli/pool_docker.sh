#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# pool_docker.sh - container jobs through docker (gpuctl submit --image
# --runtime docker; docs/containers.md): Debian's docker.io 20.10 reads no CDI
# spec, so the pool applies its own spec as docker flags. On a simulated
# server whose GPUs' nodes are mknod fakes: a job's container sees exactly its
# GPU's node; a user's job runs as that user (uid, gid) through the docker
# group, root's as root, side by side on different GPUs; cancel removes the
# container; kill -9 of the agent during a job, then a restart: re-attached,
# run once, no container left; an image needing a newer CUDA than the
# driver's is refused before it starts. Then a cgroup v2 dockerd (in a mount
# namespace of its own on a hybrid host): the container runs below the job's
# cgroup (--cgroup-parent), with runc's device program below the pool's.
#
# dockerd of its own (root; vfs storage, data and socket in $tmp, no bridge,
# no iptables), its socket's group a user made here; the image is imported
# from a tar of busybox-static (no registry). docker.io, runc, busybox-static
# (scripts/deps.sh).
#
# Run by CTest (GPUCTL = the binary). By hand, as root:
#   GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/pool_docker.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/pool_lib.bash"
need dockerd docker runc busybox useradd runuser
need_root "dockerd, mknod, useradd"
G="$GPUCTL"
make_test_user gpt_d

# --- dockerd of its own; stopped (and its containers with it) on exit
export DOCKER_HOST="unix://$tmp/docker.sock"
dockerd --group "$u" --host "$DOCKER_HOST" --data-root "$tmp/docker" --exec-root "$tmp/dx" \
	--pidfile "$tmp/docker.pid" --storage-driver vfs --bridge none --iptables=false --ip6tables=false \
	--ip-masq=false >"$tmp/dockerd.log" 2>&1 &
dockerd_pid=$!
dk1="$DOCKER_HOST"
stop_dockerd() {
	DOCKER_HOST="$dk1" docker rm -f $(DOCKER_HOST="$dk1" docker ps -a -q) >/dev/null 2>&1
	kill "$dockerd_pid" 2>/dev/null
	wait "$dockerd_pid" 2>/dev/null
}
on_exit stop_dockerd # runs after the agent's stop (on_exit runs in reverse)
docker_up() { docker info >/dev/null 2>&1; }
wait_until 60 docker_up || { echo "FAIL: dockerd did not start:"; tail -20 "$tmp/dockerd.log"; exit 1; }

busybox_rootfs_tar "$tmp/rootfs.tar"
# the simulated server's driver runs CUDA 13.0 (data/sim/h200x8.json)
docker import -c 'ENV CUDA_VERSION=12.4.1' "$tmp/rootfs.tar" gpuctl-test/cuda12 >/dev/null &&
	docker import -c 'ENV NVIDIA_REQUIRE_CUDA=cuda>=99.0' "$tmp/rootfs.tar" gpuctl-test/cuda99 >/dev/null ||
	{ echo "FAIL: docker import"; exit 1; }

# --- the GPUs' nodes: fakes; the pool's CDI spec names them, the pool gives them as --device
mkdir -p "$tmp/dev" "$tmp/out"
chmod 1777 "$tmp/out" # the user's job writes what it sees here
for i in 0 1 2 3 4 5 6 7; do mknod "$tmp/dev/nvidia$i" c 195 "$i"; done
mknod "$tmp/dev/nvidiactl" c 195 255
printf 'pool_dev_dir = %s/dev\npool_kill_grace = 20s\n' "$tmp" >"$tmp/agent.conf"
make_free_server h200x8 "$tmp/free8.json"
our_spec() { grep -l "$tmp/dev/" /var/run/cdi/gpuctl-pool-*.json 2>/dev/null; }
on_exit 'our_spec | xargs -r rm -f'
start_agent "$tmp/free8.json" --config "$tmp/agent.conf" || exit 1
as_user() { (cd "$tmp/out" && runuser -u "$u" -- env GPUCTL_POOL_SOCKET="$sock" DOCKER_HOST="$DOCKER_HOST" "$G" "$@"); }
container_gone() { [ -z "$(docker ps -a -q --filter "name=^gpuctl-job-$1\$")" ]; }

"$G" submit --image gpuctl-test/cuda12 --runtime crun -- true >/dev/null 2>"$tmp/bad.err"
check "runtime crun: exit 64" test $? -eq 64
check "runtime crun: says which runtimes" grep -q "podman or docker" "$tmp/bad.err"

old=$(as_user submit --id-only --image gpuctl-test/cuda99 --runtime docker -- sh -c "echo ran >'$tmp/out/cuda99.ran'")
check "cuda99 image refused" wait_state "$old" failed
check "its reason names both versions" sh -c "\"$G\" jobs --history --all --json | jq -r '.jobs[] | select(.id == $old) | .reason' | grep -q 'needs CUDA 99.0; the driver supports CUDA 13.0'"
check "it never ran" test ! -e "$tmp/out/cuda99.ran"

# --- a (the user's) and b (root's) side by side, each held until released
job_cmd() { # job_cmd NAME: the shell command of a held job that reports what it sees
	printf 'echo started >>%s/out/%s.starts; { echo "ids=$(id -u):$(id -g)"; echo "gpus=$GPUCTL_JOB_GPUS"; ls /dev | grep nvidia; } >%s/out/%s.seen; %s; echo %s-done' \
		"$tmp" "$1" "$tmp" "$1" "$(hold "$1")" "$1"
}
a=$(as_user submit --id-only --image gpuctl-test/cuda12 --runtime docker --mount "$tmp:$tmp" -- sh -c "$(job_cmd a)")
b=$("$G" submit --id-only --image gpuctl-test/cuda12 --runtime docker --mount "$tmp:$tmp" -- sh -c "$(job_cmd b)")
check_two_container_jobs "$a" "$b" "$tmp/out"
check "a's container runs as the user" test "$(sed -n 's/^ids=//p' "$tmp/out/a.seen")" = "$(id -u "$u"):$(id -g "$u")"
check "b's container runs as root" test "$(sed -n 's/^ids=//p' "$tmp/out/b.seen")" = 0:0
check "a's container has its name" test -n "$(docker ps -q --filter "name=^gpuctl-job-$a\$")"

# --- cancel: the container is stopped and removed
as_user cancel "$a" >/dev/null
check "a cancelled" wait_state "$a" cancelled 120
check "a's container removed" wait_until 120 container_gone "$a"
check "b still running" is_state "$b" running

# --- kill -9 of the agent during b, then a restart: re-attached, run once
crash_agent
start_agent "$tmp/free8.json" --config "$tmp/agent.conf" || exit 1
check "b re-attached" is_state "$b" running
check "b's container still there, once" test "$(docker ps -q --filter "name=^gpuctl-job-$b\$" | wc -l)" -eq 1
release b
"$G" wait "$b" >/dev/null
check "b ends done" is_state "$b" done
check "b ran once" test "$(wc -l <"$tmp/out/b.starts")" -eq 1
check "b's output in its log" sh -c "\"$G\" logs $b | grep -qx b-done"
check "b's container gone (docker run --rm)" wait_until 60 container_gone "$b"
check "no gpuctl container left" test -z "$(docker ps -a -q --filter name=gpuctl-job-)"
release a

# --- a cgroup v2 dockerd with the cgroupfs driver takes the job's cgroup as
# --cgroup-parent: the container runs below the job's cgroup, and runc's own
# device program attaches below the pool's (BPF_F_ALLOW_MULTI). On a hybrid
# host this dockerd runs in a mount namespace whose /sys/fs/cgroup is the
# cgroup2 mount (/sys/fs/cgroup/unified): the same cgroups, seen as v2.
if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then
	echo "note: the host is cgroup v2 only: dockerd above was v2 already ($(docker info --format '{{.CgroupVersion}} {{.CgroupDriver}}'))"
elif [ "$(stat -fc %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ] && command -v unshare >/dev/null; then
	v2="unix://$tmp/docker2.sock"
	unshare --mount --propagation private sh -c 'mount --bind /sys/fs/cgroup/unified /sys/fs/cgroup && exec "$@"' sh \
		dockerd --group "$u" --host "$v2" --data-root "$tmp/docker2" --exec-root "$tmp/dx2" \
		--pidfile "$tmp/docker2.pid" --storage-driver vfs --bridge none --iptables=false --ip6tables=false \
		--ip-masq=false >"$tmp/dockerd2.log" 2>&1 &
	dockerd2_pid=$!
	on_exit 'DOCKER_HOST="$v2" docker rm -f $(DOCKER_HOST="$v2" docker ps -a -q) >/dev/null 2>&1; kill "$dockerd2_pid"; wait "$dockerd2_pid"'
	export DOCKER_HOST="$v2"
	check "a cgroup v2 dockerd started" wait_until 60 docker_up
	check "it is v2 with cgroupfs" test "$(docker info --format '{{.CgroupVersion}} {{.CgroupDriver}}')" = "2 cgroupfs"
	docker import -c 'ENV CUDA_VERSION=12.4.1' "$tmp/rootfs.tar" gpuctl-test/cuda12 >/dev/null
	c=$(as_user submit --id-only --image gpuctl-test/cuda12 --runtime docker --mount "$tmp:$tmp" -- sh -c "$(job_cmd c)")
	check "c running" wait_state "$c" running
	check "c's container reported" wait_until 120 test -s "$tmp/out/c.seen"
	check "c sees exactly its GPU's node" container_sees_only_its_gpu "$tmp/out/c.seen"
	cg=$(jobfield "$c" cgroup)
	init_below_job() { # docker-init, the container's PID 1, is in a cgroup below the job's
		local f p
		for f in "$cg"/*/cgroup.procs; do
			for p in $(cat "$f" 2>/dev/null); do [ "$(cat "/proc/$p/comm" 2>/dev/null)" = docker-init ] && return 0; done
		done
		return 1
	}
	check "c's container runs below the job's cgroup" init_below_job
	as_user cancel "$c" >/dev/null
	check "c cancelled" wait_state "$c" cancelled 120
	check "c's container removed" wait_until 120 container_gone "$c"
	release c
else
	echo "note: no cgroup2 mount to give a dockerd: --cgroup-parent is not run here"
fi
finish
