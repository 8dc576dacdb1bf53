# SPDX-License-Identifier: GPL-2.0
"""chase's structure, not its timing (issue 23 point 4): each cycle is one
cycle through the whole working set (a page hop has exactly one element in
every 4 KB page, a line hop one in every 64-byte line), and the chase moved
exactly the hops it reports.  chase --check-cycle walks each cycle untimed
and reports it in @meta cycle; these verdicts do not depend on the host's
load.  44K and 1.5M are not powers of two, so the hops (3 x 16400 per
repetition) do not come back to the start and the position says whether
every hop was chased."""
import unittest

from tests.bench.benchbin import BenchRun

SIZES = [44 << 10, 1536 << 10]


class TestChaseCycle(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.chase = BenchRun("chase", [
            "--sizes", ",".join(str(s) for s in SIZES), "--hop", "both",
            "--hops", "16400", "--reps", "2", "--warmup", "1",
            "--backings", "devzero,thp", "--model-cap", "1K",
            "--check-cycle"])

    def cycles(self, hop):
        r = self.chase
        self.assertEqual(r.returncode, 0, r.describe())
        got = [c for c in r.meta.get("cycle", []) if c["hop"] == hop]
        self.assertEqual(len(got), 2 * len(SIZES), r.describe())
        return got

    def test_page_hop_visits_every_page_once(self):
        for c in self.cycles("page"):
            pages = c["wss_bytes"] // 4096
            self.assertTrue(c["closed"], c)
            self.assertEqual(c["outside"], 0, c)
            self.assertEqual(c["elements"], pages, c)
            self.assertEqual(c["pages"], pages, c)
            self.assertEqual(c["most_in_a_page"], 1, c)
            self.assertEqual(c["unaligned"], 0, c)
            # the element's line in each page is spread (layout.h,
            # page_line): 11 pages use 11 slots at most, 384 nearly all 64
            # (the layout is a function of the seed: no chance involved)
            self.assertGreaterEqual(c["line_slots"], min(pages * 3 // 4, 48),
                                    c)

    def test_line_hop_visits_every_line_once(self):
        for c in self.cycles("line"):
            self.assertTrue(c["closed"], c)
            self.assertEqual(c["outside"], 0, c)
            self.assertEqual(c["elements"], c["wss_bytes"] // 64, c)
            self.assertEqual(c["pages"], c["wss_bytes"] // 4096, c)
            self.assertEqual(c["most_in_a_page"], 64, c)
            self.assertEqual((c["line_slots"], c["unaligned"]), (64, 0), c)

    def test_chase_moves_every_hop_it_counts(self):
        for hop in ("line", "page"):
            for c in self.cycles(hop):
                self.assertNotEqual(c["hops_done"] % c["elements"], 0, c)
                self.assertEqual(c["position"],
                                 c["hops_done"] % c["elements"], c)

    def test_rows_count_the_hops_chased(self):
        for row in self.chase.rows:
            self.assertEqual(int(row["hops"]), 16400, row)


if __name__ == "__main__":
    unittest.main()
