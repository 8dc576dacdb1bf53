#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build a kernel image and its kselftests from Debian's linux-source-6.12
# with a patch series applied, rebuilding only what a change in the inputs
# touches.
#
#   kernel/build.sh [--arch x86_64|arm64] [--patches DIR] [--variant NAME]
#                   [--config FRAG]... [--slot NAME] [--out DIR]
#
# The result goes to build/kernel/<key>/ where <key> hashes the source
# tarball, the architecture, the patches, the config fragments and this
# script, so a build happens only when one of them changes, and going back
# to a revision built before costs nothing; build/kernel/<variant> then
# links to it.  Defaults: --arch x86_64, --patches kernel/patches,
# --variant bzImage (the main kernel; Image-arm64 for arm64), --config
# kernel/config/base.config (kernel/config/arm64.config for arm64).  --out
# DIR builds into DIR even when the key is cached, adds vmlinux and links
# nothing; --slot NAME builds in build/tree/NAME (tests compare builds this
# way).
#
# x86_64 builds a bzImage with gcc.  arm64 is cross-built with clang and
# LLVM's binutils (LLVM=1), into an uncompressed Image for QEMU's -M virt,
# from `make ARCH=arm64 tinyconfig`; Debian's gcc-aarch64-linux-gnu cannot
# be installed beside gcc-multilib (scripts/deps.sh).
#
# Where it builds: one slot per list of config fragments ("base",
# "base+debug", "arm64"), build/tree/<slot>/ holding src/ (the patched tree), obj/
# (Kbuild's O= folder) and cfg/ (where the .config is generated).  Before
# every build kernel/reconcile.py brings src/ to exactly "tarball + this
# series", rewriting only files whose content differs, and obj/.config is
# replaced only when the generated config differs; Kbuild's own dependency
# tracking (file mtimes, .cmd files, per-option include/config/ stamps)
# then recompiles what changed and nothing else.  Revisions built one after
# the other in a slot therefore never mix: each build sees only its own
# inputs.  The pristine extract (build/src/linux-<tarball id>) is shared by
# the slots and never modified.
#
# A slot belongs to one architecture: a tree another one built is built
# again from scratch, so the two never share objects.
#
# Outputs in build/kernel/<key>/: bzImage (Image for arm64), bzImage.series
# (Image.series; the series id: a hash of the patches alone), config,
# selftests/ (static binaries; on x86_64 hugetlb_dev also as
# hugetlb_dev_32, built -m32), and build-seconds (wall time of the build
# that made them).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
tarball=${KERNEL_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
patches="$root/kernel/patches"
arch=x86_64
variant=
configs=()
out=
slot=

while [ "$#" -gt 0 ]; do
	case "$1" in
	--arch | --patches | --variant | --config | --out | --slot)
		if [ "$#" -lt 2 ] || [ -z "$2" ] || [ "${2#--}" != "$2" ]; then
			echo "kernel/build.sh: $1 needs a value (see the usage at the top of kernel/build.sh)" >&2
			exit 2
		fi ;;
	esac
	case "$1" in
	--arch) arch=$2; shift 2 ;;
	--patches) patches=$(cd "$2" && pwd); shift 2 ;;
	--variant) variant=$2; shift 2 ;;
	--config) configs+=("$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"); shift 2 ;;
	--out) out=$(mkdir -p "$2" && cd "$2" && pwd); shift 2 ;;
	--slot) slot=$2; shift 2 ;;
	*) echo "kernel/build.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
done

# What differs between the architectures: Kbuild's toolchain variables, the
# compiler and linker whose versions the config depends on, the image, and
# how the static kselftests are compiled.
case "$arch" in
x86_64)
	toolchain=()
	cc=gcc ld=ld
	image=bzImage image_path=arch/x86/boot/bzImage
	selftest_cc=(gcc)
	default_variant=bzImage default_config=base.config ;;
arm64)
	toolchain=(LLVM=1)
	cc=clang ld=ld.lld
	image=Image image_path=arch/arm64/boot/Image
	selftest_cc=(clang --target=aarch64-linux-gnu -fuse-ld=lld)
	default_variant=Image-arm64 default_config=arm64.config
	for tool in clang ld.lld llvm-objcopy; do
		if ! command -v "$tool" >/dev/null; then
			echo "kernel/build.sh: $tool is missing for --arch arm64: run 'make deps ARCH=arm64'" >&2
			exit 1
		fi
	done ;;
