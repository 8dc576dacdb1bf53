# SPDX-License-Identifier: GPL-2.0
"""The benchmarks' Python: contract.py (how Python reads the benchmarks), run.py
(python3 -m bench.run) and its code, benchrun/.  The repository root is
the import root of every package: bench, plots, compare, lava, tests."""
