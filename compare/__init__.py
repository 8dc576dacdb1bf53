# SPDX-License-Identifier: GPL-2.0
"""The revision comparison: compare.py (python3 -m compare.compare)."""
