#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian packages gpuctl builds and tests with (as root; skips what is there).
set -euo pipefail
pkgs=(build-essential cmake pkg-config libjansson-dev libmicrohttpd-dev libsqlite3-dev
      libncurses-dev zlib1g-dev libcmocka-dev clang curl tmux python3 jq)
[ "${GPUCTL_TEST_DEPS:-0}" = 1 ] && pkgs+=(prometheus chromium)
# the Slurm test cluster (tests/cli/slurm_cluster.sh) and the SPANK plugin's header
[ "${GPUCTL_TEST_DEPS:-0}" = 1 ] && pkgs+=(slurmctld slurmd slurm-client munge libslurm-dev)
# container jobs (tests/cli/pool_container.sh): podman with runc (its images
# imported from a tar of busybox-static; catatonit is podman --init's PID 1)
[ "${GPUCTL_TEST_DEPS:-0}" = 1 ] && pkgs+=(podman runc catatonit uidmap busybox-static)
# and through docker (tests/cli/pool_docker.sh: dockerd 20.10, its own containerd)
[ "${GPUCTL_TEST_DEPS:-0}" = 1 ] && pkgs+=(docker.io)
# the Debian package's test (scripts/test_deb.sh): lintian, a clean root, man, completion
[ "${GPUCTL_TEST_DEPS:-0}" = 1 ] && pkgs+=(lintian debootstrap man-db dpkg-dev bash-completion)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