*)
	echo "kernel/build.sh: --arch wants x86_64 or arm64, got '$arch'" >&2
	exit 2 ;;
esac
[ -n "$variant" ] || variant=$default_variant
[ "${#configs[@]}" -gt 0 ] || configs=("$root/kernel/config/$default_config")

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

digest() {
	sha256sum | cut -c1-12
}

# Each input on a line of its own, so that the previous build's list says
# which one changed.  This script is one: how it builds (compiler flags,
# which selftests) changes what a key stands for.
inputs() {
	echo "tarball $(basename "$tarball") $(stat -c '%s %Y' "$tarball")"
	echo "arch $arch"
	echo "recipe kernel/build.sh $(digest <"$root/kernel/build.sh")"
	for f in ${series_files[@]+"${series_files[@]}"}; do
		echo "patch $(basename "$f") $(digest <"$f")"
	done
	for f in "${configs[@]}"; do
		echo "config $(basename "$f") $(digest <"$f")"
	done
}

# run_progress: kernel/progress.sh; a total only where set below.
. "$root/kernel/progress.sh"
PROGRESS_TOTAL=

series_id=$(cat ${series_files[@]+"${series_files[@]}"} /dev/null | digest)
key=$(inputs | digest)
[ -n "$slot" ] || slot=$(for f in "${configs[@]}"; do basename "$f" .config; done | paste -sd+)

result="$root/build/kernel/$key"
link="$root/build/kernel/$variant"
mkdir -p "$root/build/kernel"
if [ -z "$out" ]; then
	# Two builds of one key: the second waits, then finds the first's result.
	exec 9>"$result.lock"
	flock 9
	if [ -f "$result/$image" ]; then
		ln -sfn "$key/$image" "$link"
		ln -sfn "$key/$image.series" "$link.series"
		echo "kernel: $variant is up to date (build/kernel/$key, series $series_id)"
		exit 0
	fi
fi

start=$(date +%s)
tree="$root/build/tree/$slot"
src="$tree/src" obj="$tree/obj" cfg="$tree/cfg"
mkdir -p "$root/build/tree" "$root/build/src"
# One build at a time per slot.
exec 8>"$tree.lock"
flock 8

# The pristine extract, once per tarball.
tarball_id=$(stat -c '%s %Y' "$tarball" | digest)
pristine="$root/build/src/linux-$tarball_id"
exec 7>"$pristine.lock"
flock 7
if [ ! -f "$pristine/.extracted" ]; then
	rm -rf "$pristine"
	mkdir -p "$pristine"
	run_progress "extracting $(basename "$tarball")" "$pristine.log" \
		tar -xf "$tarball" -C "$pristine" --strip-components=1
	touch "$pristine/.extracted"
fi
exec 7>&-
# kernel/checkpatch.sh looks for a tree the series applies to here.
if ! { [ -d "$root/build/src/$series_id" ] && [ ! -L "$root/build/src/$series_id" ]; }; then
	ln -sfn "linux-$tarball_id" "$root/build/src/$series_id"
fi

# Why this build happens: the inputs against those of the slot's last build.
inputs >"$tree.inputs.new"
# Slots from before --arch existed hold x86_64 trees.
tree_arch=$(cat "$tree/arch" 2>/dev/null || echo x86_64)
if [ ! -f "$tree/inputs" ] || [ "$(cat "$tree/tarball-id" 2>/dev/null)" != "$tarball_id" ] ||
	[ "$tree_arch" != "$arch" ]; then
	if [ -f "$tree/inputs" ] && [ "$tree_arch" != "$arch" ]; then
		echo "kernel: building $variant from scratch in build/tree/$slot (its tree was built for $tree_arch, not $arch)"
	else
		echo "kernel: building $variant from scratch in build/tree/$slot (no earlier build of this tarball there)"
	fi
	scratch=1
	rm -rf "$tree"
	mkdir -p "$tree"
	run_progress "copying the pristine tree" "$tree/copy.log" cp -a "$pristine" "$src"
	echo "$tarball_id" >"$tree/tarball-id"
	echo "$arch" >"$tree/arch"
