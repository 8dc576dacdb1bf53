#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the series in the configurations the test kernel does not cover
# (make check-builds):
#   1. x86_64 tinyconfig: CONFIG_HUGETLBFS=n, so the series' stubs build;
#   2. x86_64 tinyconfig plus hugetlbfs and CONFIG_HUGETLB_DEVICE: the
#      smallest 64-bit kernel with the device;
#   3. i386 tinyconfig plus the same: 32-bit;
#   4. W=1 on every object the series touches that the configuration
#      builds, in each configuration: no warning that the same objects
#      without the series do not have;
#   5. sparse (C=2) on the same objects, if Debian's sparse is installed:
#      no new sparse warning either.
# Works in build/check-builds/ (its own extract of the tarball, with the
# series applied; reversed and reapplied for the comparison) and prints
# "check-builds: N passed, N failed" and the time taken.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
tarball=${KERNEL_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
work="$root/build/check-builds"
src="$work/src"
start=$(date +%s)
passed=0
failed=0

result() {
	if [ "$1" = 0 ]; then
		passed=$((passed + 1))
		echo "PASS $2"
	else
		failed=$((failed + 1))
		echo "FAIL $2${3:+: $3}"
	fi
}

series() {
	find "$root/kernel/patches" -maxdepth 1 -name '0*.patch' ! -name '0000-*' | sort "$@"
}

# Objects of the files the series changes or adds under mm/ and fs/.
touched_objects() {
	series | xargs grep -h '^+++ b/' | sed 's|^+++ b/||' |
		grep -E '^(mm|fs)/.*\.c$' | sed 's/\.c$/.o/' | sort -u
}

if [ ! -f "$tarball" ]; then
	echo "check-builds: no kernel source at $tarball: run 'make deps'" >&2
	exit 1
fi
# The tree is kept between runs, for the series it was patched with.
series_id=$(series | xargs cat | sha256sum | cut -c1-12)
if [ "$(cat "$src/.series-applied" 2>/dev/null)" != "$series_id" ]; then
	rm -rf "$src"
	mkdir -p "$src"
	tar -xf "$tarball" -C "$src" --strip-components=1
	for p in $(series); do
		patch -d "$src" -p1 --quiet --forward <"$p"
	done
	echo "$series_id" >"$src/.series-applied"
fi

# configure NAME ARCH [OPTION...]: tinyconfig of ARCH plus the options
configure() {
	local obj="$work/obj-$1" arch=$2
	shift 2
	mkdir -p "$obj"
	make -s -C "$src" O="$obj" ARCH="$arch" tinyconfig >/dev/null
	printf '%s\n' "$@" >"$obj/extra.config"
	"$src/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" \
		"$obj/extra.config" >"$obj/merge.log"
	make -s -C "$src" O="$obj" ARCH="$arch" olddefconfig
	for opt in "$@"; do
		if ! grep -qxF "$opt" "$obj/.config"; then
			echo "check-builds: $1 asks for $opt but Kconfig dropped it" >&2
			return 1
		fi
	done
}

# build NAME ARCH: the kernel image, with the log in obj-NAME/build.log
build() {
	make -C "$src" O="$work/obj-$1" ARCH="$2" -j"$(nproc)" CC="ccache gcc" \
		>"$work/obj-$1/build.log" 2>&1
}

# warnings NAME ARCH FLAGS...: W=1 (or C=2) warnings of the touched objects
# that NAME builds (fs/hugetlbfs/inode.o is not built with HUGETLBFS=n, and
# compiling it there only gives errors) and whose source exists (the series
# adds some)
warnings() {
	local name=$1 arch=$2 objs
	shift 2
	objs=$(touched_objects | while read -r o; do
		[ -f "$work/obj-$name/$o" ] && [ -f "$src/${o%.o}.c" ] && echo "$o"
	done)
	[ -n "$objs" ] || return 0
	# shellcheck disable=SC2046
	touch $(sed "s|^|$src/|; s|\.o$|.c|" <<<"$objs")
	# shellcheck disable=SC2086
	make -C "$src" O="$work/obj-$name" ARCH="$arch" "$@" $objs 2>&1 |
		grep -E 'warning:|error:' | sed -E 's/:[0-9]+:[0-9]+:/:/' | sort || true
}

check_config() {
	local name=$1 arch=$2 what=$3
	shift 3
	if configure "$name" "$arch" "$@" && build "$name" "$arch"; then
		result 0 "$what builds"
	else
		result 1 "$what builds" "see $work/obj-$name/build.log"
		return
	fi
	checked+=("$name:$arch")
	warnings "$name" "$arch" W=1 >"$work/$name.w1.series"
	if command -v sparse >/dev/null; then
		warnings "$name" "$arch" C=2 >"$work/$name.sparse.series"
	fi
}

rm -f "$work"/*.series "$work"/*.base
checked=()	# NAME:ARCH of each configuration that built
check_config x86_64 x86_64 "x86_64 tinyconfig (HUGETLBFS=n)"
check_config x86_64-huge x86_64 "x86_64 tinyconfig + HUGETLBFS + HUGETLB_DEVICE" \
	CONFIG_SYSFS=y CONFIG_HUGETLBFS=y CONFIG_HUGETLB_DEVICE=y
check_config i386 i386 "i386 tinyconfig + HUGETLBFS + HUGETLB_DEVICE" \
	CONFIG_SYSFS=y CONFIG_HUGETLBFS=y CONFIG_HUGETLB_DEVICE=y

# The same objects without the series: reverse it, compile, reapply.
for p in $(series -r); do
	patch -d "$src" -p1 --quiet -R <"$p"
done
for c in "${checked[@]}"; do
	name=${c%%:*}
	arch=${c#*:}
	warnings "$name" "$arch" W=1 >"$work/$name.w1.base"
	if [ -f "$work/$name.sparse.series" ]; then
		warnings "$name" "$arch" C=2 >"$work/$name.sparse.base"
	fi
done
for p in $(series); do
	patch -d "$src" -p1 --quiet --forward <"$p"
done

for f in "$work"/*.series; do
	new=$(comm -23 "$f" "${f%.series}.base")
	kind=$(basename "${f%.series}")
	result "$([ -z "$new" ] && echo 0 || echo 1)" \
		"no new ${kind#*.} warning in the touched objects ($(basename "$kind" ".${kind#*.}"))" \
		"$(head -5 <<<"$new")"
done
command -v sparse >/dev/null ||
	echo "SKIP sparse: not installed (Debian package sparse)"
echo "check-builds: took $(($(date +%s) - start)) s"
echo "check-builds: $passed passed, $failed failed"
[ "$failed" = 0 ]
