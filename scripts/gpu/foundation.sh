#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# foundation.sh - check `gpuctl info` and `gpuctl topo` against nvidia-smi on a
# real GPU server (issue 2: "agree with nvidia-smi -q and nvidia-smi topo -m").
#
#   scripts/gpu/foundation.sh pack   here (no GPU needed): a Release build of
#                                    gpuctl plus the shared libraries it links
#                                    (jansson, microhttpd, sqlite, ncurses and
#                                    theirs) into .device-carry/foundation/
#   scripts/gpu/foundation.sh [run]  on the GPU machine: runs gpuctl info
#                                    --json / -q / topo (--json), nvidia-smi -q,
#                                    topo -m, nvlink -s and --query-gpu, and
#                                    compares the key fields (python3, no jq);
#                                    everything goes to $OUT/foundation/
#
# Which gpuctl runs: find_gpuctl (scripts/gpu/lib.sh): $GPUCTL if set; else the
# packed one in .device-carry/foundation/ (the GPU machine may lack the -dev
# packages: the packed libraries travel with it); else a cmake build in
# /tmp/gpuctl-build.
# Device tool: run with carry [".device-carry"], kind nvidia-h200-x2, about
# 1 minute of device time:
#   run(command="scripts/gpu/foundation.sh run", carry=[".device-carry"], kind="nvidia-h200-x2")
# Exit: 0 every compared field agrees, 1 some differ (see compare.txt),
# 69 no gpuctl could be run or no nvidia-smi.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
mode="${1:-run}"
pack_dir="${GPUCTL_PACK:-$root/.device-carry/foundation}" # another pack: GPUCTL_PACK (and GPUCTL_PACK_BUILD)

pack() {
	local build="${GPUCTL_PACK_BUILD:-$root/build-device}"
	cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DGPUCTL_WITH_CUDA=OFF -DBUILD_TESTING=OFF >/dev/null || exit 70
	if ! cmake --build "$build" --target gpuctl -j2 >"$build/pack.log" 2>&1; then
		# -O2 finds warnings the sanitizer build does not; -Werror makes them fatal.
		# The binary for the GPU machine need not wait for them: build it with
		# -Wno-error through a compiler wrapper (warnings stay in pack.log).
		grep -q -- '-Werror' "$build/pack.log" || { tail -5 "$build/pack.log" >&2; exit 70; }
		echo "foundation.sh: the Release build fails on warnings (see $build/pack.log); packing one built with -Wno-error" >&2
		local wrap="${TMPDIR:-/tmp}/gpuctl-cc-no-werror"
		printf '#!/bin/sh\nexec %s "$@" -Wno-error\n' "$(command -v "${CC:-cc}")" >"$wrap"
		chmod +x "$wrap"
		rm -rf "$build"
		cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DGPUCTL_WITH_CUDA=OFF -DBUILD_TESTING=OFF \
			-DCMAKE_C_COMPILER="$wrap" >/dev/null || exit 70
		cmake --build "$build" --target gpuctl -j2 >"$build/pack.log" 2>&1 || { tail -5 "$build/pack.log" >&2; exit 70; }
	fi
	rm -rf "$pack_dir"
	mkdir -p "$pack_dir/lib"
	cp "$build/gpuctl" "$pack_dir/"
	# every shared library but the C runtime itself, which the GPU machine has
	ldd "$build/gpuctl" | awk '/=> \// { print $3 }' |
		grep -Ev '/(libc|libm|libpthread|libdl|librt|libgcc_s)\.so' |
		while read -r lib; do cp -L "$lib" "$pack_dir/lib/"; done
	echo "packed $(ls "$pack_dir/lib" | wc -l) libraries and gpuctl into $pack_dir ($(du -sh "$pack_dir" | cut -f1))"
}

. "$root/scripts/gpu/lib.sh" # find_gpuctl

