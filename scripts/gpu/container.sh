#!/usr/bin/env bash
# container.sh - issue 17 on a real GPU server: can podman be carried there
# (Debian 12's podman, conmon, runc and catatonit with the libraries they
# load, packed here into .device-carry/podman/podman.tar.xz), and does a CUDA
# program run in a container with one GPU through the CDI spec gpuctl writes
# (`gpuctl cdi generate`, the packed build of .device-carry/foundation)?
# The image is imported, not pulled: a tar of busybox, a CUDA program built
# here (nvcc -cudart static, sm_90: a vector add on random data checked on the
# CPU) and the glibc it needs; the driver's libraries come from the spec.
# podman runs as on the CI machines: runc, cgroupfs, default_ulimits = [],
# vfs storage in /tmp.
#
# Packing (here): see the commit that added this file; the tar holds bin/
# (podman conmon runc catatonit), lib/ (their libraries), img.tar, share/.
# Device call (one H200, about 60 s):
#   run(command="scripts/gpu/container.sh", carry=[".device-carry/podman", ".device-carry/foundation"],
#       kind="nvidia-h200", timeout_s=240)
# Results: $OUT/container.txt (each step, its output and exit status, then a verdict).
# Changes no GPU setting; writes /var/run/cdi/gpuctl-test.json and
# /etc/containers/policy.json (when missing) on the lent machine.
set -u -o pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
outdir="${OUT:-$root/container-out}"
mkdir -p "$outdir"
txt="$outdir/container.txt"
: >"$txt"
step() { # step WHAT COMMAND...: logs the command's output and status; returns it
	local what="$1" rc
	shift
	echo "== $what: $*" >>"$txt"
	timeout 90 "$@" >>"$txt" 2>&1
	rc=$?
	echo "-- rc=$rc" >>"$txt"
	return $rc
}
verdict() { echo "VERDICT: $*" >>"$txt"; cat "$txt"; exit 0; }

pm=/tmp/gpuctl-podman
mkdir -p "$pm"
step "unpack" tar -C "$pm" -xJf "$root/.device-carry/podman/podman.tar.xz" || verdict "the carried podman did not unpack"
export PATH="$pm/bin:$PATH" LD_LIBRARY_PATH="$pm/lib"
export CONTAINERS_CONF="$pm/containers.conf" CONTAINERS_STORAGE_CONF="$pm/storage.conf"
# podman starts conmon (and conmon runc) with a clean environment: without
# LD_LIBRARY_PATH the carried conmon lacks libglib (the first call's failure)
for tool in conmon runc; do
	printf '#!/bin/sh\nLD_LIBRARY_PATH="%s/lib" exec "%s/bin/%s" "$@"\n' "$pm" "$pm" "$tool" >"$pm/bin/$tool-env"
	chmod +x "$pm/bin/$tool-env"
done
cat >"$CONTAINERS_CONF" <<EOF
[containers]
default_ulimits = []
seccomp_profile = "$pm/share/seccomp.json"
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
conmon_path = ["$pm/bin/conmon-env"]
init_path = "$pm/bin/catatonit"
[engine.runtimes]
runc = ["$pm/bin/runc-env"]
EOF
printf '[storage]\ndriver = "vfs"\ngraphroot = "%s/storage"\nrunroot = "%s/run"\n' "$pm" "$pm" >"$CONTAINERS_STORAGE_CONF"
mkdir -p /etc/containers
[ -e /etc/containers/policy.json ] ||
	echo '{"default":[{"type":"insecureAcceptAnything"}]}' >/etc/containers/policy.json
step "the machine" sh -c 'uname -a; id; cat /proc/self/cgroup; grep -E "cgroup|proc|sysfs" /proc/mounts; nvidia-smi -L; ls -la /dev/nvidia*'
step "podman version" podman --version || verdict "podman does not start here (see above)"
step "runc version" runc --version
step "podman info" podman info
mkdir -p /var/run/cdi
gpuctl=(env "LD_LIBRARY_PATH=$root/.device-carry/foundation/lib" "$root/.device-carry/foundation/gpuctl")
step "CDI spec" "${gpuctl[@]}" cdi generate --output /var/run/cdi/gpuctl-test.json || verdict "gpuctl cdi generate failed"
step "CDI devices" "${gpuctl[@]}" cdi list
step "import the image" podman import "$pm/img.tar" localhost/gpuctl-cudatest || verdict "podman import failed"
# --network=none: the machine has no CNI plugins (the 2026-12-02 run stopped here on "bridge")
step "a container without a GPU" podman run --rm --network=none localhost/gpuctl-cudatest sh -c 'echo container-up; ls /dev' ||
	verdict "podman cannot run a container here (see the step's output)"
step "the CUDA program in a container with GPU 0" podman run --rm --network=none --init --device nvidia.com/gpu=0 \
	localhost/gpuctl-cudatest sh -c 'ls /dev | grep nvidia; echo LD_LIBRARY_PATH=$LD_LIBRARY_PATH; ls /usr/local/nvidia/lib64; cudatest' ||
	verdict "the CUDA program did not pass in the container (see above)"
grep -q '^PASS$' "$txt" && verdict "a CUDA program ran in a podman container with one GPU through gpuctl's CDI spec"
verdict "no PASS line from the CUDA program"
