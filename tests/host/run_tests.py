#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""`make test-host`: the host unit tests (tests/host/test_*.py): run-qemu.sh's
options, the kernel build's options, the contract, make deps; no kernel,
no guest.  The last line is "N passed, N failed, N skipped"."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import harness  # noqa: E402

if __name__ == "__main__":
    sys.exit(harness.run_unittest(harness.discover(HERE)))
