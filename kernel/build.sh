#!/bin/bash
# Build a bzImage and its kselftests from a fresh extract of Debian's
# linux-source-6.12 with a patch series applied.
#
#   kernel/build.sh [--patches DIR] [--variant NAME] [--config FRAG]...
#
# The result goes to build/kernel/<key>/ where <key> hashes the source
# tarball, the patches and the config fragments, so a build happens only
# when one of them changes; build/kernel/<variant> then links to it.
# Defaults: --patches kernel/patches, --variant bzImage (the main kernel),
# --config kernel/config/base.config.
#
# Outputs in build/kernel/<key>/: bzImage, bzImage.series (the series id:
# a hash of the patches alone), config, selftests/ (static binaries), and
# build-seconds (wall time of the build that made them).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
tarball=${KERNEL_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
patches="$root/kernel/patches"
variant=bzImage
configs=()

while [ "$#" -gt 0 ]; do
	case "$1" in
	--patches) patches=$(cd "$2" && pwd); shift 2 ;;
	--variant) variant=$2; shift 2 ;;
	--config) configs+=("$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"); shift 2 ;;
	*) echo "kernel/build.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
done
[ "${#configs[@]}" -gt 0 ] || configs=("$root/kernel/config/base.config")

if [ ! -f "$tarball" ]; then
	echo "kernel/build.sh: no kernel source at $tarball: run 'make deps' (Debian package linux-source-6.12)" >&2
	exit 1
fi
series_files=()
while IFS= read -r f; do
	series_files+=("$f")
done < <(find "$patches" -maxdepth 1 -name '*.patch' ! -name '0000-*' | sort)

# The upstream kselftests the suite runs besides our own hugetlb_dev.
selftests="hugetlb_dev map_hugetlb hugepage-mmap hugepage-shm hugepage-mremap hugetlb-madvise"

hash() {
	sha256sum | cut -c1-12
}
srcver=$(stat -c '%s %Y' "$tarball")
series_id=$(cat ${series_files[@]+"${series_files[@]}"} /dev/null | hash)
key=$({
	echo "$srcver"
	echo "$series_id"
	cat "${configs[@]}"
} | hash)

out="$root/build/kernel/$key"
link="$root/build/kernel/$variant"
# Two builds of one key share build/obj/<key>: the second waits, then
# finds the first's result.
mkdir -p "$root/build/kernel"
exec 9>"$out.lock"
flock 9
if [ -f "$out/bzImage" ]; then
	ln -sfn "$key/bzImage" "$link"
	ln -sfn "$key/bzImage.series" "$link.series"
	echo "kernel: $variant is up to date (build/kernel/$key, series $series_id)"
	exit 0
fi

start=$(date +%s)
src="$root/build/src/$series_id"
# Variants of one series share the extracted tree: extract it once.
mkdir -p "$root/build/src"
exec 8>"$src.lock"
flock 8
if [ ! -f "$src/.series-applied" ]; then
	echo "kernel: extracting $(basename "$tarball") and applying ${#series_files[@]} patches"
	rm -rf "$src"
	mkdir -p "$src"
	tar -xf "$tarball" -C "$src" --strip-components=1
	for p in ${series_files[@]+"${series_files[@]}"}; do
		if ! patch -d "$src" -p1 --quiet --forward <"$p"; then
			echo "kernel/build.sh: $(basename "$p") does not apply to $(basename "$tarball")" >&2
			exit 1
		fi
	done
	touch "$src/.series-applied"
fi
exec 8>&-

obj="$root/build/obj/$key"
mkdir -p "$obj"
mk=(make -s -C "$src" O="$obj" ARCH=x86_64)
"${mk[@]}" tinyconfig >/dev/null
"$src/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "${configs[@]}" >"$obj/merge.log"
"${mk[@]}" olddefconfig
# merge_config.sh only warns when Kconfig drops a requested option.
for frag in "${configs[@]}"; do
	while IFS= read -r line; do
		if ! grep -qxF "$line" "$obj/.config"; then
			opt=${line%%=*}
			echo "kernel/build.sh: $(basename "$frag") asks for $line but the config has: $(grep -E "^(# )?$opt[= ]" "$obj/.config" || echo "nothing") (a dependency is missing)" >&2
			exit 1
		fi
	done < <(grep -E '^CONFIG_[A-Z0-9_]+=' "$frag")
done

echo "kernel: building bzImage ($variant, build/kernel/$key)"
# Fixed build stamps keep ccache hits and make the image reproducible.
export KBUILD_BUILD_TIMESTAMP="@0" KBUILD_BUILD_USER=hugetlb KBUILD_BUILD_HOST=build
export CCACHE_BASEDIR="$root/build" CCACHE_NOHASHDIR=1
"${mk[@]}" -j"$(nproc)" CC="ccache gcc" bzImage
"${mk[@]}" headers_install >/dev/null

tmp="$out.tmp"
rm -rf "$tmp"
mkdir -p "$tmp/selftests"
st="$src/tools/testing/selftests"
for t in $selftests; do
	if [ ! -f "$st/mm/$t.c" ]; then
		echo "kernel/build.sh: $t.c is missing from the tree: is the series complete?" >&2
		exit 1
	fi
	gcc -static -O2 -Wall -isystem "$obj/usr/include" -I "$st" -I "$st/mm" \
		-o "$tmp/selftests/$t" "$st/mm/$t.c" "$st/mm/vm_util.c" -lrt -lpthread -lm
done
cp "$obj/arch/x86/boot/bzImage" "$tmp/bzImage"
cp "$obj/.config" "$tmp/config"
echo "$series_id" >"$tmp/bzImage.series"
echo $(($(date +%s) - start)) >"$tmp/build-seconds"
rm -rf "$out"
mv "$tmp" "$out"
ln -sfn "$key/bzImage" "$link"
ln -sfn "$key/bzImage.series" "$link.series"
echo "kernel: built $variant in $(cat "$out/build-seconds")s (series $series_id)"
