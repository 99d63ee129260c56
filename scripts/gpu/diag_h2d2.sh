#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# diag_h2d2.sh - issue 31, second step: how long the H2D slowdown after a large
# cudaFree lasts, whether it scales with the size freed (the driver scrubbing
# the freed memory on the copy engine H2D uses), and whether it outlives the
# process that freed. Under $OUT/diag_h2d2/probe.txt.
#   run(command="scripts/gpu/diag_h2d2.sh", kind="nvidia-h200")
set -u -o pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="${OUT:-$root/diag-h2d-out}/diag_h2d2"
mkdir -p "$out"
nvcc -O2 -arch=sm_90 -o /tmp/h2d_probe "$root/bench/h2d_probe.cu" || exit 70
{
	for f in 0.85 0.40 0.10; do /tmp/h2d_probe bigfree "$f" 8; done
	echo "== bigonly then fresh in a new process"
	/tmp/h2d_probe bigonly 0.85 && /tmp/h2d_probe fresh 0.85 3
	echo "== bigonly, 5 s pause, then fresh"
	/tmp/h2d_probe bigonly 0.85 && sleep 5 && /tmp/h2d_probe fresh 0.85 1
} 2>&1 | grep -v ' sample ' | tee "$out/probe.txt"
