#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the guest's initramfs: an uncompressed cpio archive (nothing to
# decompress under TCG) holding busybox, our /init, the kselftests built
# from the patched tree, the project's static benchmark binaries and
# Debian's perf, xz and memcached with the shared libraries they need (xz
# and memcached are the real programs bench/realprog runs, under the
# hugepreload.so given here, which goes to /usr/local/lib).
#
#   kernel/initramfs/build.sh [--arch arm64] OUT SELFTEST_DIR [BENCH_BIN...]
#
# --arch arm64: the arm64 guest's, with Debian's busybox-static:arm64
# (fetched once with apt-get download into build/deb/ and unpacked there),
# the kselftests and the benchmarks cross-built for arm64 (bench/bench.mk);
# perf, xz and memcached are x86_64 programs, so none of them.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
arch=x86_64
if [ "${1:-}" = --arch ]; then
	arch=${2:-}
	shift 2 || true
fi
if [ "$#" -lt 2 ]; then
	echo "usage: kernel/initramfs/build.sh [--arch arm64] OUT SELFTEST_DIR [BENCH_BIN...]" >&2
	exit 2
fi
out=$1
selftests=$2
shift 2

# busybox-static:arm64 cannot be installed on an amd64 system beside the
# amd64 one (both own /bin/busybox): unpack the package under build/deb/,
# once per version.
fetch_arm64_busybox() {
	local dir version unpacked deb
	dir="$(cd "$here/../.." && pwd)/build/deb"
	version=$(apt-cache show --no-all-versions busybox-static:arm64 2>/dev/null |
		sed -n 's/^Version: //p')
	if [ -z "$version" ]; then
		echo "initramfs: apt knows no busybox-static:arm64: run 'make deps ARCH=arm64'" >&2
		exit 1
	fi
	unpacked="$dir/busybox-static_${version}_arm64"
	if [ ! -f "$unpacked/bin/busybox" ]; then
		mkdir -p "$dir"
		rm -f "$dir"/busybox-static_*_arm64.deb
		if ! (cd "$dir" && apt-get download -q busybox-static:arm64) >"$dir/download.log" 2>&1; then
			cat "$dir/download.log" >&2
			echo "initramfs: apt-get download busybox-static:arm64 failed: check the network and run 'make deps ARCH=arm64'" >&2
			exit 1
		fi
		deb=$(ls "$dir"/busybox-static_*_arm64.deb)
		rm -rf "$unpacked.tmp"
		dpkg -x "$deb" "$unpacked.tmp"
		mv "$unpacked.tmp" "$unpacked"
		rm -f "$deb"
	fi
	echo "$unpacked/bin/busybox"
}

case "$arch" in
x86_64)
	busybox=/bin/busybox
	perf=/usr/bin/perf
	xz=/usr/bin/xz
	memcached=/usr/bin/memcached
	for f in "$busybox" "$perf" "$xz" "$memcached"; do
		if [ ! -x "$f" ]; then
			echo "initramfs: $f is missing: run 'make deps'" >&2
			exit 1
		fi
	done
	if ldd "$busybox" >/dev/null 2>&1; then
		echo "initramfs: $busybox is not static: install Debian's busybox-static ('make deps')" >&2
		exit 1
	fi ;;
arm64)
	for b in "$@"; do
		if ! readelf -h "$b" | grep -q 'Machine:.*AArch64'; then
			echo "initramfs: $b is not an arm64 program: build the arm64 benchmarks (make initramfs ARCH=arm64)" >&2
			exit 2
		fi
	done
	busybox=$(fetch_arm64_busybox)
	# readelf reads any ELF: an AArch64 program without a program interpreter.
	if ! readelf -h "$busybox" | grep -q 'Machine:.*AArch64' ||
		readelf -l "$busybox" | grep -q INTERP; then
		echo "initramfs: $busybox is not a static arm64 program: remove build/deb/ and build again" >&2
		exit 1
	fi ;;
*)
	echo "initramfs: --arch wants arm64 (or nothing for x86_64), got '$arch'" >&2
	exit 2 ;;
esac

root=$(mktemp -d "${TMPDIR:-/tmp}/initramfs.XXXXXX")
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,sbin,etc,proc,sys,dev,tmp,root,usr/bin,usr/local/bin,usr/local/lib,selftests,job,add}
cp "$busybox" "$root/bin/busybox"
install -m 0755 "$here/init" "$root/init"
install -m 0755 "$here/run-selftests" "$root/bin/run-selftests"
# What LAVA's test shell runs the job through (lava/job.py).
install -m 0755 "$here/../../lava/hugetlb-lava-results" "$root/usr/local/bin/hugetlb-lava-results"
cp "$selftests"/* "$root/selftests/"
for b in "$@"; do
	case "$b" in
	*.so) cp "$b" "$root/usr/local/lib/" ;;
	*) cp "$b" "$root/usr/local/bin/" ;;
	esac
done

# perf, xz and memcached are dynamically linked: copy them with every
# library ldd names, at the same paths, plus the loader.
if [ "$arch" = x86_64 ]; then
	cp "$perf" "$root/usr/bin/perf"
	cp "$xz" "$root/usr/bin/xz"
	cp "$memcached" "$root/usr/bin/memcached"
	ldd "$perf" "$xz" "$memcached" | grep -v ':$' | grep -oE '/[^ ]+' | sort -u | while read -r lib; do
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
fi

# A user for the permission tests.
cat >"$root/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
tester:x:1000:1000:unprivileged tester:/tmp:/bin/sh
EOF
cat >"$root/etc/group" <<'EOF'
root:x:0:
tester:x:1000:
EOF

(cd "$root" && find . | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0) >"$out.tmp"
mv "$out.tmp" "$out"
echo "initramfs: $out ($(du -m "$out" | cut -f1) MB)"
