#!/bin/bash
# scripts/checkpatch.pl --strict on every patch of the series, run from a
# tree the series applies to (make kernel extracts one, for either ARCH).
# Clean means no error, warning or check at all.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
# The series id as kernel/build.sh computes it (for either architecture).
series_id=$(find "$root/kernel/patches" -maxdepth 1 -name '*.patch' ! -name '0000-*' | sort |
	xargs cat | sha256sum | cut -c1-12)
tree="$root/build/src/$series_id"
if [ ! -x "$tree/scripts/checkpatch.pl" ]; then
	echo "checkpatch: no extracted tree for the current series: run 'make kernel' first" >&2
	exit 1
fi
bad=0
for p in "$root"/kernel/patches/0*.patch; do
	case "$(basename "$p")" in 0000-*) continue ;; esac
	# Debian's python3 first: scripts/spdxcheck.py needs its python3-ply
	# and python3-git, and a Python without them fails only on stderr.
	if out=$(cd "$tree" && PATH=/usr/bin:$PATH scripts/checkpatch.pl --strict --showfile "$p" 2>&1) &&
		! grep -q Traceback <<<"$out"; then
		echo "checkpatch: clean: $(basename "$p")"
	else
		echo "$out"
		echo "checkpatch: NOT clean: $(basename "$p")"
		bad=1
	fi
done
exit $bad
