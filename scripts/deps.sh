#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Install the Debian packages a target needs, if any are missing.
#
#   scripts/deps.sh [--for SET] [x86_64|arm64]
#   scripts/deps.sh --list [--for SET] [x86_64|arm64]   print them, install nothing
#
# SET is what the packages are for (default all):
#   bench  make kernel, initramfs, bench, plots, compare (make deps-bench)
#   test   bench's and those of make test, checkpatch, check-builds,
#          test-fresh (make deps-test)
#   lava   bench's and those of make lava-job's check, lava-fetch and
#          test-lava's loopback lab (make deps-lava)
#   all    every one of them (make deps)
# Nothing missing: nothing is run, root or not (no apt-get).  Something
# missing and not root: the missing packages and the command that installs
# them, exit 1.
#
# The guest architecture (the Makefile's ARCH, default x86_64) decides what
# else is needed: arm64 adds a cross compiler, its libc, QEMU for arm64
# and Debian's arm64 package lists, from which kernel/initramfs/build.sh
# fetches busybox-static:arm64.
set -eu

list=
set_=all
while [ $# -gt 0 ]; do
	case "$1" in
	--list) list=1; shift ;;
	--for)
		set_=${2:-}
		shift
		[ $# -eq 0 ] || shift ;;
	*) break ;;
	esac
done
arch=${1:-x86_64}

# What each package is for, by set.  bench:
#   linux-source-6.12  the kernel tarball the series applies to
#   gcc make bc flex bison libelf-dev libssl-dev  kernel build tools
#   gcc-multilib       the kselftest hugetlb_dev also as a 32-bit static binary
#   ccache             cached kernel rebuilds
#   lz4                compresses the bzImage (CONFIG_KERNEL_LZ4)
#   cpio xz-utils rsync  tarball extraction, headers_install, the initramfs
#                      (xz: also bench/realprog's first real program)
#   memcached          bench/realprog's second real program (memcached -L),
#                      copied into the guest's initramfs with its libraries
#   patch              kernel/reconcile.py (the series' delta revisions)
#   busybox-static     the guest's shell and tools
#   qemu-system-x86    the guest, and a client mapping /dev/hugetlb by path
#                      inside it (tests/reliability.py, tests/pathcase/)
#   linux-perf         perf in the guest, for ad-hoc use
#   gnuplot-nox        the figures
#   python3            the orchestration and tests
bench="linux-source-6.12 gcc gcc-multilib make bc flex bison libelf-dev libssl-dev ccache lz4
cpio xz-utils rsync patch busybox-static qemu-system-x86 linux-perf gnuplot-nox python3
memcached"
# test (with bench's):
#   python3-ply python3-git  checkpatch.pl's SPDX check (scripts/spdxcheck.py)
#   fio                a second real program that maps a path
#                      (tests/pathcase/: iomem=mmaphuge:PATH in the guest)
#   strace             the fault benchmark's tests (which syscalls are timed)
#   debootstrap        make test-fresh's new Debian root
#   likwid             likwid-bench, streamk's oracle natively on this x86_64
#                      host, whatever the guest (tests/bench/test_streamk.py)
#   sparse             make check-builds: no new sparse warning (C=2)
#   python3-yaml       lava/: LAVA jobs and logs are YAML
#   lava-common        LAVA's job schema, which make test checks every
#                      generated job against (lava/, for /usr/bin/python3)
#   lava-dispatcher    lava-run, which make test runs one generated job with
#                      (and lava-worker, make test-lava's worker)
test="python3-ply python3-git fio strace debootstrap likwid sparse python3-yaml
lava-common lava-dispatcher"
# lava (with bench's):
#   python3-yaml lava-common  as for test: make lava-job checks its jobs
#   lavacli            make lava-fetch asks a LAVA server for a job's log
#   lava-dispatcher lava-server postgresql-15  make test-lava's loopback lab
#                      (lava/lab.py): lava-worker, lava-server,
#                      lava-scheduler and its own database cluster (Debian
#                      creates a default cluster on install; the lab does
#                      not use it)
lava="python3-yaml lava-common lavacli lava-dispatcher lava-server postgresql-15"
case "$set_" in
bench) pkgs=$bench ;;
test) pkgs="$bench $test" ;;
lava) pkgs="$bench $lava" ;;
all) pkgs="$bench $test lavacli lava-server postgresql-15" ;;
*)
	echo "deps: unknown set '$set_': --for bench, test, lava or all" >&2
	exit 2 ;;
