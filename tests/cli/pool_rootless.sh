#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# pool_rootless.sh - a container job of a user other than root (gpuctl submit
# --image; docs/containers.md): the pool runs podman as that user, which is
# rootless podman (its user namespace from /etc/subuid through newuidmap, the
# user's own storage and configuration from the job's environment). Checks:
# the container's root is the user on the host (what it writes is the
# user's), it sees exactly its GPU's node, podman and the container stay in
# the job's cgroup (no --cgroups=split: a rootless podman cannot make cgroups
# below root's), cancel stops and removes the container, and a job runs to
# done with its log.
#
# Root (useradd, mknod); podman, runc, uidmap (newuidmap), busybox-static
# (scripts/deps.sh). The user's podman: vfs storage and runtime directory in
# $tmp, runc, no network (netns = "none": slirp4netns needs a /dev/net/tun the
# user may open; nothing here needs a network).
#
# Run by CTest (GPUCTL = the binary). By hand, as root:
#   GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/pool_rootless.sh
set -u
# A rootless runc cannot make device nodes: it bind-mounts each from the
# host's path the container sees (/dev/nvidiaN), whatever the CDI spec's
# hostPath says. The test runs in a mount namespace of its own whose /dev is
# a tmpfs with the usual nodes and the GPUs' fakes; the host's /dev is untouched.
if [ "${GPUCTL_ROOTLESS_NS:-}" != 1 ] && [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
	GPUCTL_ROOTLESS_NS=1 exec unshare --mount --propagation private bash "$0" "$@"
fi
. "$(dirname "${BASH_SOURCE[0]}")/pool_lib.bash"
[ "${GPUCTL_ROOTLESS_NS:-}" = 1 ] || skip "needs unshare (util-linux) as root"
need podman runc newuidmap busybox useradd runuser
need_root "useradd, mknod"
G="$GPUCTL"
make_test_user gpt_r
grep -q "^$u:" /etc/subuid || skip "useradd gave $u no subordinate ids (/etc/subuid; SUB_UID_COUNT in login.defs)"

# --- /dev of this namespace: the usual nodes and the GPUs' fakes (before the
# user's first podman: its pause process keeps the mount namespace it saw)
mount -t tmpfs -o mode=755,nosuid gpuctl-test-dev /dev || { echo "FAIL: mount a tmpfs on /dev"; exit 1; }
for n in null:1:3 zero:1:5 full:1:7 random:1:8 urandom:1:9 tty:5:0; do
	IFS=: read -r name major minor <<<"$n"
	mknod -m 666 "/dev/$name" c "$major" "$minor"
done
mkdir /dev/shm /dev/pts && mount -t tmpfs -o mode=1777 shm /dev/shm
ln -s /proc/self/fd /dev/fd
for i in 0 1 2 3 4 5 6 7; do mknod -m 666 "/dev/nvidia$i" c 195 "$i"; done
mknod -m 666 /dev/nvidiactl c 195 255
printf 'pool_kill_grace = 20s\n' >"$tmp/agent.conf"
make_free_server h200x8 "$tmp/free8.json"
ls /var/run/cdi/gpuctl-pool-*.json >"$tmp/specs.before" 2>/dev/null
our_spec() { ls /var/run/cdi/gpuctl-pool-*.json 2>/dev/null | grep -vxF -f "$tmp/specs.before"; } # the one this pool wrote
on_exit 'our_spec | xargs -r rm -f'

# --- the user's podman: everything under $tmp/u, the user's
home="$tmp/u"
mkdir -p "$home/xdg" "$home/out"
printf '[containers]\ndefault_ulimits = []\nnetns = "none"\n[engine]\nruntime = "runc"\n' >"$home/containers.conf"
printf '[storage]\ndriver = "vfs"\ngraphroot = "%s/storage"\nrunroot = "%s/run"\n' "$home" "$home" >"$home/storage.conf"
chmod 700 "$home/xdg"
busybox_rootfs_tar "$home/rootfs.tar"
chown -R "$u:" "$home"
as_user() { # as_user COMMAND...: as the user, with the user's podman environment
	(cd "$home/out" && runuser -u "$u" -- env HOME="$home" XDG_RUNTIME_DIR="$home/xdg" \
		CONTAINERS_CONF="$home/containers.conf" CONTAINERS_STORAGE_CONF="$home/storage.conf" \
		GPUCTL_POOL_SOCKET="$tmp/pool.sock" "$@")
}
# rootless podman's pause process (it holds the user namespace) outlives podman:
# ended by its pid before userdel (on_exit runs in reverse)
on_exit 'as_user podman rm -a -f -t 0 >/dev/null 2>&1; kill -9 "$(cat "$home/xdg/libpod/tmp/pause.pid" 2>/dev/null)" 2>/dev/null'
as_user podman import -q "$home/rootfs.tar" localhost/gpuctl-test/rootless >/dev/null ||
	{ echo "FAIL: podman import as $u"; as_user podman info 2>&1 | tail -5; exit 1; }

start_agent "$tmp/free8.json" --config "$tmp/agent.conf" || exit 1
container_gone() { [ -z "$(as_user podman ps -a -q --filter "name=^gpuctl-job-$1\$")" ]; }

# --- a held job: what its container sees, and where its processes are
out="$home/out"
cmd="id -u >$out/a.id; echo gpus=\$GPUCTL_JOB_GPUS >$out/a.seen; ls /dev | grep nvidia >>$out/a.seen; $(hold a)"
a=$(as_user "$G" submit --id-only --image localhost/gpuctl-test/rootless --mount "$tmp:$tmp" -- sh -c "$cmd")
check "a running" wait_state "$a" running
check "a's container reported" wait_until 120 test -s "$out/a.seen"
check "the container's root is uid 0 in it" test "$(cat "$out/a.id")" = 0
check "and the user on the host (its file is the user's)" test "$(stat -c %U "$out/a.id")" = "$u"
check "a sees exactly its GPU's node" container_sees_only_its_gpu "$out/a.seen"
check "a's container has its name (the user's podman)" test -n "$(as_user podman ps -q --filter "name=^gpuctl-job-$a\$")"
cg=$(jobfield "$a" cgroup)
holder_in_cgroup() { # the container's shell (its command line names the hold file) runs in the job's cgroup
	local p
	for p in $(cat "$cg/cgroup.procs" 2>/dev/null); do
		tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -qF "$tmp/a.hold" && return 0
	done
	return 1
}
if [ -n "$cg" ] && [ "$cg" != null ]; then
	check "a's container runs in the job's cgroup" holder_in_cgroup
	check "so does conmon" sh -c "for p in \$(cat '$cg/cgroup.procs'); do cat /proc/\$p/comm; done 2>/dev/null | grep -qx conmon"
else
	echo "note: no per-job cgroups here ($(grep -o 'pool on.*' "$tmp/agent.log" | tail -1)): the cgroup checks are not run"
fi

# --- cancel: the container is stopped and removed
as_user "$G" cancel "$a" >/dev/null
check "a cancelled" wait_state "$a" cancelled 120
check "a's container removed" wait_until 120 container_gone "$a"
release a

# --- a job to its end: done, its output in its log
b=$(as_user "$G" submit --id-only --image localhost/gpuctl-test/rootless -- sh -c 'echo b-in-container; id -u')
as_user "$G" wait "$b" >/dev/null
check "b ends done" is_state "$b" done
check "b's output in its log" sh -c "\"$G\" logs $b | grep -qx b-in-container"
check "b's container gone" wait_until 60 container_gone "$b"
finish
