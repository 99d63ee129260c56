#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
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
. "$root/scripts/gpu/lib.sh" # podman_setup
echo "== unpack and set up podman in $pm" >>"$txt"
podman_setup "$pm" >>"$txt" 2>&1 || verdict "the carried podman did not unpack"
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