else
	why=$(awk 'NR == FNR { old[$1 " " $2] = $0; next }
		{ k = $1 " " $2; seen[k] = 1 }
		!(k in old) { print k " added" }
		(k in old) && old[k] != $0 { print k " changed" }
		END { for (k in old) if (!(k in seen)) print k " removed" }' \
		"$tree/inputs" "$tree.inputs.new" | paste -sd, | sed 's/,/, /g')
	[ -f "$tree/built" ] || why="${why:+$why; }the last build in this slot did not finish"
	echo "kernel: rebuilding $variant in build/tree/$slot, changed since its last build there: ${why:-nothing (the result was removed)}"
fi
rm -f "$tree/built"
mv "$tree.inputs.new" "$tree/inputs"

# What the generated config depends on besides the Kconfig files: the
# tarball, the fragments and the toolchain Kconfig probes.
cfg_inputs() {
	echo "tarball $tarball_id"
	for f in "${configs[@]}"; do
		echo "config $(basename "$f") $(digest <"$f")"
	done
	"$cc" --version | head -1
	"$ld" --version | head -1
}
mkdir -p "$cfg" "$obj"
# Forgotten until the config is generated again: a build stopped in
# between must not leave a config that passes for the new source's.
cfg_last=$(cat "$cfg/inputs" 2>/dev/null || true)
rm -f "$cfg/inputs"

changed=$("$root/kernel/reconcile.py" --pristine "$pristine" --tree "$src" \
	${series_files[@]+"${series_files[@]}"})
# One line per changed file, each prefixed.
# shellcheck disable=SC2001
[ -z "$changed" ] || sed 's/^/kernel: source /' <<<"$changed"

# The config, generated apart and copied into obj/ only when it differs,
# so an unchanged config leaves every object's config stamps alone.
# Generating it runs Kconfig three times, each probing the compiler
# dozens of times (minutes on a loaded 2-core machine), so the last one
# is kept when neither its inputs nor any Kconfig file or configs/
# fragment of the tree (tinyconfig's) changed.
if [ -f "$cfg/.config" ] && [ "$cfg_last" = "$(cfg_inputs)" ] &&
	! grep -qE '^changed: ((.*/)?Kconfig[^/]*|.*/configs/[^/]*|scripts/kconfig/.*)( |$)' <<<"$changed"; then
	echo "kernel: config inputs and Kconfig files unchanged: the config of the last build is kept"
else
	mkcfg=(make -s -C "$src" O="$cfg" ARCH="$arch" ${toolchain[@]+"${toolchain[@]}"})
	"${mkcfg[@]}" tinyconfig >/dev/null
	"$src/scripts/kconfig/merge_config.sh" -m -O "$cfg" "$cfg/.config" "${configs[@]}" >"$cfg/merge.log"
	"${mkcfg[@]}" olddefconfig
fi
cfg_inputs >"$cfg/inputs"
# merge_config.sh only warns when Kconfig drops a requested option or
# another option selects one the fragment turns off.
for frag in "${configs[@]}"; do
	while IFS= read -r line; do
		if ! grep -qxF "$line" "$cfg/.config"; then
			opt=${line%%=*}
			echo "kernel/build.sh: $(basename "$frag") asks for $line but the config has: $(grep -E "^(# )?${opt}[= ]" "$cfg/.config" || echo "nothing") (a dependency is missing)" >&2
			exit 1
		fi
	done < <(grep -E '^CONFIG_[A-Z0-9_]+=' "$frag")
	# Option names, one word each.
	# shellcheck disable=SC2013
	for opt in $(sed -n 's/^# \(CONFIG_[A-Z0-9_]*\) is not set$/\1/p' "$frag"); do
		if grep -q "^$opt=" "$cfg/.config"; then
			echo "kernel/build.sh: $(basename "$frag") turns $opt off but another option selects it (make -C build/tree/$slot/src O=../cfg${toolchain[*]+ ARCH=$arch ${toolchain[*]}} menuconfig, then search it with /)" >&2
			exit 1
		fi
	done
done
cmp -s "$cfg/.config" "$obj/.config" || cp "$cfg/.config" "$obj/.config"

# Fixed build stamps: the image depends on the inputs alone (ccache hits,
# and an incremental build equal to one from scratch).
export KBUILD_BUILD_TIMESTAMP="@0" KBUILD_BUILD_USER=hugetlb KBUILD_BUILD_HOST=build
export KBUILD_BUILD_VERSION=1
# Relative to build/, a slot's paths read the same in every slot (obj/ sees
# ../src), so ccache also hits across slots.
export CCACHE_BASEDIR="$root/build" CCACHE_NOHASHDIR=1
# ccache hands the compiler those relative paths, so __FILE__ reads
# "../src/mm/x.c", which the kernel's own -fmacro-prefix-map (for the
# absolute source path) misses: without ccache it reads "mm/x.c", and the
# image differs.  The second map makes both "mm/x.c".  ccache leaves
# prefix maps out of its hash, so objects cached before this map existed
# would still hit: the namespace keeps them apart.
export CCACHE_NAMESPACE=kbuild-relative-file-map
mk=(make -C "$src" O="$obj" ARCH="$arch" ${toolchain[@]+"${toolchain[@]}"} CC="ccache $cc"
	KCPPFLAGS="-fmacro-prefix-map=../src/=")
# A build from scratch is shown against the objects the last one in this
# slot compiled, else against what one of the variant compiled in CI's
# clean clone (2026-12-06: bzImage 907, bzImage-debug 952, Image-arm64
# 630; any other variant, its architecture's).
if [ -n "${scratch:-}" ]; then
	PROGRESS_TOTAL=$(cat "$tree.objects" 2>/dev/null || true)
	if [ -z "$PROGRESS_TOTAL" ]; then
		case $variant in
		bzImage-debug) PROGRESS_TOTAL=952 ;;
		*) PROGRESS_TOTAL=$([ "$arch" = arm64 ] && echo 630 || echo 907) ;;
		esac
	fi
