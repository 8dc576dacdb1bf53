#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Show that every defect is caught: boot a kernel built from the series plus
# kernel/test-only/mutants/*.patch, which can break one property of
# /dev/hugetlb at a time (hugetlb_dev_break=N, see that patch), switch to
# each defect in turn, run the kselftest (hugetlb_dev, and hugetlb_dev_32
# for the compat path) and tests/stress/hmapping (the mapping once made,
# moved out of the kselftest), and print the checks that fail.
#
#   kernel/test-only/mutants.sh [--kernel BZIMAGE --selftest BINARY]
#                               [--initrd CPIO]
#
# Without --kernel it builds the mutant kernel with kernel/build.sh
# (variant bzImage-mutants).  The guest boots --initrd (default
# build/initramfs.cpio, from make initramfs) with 64 x 2 MB and one 1 GB
# huge page.  Output: one line per defect,
# "break N: <failed checks>", and the full TAP in build/mutants/out.txt.
# A defect that no check catches is reported and makes the script fail.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
kernel=
selftest=
initrd="$root/build/initramfs.cpio"
while [ "$#" -gt 0 ]; do
	case "$1" in
	--kernel | --selftest | --initrd)
		if [ "$#" -lt 2 ]; then
			echo "mutants.sh: $1 needs a value" >&2
			exit 2
		fi
		declare "${1#--}=$2"
		shift 2
		;;
	*)
		echo "mutants.sh: unknown option '$1' (see the comment at the top)" >&2
		exit 2
		;;
	esac
done

work="$root/build/mutants"
mkdir -p "$work"
if [ -z "$kernel" ]; then
	rm -rf "$work/patches"
	mkdir -p "$work/patches"
	cp "$root"/kernel/patches/0*.patch "$work/patches/"
	for p in "$root"/kernel/test-only/mutants/*.patch; do
		cp "$p" "$work/patches/9$(basename "$p")"
	done
	"$root/kernel/build.sh" --patches "$work/patches" --variant bzImage-mutants \
		--config "$root/kernel/config/base.config"
	kernel=$(readlink -f "$root/build/kernel/bzImage-mutants")
	selftest="$(dirname "$kernel")/selftests/hugetlb_dev"
fi
if [ -z "$selftest" ] || [ ! -x "$selftest" ]; then
	echo "mutants.sh: no hugetlb_dev binary: give --selftest with --kernel" >&2
	exit 2
fi
make --no-print-directory -s -C "$root/tests/stress" OUT="$work/stress" "$work/stress/hmapping"

# The defects are numbered 1..last in the patch's enum; 0 is the control.
last=$(grep -cP '^\+\tBREAK_[A-Z_]+( = 1)?,' "$root"/kernel/test-only/mutants/*.patch)
cat >"$work/mutants-job.sh" <<JOB
param=/sys/module/kernel/parameters/hugetlb_dev_break
for n in \$(seq 0 $last); do
	echo \$n >\$param
	echo "@@break \$n"
	/add/hugetlb_dev | grep -E '^(not ok|# Totals)'
	# The 32-bit build, from the initramfs: every mmap() by the compat path
	[ -x /selftests/hugetlb_dev_32 ] &&
		/selftests/hugetlb_dev_32 | grep -E '^not ok' | sed 's/^not ok [0-9]* /not ok 0 32-bit: /'
	/add/hmapping 2>&1 | grep -E '^not ok' | sed 's/^not ok - /not ok 0 hmapping: /'
done
echo 0 >\$param
JOB
"$root/run-qemu.sh" --kernel "$kernel" --initrd "$initrd" \
	--hugepages 64 --hugepages-1g 1 --add "$selftest" --add "$work/stress/hmapping" \
	--add "$work/mutants-job.sh" \
	--console-log "$work/console.log" -- sh /add/mutants-job.sh >"$work/out.txt" || true

awk '
/^@@break / { n = $2; seen[n] = 1; fails[n] = ""; next }
/^not ok / { sub(/^not ok [0-9]+ /, ""); fails[n] = fails[n] "\n    " $0 }
END {
	bad = 0
	for (i = 0; i in seen; i++) {
		if (i == 0) {
			print "break 0 (no defect): " (fails[0] == "" ? "all pass" : "FAILS:" fails[0])
			if (fails[0] != "") bad = 1
		} else if (fails[i] == "") {
			print "break " i ": NOT CAUGHT by any check"
			bad = 1
		} else {
			print "break " i ": caught by" fails[i]
		}
	}
	if (!(0 in seen)) { print "mutants.sh: the guest ran no case, see build/mutants/console.log"; bad = 1 }
	exit bad
}' "$work/out.txt"
