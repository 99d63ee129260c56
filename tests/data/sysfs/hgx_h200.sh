#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# hgx_h200.sh DIR - writes a fake sysfs tree in DIR (which must not exist) for
# `gpuctl topo --sysfs DIR` (tests/cli/topo_nics.sh): the simulated h200x8's bus
# ids laid out as an HGX H200, each GPU behind its own PCIe switch (own root
# complex) with one ConnectX-7 (mlx5_N), GPUs 0-3 on NUMA node 0 and 4-7 on 1;
# plus mlx5_8 (a second function of mlx5_0's card), mlx5_9 (behind a switch
# below GPU0's switch), mlx5_10 (another root port of GPU0's root complex) and
# rxe0 (a software device, not on PCI). Git does not keep the symlinks sysfs is
# made of, so the tree is written at test time.
set -eu
[ $# = 1 ] && [ ! -e "$1" ] || { echo "usage: $0 NEW_DIR" >&2; exit 64; }
sys="$1"
mkdir -p "$sys/class/infiniband" "$sys/bus/pci/devices"
# dev PCIPATH NUMA: a device folder with its numa_node, and its bus/pci link
dev() {
	mkdir -p "$sys/devices/$1"
	echo "$2" >"$sys/devices/$1/numa_node"
	ln -s "../../../devices/$1" "$sys/bus/pci/devices/${1##*/}"
}
# nic NAME PCIPATH NUMA
nic() {
	dev "$2" "$3"
	mkdir -p "$sys/devices/$2/infiniband/$1"
	ln -s "../../devices/$2/infiniband/$1" "$sys/class/infiniband/$1"
	ln -s "../../../$(basename "$2")" "$sys/devices/$2/infiniband/$1/device"
}
i=0
for b in 18 2a 3a 5d 9a ab ba db; do
	numa=$((i / 4))
	sw=$(printf 'pci0000:%02x/0000:%02x:01.0/0000:%02x:00.0' $((0x$b - 3)) $((0x$b - 3)) $((0x$b - 2)))
	down=$(printf '0000:%02x' $((0x$b - 1)))
	dev "$sw/$down:00.0/0000:$b:00.0" "$numa"
	nic "mlx5_$i" "$sw/$down:01.0/$(printf '0000:%02x:00.0' $((0x$b + 1)))" "$numa"
	i=$((i + 1))
done
# a second port of mlx5_0's card, a NIC behind a switch below GPU0's switch,
# and one on another root port of GPU0's root complex
sw0="pci0000:15/0000:15:01.0/0000:16:00.0"
nic mlx5_8 "$sw0/0000:17:01.0/0000:19:00.1" 0
nic mlx5_9 "$sw0/0000:17:02.0/0000:1a:00.0/0000:1b:00.0/0000:1c:00.0" 0
nic mlx5_10 "pci0000:15/0000:15:02.0/0000:30:00.0" 0
# not on PCI (a software RDMA device): left out
mkdir -p "$sys/devices/virtual/infiniband/rxe0"
ln -s "../../devices/virtual/infiniband/rxe0" "$sys/class/infiniband/rxe0"
