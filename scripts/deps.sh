#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Install the Debian packages the project needs, if any are missing.
# Run by `make deps`, which `make bench` and `make test` both run first.
set -eu

# What each package is for:
#   linux-source-6.12  the kernel tarball the series applies to
#   gcc make bc flex bison libelf-dev libssl-dev  kernel build tools
#   gcc-multilib       the kselftest hugetlb_dev also as a 32-bit static binary
#   ccache             cached kernel rebuilds
#   lz4                compresses the bzImage (CONFIG_KERNEL_LZ4)
#   cpio xz-utils rsync  tarball extraction, headers_install, the initramfs
#   python3-ply python3-git  checkpatch.pl's SPDX check (scripts/spdxcheck.py)
#   busybox-static     the guest's shell and tools
#   qemu-system-x86    the guest
#   linux-perf         perf in the guest, for ad-hoc use
#   gnuplot-nox        the figures
#   python3            the orchestration and tests
pkgs="linux-source-6.12 gcc gcc-multilib make bc flex bison libelf-dev libssl-dev ccache lz4
cpio xz-utils rsync busybox-static qemu-system-x86 linux-perf gnuplot-nox python3
python3-ply python3-git"

missing=
for p in $pkgs; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

echo "deps: installing:$missing"
if [ "$(id -u)" != 0 ]; then
	echo "deps: missing packages:$missing" >&2
	echo "deps: not root, so cannot install them: run 'sudo make deps' or install them with apt-get" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
if ! apt-get update -q >/dev/null || ! apt-get install -y -q --no-install-recommends $missing >/dev/null; then
	echo "deps: apt-get could not install:$missing" >&2
	echo "deps: check the network and /etc/apt/sources.list, then run 'make deps' again" >&2
	exit 1
fi