run_checks() {
	local out="${OUT:-$root/foundation-out}/foundation"
	mkdir -p "$out"
	log="$out/run.log"
	: >"$log"
	{ date -u '+%Y-%m-%d %H:%M:%S UTC'; uname -a; nproc; } >>"$log" 2>&1
	command -v nvidia-smi >/dev/null || { echo "foundation.sh: no nvidia-smi here" | tee -a "$log" >&2; exit 69; }
	find_gpuctl foundation.sh
	export GPUCTL_DATA_DIR="$root/data"
	unset GPUCTL_SIM

	local t0 t1
	# gpuctl: info (table, -q) and topo (text) in two files, JSON in two more
	t0=$(date +%s%N); "$GPUCTL" info --json >"$out/gpuctl_info.json" 2>>"$log"; echo "gpuctl info --json: rc $?, $(( ($(date +%s%N) - t0) / 1000000 )) ms" >>"$log"
	{
		t0=$(date +%s%N); "$GPUCTL" info; echo "(rc $?, $(( ($(date +%s%N) - t0) / 1000000 )) ms)"; echo
		t0=$(date +%s%N); "$GPUCTL" info -q; echo "(rc $?, $(( ($(date +%s%N) - t0) / 1000000 )) ms)"
	} >"$out/gpuctl_info.txt" 2>>"$log"
	{
		t0=$(date +%s%N); "$GPUCTL" topo; echo "(rc $?, $(( ($(date +%s%N) - t0) / 1000000 )) ms)"; echo
		"$GPUCTL" topo --json
	} >"$out/gpuctl_topo.txt" 2>>"$log"
	"$GPUCTL" topo --json >"$out/.topo.json" 2>>"$log"
	# nvidia-smi
	t0=$(date +%s%N); nvidia-smi -q >"$out/nvidia-smi_q.txt" 2>&1; t1=$(date +%s%N)
	echo "nvidia-smi -q: $(( (t1 - t0) / 1000000 )) ms" >>"$log"
	{
		echo "== nvidia-smi topo -m"; nvidia-smi topo -m
		echo; echo "== nvidia-smi topo -p2p r"; nvidia-smi topo -p2p r
		echo; echo "== nvidia-smi nvlink -s"; nvidia-smi nvlink -s
		echo; echo "== nvidia-smi"; nvidia-smi
	} >"$out/nvidia-smi_topo.txt" 2>&1
	nvidia-smi topo -m >"$out/.smi_topo_m.txt" 2>&1
	nvidia-smi nvlink -s >"$out/.smi_nvlink.txt" 2>&1

	python3 - "$out" >"$out/compare.txt" 2>>"$log" <<'PY'
import json, re, subprocess, sys
out = sys.argv[1]
info = json.load(open(out + "/gpuctl_info.json"))
topo = json.load(open(out + "/.topo.json"))
rows, ok, bad, na = [], 0, 0, 0

def smi(field):
    """One --query-gpu field per call: an unknown field fails alone."""
    r = subprocess.run(["nvidia-smi", "--query-gpu=" + field, "--format=csv,noheader,nounits"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return None
    return [v.strip() for v in r.stdout.strip().splitlines()]

def busid(s):
    m = re.match(r"^(?:([0-9a-fA-F]+):)?([0-9a-fA-F]+):([0-9a-fA-F]+)\.([0-7])$", s or "")
    return tuple(int(x or "0", 16) for x in m.groups()) if m else s

def get(g, path):
    for k in path.split("."):
        if not isinstance(g, dict) or k not in g:
            return None
        g = g[k]
    return g

def why(g, path):
    parts = path.split(".")
    holder = get(g, ".".join(parts[:-1])) if len(parts) > 1 else g
    return ((holder or {}).get("unavailable") or {}).get(parts[-1], "absent")

onoff = lambda v: "Enabled" if v else "Disabled"
checks = [
    # (gpuctl key, nvidia-smi field, convert gpuctl value, compare, dynamic?)
    ("name", "name", str, "eq", False),
    ("uuid", "uuid", str, "eq", False),
    ("pci_bus_id", "pci.bus_id", str, "bus", False),
    ("serial", "serial", str, "eq", False),
    ("vbios_version", "vbios_version", str, "eq", False),
    ("compute_capability", "compute_cap", str, "eq", False),
    ("mem_total_bytes", "memory.total", lambda v: v >> 20, "num0", False),
    ("power_limit_mw", "power.limit", lambda v: v / 1000, "num0.5", False),
    ("power_default_limit_mw", "power.default_limit", lambda v: v / 1000, "num0.5", False),
    ("power_max_limit_mw", "power.max_limit", lambda v: v / 1000, "num0.5", False),
    ("sample.power_limit_mw", "enforced.power.limit", lambda v: v / 1000, "num0.5", False),
    ("max_sm_clock_mhz", "clocks.max.sm", int, "num0", False),
    ("max_mem_clock_mhz", "clocks.max.memory", int, "num0", False),
    ("ecc_mode", "ecc.mode.current", onoff, "eq", False),
    ("ecc_mode_pending", "ecc.mode.pending", onoff, "eq", False),
    ("mig_mode", "mig.mode.current", onoff, "eq", False),
    ("persistence_mode", "persistence_mode", onoff, "eq", False),
    ("compute_mode", "compute_mode", str, "eq", False),
    ("pcie_gen_max", "pcie.link.gen.gpumax", int, "num0", False),
    ("pcie_width_max", "pcie.link.width.max", int, "num0", False),
    ("sample.pcie_gen", "pcie.link.gen.current", int, "num0", True),
    ("sample.pcie_width", "pcie.link.width.current", int, "num0", True),
    ("sample.temp_c", "temperature.gpu", int, "num3", True),
    ("sample.mem_used_bytes", "memory.used", lambda v: v >> 20, "num64", True),
    ("sample.sm_clock_mhz", "clocks.sm", int, "num100", True),
    ("sample.pstate", "pstate", lambda v: "P%d" % v, "eq", True),
]
gpus = info["gpus"]
for key, field, conv, how, dyn in checks:
    vals = smi(field)
    if vals is None and field == "pcie.link.gen.gpumax":
        vals = smi("pcie.link.gen.max")  # older nvidia-smi: device+host maximum
    for i, g in enumerate(gpus):
        mine = get(g, key)
        theirs = vals[g["index"]] if vals and g["index"] < len(vals) else None
        verdict = ""
        if mine is not None:
            mine = conv(mine)
        if theirs is None or theirs in ("[N/A]", "N/A", "[Not Supported]"):
            verdict = "n/a (nvidia-smi: %s)" % ("no such field" if theirs is None else theirs)
            if mine is None:
                verdict = "agree: neither has it (gpuctl: %s)" % why(g, key)
        elif mine is None:
            verdict = "DIFF: gpuctl %s" % why(g, key)
        else:
            m = mine
            if how == "eq":
                same = str(m) == theirs
            elif how == "bus":
                same = busid(m) == busid(theirs)
            else:
                tol = float(how[3:])
                try:
                    same = abs(float(m) - float(theirs)) <= tol
                except ValueError:
                    same = False
            verdict = "agree" if same else ("differs (moves)" if dyn else "DIFF")
        if verdict.startswith("agree"):
            ok += 1
        elif verdict.startswith("DIFF"):
            bad += 1
        else:
            na += 1
        rows.append(("GPU%d" % g["index"], key, str(mine), str(theirs), verdict))

# system facts
drv = smi("driver_version")
for label, mine, theirs in [("driver_version", get(info, "system.driver_version"), drv[0] if drv else None)]:
    same = mine == theirs
    ok += same; bad += not same
    rows.append(("system", label, str(mine), str(theirs), "agree" if same else "DIFF"))
q = open(out + "/nvidia-smi_q.txt").read()
m = re.search(r"CUDA Version\s*:\s*(\S+)", q)
mine = get(info, "system.cuda_driver_version")
same = bool(m) and m.group(1) == mine
ok += same; bad += not same
rows.append(("system", "cuda_driver_version", str(mine), m.group(1) if m else "?", "agree" if same else "DIFF"))

# NVLink: links per GPU (nvidia-smi nvlink -s lists each link of each GPU)
nv = open(out + "/.smi_nvlink.txt").read()
per_gpu = {}
cur = None
for line in nv.splitlines():
    mg = re.match(r"^GPU (\d+):", line)
    if mg:
        cur = int(mg.group(1)); per_gpu[cur] = [0, 0]
    elif cur is not None and re.match(r"^\s+Link \d+:", line):
        per_gpu[cur][0] += 1
        if "inactive" not in line.lower():
            per_gpu[cur][1] += 1
for g in gpus:
    i = g["index"]
    mine = g.get("nvlink_count")
    theirs = per_gpu.get(i, [None])[0]
    same = mine == theirs
    ok += same; bad += not same
    active = sum(1 for l in g["sample"].get("nvlinks", []) if l.get("active"))
    rows.append(("GPU%d" % i, "nvlink_count (active)", "%s (%d)" % (mine, active),
                 "%s (%s)" % (theirs, per_gpu.get(i, [None, None])[1]), "agree" if same else "DIFF"))

# Topology matrix, CPU and NUMA affinity against nvidia-smi topo -m
# nvidia-smi underlines the header with ANSI escapes: drop them
text = re.sub(r"\x1b\[[0-9;]*m", "", open(out + "/.smi_topo_m.txt").read())
lines = [l for l in text.splitlines() if l.strip()]
header = [c.strip() for c in lines[0].split("\t")] if lines else []
gcols = {c: k for k, c in enumerate(header) if re.match(r"^GPU\d+$", c)}
cpu_col = header.index("CPU Affinity") if "CPU Affinity" in header else None
numa_col = header.index("NUMA Affinity") if "NUMA Affinity" in header else None
mat = topo["matrix"]
tgpus = topo["gpus"]
for l in lines[1:]:
    cells = [c.strip() for c in l.split("\t")]
    if not re.match(r"^GPU\d+$", cells[0]):
        continue
    a = int(cells[0][3:])
    ra = next((k for k, g in enumerate(tgpus) if g["index"] == a), None)
    if ra is None:
        continue
    for name, k in gcols.items():
        b = int(name[3:])
        rb = next((j for j, g in enumerate(tgpus) if g["index"] == b), None)
        if rb is None or k >= len(cells):
            continue
        mine, theirs = mat[ra][rb], cells[k]
        same = mine == theirs
        ok += same; bad += not same
        rows.append(("topo", "GPU%d-GPU%d" % (a, b), mine, theirs, "agree" if same else "DIFF"))
    for label, col, mine in (("cpu_affinity", cpu_col, tgpus[ra].get("cpu_affinity")),
                             ("numa_affinity", numa_col, tgpus[ra].get("numa_node"))):
        if col is None or col >= len(cells):
            continue
        theirs = cells[col]
        m = "N/A" if mine is None or mine == -1 else str(mine)
        same = m == theirs
        ok += same; bad += not same
        rows.append(("GPU%d" % a, label, m, theirs, "agree" if same else "DIFF"))

w = [max(len(r[k]) for r in rows + [("where", "field", "gpuctl", "nvidia-smi", "verdict")]) for k in range(5)]
print("%-*s  %-*s  %-*s  %-*s  %s" % (w[0], "where", w[1], "field", w[2], "gpuctl", w[3], "nvidia-smi", "verdict"))
for r in rows:
    print("%-*s  %-*s  %-*s  %-*s  %s" % (w[0], r[0], w[1], r[1], w[2], r[2], w[3], r[3], r[4]))
print()
print("%d compared: %d agree, %d differ, %d not comparable or moving" % (ok + bad + na, ok, bad, na))
sys.exit(1 if bad else 0)
PY
	local rc=$?
	rm -f "$out/.topo.json" "$out/.smi_topo_m.txt" "$out/.smi_nvlink.txt"
	tail -1 "$out/compare.txt"
	echo "results in $out"
	return $rc
}

case "$mode" in
pack) pack ;;
run) run_checks; exit $? ;;
*) echo "usage: scripts/gpu/foundation.sh [pack | run]" >&2; exit 64 ;;
esac
