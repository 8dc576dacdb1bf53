# SPDX-License-Identifier: GPL-2.0
"""Lets a test module of this folder run alone from the repository root,
`python3 -m unittest tests.bench.test_fault`: its imports (common,
benchbin) are this folder's modules, found on sys.path as when
run_tests.py discovers them."""
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
for _d in (os.path.dirname(_HERE), _HERE):
    if _d not in sys.path:
        sys.path.insert(0, _d)