esac
# lava-dispatcher pulls in about 136 packages (udev, systemd-sysv,
# libguestfs, kernel headers), lava-server about 55 more (Django,
# gunicorn, the PostgreSQL client), and, left alone, apt would also upgrade these,
# which the suite depends on (perf in the guest, the kernel headers the
# benchmarks build against, the host's init): they are kept at the
# installed version (pkg=VERSION on apt-get's command line).  perl and a
# few libraries are upgraded within bookworm; that is accepted.
keep="linux-perf linux-libc-dev systemd libsystemd0"
# For ARCH=arm64:
#   clang lld llvm     the arm64 kernel (LLVM=1) and its static kselftests
#                      (--target=aarch64-linux-gnu).  Not Debian's
#                      gcc-aarch64-linux-gnu: bookworm's gcc-12-multilib
#                      conflicts with it, and installing one removes the other.
#   libc6-dev-arm64-cross libgcc-12-dev-arm64-cross  libc, crt files and
#                      libgcc for the static kselftests
#   qemu-system-arm    the arm64 guest (qemu-system-aarch64 -M virt)
case "$arch" in
x86_64) ;;
arm64) pkgs="$pkgs clang lld llvm libc6-dev-arm64-cross libgcc-12-dev-arm64-cross qemu-system-arm" ;;
*)
	echo "deps: unknown architecture '$arch': ARCH is x86_64 (the default) or arm64" >&2
	exit 2 ;;
esac
if [ -n "$list" ]; then
	# shellcheck disable=SC2086 # a list of words
	printf '%s\n' $pkgs
	exit 0
fi

missing=
for p in $pkgs; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
		missing="$missing $p"
	fi
done
# busybox-static:arm64 cannot be installed beside the amd64 one (both own
# /bin/busybox), so the initramfs builder fetches it with apt-get download,
# which needs dpkg to know arm64 and apt to have its package lists.
foreign=
if [ "$arch" = arm64 ] && ! apt-cache show busybox-static:arm64 >/dev/null 2>&1; then
	foreign=arm64
fi
[ -z "$missing" ] && [ -z "$foreign" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	[ -z "$missing" ] || echo "deps: missing packages:$missing" >&2
	[ -z "$foreign" ] || echo "deps: apt has no arm64 package lists (dpkg --add-architecture arm64, apt-get update)" >&2
	make_deps="make deps"
	[ "$set_" = all ] || make_deps="make deps-$set_"
	[ "$arch" = x86_64 ] || make_deps="$make_deps ARCH=$arch"
	apt=
	[ -z "$missing" ] || apt=", or 'sudo apt-get install$missing'"
	echo "deps: not root, so nothing was installed: run 'sudo $make_deps'$apt" >&2
	exit 1
fi
echo "deps: installing:$missing${foreign:+ (and the arm64 package lists)}"
apt_failed() {
	echo "deps: apt-get could not $1" >&2
	echo "deps: check the network and /etc/apt/sources.list, then run 'make deps' again" >&2
	exit 1
}
export DEBIAN_FRONTEND=noninteractive
[ -z "$foreign" ] || dpkg --add-architecture arm64
apt-get update -q >/dev/null || apt_failed "update its package lists"
pins=
for p in $keep; do
	v=$(dpkg-query -W -f='${Version}' "$p" 2>/dev/null || true)
	[ -z "$v" ] || pins="$pins $p=$v"
done
# $missing and $pins are lists of words.
# shellcheck disable=SC2086
if [ -n "$missing" ] && ! apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=600 $missing $pins >/dev/null; then
	apt_failed "install:$missing"
fi
