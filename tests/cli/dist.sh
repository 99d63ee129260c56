#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# dist.sh - the release tarball (cmake --build B --target dist: cmake/dist.cmake;
# issue 37) unpacked into an empty root works with no environment variable:
# the root holds only the tarball and the shared libraries its gpuctl names
# (ldd), no data directory, no installed gpuctl; there `report --sim`,
# `bench --results FILE` (with the catalog's datasheet ratios), `plan` and
# `agent` run, `info --data` says every data file is embedded, and the binary
# links nothing shared beyond glibc and libmicrohttpd (and the sanitizer's
# runtime in a sanitizer build) when jansson, SQLite, ncurses and zlib are
# linked statically. Root only (chroot, mount of /proc).
#
# Run by CTest (GPUCTL = the binary, GPUCTL_BUILD_DIR = its build). By hand:
#   GPUCTL=build/gpuctl GPUCTL_BUILD_DIR=build bash tests/cli/dist.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/agent_lib.bash"
fixture="$here/../data/results-h200x2.json"
has() { checks=$((checks + 1)); grep -qF -- "$2" "$tmp/$1" || fail "$1 lacks '$2'"; }
need_root "chroot into the unpacked tarball"
need ldd readelf curl
: "${GPUCTL_BUILD_DIR:?set GPUCTL_BUILD_DIR to the build folder of \$GPUCTL}"

# the tarball, as the dist target makes it, from this build
cmake -DBUILD="$GPUCTL_BUILD_DIR" -DSRC="$src" -DOUT="$tmp" -DNAME=gpuctl-t -P "$src/cmake/dist.cmake" \
	>"$tmp/dist.log" 2>&1 || { cat "$tmp/dist.log"; fail "the dist script failed"; finish; }
tar tzf "$tmp/gpuctl-t.tar.gz" >"$tmp/listing"
for f in bin/gpuctl LICENSE README.md share/bash-completion/completions/gpuctl lib/systemd/system/gpuctl-agent.service \
	share/gpuctl/grafana/gpuctl.json share/gpuctl/prometheus/alerts.yml share/gpuctl/slurm/prolog; do
	has listing "gpuctl-t/$f"
done
[ -e "$GPUCTL_BUILD_DIR/kernels/gpuctl_kernels.so" ] && has listing "gpuctl-t/lib/gpuctl/gpuctl_kernels.so"
grep -q 'share/man/man1/gpuctl.1.gz' "$tmp/listing" || ! grep -q '^Python3_EXECUTABLE:.*/' "$GPUCTL_BUILD_DIR/CMakeCache.txt" ||
	fail "no man pages in the tarball"
checks=$((checks + 1))

# the empty root: the tarball in /opt, the libraries its binary needs, /proc, /dev/null
root="$tmp/root"
mkdir -p "$root/opt" "$root/tmp" "$root/proc" "$root/dev"
tar -C "$root/opt" -xzf "$tmp/gpuctl-t.tar.gz"
bin=/opt/gpuctl-t/bin/gpuctl
for lib in $(ldd "$root$bin" | grep -oE '/[^ ]+'); do
	cp --parents -L "$lib" "$root/" || fail "cannot copy $lib into the root"
done
mknod -m 666 "$root/dev/null" c 1 3 && mknod -m 666 "$root/dev/urandom" c 1 9 || skip "cannot mknod in $root"
mount -t proc proc "$root/proc" || skip "cannot mount /proc in the root"
# (registered after agent_lib's stop of the agent, so run before it: stop the agent here first)
on_exit '[ -n "$agent_pid" ] && kill "$agent_pid" 2>/dev/null && wait "$agent_pid" 2>/dev/null; umount -l "$root/proc"'
in_root() { chroot "$root" /usr/bin/env -i PATH=/opt/gpuctl-t/bin HOME=/tmp ASAN_OPTIONS=detect_leaks=0 "$@"; }
[ -x "$root/usr/bin/env" ] || { mkdir -p "$root/usr/bin" && cp -L /usr/bin/env "$root/usr/bin/env"; }
for lib in $(ldd /usr/bin/env | grep -oE '/[^ ]+'); do cp --parents -L -n "$lib" "$root/"; done

# what it links: glibc and libmicrohttpd, when the small libraries are static
readelf -d "$root$bin" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' >"$tmp/needed"
if grep -q '^GPUCTL_STATIC_DEPS:BOOL=ON' "$GPUCTL_BUILD_DIR/CMakeCache.txt" &&
	! grep -q '^GPUCTL_[A-Z]*_A:FILEPATH=.*NOTFOUND' "$GPUCTL_BUILD_DIR/CMakeCache.txt"; then
	extra=$(grep -vE '^(libc|libm|libmicrohttpd|libasan|libubsan|libtsan|libpthread|libdl)\.so' "$tmp/needed")
	checks=$((checks + 1))
	[ -z "$extra" ] || fail "the binary needs more than glibc and libmicrohttpd: $extra"
fi

# run: no data directory, no installed gpuctl, no environment but PATH and HOME
ndata=$(cd "$src/data" && find . -type f | wc -l)
rt() { # rt RC NAME ARGS...: gpuctl in the root, its output in $tmp/NAME.{out,err}
	local want=$1 name=$2 rc
	shift 2
	checks=$((checks + 1))
	in_root gpuctl "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
	rc=$?
	[ "$rc" = "$want" ] || fail "$name: exit $rc, want $want: $(head -c 300 "$tmp/$name.err")"
}
rt 0 version --version
has version.out "data: $ndata files, all built in"
rt 0 data info --data
checks=$((checks + 1))
[ "$(grep -Ec '^[a-z/0-9.-]+\.json +embedded +-$' "$tmp/data.out")" = "$ndata" ] ||
	fail "info --data in the root: not every file embedded: $(cat "$tmp/data.out")"
rt 0 report --sim h200x8 report
has report.out "SIMULATED"
has report.out "== Planning (gpuctl plan;"
cp "$fixture" "$root/tmp/results.json"
rt 0 results bench --results /tmp/results.json
grep -Eq '^memory +copy +0 +4 GiB +4009 GB/s .* 4800 GB/s +0\.84 +ok$' "$tmp/results.out" ||
	fail "bench --results in the root: no datasheet ratio: $(grep 'memory *copy' "$tmp/results.out")"
checks=$((checks + 1))
rt 0 plan plan train --model llama-3-8b --gpu 'H200 SXM'
has plan.out "model: llama-3-8b"
rt 0 cost plan cost --hours 10 --instance p5e.48xlarge
has cost.out "H200 SXM"

# the agent: serves the simulated server's metrics and health from the root
in_root gpuctl --sim h200x8 agent --listen 127.0.0.1:0 >"$tmp/agent.out" 2>"$tmp/agent.err" &
agent_pid=$!
wait_agent_port
curl -sf "http://127.0.0.1:$port/metrics" >"$tmp/metrics" || fail "agent: no /metrics"
has metrics "gpuctl_gpu_"
curl -sf "http://127.0.0.1:$port/api/v1/health" >"$tmp/health" || fail "agent: no /api/v1/health"
has health '"gpus"'
finish
