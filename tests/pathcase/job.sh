#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The guest half of tests/pathcase/run.py: each way to give an unmodified
# program that maps a path (QEMU's memory backend, fio's I/O buffers)
# huge pages, run as the unprivileged user 1000 through asuser, with what
# root had to do before it said on the "@@root" lines.
#
#   job.sh DEVICE [WAIT]
#     DEVICE: the node under test (/dev/hugetlb; run.py --device /dev/zero
#     shows the test fail without it); WAIT: seconds a program may take to
#     populate its mapping (default 90; a debug kernel needs more)
#
# One "@@row NAME STATE RSS_KB HUGETLB_KB ANONHUGE_KB SHMEMPMD_KB | ERR"
# line per run, from the smaps of the program's mapping of the buffer's
# exact size: STATE is "mapped" (all of it populated), "partial" (running,
# not all populated after $WAIT s) or "exited" (the program failed; ERR
# is the line of its output that says why, or its last line).  Huge pages are what smaps says, never the
# success of a call.
dev=${1:-/dev/hugetlb}
U=1000
WAIT=${2:-90}
QMB=42 # QEMU's backend: 21 x 2 MB, a size no other QEMU mapping has
FMB=6  # fio's buffer (bs): 3 x 2 MB
echo "@@uptime $(cut -d' ' -f1 /proc/uptime) s at the job's start,"
tar -xf /add/pathcase.tar -C /
export QEMU_MODULE_DIR=/usr/lib/x86_64-linux-gnu/qemu
cd /tmp || exit 1

# RSS HUGETLB ANONHUGE SHMEMPMD (kB) of the mappings of exactly SIZE_KB
# in the processes PID...
vma_kb() {
	want=$1
	shift
	for p in "$@"; do cat "/proc/$p/smaps" 2>/dev/null; done | awk -v want="$want" '
		/^[0-9a-f]+-[0-9a-f]+ / { on = 0; next }
		/^Size:/ { on = ($2 == want); next }
		on && /^Rss:/ { r += $2 }
		on && /^(Shared|Private)_Hugetlb:/ { h += $2 }
		on && /^AnonHugePages:/ { a += $2 }
		on && /^ShmemPmdMapped:/ { s += $2 }
		END { printf "%d %d %d %d\n", r, h, a, s }'
}

# try NAME SIZE_MB PROG CMD [ARG...]: CMD as user $U, until the mapping of
# SIZE_MB in the processes named PROG is populated or CMD exits; $DURING
# (a command) runs while it is mapped, its output on an "@@during NAME"
# line.  Then it is stopped.
try() {
	name=$1 want=$(($2 * 1024)) prog=$3
	shift 3
	t0=$(cut -d. -f1 /proc/uptime)
	asuser $U $U "$@" >"/tmp/$name.out" 2>&1 &
	pid=$!
	state=exited v="0 0 0 0" i=0
	while [ $i -lt "$WAIT" ] && kill -0 $pid 2>/dev/null; do
		# shellcheck disable=SC2046 # fio's job is a child of fio
		v=$(vma_kb $want $(pidof "$prog"))
		# shellcheck disable=SC2086 # the four numbers, as words
		set -- $v
		if [ $(($1 + $2)) -ge $want ]; then
			state=mapped
			break
		fi
		state=partial
		sleep 1
		i=$((i + 1))
	done
	kill -0 $pid 2>/dev/null || state=exited
	if [ "$state" = mapped ] && [ -n "$DURING" ]; then
		echo "@@during $name $(sh -c "$DURING" 2>&1 | tr '\n' ' ')"
	fi
	kill $pid 2>/dev/null
	wait $pid 2>/dev/null
	# The line that says why, if there is one (fio ends with a summary).
	err=$(grep -iE 'error|denied|invalid|no such|fail' "/tmp/$name.out" | tail -n 1)
	[ -n "$err" ] || err=$(grep -v '^$' "/tmp/$name.out" | tail -n 1)
	echo "@@row $name $state $v | $err"
	echo "@@took $name $(($(cut -d. -f1 /proc/uptime) - t0)) s"
	DURING=
}

