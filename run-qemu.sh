#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Boot the project's kernel in QEMU with huge pages preallocated and run a job.
# --arch arm64 boots the arm64 kernel instead (qemu-system-aarch64 -M virt
# -cpu max, under TCG), with its four huge page sizes.
#
#   ./run-qemu.sh [options] [-- CMD [ARGS...]]
#
# Without "-- CMD" the guest runs its default job, the kselftests in
# /selftests (kernel/initramfs/run-selftests).  With it, CMD runs instead as
# root with /add first on PATH; its output streams to our stdout and we exit
# with its status.  See `./run-qemu.sh --help` and docs/interfaces.md.
#
# Exit statuses beyond CMD's own, and the console pattern that counts as a
# kernel splat, come from bench/contract.py (QEMU_EXIT_*, SPLAT_RE): bad
# usage, huge pages not preallocated, guest RAM not on the host pages asked
# for, guest timed out, kernel splat, no status reported, interrupted.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
if ! contract=$(python3 "$here/bench/contract.py" shell); then
	echo "run-qemu.sh: python3 $here/bench/contract.py shell failed" >&2
	exit 2
fi
eval "$contract"

usage() {
	cat <<'EOF'
usage: run-qemu.sh [options] [--shell | -- CMD [ARGS...]]

  --arch x86_64|arm64 the guest's architecture (default x86_64); arm64 is
                      qemu-system-aarch64 -M virt -cpu max, TCG only
  --hugepages N       2 MB huge pages to preallocate (default 64)
  --hugepages-1g N    1 GB huge pages to preallocate (default 0)
  --hugepages-64k N   arm64 only: 64 KB huge pages to preallocate (default 64)
  --hugepages-32m N   arm64 only: 32 MB huge pages to preallocate (default 4)
  --mem SIZE          guest memory, QEMU syntax (default 2G, or 4+N G with
                      --hugepages-1g N; on arm64 2+N G)
  --smp N             guest CPUs (default 1)
  --numa N            arm64 only: N NUMA nodes (2 or more), the memory split
                      evenly and CPU i on node i mod N (needs --smp N or more)
  --kernel PATH       kernel to boot (default build/kernel/bzImage; on arm64
                      build/kernel/Image-arm64)
  --initrd PATH       base initramfs (default build/initramfs.cpio; on arm64
                      build/initramfs-arm64.cpio)
  --accel kvm|tcg     default: kvm only if /proc/cpuinfo shows vmx or svm and
                      /dev/kvm opens read-write, else tcg; arm64: tcg only
  --icount            -icount shift=0: guest time counts instructions (tcg only)
  --host-pages hugetlb|thp|none
                      kvm only: what backs guest RAM on the host (default
                      hugetlb: 2 MB pages from the host's pool, preallocated,
                      checked in QEMU's smaps while the guest runs)
  --add FILE          copy FILE into the guest's /add (repeatable; keeps modes)
  --timeout SECONDS   kill a guest that runs longer (default 900)
  --console-log PATH  keep the kernel console here (default build/console.log)
  --shell             interactive shell on the guest console
  --dry-run           print the QEMU command line and the guest job, run nothing
  --print-config      print, as JSON, the guest's memory, its huge page pools
                      and what backs its RAM on the host for these options,
                      run nothing (bench/run.py reads it)
  -- CMD [ARGS...]    run CMD in the guest instead of the default job
EOF
}

die_usage() {
	echo "run-qemu.sh: $*" >&2
	echo "run-qemu.sh: try --help" >&2
	exit "$QEMU_EXIT_USAGE"
}

# A value that is missing, or is the next option, is refused.
need_arg() {
	if [ "$#" -lt 2 ] || [[ "$2" == --* ]]; then
		die_usage "$1 needs a value"
	fi
}

need_uint() {
	[[ "$2" =~ ^[0-9]+$ ]] || die_usage "$1 wants a whole number, got '$2'"
}

arch=x86_64
# page kB -> the pool's pages; the sizes, their options and defaults are
# bench/contract.py's POOL_* table
declare -A pages=()
mem=
smp=1
numa=0
kernel=
initrd=
accel=
icount=0
host_pages=
timeout_s=900
console_log="$here/build/console.log"
shell=0
dry_run=0
print_config=0
adds=()
cmd=()
# RAM the guest needs besides the pools: kernel, the unpacked initramfs
# (~45 MB, held twice while unpacking) and the job.
guest_reserve_mb=384

# The index in the POOL_* table of a pool option, or failure.
pool_index() {
	local i
	for i in "${!POOL_OPT[@]}"; do
		[ "${POOL_OPT[$i]}" = "$1" ] && { echo "$i"; return 0; }
	done
	return 1
}

while [ "$#" -gt 0 ]; do
	case "$1" in
	--hugepages | --hugepages-*)
		i=$(pool_index "$1") || die_usage "unknown option '$1'"
		need_arg "$@"; need_uint "$1" "$2"; pages[${POOL_KB[$i]}]=$2; shift 2 ;;
	--arch) need_arg "$@"; arch=$2; shift 2 ;;
	--mem) need_arg "$@"; mem=$2; shift 2 ;;
	--smp) need_arg "$@"; need_uint "$1" "$2"; smp=$2; shift 2 ;;
	--numa) need_arg "$@"; need_uint "$1" "$2"; numa=$2; shift 2 ;;
	--kernel) need_arg "$@"; kernel=$2; shift 2 ;;
	--initrd) need_arg "$@"; initrd=$2; shift 2 ;;
	--accel) need_arg "$@"; accel=$2; shift 2 ;;
	--icount) icount=1; shift ;;
	--host-pages) need_arg "$@"; host_pages=$2; shift 2 ;;
	--add) need_arg "$@"; adds+=("$2"); shift 2 ;;
	--timeout) need_arg "$@"; need_uint "$1" "$2"; timeout_s=$2; shift 2 ;;
	--console-log) need_arg "$@"; console_log=$2; shift 2 ;;
	--shell) shell=1; shift ;;
	--dry-run) dry_run=1; shift ;;
	--print-config) print_config=1; shift ;;
	-h|--help) usage; exit 0 ;;
	--) shift; cmd=("$@"); break ;;
	*) die_usage "unknown option '$1'" ;;
	esac
