#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make test-fresh: does `make deps` install everything the tests run?
#
#   tests/fresh.sh [REV]      (default HEAD; make test-fresh REV=...)
#
# A machine that once ran some other target can hide a missing install
# step; a new one cannot.  This builds a new Debian 12 root with
# debootstrap (minbase, from the Debian mirror apt is configured with
# here), clones the committed REV into it, installs make (the one thing
# the README assumes), and there runs `make deps` and every suite that needs
# no kernel build: the host tests (run-qemu.sh's checks among them), the
# bench, plots and compare unit suites.  The root shares this machine's
# kernel: /proc, /sys, /dev and /run/lock are bound into it, so the bench
# suite's pools are the host's, taken under the host-state lock like any run.
# TIMING_LATER=1 (make test-fresh TIMING_LATER=1, as .ci/run) is passed to
# the suites: the bench tests that judge wall time skip, left to make
# test-timing (bench/bench.mk).
# The last line adds up the suites: "N passed, N failed, N skipped".
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
rev=${1:-HEAD}
work=$top/build/fresh
root=$work/root
suites=(test-host test-bench test-plots test-compare)

die() {
	echo "test-fresh: $*" >&2
	exit 2
}
[ "$(id -u)" = 0 ] || die "debootstrap, chroot and mounts need root: run 'sudo make test-fresh'"
command -v debootstrap >/dev/null || die "debootstrap not found: run 'make deps'"
commit=$(git rev-parse --verify -q "$rev^{commit}") ||
	die "'$rev' is not a revision of this repository: REV=<commit, branch or tag>"
[ -z "$(git status --porcelain --untracked-files=no)" ] ||
	echo "test-fresh: uncommitted changes are not tested: the root gets $rev ($commit) only"

# The mirror and suite of bookworm's main component, as apt here has them.
# shellcheck disable=SC2016 # apt's own $(FIELD) syntax, not the shell's
mirror=$(apt-get indextargets --format '$(SITE) $(RELEASE) $(COMPONENT)' |
	awk '$2 == "bookworm" && $3 == "main" { print $1; exit }')
[ -n "$mirror" ] ||
	die "apt has no Debian 12 (bookworm) main source: add one to /etc/apt/sources.list.d and run apt-get update"

unmount() {
	local m
	for m in run/lock dev sys proc; do
		mountpoint -q "$root/$m" && umount -R "$root/$m"
	done
	return 0
}
trap unmount EXIT
# A signal ends the script through exit, so the EXIT trap unmounts: killed
# without it, the binds of /proc, /sys and /dev stay under build/fresh.
trap 'exit 130' INT
trap 'exit 143' TERM
unmount
rm -rf "$work"
mkdir -p "$work"
echo "test-fresh: debootstrap bookworm from $mirror"
start=$SECONDS
debootstrap --variant=minbase bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1 ||
	die "debootstrap failed (see $work/debootstrap.log)"
echo "test-fresh: the root took $((SECONDS - start)) s"
# apt's sources and settings as here (a dated snapshot mirror needs its
# Check-Valid-Until), and the resolver.
rm -f "$root/etc/apt/sources.list"
cp -a /etc/apt/sources.list.d /etc/apt/apt.conf.d "$root/etc/apt/"
[ ! -e /etc/apt/sources.list ] || cp /etc/apt/sources.list "$root/etc/apt/"
rm -f "$root"/etc/apt/sources.list.d/*.disabled*
cp -L /etc/resolv.conf "$root/etc/resolv.conf"
git clone -q --no-local "$top" "$root/src"
git -C "$root/src" checkout -q "$commit"

# --make-rslave: unmounting the root's copies must not unmount the host's.
# /run/lock holds the host-state lock (bench/hostlock.py): the root's
# suites change the host's pools and must take turns with the host's runs.
mkdir -p "$root/run/lock"
for m in proc sys dev run/lock; do
	mount --rbind "/$m" "$root/$m"
	mount --make-rslave "$root/$m"
done

# Inside: make, then the README's make deps, then each suite with its log.
# A suite that prints no summary line counts as one failure (harness.py).
inside=$(cat <<EOF
set -u
export DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8
cd /src
mkdir -p build
apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends make >/dev/null ||
	{ echo "test-fresh: could not install make"; exit 1; }
start=\$(date +%s)
if ! make deps >build/fresh-deps.log 2>&1; then
	cat build/fresh-deps.log
	echo "make deps: 0 passed, 1 failed"
	exit 1
fi
echo "test-fresh: make deps took \$((\$(date +%s) - start)) s"
status=0
for t in ${suites[*]}; do
	start=\$(date +%s)
	make --no-print-directory \$t ${TIMING_LATER:+TIMING_LATER=$TIMING_LATER} >build/fresh-\$t.log 2>&1 || status=1
	echo "test-fresh: \$t: \$(grep -E '[0-9]+ passed, [0-9]+ failed' build/fresh-\$t.log | tail -n 1) (\$((\$(date +%s) - start)) s)"
done
exit \$status
EOF
)
# A clean environment: nothing of this machine's PATH or Python.
status=0
env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb chroot "$root" /bin/bash -c "$inside" ||
	status=1
cp "$root"/src/build/fresh-*.log "$work/" 2>/dev/null || true
logs=()
for t in "${suites[@]}"; do
	logs+=("$work/fresh-$t.log")
done
[ -e "$work/fresh-deps.log" ] || status=1
python3 -m tests.harness total "${logs[@]}" || status=1
exit $status
