#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# topo_nics.sh - `gpuctl topo` with RDMA NICs: the simulated h200x8's model,
# and read from a fake sysfs tree (written by tests/data/sysfs/hgx_h200.sh)
# (--sysfs DIR): the simulated h200x8's bus ids laid out as an HGX H200, each
# GPU behind its own PCIe switch with one ConnectX-7 (mlx5_N), GPUs 0-3 on
# NUMA node 0 and 4-7 on node 1; plus a second function of mlx5_0 and a NIC
# behind a nested switch, so every class (PIX, PXB, PHB, NODE, SYS) shows.
#
# Run by CTest (GPUCTL = the binary). By hand:
#   GPUCTL=build/gpuctl GPUCTL_DATA_DIR=data bash tests/cli/topo_nics.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.bash"

sys="$tmp/sys"
bash "$here/../data/sysfs/hgx_h200.sh" "$sys" || fail "tests/data/sysfs/hgx_h200.sh failed"

sim=--sim=h200x8,seed=1,time_s=0
expect_exit 0 "$GPUCTL" "$sim" topo --sysfs "$sys"
out_has "NIC Legend:"
out_has "  NIC0: mlx5_0"
out_has "  NIC10: mlx5_10" # in version order: mlx5_2 before mlx5_10
grep -q rxe0 <<<"$out" && fail "rxe0 (not PCI) listed"
# row GPU0: 8 GPU cells, then NIC0..NIC10
row=$(grep '^GPU0 ' <<<"$out" | awk '{ print $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20 }')
[ "$row" = "PIX NODE NODE NODE SYS SYS SYS SYS PIX PXB PHB" ] || fail "GPU0's NIC cells: '$row'"
row=$(grep '^GPU5 ' <<<"$out" | awk '{ print $10, $11, $12, $13, $14, $15, $16, $17 }')
[ "$row" = "SYS SYS SYS SYS NODE PIX NODE NODE" ] || fail "GPU5's NIC cells: '$row'"
# row NIC0: the GPUs, then the NICs (X on itself; mlx5_8 is its other port)
row=$(grep '^NIC0 ' <<<"$out" | awk '{ print $2, $6, $10, $18 }')
[ "$row" = "PIX SYS X PIX" ] || fail "NIC0's row: '$row'"

# -i keeps every NIC column and only the chosen GPUs
expect_exit 0 "$GPUCTL" "$sim" topo --sysfs "$sys" -i 4
row=$(grep '^GPU4 ' <<<"$out" | awk '{ print $2, $3, $7, $8 }')
[ "$row" = "X SYS PIX NODE" ] || fail "topo -i 4, GPU4's row: '$row'"

# --json: one object per NIC, its cells against the selected GPUs and every NIC
expect_exit 0 "$GPUCTL" "$sim" topo --json --sysfs "$sys" -i 0,1
check "topo --json nics" python3 - "$out" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
n = d["nics"]
assert len(n) == 11, len(n)
assert n[0]["name"] == "mlx5_0" and n[0]["numa_node"] == 0, n[0]
assert n[0]["pci_path"] == "pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:01.0/0000:19:00.0", n[0]
assert n[0]["gpus"] == ["PIX", "NODE"], n[0]["gpus"]
assert n[0]["nics"][0] == "X" and len(n[0]["nics"]) == 11
assert n[1]["gpus"] == ["NODE", "PIX"], n[1]
PY

# without --sysfs a simulated server's NICs are its model's: h200x8 has one
# ConnectX-7 behind each GPU's switch; l40sx4 has none
expect_exit 0 "$GPUCTL" "$sim" topo
row=$(grep '^GPU6 ' <<<"$out" | awk '{ print $10, $11, $12, $13, $14, $15, $16, $17, $18 }')
[ "$row" = "SYS SYS SYS SYS NODE NODE PIX NODE 56-111,168-223" ] || fail "h200x8 model, GPU6's NIC cells: '$row'"
out_has "  NIC7: mlx5_7"
expect_exit 0 "$GPUCTL" --sim=l40sx4,seed=1,time_s=0 topo
grep -q NIC <<<"$out" && fail "l40sx4 (no nics in its model) shows NICs"
# the model's errors: one line naming the field, exit 65
sed 's|"pci_path": "pci0000:97/0000:97:01.0/0000:98:00.0/0000:99:01.0/0000:9b:00.0"|"pci_path": "0000:9b:00.0"|' \
	"$GPUCTL_DATA_DIR/sim/h200x8.json" >"$tmp/badnic.json"
cmp -s "$GPUCTL_DATA_DIR/sim/h200x8.json" "$tmp/badnic.json" && fail "badnic.json: the sed changed nothing"
expect_exit 65 "$GPUCTL" --sim "$tmp/badnic.json" topo
err_has "nics\[4\].pci_path: '0000:9b:00.0' is not a PCI path"
mkdir -p "$tmp/empty"
expect_exit 0 "$GPUCTL" "$sim" topo --sysfs "$tmp/empty"
grep -q NIC <<<"$out" && fail "topo --sysfs EMPTY shows NICs"
expect_exit 0 "$GPUCTL" "$sim" topo --json --sysfs "$tmp/empty"
grep -q '"nics": \[\]' <<<"$out" || fail "topo --json without NICs: no empty nics list"

# bad input: one line, exit 66
expect_exit 66 "$GPUCTL" "$sim" topo --sysfs "$tmp/missing"
err_has "topo: --sysfs $tmp/missing: not a directory"
[ "$(wc -l <<<"$err")" = 1 ] || fail "--sysfs missing: stderr not one line"
finish