done

# What differs between the guests: QEMU, the machine, the console (the
# job's output has its own channel, see below) and, from the contract, what
# to boot and the huge page sizes there are.
case "$arch" in
x86_64) qemu_bin=qemu-system-x86_64 qemu_pkg=qemu-system-x86 ;;
arm64) qemu_bin=qemu-system-aarch64 qemu_pkg=qemu-system-arm ;;
*) die_usage "--arch wants x86_64 or arm64, got '$arch'" ;;
esac
kernel_var=GUEST_KERNEL_$arch initrd_var=GUEST_INITRD_$arch
kernel=${kernel:-$here/${!kernel_var}}
initrd=${initrd:-$here/${!initrd_var}}

# "2 MB" for 2048 (kB)
human_kb() {
	if [ "$1" -ge 1048576 ]; then echo "$(($1 / 1048576)) GB"
	elif [ "$1" -ge 1024 ]; then echo "$(($1 / 1024)) MB"
	else echo "$1 KB"; fi
}

# The pools of this architecture, smallest first (pool_kbs), each with its
# pages (the option's, else its default); a size it lacks is bad usage.
pool_kbs=() has=
for i in "${!POOL_KB[@]}"; do
	[[ " ${POOL_ARCHES[$i]} " == *" $arch "* ]] || continue
	pool_kbs+=("${POOL_KB[$i]}")
	has+="${has:+, }$(human_kb "${POOL_KB[$i]}")"
