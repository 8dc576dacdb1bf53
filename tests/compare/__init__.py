# SPDX-License-Identifier: GPL-2.0
"""Compare tests (make test-compare)."""