# The two clients, with everything but the backing fixed.
qemu() {
	name=$1
	shift
	try "$name" $QMB qemu-system-x86_64 "$@" /usr/bin/qemu-system-x86_64 -machine none \
		-nodefaults -display none -S -object "$obj,id=m,size=${QMB}M,prealloc=on"
}
fio_() {
	name=$1 mem=$2
	shift 2
	try "$name" $FMB fio "$@" /usr/bin/fio --name=pathcase --ioengine=sync --filename=/dev/zero \
		--rw=read --bs=${FMB}M --size=${FMB}M --time_based --runtime=600 \
		--invalidate=0 --iomem="$mem"
}
root() {
	echo "@@root $*"
	"$@"
}

echo "@@as $(asuser $U $U id)"

# (a) The device: a path, nothing else.
obj="memory-backend-file,mem-path=$dev,share=off,align=2M"
qemu dev-qemu
fio_ dev-fio "mmaphuge:$dev"
echo "@@node-after-fio $(ls -l "$dev" 2>&1)"

# (b) hugetlbfs as systemd's dev-hugepages.mount mounts it (systemd 252,
# Debian 12): at /dev/hugepages with no options, so root-owned, 0755.
root mkdir -p /dev/hugepages
root mount -t hugetlbfs hugetlbfs /dev/hugepages
echo "@@mount $(stat -c '%U %a' /dev/hugepages)"
obj="memory-backend-file,mem-path=/dev/hugepages,share=on"
qemu hugetlbfs-qemu-user
fio_ hugetlbfs-fio-user mmaphuge:/dev/hugepages/fio.buf
root mkdir /dev/hugepages/u$U
root chown $U:$U /dev/hugepages/u$U
obj="memory-backend-file,mem-path=/dev/hugepages/u$U,share=on"
DURING="find /dev/hugepages/u$U -mindepth 1 | wc -l" qemu hugetlbfs-qemu-dir
fio_ hugetlbfs-fio-dir "mmaphuge:/dev/hugepages/u$U/fio.buf"
echo "@@files-left-by-fio $(find /dev/hugepages/u$U -mindepth 1 | wc -l)"

# (c) memfd_create(MFD_HUGETLB) as /proc/self/fd/3: only with a wrapper
# that made it.
obj="memory-backend-file,mem-path=/proc/self/fd/3,share=on"
qemu memfd-qemu-nowrap
qemu memfd-qemu hugememfd 3 $QMB
fio_ memfd-fio-nowrap mmaphuge:/proc/self/fd/3
fio_ memfd-fio mmaphuge:/proc/self/fd/3 hugememfd 3 $FMB

# (d) THP through /dev/zero.  Private: anonymous memory, THP as
# transparent_hugepage/enabled says (QEMU advises MADV_HUGEPAGE on guest
# RAM; fio cannot map /dev/zero privately: it ftruncate()s the file).
thp=/sys/kernel/mm/transparent_hugepage
echo "@@thp enabled: $(cat $thp/enabled); shmem_enabled: $(cat $thp/shmem_enabled)"
# align=2M as for the device: a THP needs a 2 MB aligned virtual range
# (and, for shmem, one congruent with the file offset).
obj="memory-backend-file,mem-path=/dev/zero,share=off,align=2M"
qemu thp-qemu-private
fio_ thp-fio-private mmap:/dev/zero
# with_knob FILE VALUE CMD...: CMD with a THP knob that root set to VALUE,
# and the knob as it was afterwards.
with_knob() {
	local file=$1 value=$2 was
	shift 2
	was=$(sed 's/.*\[\(.*\)\].*/\1/' "$file")
	root sh -c "echo $value >$file"
	"$@"
	root sh -c "echo $was >$file"
}
with_knob $thp/enabled never qemu thp-qemu-private-never
# Shared: shmem, THP only as shmem_enabled (root) says.
obj="memory-backend-file,mem-path=/dev/zero,share=on,align=2M"
qemu thp-qemu-shared
fio_ thp-fio-shared mmapshared:/dev/zero
shared_always() {
	qemu thp-qemu-shared-always
	fio_ thp-fio-shared-always mmapshared:/dev/zero
}
with_knob $thp/shmem_enabled always shared_always

# The programs' own huge page options, no path: QEMU's memfd backend
# (2.12+), fio's MAP_HUGETLB buffer.
obj="memory-backend-memfd,hugetlb=on,hugetlbsize=2M"
qemu own-qemu
fio_ own-fio mmaphuge
echo "@@pool free $(awk '/^HugePages_Free:/ { print $2 }' /proc/meminfo) of $(awk '/^HugePages_Total:/ { print $2 }' /proc/meminfo)"
echo "@@uptime $(cut -d' ' -f1 /proc/uptime) s at its end"
