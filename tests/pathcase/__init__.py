# SPDX-License-Identifier: GPL-2.0
"""What each way to huge pages by path needs (python3 -m tests.pathcase.run)."""
