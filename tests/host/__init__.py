# SPDX-License-Identifier: GPL-2.0
"""Host unit tests (make test-host)."""