fi
if ! run_progress "building $image" "$tree/build.log" "${mk[@]}" -j"$(nproc)" "$image"; then
	tail -n 40 "$tree/build.log" >&2
	echo "kernel/build.sh: the kernel build failed (full log: build/tree/$slot/build.log)" >&2
	exit 1
fi
compiled=$(grep -E '^  (CC|AS) ' "$tree/build.log" | awk '{print $2}' || true)
n=$(printf '%s' "$compiled" | grep -c . || true)
# A small rebuild names its objects (an edit plus relinking: the boot
# image's 3, and 3 kallsyms passes in the debug kernel); make
# test-kernel-build reads that list.
echo "kernel: compiled $n objects$([ "$n" -gt 0 ] && [ "$n" -le 16 ] && echo ": $(echo $compiled)")"
[ -z "${scratch:-}" ] || echo "$n" >"$tree.objects"
"${mk[@]}" -s headers_install >/dev/null

tmp="${out:-$result}.tmp"
rm -rf "$tmp"
mkdir -p "$tmp/selftests"
st="$src/tools/testing/selftests"
for t in $selftests; do
	if [ ! -f "$st/mm/$t.c" ]; then
		echo "kernel/build.sh: $t.c is missing from the tree: is the series complete?" >&2
		exit 1
	fi
	ccache "${selftest_cc[@]}" -static -O2 -Wall -isystem "$obj/usr/include" -I "$st" -I "$st/mm" \
		-o "$tmp/selftests/$t" "$st/mm/$t.c" "$st/mm/vm_util.c" -lrt -lpthread -lm
done
# hugetlb_dev again as a 32-bit program (gcc-multilib): each of its mmap()
# calls takes the kernel's compat path (CONFIG_IA32_EMULATION).  The arm64
# guest has no 32-bit userland (CONFIG_COMPAT is off).
if [ "$arch" = x86_64 ]; then
	ccache gcc -m32 -static -O2 -Wall -isystem "$obj/usr/include" -I "$st" -I "$st/mm" \
		-o "$tmp/selftests/hugetlb_dev_32" "$st/mm/hugetlb_dev.c" "$st/mm/vm_util.c" -lrt -lpthread -lm
fi
cp "$obj/$image_path" "$tmp/$image"
cp "$obj/.config" "$tmp/config"
echo "$series_id" >"$tmp/$image.series"
echo $(($(date +%s) - start)) >"$tmp/build-seconds"
touch "$tree/built"
if [ -n "$out" ]; then
	cp "$obj/vmlinux" "$tmp/vmlinux"
	rm -rf "$out"
	mv "$tmp" "$out"
	echo "kernel: built $variant in $(cat "$out/build-seconds")s into $out"
	exit 0
fi
rm -rf "$result"
mv "$tmp" "$result"
ln -sfn "$key/$image" "$link"
ln -sfn "$key/$image.series" "$link.series"
echo "kernel: built $variant in $(cat "$result/build-seconds")s (series $series_id)"