done
for i in "${!POOL_KB[@]}"; do
	kb=${POOL_KB[$i]}
	if [[ " ${POOL_ARCHES[$i]} " == *" $arch "* ]]; then
		pages[$kb]=${pages[$kb]:-${POOL_DEFAULT[$i]}}
	elif [ -n "${pages[$kb]:-}" ]; then
		die_usage "${POOL_OPT[$i]}: $arch has no such huge page size (only $has); it is for --arch ${POOL_ARCHES[$i]}"
	fi
done
hugepages_1g=${pages[1048576]:-0}
make_arch=
[ "$arch" = x86_64 ] || make_arch=" ARCH=$arch"

[ "$smp" -ge 1 ] || die_usage "--smp must be at least 1"
if [ "$numa" -gt 0 ]; then
	# x86_64 finds its nodes in ACPI's SRAT, which the kernel reads only
	# with PCI (X86_64_ACPI_NUMA), and base.config leaves PCI out.
	[ "$arch" = arm64 ] || die_usage "--numa: the x86_64 guest kernel has no NUMA (base.config leaves out the PCI that ACPI NUMA needs): use --arch arm64"
	[ "$numa" -ge 2 ] || die_usage "--numa wants 2 or more nodes, got $numa"
	[ "$smp" -ge "$numa" ] || die_usage "--numa $numa needs --smp $numa or more: every node gets a CPU"
fi
[ "$shell" = 1 ] && [ "${#cmd[@]}" -gt 0 ] && die_usage "--shell and -- CMD exclude each other"
# --print-config says what a boot would use, whether or not it is built
if [ "$print_config" = 0 ]; then
	[ -f "$kernel" ] || die_usage "no kernel at $kernel: run 'make kernel$make_arch' or pass --kernel PATH"
	[ -f "$initrd" ] || die_usage "no initramfs at $initrd: run 'make initramfs$make_arch' or pass --initrd PATH"
fi
for f in "${adds[@]}"; do
	[ -f "$f" ] || die_usage "--add $f: no such file"
done
# 1 GB pages are carved out at boot from 1 GB-aligned free RAM, which
# QEMU's pc layout only offers above 4 GB, and the top of that holds the
# kernel's early allocations: 4 GB plus one per page always fits.  The
# arm64 virt machine's RAM starts at 1 GB, but its first gigabyte holds
# the kernel and the initramfs: 2 GB plus one per page.  TCG backs guest
# RAM lazily, so the unused gigabytes cost the host nothing.
if [ -z "$mem" ]; then
	if [ "$hugepages_1g" -gt 0 ] && [ "$arch" = arm64 ]; then
		mem="$((2 + hugepages_1g))G"
	elif [ "$hugepages_1g" -gt 0 ]; then
		mem="$((4 + hugepages_1g))G"
	else
		mem=2G
	fi
fi
# Quote one word for the guest's busybox sh.
shquote() {
	printf "'%s'" "${1//\'/\'\\\'\'}"
}

# The guest's /job/cmd: the words of -- CMD, each quoted, one line.
job_cmd() {
	local w
	for w in "${cmd[@]}"; do
		printf '%s ' "$(shquote "$w")"
	done
	echo
}

