#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Runs tests/bench/test_*.py; the last line is "N passed, N failed"."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import harness  # noqa: E402

if __name__ == "__main__":
    sys.exit(harness.run_unittest(harness.discover(HERE)))
