# lib.sh - sourced by the scripts in scripts/gpu/ (bash).
#
# find_gpuctl NAME: sets GPUCTL to the gpuctl to run on this GPU machine:
# $GPUCTL if set; else the packed Release build in .device-carry/foundation
# (`scripts/gpu/foundation.sh pack` here), through a wrapper that gives its
# libraries to gpuctl alone (exported to every program they break the
# machine's own tmux and python, which want newer ones); else a cmake Release
# build in /tmp/gpuctl-build. Logs to $log; exits 69 when there is none.
# Needs $root (the repository) and $log.
find_gpuctl() {
	local name=$1 pack="$root/.device-carry/foundation"
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
