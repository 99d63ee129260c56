# SPDX-License-Identifier: Apache-2.0
# lib.sh - sourced by the scripts in scripts/gpu/ (bash).
#
# find_gpuctl NAME: sets GPUCTL to the gpuctl to run on this GPU machine:
# $GPUCTL if set; else the packed Release build in .device-carry/foundation
# (`scripts/gpu/foundation.sh pack` here; $GPUCTL_PACK: another such pack), through a wrapper that gives its
# libraries to gpuctl alone (exported to every program they break the
# machine's own tmux and python, which want newer ones); else a cmake Release
# build in /tmp/gpuctl-build. Logs to $log; exits 69 when there is none.
# Needs $root (the repository) and $log.
find_gpuctl() {
	local name=$1 pack="${GPUCTL_PACK:-$root/.device-carry/foundation}"
	if [ -z "${GPUCTL:-}" ] && [ -x "$pack/gpuctl" ]; then
		local wrap="${TMPDIR:-/tmp}/gpuctl-packed"
		printf '#!/bin/sh\nLD_LIBRARY_PATH="%s/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "%s/gpuctl" "$@"\n' \
			"$pack" "$pack" >"$wrap"
		chmod +x "$wrap"
		"$wrap" --version >>"$log" 2>&1 && GPUCTL="$wrap"
	fi
	if [ -z "${GPUCTL:-}" ]; then
		local b=/tmp/gpuctl-build
		if cmake -S "$root" -B "$b" -DCMAKE_BUILD_TYPE=Release -DGPUCTL_WITH_CUDA=OFF -DBUILD_TESTING=OFF >>"$log" 2>&1 &&
		   cmake --build "$b" --target gpuctl -j"$(nproc)" >>"$log" 2>&1; then
			GPUCTL="$b/gpuctl"
		else
			echo "$name: no gpuctl (no packed build, and cmake failed: see run.log)" | tee -a "$log" >&2
			exit 69
		fi
	fi
	export GPUCTL
	echo "gpuctl: $GPUCTL" >>"$log"
}

# gpu_script_start NAME: what every script here does first on the GPU machine:
# the data from this checkout, no simulator, a header in $log (date, kernel,
# user), exit 69 without nvidia-smi, the GPUs in $log, then find_gpuctl.
# Needs $root and $log.
gpu_script_start() {
	local name=$1
	export GPUCTL_DATA_DIR="$root/data"
	unset GPUCTL_SIM
	{ date -u '+%Y-%m-%d %H:%M:%S UTC'; uname -a; id; } >>"$log" 2>&1
	command -v nvidia-smi >/dev/null || { echo "$name: no nvidia-smi here" | tee -a "$log" >&2; exit 69; }
	nvidia-smi -L >>"$log" 2>&1
	find_gpuctl "$name"
}

# podman_setup DIR: unpacks the podman carried in .device-carry/podman/podman.tar.xz
# (Debian 12's podman, conmon, runc, catatonit and their libraries; img.tar, a
# busybox image with a CUDA program) into DIR and sets it up as on the CI
# machines: runc, cgroupfs, default_ulimits = [], no network, vfs storage in DIR; exports
# PATH, LD_LIBRARY_PATH, CONTAINERS_CONF and CONTAINERS_STORAGE_CONF. Writes
# /etc/containers/policy.json when missing. 0, or 1 when it did not unpack.
podman_setup() {
	local pm=$1 tool
	mkdir -p "$pm"
	tar -C "$pm" -xJf "$root/.device-carry/podman/podman.tar.xz" || return 1
	export PATH="$pm/bin:$PATH" LD_LIBRARY_PATH="$pm/lib"
	export CONTAINERS_CONF="$pm/containers.conf" CONTAINERS_STORAGE_CONF="$pm/storage.conf"
	# podman starts conmon (and conmon runc) with a clean environment: without
	# LD_LIBRARY_PATH the carried conmon lacks libglib
	for tool in conmon runc; do
		printf '#!/bin/sh\nLD_LIBRARY_PATH="%s/lib" exec "%s/bin/%s" "$@"\n' "$pm" "$pm" "$tool" >"$pm/bin/$tool-env"
		chmod +x "$pm/bin/$tool-env"
	done
	# netns = "none": no CNI plugins are carried (podman's default network
	# failed on "bridge" there); the pool passes no --network of its own
	cat >"$CONTAINERS_CONF" <<EOF
[containers]
default_ulimits = []
netns = "none"
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
}

# wait_pool_agent PID: until the pool of the agent PID answers `$GPUCTL queue`
# (on $GPUCTL_POOL_SOCKET): 0; 1 when the agent exited or 15 s passed.
wait_pool_agent() {
	local i
	for i in $(seq 1 150); do
		"$GPUCTL" queue >/dev/null 2>&1 && return 0
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
