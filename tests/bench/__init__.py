# SPDX-License-Identifier: GPL-2.0
"""The bench tests (make test-bench; python3 -m tests.bench.run_tests)."""
