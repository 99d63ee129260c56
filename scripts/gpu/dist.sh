#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# dist.sh - on a real GPU server (the lead runs it; issue 37's "done when"):
# gpuctl and its kernels module copied ALONE to an empty folder (bin/gpuctl,
# lib/gpuctl/gpuctl_kernels.so, as the release tarball lays them out), run
# with no GPUCTL_DATA_DIR, no GPUCTL_KERNELS and a HOME of their own: the
# module is found beside the binary, `bench -s memory` names the GPU from the
# catalog (not "not in catalog") with datasheet ratios, and `bench --results`
# and `report --results` of the file it saved print them again; `info --data`
# says every data file is embedded. Results under $OUT/dist/ (default
# ./dist-out/dist/): run.log, version.txt, data.txt, bench.txt, results.txt,
# report.txt, r.json, verdict.txt.
#
# gpuctl: the packed build of scripts/gpu/foundation.sh (`scripts/gpu/foundation.sh
# pack` here first; its libraries go on LD_LIBRARY_PATH, its data does not travel);
# else $GPUCTL; else a cmake build in /tmp/gpuctl-build. The module: built here
# with nvcc by scripts/gpu/kernels.sh (sm_90 unless GK_ARCH says otherwise).
# Device tool, about 2 minutes on one H200 (module build ~1 min):
#   run(command="scripts/gpu/dist.sh", carry=[".device-carry"], kind="nvidia-h200", timeout_s=600)
# Exit: 0 all checks pass, 1 some fail (verdict.txt), 69 nothing could run.
# Reads only; changes no GPU setting.
set -u -o pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="${OUT:-$root/dist-out}/dist"
mkdir -p "$out"
log="$out/run.log"
: >"$log"
unset GPUCTL_SIM
{ date -u '+%Y-%m-%d %H:%M:%S UTC'; uname -a; id; } >>"$log" 2>&1
command -v nvidia-smi >/dev/null || { echo "dist.sh: no nvidia-smi here" | tee -a "$log" >&2; exit 69; }
nvidia-smi -L >>"$log" 2>&1

# the binary to copy (not a wrapper), and the libraries it needs that this machine may lack
pack="${GPUCTL_PACK:-$root/.device-carry/foundation}"
libs=""
if [ -x "$pack/gpuctl" ]; then
	bin="$pack/gpuctl"
	libs="$pack/lib"
else
	. "$root/scripts/gpu/lib.sh"
	find_gpuctl dist.sh
	bin="$GPUCTL"
fi
GK_BUILD=/tmp/gk-build OUT="$out/kernels" bash "$root/scripts/gpu/kernels.sh" build >>"$log" 2>&1 ||
	{ echo "dist.sh: the kernels module did not build (see $out/kernels/build.log)" | tee -a "$log" >&2; exit 69; }

node=$(mktemp -d /tmp/gpuctl-alone-XXXXXX)
mkdir -p "$node/bin" "$node/lib/gpuctl" "$node/home"
cp "$bin" "$node/bin/gpuctl"
cp /tmp/gk-build/gpuctl_kernels.so "$node/lib/gpuctl/"
alone() {
	(cd "$node" && env -u GPUCTL_DATA_DIR -u GPUCTL_KERNELS HOME="$node/home" \
		${libs:+LD_LIBRARY_PATH="$libs"} "$node/bin/gpuctl" "$@")
}
fails=0
verdict() { echo "$1" | tee -a "$out/verdict.txt"; case "$1" in FAIL*) fails=$((fails + 1)) ;; esac; }
: >"$out/verdict.txt"

alone --version >"$out/version.txt" 2>&1
alone info --data >"$out/data.txt" 2>&1
n=$(grep -Ec '^[a-z/0-9.-]+\.json +embedded +-$' "$out/data.txt")
t=$(grep -Ec '^[a-z/0-9.-]+\.json ' "$out/data.txt")
[ "$n" -gt 0 ] && [ "$n" = "$t" ] && verdict "ok: info --data: all $n data files embedded" ||
	verdict "FAIL: info --data: $n of $t embedded"
alone bench -s memory --save "$node/r.json" >"$out/bench.txt" 2>&1
echo "bench exit $?" >>"$log"
cp "$node/r.json" "$out/r.json" 2>/dev/null
grep -q "not in catalog" "$out/bench.txt" && verdict "FAIL: bench: the GPU is 'not in catalog'" ||
	verdict "ok: bench: the GPU is in the catalog: $(head -1 "$out/bench.txt")"
grep -Eq '^memory +copy +.* [0-9]+\.[0-9]{2} +(ok|low)' "$out/bench.txt" &&
	verdict "ok: bench: memory copy has a datasheet ratio (the module was found beside the binary)" ||
	verdict "FAIL: bench: no memory copy ratio: $(grep -m1 -iE 'memory|error|cannot' "$out/bench.txt")"
alone bench --results "$node/r.json" >"$out/results.txt" 2>&1
grep -Eq '^memory +copy +.* [0-9]+\.[0-9]{2} +(ok|low)' "$out/results.txt" &&
	verdict "ok: bench --results: prints the ratios again" ||
	verdict "FAIL: bench --results: $(head -c 300 "$out/results.txt")"
alone report --results "$node/r.json" >"$out/report.txt" 2>&1
grep -q "not in catalog" "$out/report.txt" && verdict "FAIL: report --results: 'not in catalog'" ||
	verdict "ok: report --results: the catalog's model"
rm -rf "$node"
[ "$fails" -eq 0 ]
