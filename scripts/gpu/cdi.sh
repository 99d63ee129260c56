#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# cdi.sh - on a real GPU server (issue 17's device check): `gpuctl cdi generate`
# there, then every device node and file the spec names must exist (nodes as
# character devices, mounts as files) and be what a CUDA process really uses:
# a small C program (built here with cc) loads libcuda.so.1 and
# libnvidia-ml.so.1 the way CUDA programs do (dlopen by soname), creates a
# context on GPU 0, JIT-compiles a PTX module (which loads the PTX JIT
# compiler), starts NVML, and copies its /proc/self/maps. Every driver
# library (libcuda*, libnvidia-*) and /dev/nvidia* node in those maps must be
# in the spec (libraries as a mount's hostPath); the spec's device "0" must
# name the node of GPU 0. nvidia-ctk's own spec is kept beside it when
# nvidia-ctk is there. Results: $OUT/cdi.txt (one line per check, then a
# verdict), $OUT/cdi/ (spec.json, list.txt, maps.txt, ldconfig.txt, run.log,
# nvidia-ctk.yaml when there).
#
# gpuctl: $GPUCTL if set; else the packed build of scripts/gpu/foundation.sh;
# else a cmake build (scripts/gpu/lib.sh's find_gpuctl). Device tool, about 20 s
# on one H200 plus a build:
#   run(command="scripts/gpu/cdi.sh", carry=[".device-carry"], kind="nvidia-h200", timeout_s=600)
# Exit: 0 every check passes, 1 some fail (cdi.txt), 69 nothing could run.
# Reads only; changes no GPU setting and writes nothing outside $OUT.
set -u -o pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
outdir="${OUT:-$root/cdi-out}"
out="$outdir/cdi"
mkdir -p "$out"
log="$out/run.log"
txt="$outdir/cdi.txt"
: >"$log"
: >"$txt"
. "$root/scripts/gpu/lib.sh"
gpu_script_start cdi.sh
command -v jq >/dev/null || { echo "cdi.sh: no jq here" | tee -a "$log" >&2; exit 69; }

fails=0
result() { # result ok|FAIL WHAT
	echo "$1 $2" >>"$txt"
	[ "$1" = ok ] || fails=$((fails + 1))
}

(ldconfig -p || /sbin/ldconfig -p) >"$out/ldconfig.txt" 2>>"$log"
if ! "$GPUCTL" cdi generate --output "$out/spec.json" 2>>"$log"; then
	echo "cdi.sh: gpuctl cdi generate failed (run.log)" | tee -a "$log" >&2
	exit 69
fi
"$GPUCTL" cdi list >"$out/list.txt" 2>>"$log"
command -v nvidia-ctk >/dev/null && nvidia-ctk cdi generate --output="$out/nvidia-ctk.yaml" >>"$log" 2>&1

# every node and file the spec names exists
jq -r '[.containerEdits.deviceNodes[], (.devices[].containerEdits.deviceNodes[])] | .[] | (.hostPath // .path)' \
	"$out/spec.json" | sort -u >"$out/nodes.txt"
while read -r n; do
	[ -c "$n" ] && result ok "node $n is a character device" || result FAIL "node $n is not a character device"
done <"$out/nodes.txt"
jq -r '.containerEdits.mounts[] | .hostPath' "$out/spec.json" | sort -u >"$out/files.txt"
while read -r f; do
	[ -f "$f" ] && result ok "file $f exists" || result FAIL "file $f does not exist"
done <"$out/files.txt"

