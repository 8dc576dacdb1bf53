# SPDX-License-Identifier: GPL-2.0
"""chase: a sweep's peak memory is its largest working set plus a small,
fixed amount; nothing per size accumulates across the sweep."""
import os
import unittest

from tests.bench.benchbin import run_with_maxrss
from tests.bench.common import BINDIR

MB = 1 << 20
# The binary, its stack, stdio and the TLB model's arrays: a few MB.
SLACK_KB = 16 * 1024


class TestChaseMemory(unittest.TestCase):
    def test_sweep_peak_rss(self):
        top = 256 * MB
        rc, out, maxrss_kb = run_with_maxrss(
            [os.path.join(BINDIR, "chase"), "--backings", "devzero",
             "--min", "16K", "--max", str(top), "--hop", "both",
             "--hops", "4K", "--reps", "1", "--warmup", "0",
             "--model-cap", "1K"])
        self.assertEqual(rc, 0, out[-2000:])
        rows = [l for l in out.splitlines() if l.startswith("@row ")]
        self.assertGreater(len(rows), 40, "expected a whole sweep")
        self.assertLessEqual(
            maxrss_kb, top // 1024 + SLACK_KB,
            "peak RSS %d kB for a %d MB sweep (bound: working set + %d kB)"
            % (maxrss_kb, top // MB, SLACK_KB))


if __name__ == "__main__":
    unittest.main()
