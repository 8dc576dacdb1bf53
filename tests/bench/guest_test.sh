#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The benchmark suite's guest test: the tiny profile through every backing
# in the QEMU guest (run-qemu.sh), then checks of the rows and of the page
# sizes the kernel gave.  Needs a built kernel and initramfs (make kernel
# initramfs).  Arguments: [--kernel PATH] [--initrd PATH].  Prints its own
# "N passed, N failed" line; exits 1 on any failure.
# As a module of the repository root, its imports' root; the arguments'
# paths stay relative to where this was started.
root=$(cd "$(dirname "$0")/../.." && pwd)
PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}" exec python3 -m tests.bench.guest_test "$@"
