#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# cdi.sh - `gpuctl cdi generate|list` on simulated servers (docs/containers.md):
# the spec names exactly each GPU's node (mknod fakes as root, plain files
# otherwise: gpuctl only checks that they exist) by index, UUID and MIG
# instance; the driver's libraries as `ldconfig -p` lists them (a fake
# listing pointing at fake files), resolved and mounted read-only; binaries
# found on PATH; the errors and their exit codes (docs/exit-codes.md).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
need jq
jqt() { jq "$@" >/dev/null; } # a jqt -e check, its "true" unprinted

dev="$tmp/dev"
mkdir -p "$dev" "$tmp/lib" "$tmp/bin"
fake_node() { # fake_node NAME MINOR
	if [ "$(id -u)" = 0 ]; then
		mknod "$dev/$1" c 195 "$2"
	else
		: >"$dev/$1"
	fi
}
for i in 0 1 2 3 4 5 6 7; do fake_node "nvidia$i" "$i"; done
fake_node nvidiactl 255
fake_node nvidia-uvm 0
: >"$tmp/lib/libcuda.so.580.65.06"
ln -s libcuda.so.580.65.06 "$tmp/lib/libcuda.so.1"
: >"$tmp/lib/libnvidia-ml.so.580.65.06"
ln -s libnvidia-ml.so.580.65.06 "$tmp/lib/libnvidia-ml.so.1"
arch=x86-64
[ "$(uname -m)" = aarch64 ] && arch=AArch64
cat >"$tmp/ldconfig.txt" <<EOT
3 libs found in cache \`/etc/ld.so.cache'
	libnvidia-ml.so.1 (libc6,$arch) => $tmp/lib/libnvidia-ml.so.1
	libcuda.so.1 (libc6,$arch) => $tmp/lib/libcuda.so.1
	libcuda.so.1 (libc6) => /usr/lib/i386-linux-gnu/libcuda.so.1
EOT
printf '#!/bin/sh\n' >"$tmp/bin/nvidia-smi"
chmod +x "$tmp/bin/nvidia-smi"

gen() { PATH="$tmp/bin:$PATH" "$GPUCTL" --sim "$@" --dev-dir "$dev" --ldconfig-output "$tmp/ldconfig.txt"; }

# the whole server
checks=$((checks + 1))
gen h200x8 cdi generate --output "$tmp/nvidia.json" 2>"$tmp/err" || fail "generate: exit $? ($(cat "$tmp/err"))"
check "generate on a simulated server says so" grep -q SIMULATED "$tmp/err"
check "the spec is CDI" jqt -e '.cdiVersion == "0.5.0" and .kind == "nvidia.com/gpu"' "$tmp/nvidia.json"
"$GPUCTL" --sim h200x8 info --json | jq -r '.gpus[] | "\(.index) \(.uuid)"' >"$tmp/uuids"
check "8 GPUs read" test "$(wc -l <"$tmp/uuids")" = 8
while read -r i uuid; do
	for name in "$i" "$uuid"; do
		check "device $name is exactly /dev/nvidia$i" jqt -e --arg n "$name" --arg h "$dev/nvidia$i" --arg p "/dev/nvidia$i" \
			'[.devices[] | select(.name == $n) | .containerEdits.deviceNodes] == [[{path: $p, hostPath: $h}]]' \
			"$tmp/nvidia.json"
	done
done <"$tmp/uuids"
check "all names the 8 nodes" jqt -e '[.devices[] | select(.name == "all") | .containerEdits.deviceNodes[].path] ==
	[range(8) | "/dev/nvidia\(.)"]' "$tmp/nvidia.json"
check "17 devices (8 by index, 8 by UUID, all)" jqt -e '.devices | length == 17' "$tmp/nvidia.json"
check "the common nodes that exist, no others" jqt -e \
	'[.containerEdits.deviceNodes[].path] == ["/dev/nvidiactl", "/dev/nvidia-uvm"]' "$tmp/nvidia.json"
check "libraries resolved and mounted ro by soname" jqt -e --arg l "$tmp/lib" '[.containerEdits.mounts[] |
	select(.containerPath | startswith("/usr/local/nvidia/lib64/")) | [.hostPath, .containerPath, .options[0]]] ==
	[["\($l)/libcuda.so.580.65.06", "/usr/local/nvidia/lib64/libcuda.so.1", "ro"],
	 ["\($l)/libnvidia-ml.so.580.65.06", "/usr/local/nvidia/lib64/libnvidia-ml.so.1", "ro"]]' "$tmp/nvidia.json"
check "binaries found on PATH" jqt -e --arg b "$tmp/bin/nvidia-smi" '[.containerEdits.mounts[] |
	select(.containerPath == "/usr/local/nvidia/bin/nvidia-smi") | .hostPath] == [$b]' "$tmp/nvidia.json"
check "the loader is pointed at them" jqt -e '.containerEdits.env | index("LD_LIBRARY_PATH=/usr/local/nvidia/lib64") != null' \
	"$tmp/nvidia.json"
check "stdout is the same spec" bash -c "PATH='$tmp/bin:$PATH' '$GPUCTL' --sim h200x8 cdi generate --dev-dir '$dev' \
	--ldconfig-output '$tmp/ldconfig.txt' 2>/dev/null | cmp -s - '$tmp/nvidia.json'"
# without --ldconfig-output it runs `ldconfig -p` (core/spawn.h): a stand-in on PATH gives the same spec
mkdir -p "$tmp/ldbin"
printf '#!/bin/sh\n[ "$1" = -p ] || exit 2\necho "stderr is not the output" >&2\ncat "%s"\n' "$tmp/ldconfig.txt" >"$tmp/ldbin/ldconfig"
chmod +x "$tmp/ldbin/ldconfig"
check "ldconfig -p run: the same spec" bash -c "PATH='$tmp/ldbin:$tmp/bin:$PATH' '$GPUCTL' --sim h200x8 cdi generate \
	--dev-dir '$dev' 2>/dev/null | cmp -s - '$tmp/nvidia.json'"

# list
gen h200x8 cdi list >"$tmp/list" 2>&1
check "list: the banner" grep -q '^\*\*\* SIMULATED' "$tmp/list"
check "list: a line per device" test "$(grep -c '^nvidia.com/gpu=' "$tmp/list")" = 17
check "list: GPU 3 and its node" grep -qx 'nvidia.com/gpu=3  /dev/nvidia3' "$tmp/list"

# MIG: a device per instance, by GPU:N and MIG UUID (the simulator has no capability minors)
for i in 0 1 2 3 4 5 6 7; do [ -e "$dev/nvidia$i" ] || fake_node "nvidia$i" "$i"; done
checks=$((checks + 1))
gen h100pcie-mig cdi generate >"$tmp/mig.json" 2>/dev/null || fail "generate on a MIG server: exit $?"
"$GPUCTL" --sim h100pcie-mig info --json |
	jq -r '.gpus[] | .index as $g | (.mig_instances // []) | to_entries[] | "\($g):\(.key) \(.value.uuid)"' >"$tmp/migs"
check "the MIG server has instances" test -s "$tmp/migs"
while read -r name uuid; do
	check "MIG device $name and $uuid" jqt -e --arg n "$name" --arg u "$uuid" \
		'[.devices[] | select(.name == $n or .name == $u)] | length == 2' "$tmp/mig.json"
done <"$tmp/migs"

# errors
expect() { # expect CODE MESSAGE-PATTERN COMMAND...
	local code="$1" pat="$2"; shift 2
	checks=$((checks + 1))
	"$@" >"$tmp/o" 2>"$tmp/e"
	local rc=$?
	[ "$rc" = "$code" ] && grep -q -- "$pat" "$tmp/e" && [ "$(wc -l <"$tmp/e")" = 1 ] ||
		fail "$* : exit $rc (want $code), stderr '$(head -c 300 "$tmp/e")'"
}
expect 64 "a subcommand is needed" "$GPUCTL" cdi
expect 64 "unknown subcommand 'frob'" "$GPUCTL" cdi frob
expect 64 "needs a value" "$GPUCTL" cdi generate --output
expect 64 "unknown option '--output'" "$GPUCTL" cdi list --output x
expect 66 "$tmp/none" "$GPUCTL" --sim h200x8 cdi generate --dev-dir "$dev" --ldconfig-output "$tmp/none"
rm "$dev/nvidia5"
expect 69 "GPU 5: no device node $dev/nvidia5" gen h200x8 cdi generate
# without --dev-dir a simulated server's nodes are not in /dev: the error says what to give
expect 69 "GPU 0: no device node /dev/nvidia0 (a simulated server's GPUs have no device nodes here: give --dev-dir DIR" \
	"$GPUCTL" --sim h200x8 cdi list
fake_node nvidia5 5
mkdir -p "$tmp/ro"
chmod 555 "$tmp/ro"
if [ "$(id -u)" != 0 ]; then
	expect 74 "cannot write '$tmp/ro/nvidia.json'" gen h200x8 cdi generate --output "$tmp/ro/nvidia.json"
fi
expect 74 "cannot write '$tmp/nodir/nvidia.json'" gen h200x8 cdi generate --output "$tmp/nodir/nvidia.json"
check "no file left behind" test -z "$(ls "$tmp/ro")"
finish