# a CUDA process: what it loads and maps
cat >"$out/cudaproc.c" <<'EOC'
#include <dlfcn.h>
#include <stdio.h>
typedef int (*fn_i)(unsigned);
typedef int (*fn_dev)(int *, int);
typedef int (*fn_ctx)(void **, unsigned, int);
typedef int (*fn_mod)(void **, const void *);
typedef int (*fn_v)(void);
static const char ptx[] = ".version 7.0\n.target sm_52\n.address_size 64\n.visible .entry k() { ret; }\n";
int main(int argc, char **argv)
{
	void *cu = dlopen("libcuda.so.1", RTLD_NOW), *ml = dlopen("libnvidia-ml.so.1", RTLD_NOW);
	if (!cu || !ml) { fprintf(stderr, "dlopen: %s\n", dlerror()); return 2; }
	int dev, rc;
	void *ctx, *mod;
	if ((rc = ((fn_i)dlsym(cu, "cuInit"))(0)) || (rc = ((fn_dev)dlsym(cu, "cuDeviceGet"))(&dev, 0)) ||
	    (rc = ((fn_ctx)dlsym(cu, "cuCtxCreate_v2"))(&ctx, 0, dev)) ||
	    (rc = ((fn_mod)dlsym(cu, "cuModuleLoadData"))(&mod, ptx))) { fprintf(stderr, "CUDA error %d\n", rc); return 3; }
	if ((rc = ((fn_v)dlsym(ml, "nvmlInit_v2"))())) { fprintf(stderr, "NVML error %d\n", rc); return 4; }
	FILE *in = fopen("/proc/self/maps", "r"), *o = fopen(argc > 1 ? argv[1] : "maps.txt", "w");
	char line[4096];
	while (in && o && fgets(line, sizeof(line), in)) fputs(line, o);
	return in && o && fclose(o) == 0 ? 0 : 5;
}
EOC
if cc -O1 -o "$out/cudaproc" "$out/cudaproc.c" -ldl >>"$log" 2>&1 && "$out/cudaproc" "$out/maps.txt" >>"$log" 2>&1; then
	result ok "a CUDA process ran (context on GPU 0, PTX JIT, NVML)"
	awk '{ print $6 }' "$out/maps.txt" | grep -E '/(libcuda|libnvidia-)[^/]*\.so' | sort -u >"$out/loaded_libs.txt"
	while read -r l; do
		real=$(readlink -f "$l")
		grep -qxF "$real" "$out/files.txt" && result ok "loaded $l is in the spec" ||
			result FAIL "loaded $l is not in the spec"
	done <"$out/loaded_libs.txt"
	awk '{ print $6 }' "$out/maps.txt" | grep -E '^/dev/nvidia' | sort -u >"$out/mapped_nodes.txt"
	while read -r n; do
		grep -qxF "$n" "$out/nodes.txt" && result ok "mapped node $n is in the spec" ||
			result FAIL "mapped node $n is not in the spec"
	done <"$out/mapped_nodes.txt"
	for l in libcuda.so.1 libnvidia-ml.so.1 libnvidia-ptxjitcompiler.so.1; do
		grep -q "/$l\$\|/${l%.so*}.so" "$out/loaded_libs.txt" && result ok "the process loaded $l" ||
			result FAIL "the process did not load $l"
	done
else
	result FAIL "the CUDA process did not run (run.log)"
fi
# device 0 is GPU 0's node (its Device Minor)
bus=$(nvidia-smi -i 0 --query-gpu=pci.bus_id --format=csv,noheader | tr 'A-F' 'a-f' | sed 's/^0000//')
minor=$(sed -n 's/^Device Minor:[[:space:]]*//p' "/proc/driver/nvidia/gpus/$bus/information" 2>/dev/null)
if [ -n "$minor" ]; then
	jq -e --arg p "/dev/nvidia$minor" '[.devices[] | select(.name == "0") | .containerEdits.deviceNodes[].path] == [$p]' \
		"$out/spec.json" >/dev/null && result ok "device 0 is /dev/nvidia$minor" ||
		result FAIL "device 0 is not /dev/nvidia$minor"
else
	result FAIL "no Device Minor for GPU 0 ($bus)"
fi
if [ "$fails" -eq 0 ]; then echo "verdict: ok" >>"$txt"; else echo "verdict: $fails failed" >>"$txt"; fi
cat "$txt"
[ "$fails" -eq 0 ]
