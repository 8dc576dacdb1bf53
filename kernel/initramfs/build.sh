#!/bin/bash
# Build the guest's initramfs: an uncompressed cpio archive (nothing to
# decompress under TCG) holding busybox, our /init, the kselftests built
# from the patched tree, the project's static benchmark binaries and
# Debian's perf and xz with the shared libraries they need (xz is the real
# program bench/realprog runs, under the hugepreload.so given here, which
# goes to /usr/local/lib).
#
#   kernel/initramfs/build.sh OUT SELFTEST_DIR [BENCH_BIN...]
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=$1
selftests=$2
shift 2

busybox=/bin/busybox
perf=/usr/bin/perf
xz=/usr/bin/xz
for f in "$busybox" "$perf" "$xz"; do
	if [ ! -x "$f" ]; then
		echo "initramfs: $f is missing: run 'make deps'" >&2
		exit 1
	fi
done
if ldd "$busybox" >/dev/null 2>&1; then
	echo "initramfs: $busybox is not static: install Debian's busybox-static ('make deps')" >&2
	exit 1
fi

root=$(mktemp -d "${TMPDIR:-/tmp}/initramfs.XXXXXX")
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,sbin,etc,proc,sys,dev,tmp,root,usr/bin,usr/local/bin,usr/local/lib,selftests,job,add}
cp "$busybox" "$root/bin/busybox"
install -m 0755 "$here/init" "$root/init"
install -m 0755 "$here/run-selftests" "$root/bin/run-selftests"
cp "$selftests"/* "$root/selftests/"
for b in "$@"; do
	case "$b" in
	*.so) cp "$b" "$root/usr/local/lib/" ;;
	*) cp "$b" "$root/usr/local/bin/" ;;
	esac
done

# perf and xz are dynamically linked: copy them with every library ldd
# names, at the same paths, plus the loader.
cp "$perf" "$root/usr/bin/perf"
cp "$xz" "$root/usr/bin/xz"
ldd "$perf" "$xz" | grep -v ':$' | grep -oE '/[^ ]+' | sort -u | while read -r lib; do
	mkdir -p "$root$(dirname "$lib")"
	cp -L "$lib" "$root$lib"
done

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
