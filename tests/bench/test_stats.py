# SPDX-License-Identifier: GPL-2.0
"""The runner's statistics (bench/stats.c) against hand and stdlib values."""
import statistics
import unittest

from tests.bench.common import benchtool


def stats(*vals):
    out = benchtool("stats", *[repr(v) for v in vals])
    assert out.returncode == 0, out.stderr
    med, lo, hi, mean, cv, n = out.stdout.split()
    return float(med), float(lo), float(hi), float(mean), float(cv), int(n)


class TestStats(unittest.TestCase):
    def test_odd_median(self):
        self.assertEqual(stats(3, 1, 2)[:3], (2.0, 1.0, 3.0))

    def test_even_median_is_mean_of_middle(self):
        self.assertEqual(stats(4, 1, 3, 2)[0], 2.5)

    def test_cv_by_hand(self):
        # mean 2.5; sample variance ((1.5^2 + 0.5^2) * 2) / 3 = 5/3
        cv = stats(1, 2, 3, 4)[4]
        self.assertAlmostEqual(cv, (5 / 3) ** 0.5 / 2.5, places=7)

    def test_single_value(self):
        self.assertEqual(stats(7.5), (7.5, 7.5, 7.5, 7.5, 0.0, 1))

    def test_matches_stdlib(self):
        vals = [10.1, 9.7, 12.4, 10.0, 9.9, 30.2, 10.3]
        med, lo, hi, mean, cv, n = stats(*vals)
        self.assertAlmostEqual(med, statistics.median(vals), places=6)
        self.assertAlmostEqual(cv, statistics.stdev(vals) /
                               statistics.mean(vals), places=6)
        self.assertEqual((lo, hi, n), (min(vals), max(vals), len(vals)))


if __name__ == "__main__":
    unittest.main()
