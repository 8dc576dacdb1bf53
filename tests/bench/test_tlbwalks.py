# SPDX-License-Identifier: GPL-2.0
"""benchtool tlbwalks: the TLB model's verdict on the chase's random cycle
(bench/benchtool.c), against hand calculation and the chase binary."""
import re
import unittest

from tests.bench.benchbin import BenchRun
from tests.bench.common import benchtool

KB, MB, GB = 1 << 10, 1 << 20, 1 << 30
LINE, PAGE = 64, 4096
# the counts below reason in true LRU, not the preset's seeded random
N1 = "neoverse-n1;policy=lru"


def tlbwalks(preset, wss, page_kb, hop=None):
    """(walks per 1k, L1 misses per 1k, accesses) as printed"""
    args = ["tlbwalks", preset, str(wss), str(page_kb)]
    out = benchtool(*(args + ([str(hop)] if hop else [])))
    assert out.returncode == 0, out.stderr
    m = re.fullmatch(r"model (\S+): walks_per_1k (\S+) l1_misses_per_1k "
                     r"(\S+) accesses (\d+) \(the TLB model, not measured\)"
                     r"\n", out.stdout)
    assert m and m.group(1) == preset, out.stdout
    return m.group(2), m.group(3), int(m.group(4))


def numbers(preset, wss, page_kb, hop=None):
    walks, l1, acc = tlbwalks(preset, wss, page_kb, hop)
    return float(walks), float(l1), acc


class TestTlbWalks(unittest.TestCase):
    def test_4k_pages_far_beyond_l2_reach(self):
        # 262144 pages against 48 + 1280 entries: the cycle visits every
        # other page between two visits of one, so LRU has always evicted
        # it: every access misses the L1 and walks
        self.assertEqual(numbers(N1, GB, 4, PAGE), (1000.0, 1000.0, 262144))

    def test_inside_l1_reach(self):
        # 48 4K pages fit the 48-entry L1: nothing misses after warm-up,
        # whether one hop per page or 64 per page
        self.assertEqual(numbers(N1, 48 * PAGE, 4, PAGE), (0.0, 0.0, 48))
        self.assertEqual(numbers(N1, 48 * PAGE, 4, LINE), (0.0, 0.0, 3072))
        # 49 pages: the LRU L1 always misses, the L2 holds all 49
        self.assertEqual(numbers(N1, 49 * PAGE, 4, PAGE), (0.0, 1000.0, 49))

    def test_32m_pages_at_1g(self):
        # 1 GB is 32 pages of 32M.  The L2 holds 32M entries: their page
        # numbers 2^15 + 0..31 fall in 32 different sets of 256, so after
        # the warm cycle nothing walks.  The L1 holds no 32M entries and
        # splinters them into 2M ones: 512 of them contend for 48 fully
        # associative LRU entries.  Each 2M piece holds 512 of the 262144
        # hops, visited in random order, so an access finds its entry
        # among the 48 most recently used with probability about 48/512:
        # L1 misses 1000 * (1 - 48/512) = 906.25 per 1000.
        walks, l1, acc = numbers(N1, GB, 32768, PAGE)
        self.assertEqual((walks, acc), (0.0, 262144))
        self.assertAlmostEqual(l1, 906.25, delta=3)

    def test_64k_pages_at_64m(self):
        # 1024 pages of 64K: page numbers 2^24 + 0..1023 put 4 in each of
        # the L2's 256 sets, within its 5 ways: no walks after warm-up.
        # The L1's 48 entries hold 48 of 1024: misses 1000 * (1 - 48/1024)
        # = 953.1 per 1000.  (That needs many hops per page in random
        # order: one per line, 1024 per page.  With one per 4 KB, 16 per
        # page, a page's hops are too few to be independent and the L1
        # misses more.)
        walks, l1, _ = numbers(N1, 64 * MB, 64, LINE)
        self.assertEqual(walks, 0.0)
        self.assertAlmostEqual(l1, 953.1, delta=3)

    def test_2m_pages_at_64m(self):
        # 32 pages of 2M fit the 48-entry L1: nothing misses
        self.assertEqual(numbers(N1, 64 * MB, 2048, LINE)[:2], (0.0, 0.0))

    def test_default_hop_is_a_line(self):
        self.assertEqual(tlbwalks(N1, MB, 4), tlbwalks(N1, MB, 4, LINE))

    def chase_model(self, wss, hop, hops):
        """the chase binary's model columns, its model replaying exactly
        one warm and one counted cycle (--model-cap = the cycle length)"""
        r = BenchRun("chase", ["--backings", "devzero", "--sizes", str(wss),
                               "--hop", hop, "--hops", "16", "--reps", "1",
                               "--warmup", "0", "--model", N1,
                               "--model-cap", str(hops)])
        self.assertEqual(r.returncode, 0, r.describe())
        self.assertEqual(len(r.rows), 1, r.describe())
        row = r.rows[0]
        self.assertEqual(row["page_kb"], "4", "devzero should be 4 KB pages")
        return row["model_walks_per_1k"], row["model_l1_misses_per_1k"]

    def test_same_cycle_as_the_chase(self):
        # One hop per line, where the numbers depend on the order (a
        # different seed, shuffle or start gives different digits): 256
        # pages of 64 lines overflow the L1; 2048 pages put 8 in each
        # 5-way L2 set.  (With one hop per 4K page every page comes back
        # only after all others, so any order gives only 0 or 1000.)
        for wss in (MB, 8 * MB):
            walks, l1, acc = tlbwalks(N1, wss, 4, LINE)
            self.assertEqual(self.chase_model(wss, "line", acc),
                             (walks, l1), wss)
            self.assertNotIn(float(l1), (0.0, 1000.0), wss)
        self.assertNotIn(float(walks), (0.0, 1000.0))

    def test_page_hop_is_one_line_per_page(self):
        # One hop per 4 KB page: 2048 pages are beyond the model's L2
        # reach, so every access walks, as for tlbwalks' page-hop order;
        # hops packed into a few pages would hardly walk at all.
        walks, l1, acc = tlbwalks(N1, 8 * MB, 4, 4096)
        self.assertEqual(float(walks), 1000.0)
        self.assertEqual(self.chase_model(8 * MB, "page", acc), (walks, l1))

    def test_bad_input_is_refused(self):
        for args, why in ((["neoverse-n1", "1G", "4"], "WSS_BYTES"),
                          (["neoverse-n1", str(MB), "16"], "PAGE_KB"),
                          (["neoverse-n1", str(MB), "4", "0"], "hops"),
                          (["neoverse-n1", "64", "4", "64"], "hops"),
                          (["nonsense", str(MB), "4"], "spec")):
            out = benchtool("tlbwalks", *args)
            self.assertEqual(out.returncode, 1, args)
            self.assertIn(why, out.stderr, args)
        self.assertEqual(benchtool("tlbwalks", N1).returncode, 64)


if __name__ == "__main__":
    unittest.main()
