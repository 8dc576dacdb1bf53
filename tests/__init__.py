# SPDX-License-Identifier: GPL-2.0
"""The test suites, run from the repository root: python3 -m tests.run
(make test), python3 -m tests.harness run tests/<suite> (a unit suite),
python3 -m unittest tests.<suite>.<module> (one module)."""
