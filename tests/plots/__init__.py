# SPDX-License-Identifier: GPL-2.0
"""Plot tests (make test-plots)."""