# A JSON string of $1.
json_str() {
	local s=${1//\\/\\\\}
	s=${s//\"/\\\"} s=${s//$'\n'/\\n} s=${s//$'\t'/\\t} s=${s//$'\r'/\\r}
	printf '"%s"' "$s"
}

# Under TCG on a loaded host the guest's TSC can be miscalibrated; a boot
# that shows it is refused and booted again, this many times in all (see
# the boot loop below).
clock_boots=3

# --print-config: what a boot with these options would use, as JSON (no
# kernel or initramfs needed): bench/run.py sizes the host pool from it,
# lava/job.py writes a lab's boot from it.  guest_ram is what backs guest
# RAM on the host: a hugetlb memfd of the host's 2 MB pages (--host-pages
# hugetlb), THP-advised anonymous memory, or QEMU's plain default.  job is
# the guest's /job/cmd (null without -- CMD); numa_nodes 0 is no NUMA.
print_config() {
	local pools= sep= kb ram job=null
	for kb in "${pool_kbs[@]}"; do
		pools+="$sep{\"page_kb\": $kb, \"count\": ${pages[$kb]}}" sep=", "
	done
	case "$host_pages" in
	hugetlb) ram="{\"backend\": \"memfd\", \"hugetlb\": true, \"page_kb\": 2048, \"size_mb\": $mem_mb, \"prealloc\": true}" ;;
	thp) ram="{\"backend\": \"ram\", \"hugetlb\": false, \"thp\": true, \"size_mb\": $mem_mb}" ;;
	*) ram="{\"backend\": \"plain\", \"hugetlb\": false, \"size_mb\": $mem_mb}" ;;
	esac
	[ "${#cmd[@]}" = 0 ] || job=$(json_str "$(job_cmd)")
	printf '{"arch": "%s", "accel": "%s", "icount": %s, "memory_mb": %d, "smp": %d, "numa_nodes": %d, "host_pages": %s, "pools": [%s], "guest_ram": %s, "kernel_args": %s, "kernel": %s, "initrd": %s, "clock_boots": %d, "timeout_s": %d, "job": %s}\n' \
		"$arch" "$accel" "$([ "$icount" = 1 ] && echo true || echo false)" \
		"$mem_mb" "$smp" "$numa" "$([ -n "$host_pages" ] && echo "\"$host_pages\"" || echo null)" \
		"$pools" "$ram" "$(json_str "$append")" "$(json_str "$kernel")" \
		"$(json_str "$initrd")" "$clock_boots" "$timeout_s" "$job"
}

# The kernel would take every page it can for the pools and leave the
# guest too little to start: refuse before booting.  QEMU reads a bare
# number as MiB.
# Checked before any arithmetic: bash would stop on 1.5G or G with a
# syntax error, and read 08G as octal.
[[ "$mem" =~ ^[1-9][0-9]*[gGmM]?$ ]] || die_usage "--mem wants a size like 2G or 512M, got '$mem'"
case "$mem" in
*[gG]) mem_mb=$((${mem%[gG]} * 1024)) ;;
*[mM]) mem_mb=${mem%[mM]} ;;
*) mem_mb=$mem ;;
esac
pool_mb=0 pools=
for kb in "${pool_kbs[@]}"; do
	pool_mb=$((pool_mb + pages[$kb] * kb / 1024))
	pools+="${pools:+ + }${pages[$kb]} x $(human_kb "$kb")"
done
if [ $((pool_mb + guest_reserve_mb)) -gt "$mem_mb" ]; then
	echo "run-qemu.sh: $pools huge pages need ${pool_mb} MB, but a ${mem_mb} MB guest has room for $((mem_mb - guest_reserve_mb)) MB of pools: raise --mem or ask for fewer pages" >&2
	exit "$QEMU_EXIT_NOPOOL"
fi
# /dev/kvm alone proves nothing: on a nested PVM host it opens and
# KVM_CREATE_VM works, yet guests hang.  Hardware virtualisation shows in
# the CPU flags.
# The tests point these at fakes.
cpuinfo=${RUN_QEMU_CPUINFO:-/proc/cpuinfo}
kvm_dev=${RUN_QEMU_KVM_DEV:-/dev/kvm}
hugepages_sys=${RUN_QEMU_HUGEPAGES_SYS:-/sys/kernel/mm/hugepages}
thp_sys=${RUN_QEMU_THP_SYS:-/sys/kernel/mm/transparent_hugepage}
kvm_usable() {
	# -e first: <> would create a missing file.
	grep -qwE 'vmx|svm' "$cpuinfo" && [ -e "$kvm_dev" ] &&
		(exec 3<>"$kvm_dev") 2>/dev/null
}

# This host is x86-64: KVM can run an x86_64 guest only.
if [ "$arch" = arm64 ] && [ "$accel" = kvm ]; then
	die_usage "--accel kvm: the arm64 guest runs under TCG only (KVM runs guests of the host's own architecture, x86-64)"
