#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test_deb.sh - the Debian package (docs/install.md): builds it in build-deb
# (Release, /usr, shared jansson/SQLite/ncurses/zlib: Debian forbids embedded
# copies), checks it with lintian (an error fails; so does a warning that
# packaging/lintian-overrides does not list with its reason), installs it with
# dpkg -i into a clean Debian 12 root (debootstrap'd from the mirror apt is
# configured with, cached in /var/cache/gpuctl-test/bookworm-*.tar), runs
# `gpuctl --sim h200x8 report`, `man -w gpuctl-submit` and the completion
# there, then removes it (only the state directory may stay) and purges it
# (nothing may stay). Root only (chroot). Run by scripts/test.sh.
#   GPUCTL_DEB_BUILD=DIR  build directory (default build-deb)
#   GPUCTL_DEB_WERROR=ON  warnings as errors (scripts/test.sh: this is CI's Release build)
#   GPUCTL_DEB_CUDA_ARCHITECTURES="75;90"  the module's architectures (default: the catalog's)
# test_deb.sh --prepare-root: only make the cached clean root for the packages
# the package is expected to depend on (below), before the package exists:
# scripts/test.sh starts it first, in the background, so that debootstrap's
# downloads (minutes on a new machine) overlap the builds. The package's real
# Depends still decides: when they differ, this script makes its own root.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "test_deb.sh: needs root (chroot, dpkg --root)"; exit 1; }
build="${GPUCTL_DEB_BUILD:-build-deb}"
fails=0
fail() { echo "test_deb.sh: FAIL: $*"; fails=$((fails + 1)); }

# 0. a clean Debian 12 root with the package's dependencies and man-db, made
# once by debootstrap and kept as a tarball (a fresh copy for every run)
# The cache lives outside the build folder (GPUCTL_TEST_CACHE, default
# /var/cache/gpuctl-test where it can be made) so a fresh clone on the same
# machine does not debootstrap again (minutes); a new machine makes it once.
# root_cache PKGS: the tarball's path for the comma-separated packages PKGS
# (made when missing; a concurrent maker's half-written .new never counts)
root_cache() {
	local pkgs=$1 cache_dir="${GPUCTL_TEST_CACHE:-/var/cache/gpuctl-test}" cache mirror new
	mkdir -p "$cache_dir" 2>/dev/null && [ -w "$cache_dir" ] || cache_dir="$build"
	cache="$cache_dir/bookworm-$(echo "man-db,$pkgs" | md5sum | cut -c1-12).tar"
	if [ ! -s "$cache" ]; then
		mirror=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
		[ -n "$mirror" ] || mirror=$(awk '/^deb /{ print $2; exit }' /etc/apt/sources.list 2>/dev/null)
		mirror="${mirror:-http://deb.debian.org/debian}"
		new="$build/bookworm.new.$$"
		rm -rf "$new" && mkdir -p "$build"
		echo "test_deb.sh: debootstrap bookworm from $mirror (once; cached in $cache)" >&2
		debootstrap --variant=minbase --include="man-db,$pkgs" bookworm "$new" "$mirror" \
			>"$build/debootstrap.$$.log" 2>&1 || { tail -20 "$build/debootstrap.$$.log" >&2; rm -rf "$new"; return 1; }
		tar -C "$new" -cf "$cache.new.$$" . && mv "$cache.new.$$" "$cache"
		rm -rf "$new"
	fi
	echo "$cache"
}
# What the package is expected to depend on (dpkg-shlibdeps' answer for the
# libraries CMakeLists.txt links), for --prepare-root only.
expected_depends="libc6,libjansson4,libmicrohttpd12,libncursesw6,libsqlite3-0,libtinfo6,zlib1g"
if [ "${1:-}" = --prepare-root ]; then
	root_cache "$expected_depends" >/dev/null
	exit
fi

# 1. the package, with the CUDA kernels module when nvcc works here (what a GPU
# server installs: it needs no nvcc), for every architecture the catalog covers
# unless GPUCTL_DEB_CUDA_ARCHITECTURES says which
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr -DGPUCTL_STATIC_DEPS=OFF \
	-DBUILD_TESTING=OFF -DGPUCTL_WERROR="${GPUCTL_DEB_WERROR:-OFF}" \
	${GPUCTL_DEB_CUDA_ARCHITECTURES:+"-DCMAKE_CUDA_ARCHITECTURES=$GPUCTL_DEB_CUDA_ARCHITECTURES"} >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null
rm -f "$build"/gpuctl_*.deb
(cd "$build" && cpack -G DEB >/dev/null)
deb=$(ls "$build"/gpuctl_*_*.deb)
echo "test_deb.sh: built $deb"
module=$(find "$build/kernels" -maxdepth 1 -name 'gpuctl_kernels.so' 2>/dev/null)
if [ -n "$module" ]; then
	# the listing first: grep -q would close the pipe on dpkg-deb (SIGPIPE, and pipefail)
	listing=$(dpkg-deb -c "$deb")
	grep -q '/usr/lib/[^/]*/gpuctl/gpuctl_kernels\.so$' <<<"$listing" ||
		fail "the kernels module was built but is not in the package"
	echo "test_deb.sh: the package carries the kernels module ($(du -k "$module" | cut -f1) KiB)"
