# SPDX-License-Identifier: GPL-2.0
"""LAVA: the job writer (python3 -m lava.job), the log fetcher (lava.fetch),
lava-run wrapper (lava.lava_run) and fleet report (lava.fleet)."""