fi
case "$accel" in
"") if [ "$arch" = x86_64 ] && kvm_usable; then accel=kvm; else accel=tcg; fi ;;
kvm) kvm_usable || echo "run-qemu.sh: warning: --accel kvm without vmx/svm in /proc/cpuinfo: the guest may hang" >&2 ;;
tcg) ;;
*) die_usage "--accel wants kvm or tcg, got '$accel'" ;;
esac
if [ "$icount" = 1 ] && [ "$accel" = kvm ]; then
	die_usage "--icount needs TCG: add --accel tcg"
fi
case "$accel/$host_pages" in
kvm/) host_pages=hugetlb ;;
kvm/hugetlb | kvm/thp | kvm/none | tcg/) ;;
tcg/*) die_usage "--host-pages is for --accel kvm: TCG translates every guest access in software, so host pages do not shape its TLB" ;;
*) die_usage "--host-pages wants hugetlb, thp or none, got '$host_pages'" ;;
esac

# tsc=reliable: on a loaded TCG host the clocksource watchdog can declare
# the TSC unstable and drop to a slower, coarser clock mid-run.
# no_timer_check: the boot-time check that the IO-APIC timer ticks within a
# few loops fails on a loaded TCG host and panics ("IO-APIC + timer doesn't
# work!"); QEMU's timer is known to work.
# Naming 1G even with no pages registers the size, as on a distribution
# kernel, so /dev/hugetlb-1048576kB exists with an empty pool.  arm64
# registers its four sizes itself; each is named with its pool all the same.
if [ "$arch" = arm64 ]; then
	append="console=ttyAMA0 panic=-1 rdinit=/init"
else
	append="console=ttyS0 panic=-1 rdinit=/init tsc=reliable no_timer_check"
fi
for i in "${!POOL_KB[@]}"; do
	[ -n "${pages[${POOL_KB[$i]}]:-}" ] &&
		append+=" hugepagesz=${POOL_NAME[$i]} hugepages=${pages[${POOL_KB[$i]}]}"
done

if [ "$print_config" = 1 ]; then
	print_config
	exit 0
fi

# The series id is written beside the bzImage by kernel/build.sh.
series=unknown
if [ -f "$kernel.series" ]; then
	series=$(cat "$kernel.series")
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/run-qemu.XXXXXX")
qemu_pid=
# The console is written inside $work, so guests running side by side never
# share a file, and moved to --console-log when the guest is gone.
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
	if [ -n "$qemu_pid" ]; then
		kill "$qemu_pid" 2>/dev/null || true
		wait "$qemu_pid" 2>/dev/null || true
	fi
	if [ -f "$work/console.log" ]; then
		mkdir -p "$(dirname "$console_log")"
		tr -d '\r' <"$work/console.log" >"$console_log.$$" && mv "$console_log.$$" "$console_log"
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit "$QEMU_EXIT_INTERRUPTED"' INT TERM

# A second cpio archive appended to the base one carries /add and the job.
mkdir -p "$work/root/add" "$work/root/job"
for f in "${adds[@]}"; do
	cp -p "$f" "$work/root/add/"
done
{
	echo "export HUGETLB_ACCEL=$accel"
	echo "export HUGETLB_ICOUNT=$icount"
	echo "export HUGETLB_SERIES=$(shquote "$series")"
} >"$work/root/job/env"
if [ "$shell" = 1 ]; then
	: >"$work/root/job/shell"
elif [ "${#cmd[@]}" -gt 0 ]; then
	job_cmd >"$work/root/job/cmd"
fi
(cd "$work/root" && find . | cpio --quiet -o -H newc -R 0:0) >"$work/job.cpio"
cat "$initrd" "$work/job.cpio" >"$work/initrd.cpio"

qemu=("$qemu_bin" -nodefaults -no-reboot -display none
	-m "$mem" -smp "$smp" -kernel "$kernel" -initrd "$work/initrd.cpio"
	-append "$append")
if [ "$arch" = arm64 ]; then
	# GICv3 rather than virt's default GICv2: the interrupt controller of
	# current Arm servers, and not limited to 8 CPUs.
	qemu+=(-machine "virt,gic-version=3" -accel tcg -cpu max)
elif [ "$accel" = kvm ]; then
	# -cpu host passes the vPMU through, so the guest sees real counters.
	qemu+=(-accel kvm -cpu host)
else
	# "max" has pdpe1gb, so 1 GB pages work under TCG too.
	qemu+=(-accel tcg -cpu max)
fi
if [ "$icount" = 1 ]; then
	qemu+=(-icount shift=0)
fi
# Each node its own RAM backend (QEMU wants the nodes' memory to add up to
# -m), the last taking what the even split leaves over.
for ((n = 0; n < numa; n++)); do
	node_mb=$((mem_mb / numa))
	[ "$n" -lt $((numa - 1)) ] || node_mb=$((mem_mb - node_mb * (numa - 1)))
	cpus=
	for ((c = n; c < smp; c += numa)); do
		cpus+=",cpus=$c"
	done
	qemu+=(-object "memory-backend-ram,id=node$n,size=${node_mb}M"
		-numa "node,nodeid=$n,memdev=node$n$cpus")
done
# Under KVM the host's page size is the second half of every guest TLB
# entry (EPT): a guest 2 MB page is a 2 MB TLB entry only on a 2 MB host
# page.  hugetlb (the default) puts all guest RAM on the host's 2 MB pool,
# preallocated: it has the pages or QEMU does not start, and the smaps check
# below proves it, so the result is the same on every run.  thp asks for
# transparent huge pages (QEMU advises MADV_HUGEPAGE on guest RAM); how many
# it gets depends on fragmentation and khugepaged, so it is recorded, not
# promised.  none leaves QEMU's default.
case "$host_pages" in
hugetlb)
	qemu+=(-object "memory-backend-memfd,id=ram0,size=${mem_mb}M,hugetlb=on,hugetlbsize=2M,prealloc=on"
		-machine memory-backend=ram0) ;;
thp)
	qemu+=(-object "memory-backend-ram,id=ram0,size=${mem_mb}M"
		-machine memory-backend=ram0) ;;
esac

if [ "$dry_run" = 1 ]; then
	echo "accel: $accel"
	echo "host pages: ${host_pages:-n/a}"
	printf '%q ' "${qemu[@]}"
	echo
	for f in "$work/root/job/"*; do
		echo "$f:" | sed "s|^$work/root||"
		cat "$f"
	done
	exit 0
fi
# Only a boot needs QEMU: a dry run (make lava-job, the host tests) works
# on a machine without the guest's QEMU.
command -v "$qemu_bin" >/dev/null ||
	die_usage "$qemu_bin not found: run 'make deps$make_arch' (Debian package $qemu_pkg)"

host_pages_fail() {
	echo "run-qemu.sh: --host-pages $host_pages: $*" >&2
	exit "$QEMU_EXIT_HOSTPAGES"
}

# Before starting: the pool must hold all of guest RAM, or THP be on.
thp_enabled=$(cat "$thp_sys/enabled" 2>/dev/null || echo "not available")
thp_defrag=$(cat "$thp_sys/defrag" 2>/dev/null || echo "not available")
case "$host_pages" in
hugetlb)
	free=$(cat "$hugepages_sys/hugepages-2048kB/free_hugepages" 2>/dev/null || echo 0)
	[ "$free" -ge $((mem_mb / 2)) ] ||
		host_pages_fail "the guest's $mem_mb MB need $((mem_mb / 2)) free 2 MB pages on the host, it has $free: raise /proc/sys/vm/nr_hugepages (bench/run.py does) or pass --host-pages thp or none" ;;
thp)
	[[ "$thp_enabled" == *"[always]"* || "$thp_enabled" == *"[madvise]"* ]] ||
		host_pages_fail "transparent huge pages are '$thp_enabled' in $thp_sys/enabled: set always or madvise, or pass --host-pages hugetlb" ;;
esac

if [ "$shell" = 1 ]; then
	# ttyS0 is both console and shell; Ctrl-A X quits QEMU.
	qemu+=(-serial mon:stdio)
	"${qemu[@]}"
	exit 0
fi
# ttyS0 carries the kernel console to a file; ttyS1 carries the job's output
# to our stdout, so the two never interleave.  On arm64 the virt machine's
# one UART (ttyAMA0) is the console and a virtio console (hvc0) the job's.
qemu+=(-serial "file:$work/console.log" -chardev "stdio,id=job,signal=off")
if [ "$arch" = arm64 ]; then
	qemu+=(-device virtio-serial-device -device "virtconsole,chardev=job")
else
	qemu+=(-serial chardev:job)
fi

console_tail() {
	echo "---- last 40 console lines ($console_log) ----" >&2
	# a QEMU killed before it opened its console leaves none: the exit
	# status that follows must still be the one that says why
	[ -f "$work/console.log" ] || { echo "(no console output)" >&2; return 0; }
	tail -n 40 "$work/console.log" | tr -d '\r' >&2
}

# Guest RAM is the QEMU process's writable mapping of exactly the guest's
# size (not its largest: under TCG the translation buffer is bigger);
# prints its "SIZE_KB KERNEL_PAGE_KB ANON_HUGE_KB THP_ELIGIBLE" from smaps.
guest_ram_smaps() {
	awk -v want="$((mem_mb * 1024))" '
		function keep() { if (rw && sz == want && out == "") out = sz " " kp " " ah " " el }
		/^[0-9a-f]+-[0-9a-f]+ / { keep(); rw = ($2 ~ /^rw/); sz = 0; kp = 0; ah = 0; el = 0; next }
		/^Size:/ { sz = $2 } /^KernelPageSize:/ { kp = $2 }
		/^AnonHugePages:/ { ah = $2 } /^THPeligible:/ { el = $2 }
		END { keep(); print out }' "/proc/$1/smaps" 2>/dev/null || true
}

# Checks guest RAM against --host-pages once it is mapped (QEMU maps it
# before the guest boots), then keeps the most AnonHugePages seen.  QEMU
# advises it MADV_HUGEPAGE just after mapping it, so a mapping seen not
# THPeligible is judged only when it has stayed so for 2 s of this boot
# (ram_seen), or when QEMU ends (ram_unfit says why).
ram_checked=0
ram_anon_huge_max=0
ram_page_kb=0
ram_seen=
ram_unfit=
check_guest_ram() {
	local size kp ah el
	read -r size kp ah el <<<"$(guest_ram_smaps "$qemu_pid")"
	kp=${kp:-0} ah=${ah:-0} el=${el:-0}
	[ -n "$size" ] || {
		[ $((SECONDS - start)) -lt 30 ] ||
			host_pages_fail "no ${mem_mb} MB mapping in /proc/$qemu_pid/smaps after 30 s"
		return 0
	}
	[ "$ah" -gt "$ram_anon_huge_max" ] && ram_anon_huge_max=$ah
	[ "$ram_checked" = 1 ] && return 0
	ram_seen=${ram_seen:-$SECONDS}
	if [ "$host_pages" = thp ] && [ "$el" != 1 ]; then
		ram_unfit="guest RAM in /proc/$qemu_pid/smaps is not THPeligible (THP '$thp_enabled')"
		[ $((SECONDS - ram_seen)) -lt 2 ] || host_pages_fail "$ram_unfit"
		return 0
	fi
	ram_checked=1
	ram_page_kb=$kp
	[ "$host_pages" != hugetlb ] || [ "$kp" = 2048 ] ||
		host_pages_fail "guest RAM in /proc/$qemu_pid/smaps has KernelPageSize $kp kB, not 2048 kB"
}

# One line for bench/run.py's meta.json: what backs guest RAM on the host.
host_memory_meta() {
	printf '@meta host_memory {"host_pages": "%s", "kernel_page_kb": %d, "anon_huge_kb_max": %d, "guest_ram_mb": %d, "thp_enabled": "%s", "thp_defrag": "%s", "checked_in": "/proc/PID/smaps of QEMU"}\n' \
		"$host_pages" "$ram_page_kb" "$ram_anon_huge_max" "$mem_mb" "$thp_enabled" "$thp_defrag"
}

# One boot: QEMU runs until the guest reboots (or the timeout kills it).
boot() {
	local start=$SECONDS next_smaps=0
	ram_seen=
	"${qemu[@]}" </dev/null &
	qemu_pid=$!
	while kill -0 "$qemu_pid" 2>/dev/null; do
		if [ $((SECONDS - start)) -ge "$timeout_s" ]; then
			kill "$qemu_pid" 2>/dev/null || true
			wait "$qemu_pid" 2>/dev/null || true
			qemu_pid=
			echo "run-qemu.sh: guest still running after ${timeout_s}s: killed (raise --timeout if the job is just slow)" >&2
			console_tail
			exit "$QEMU_EXIT_TIMEOUT"
		fi
		if [ -n "$host_pages" ] && [ "$SECONDS" -ge "$next_smaps" ]; then
			check_guest_ram
			next_smaps=$((SECONDS + (ram_checked ? 2 : 0)))
		fi
		sleep 0.2
	done
	qemu_rc=0
	wait "$qemu_pid" || qemu_rc=$?
	qemu_pid=
}

# Under TCG on a loaded host the PIT can tick late while the guest kernel
# calibrates its TSC against it; the kernel then believes a wrong TSC
# frequency (seen: 30 MHz for 2.1 GHz) and every guest time is off by that
# factor.  The guest's /init refuses such a boot before running the job
# (@@hugetlb-guest-clock); it costs a boot, so boot again, a few times.
for attempt in $(seq "$clock_boots"); do
	boot
	clock=$(tr -d '\r' <"$work/console.log" | sed -n 's/^@@hugetlb-guest-clock //p')
	[ -z "$clock" ] && break
	echo "run-qemu.sh: boot $attempt of $clock_boots: guest TSC calibration failed ($clock)" >&2
	if [ "$attempt" = "$clock_boots" ]; then
		echo "run-qemu.sh: no boot calibrated the guest clock: the host is too loaded for TCG timing; run again on a quieter host" >&2
		exit "$QEMU_EXIT_CLOCK"
	fi
done
if [ -n "$host_pages" ]; then
	[ "$ram_checked" = 1 ] || host_pages_fail "${ram_unfit:-QEMU ended before its guest RAM could be checked (QEMU exit $qemu_rc)}"
	host_memory_meta
fi

console=$(tr -d '\r' <"$work/console.log")
if grep -qE "$SPLAT_RE" <<<"$console"; then
	echo "run-qemu.sh: the kernel reported a panic, oops, BUG or WARNING" >&2
	console_tail
	exit "$QEMU_EXIT_SPLAT"
fi
if grep -q '^@@hugetlb-guest-hugepages ' <<<"$console"; then
	grep '^@@hugetlb-guest-hugepages ' <<<"$console" | sed 's/^@@hugetlb-guest-hugepages /run-qemu.sh: /' >&2
	echo "run-qemu.sh: huge pages could not be preallocated, so nothing was run: give the guest more memory (--mem) or ask for fewer pages" >&2
	exit "$QEMU_EXIT_NOPOOL"
fi
status=$(sed -n 's/^@@hugetlb-guest-exit \([0-9]*\)$/\1/p' <<<"$console" | tail -n 1)
if [ -z "$status" ]; then
	echo "run-qemu.sh: the guest stopped without reporting an exit status (QEMU exit $qemu_rc)" >&2
	console_tail
	exit "$QEMU_EXIT_NOSTATUS"
fi
exit "$status"