else
	echo "test_deb.sh: no working nvcc here: the package has no kernels module"
fi
depends=$(dpkg-deb -f "$deb" Depends)
echo "test_deb.sh: Depends: $depends"
grep -qi nvidia <<<"$(dpkg-deb -f "$deb" Depends Recommends Suggests)" && fail "the package names an NVIDIA package"
for want in libc6 libmicrohttpd12; do
	grep -q "$want" <<<"$depends" || fail "Depends lacks $want (dpkg-shlibdeps did not run?)"
done

# 2. lintian: errors fail, and every warning left must be overridden (with its reason)
lintian --tag-display-limit 0 "$deb" >"$build/lintian.log" 2>&1 || true
grep -v '^running with root privileges' "$build/lintian.log" || true
if grep -qE '^[EW]: ' "$build/lintian.log"; then
	fail "lintian: errors or warnings not explained in packaging/lintian-overrides"
fi

# 3. the clean root for the package's own Depends (made by --prepare-root
# already when they are the expected ones)
pkgs=$(sed 's/([^)]*)//g; s/ //g' <<<"$depends" | tr '|' ',')
[ "$pkgs" = "$expected_depends" ] ||
	echo "test_deb.sh: note: Depends ($pkgs) differ from the expected ($expected_depends): update expected_depends"
cache=$(root_cache "$pkgs")
root="$build/root"
rm -rf "$root" && mkdir -p "$root"
tar -C "$root" -xf "$cache"
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root "$@"; }
# what the clean root holds, less what dpkg, man-db and logs keep of their own
list_root() {
	(cd "$root" && find . -xdev \( -path ./var/lib/dpkg -o -path ./var/cache/man -o -path ./var/log -o -path ./tmp \) -prune -o -print | sort)
}
list_root >"$build/root.before"

# 4. install, use
cp "$deb" "$root/tmp/"
in_root dpkg -i "/tmp/$(basename "$deb")" >"$build/dpkg-i.log" 2>&1 || { cat "$build/dpkg-i.log"; fail "dpkg -i"; }
in_root gpuctl --version | grep -qE '^gpuctl [0-9.]+ \(commit ([0-9a-f]+|unknown)\)$' || fail "gpuctl --version: no version and commit"
in_root gpuctl --sim h200x8 report >"$build/report.txt" 2>&1 || { tail -5 "$build/report.txt"; fail "gpuctl --sim h200x8 report"; }
grep -q SIMULATED "$build/report.txt" || fail "the report does not say SIMULATED"
[ "$(in_root man -w gpuctl-submit)" = /usr/share/man/man1/gpuctl-submit.1.gz ] || fail "man -w gpuctl-submit"
[ "$(in_root man -w 5 gpuctl-agent.conf)" = /usr/share/man/man5/gpuctl-agent.conf.5.gz ] || fail "man -w 5 gpuctl-agent.conf"
page=$(in_root man gpuctl-submit 2>/dev/null) || true
grep -q -- '--gpus' <<<"$page" || fail "man gpuctl-submit does not render --gpus"
comp=$(in_root bash -c '. /usr/share/bash-completion/completions/gpuctl; COMP_WORDS=(gpuctl --sim ""); COMP_CWORD=2; _gpuctl; echo "${COMPREPLY[*]}"')
grep -qw h200x8 <<<"$comp" || fail "the completion does not offer the shipped simulator h200x8 ($comp)"
[ -f "$root/lib/systemd/system/gpuctl-agent.service" ] || fail "no systemd unit"
[ ! -e "$root/etc/systemd/system/multi-user.target.wants/gpuctl-agent.service" ] || fail "the unit is enabled"

# 5. remove: only the state the agent's pool wrote (made here as it would be) stays
mkdir -p "$root/var/lib/gpuctl/pool/jobs/1" && echo state >"$root/var/lib/gpuctl/pool/jobs.db"
in_root dpkg -r gpuctl >"$build/dpkg-r.log" 2>&1 || { cat "$build/dpkg-r.log"; fail "dpkg -r"; }
left=$(diff "$build/root.before" <(list_root) | sed -n 's/^> //p' | grep -v '^./var/lib/gpuctl' || true)
[ -z "$left" ] || fail "left after dpkg -r: $left"
[ -e "$root/var/lib/gpuctl/pool/jobs.db" ] || fail "dpkg -r removed the pool's state (a purge's job)"
in_root dpkg -P gpuctl >"$build/dpkg-P.log" 2>&1 || { cat "$build/dpkg-P.log"; fail "dpkg -P"; }
left=$(diff "$build/root.before" <(list_root) || true)
[ -z "$left" ] || fail "the root differs after dpkg -P: $left"
rm -rf "$root"
[ "$fails" -eq 0 ] && echo "test_deb.sh: ok ($deb)"
[ "$fails" -eq 0 ]
