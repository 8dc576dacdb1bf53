# SPDX-License-Identifier: GPL-2.0
"""compare/compare.py's statistics and what it shows, against published
worked examples and values worked out by hand (issue 36, point 1): the
Mann-Whitney U test on SciPy's documented example and its symmetry, the
bootstrap interval on samples whose resampling distribution can be
counted (so an interval that resamples one side only shows), and the
numbers of the printed table, the overlay's data files and its labels.

Run by make test-compare, or alone: python3 -m unittest tests.compare.test_values"""
import io
import json
import os
import re
import shutil
import tempfile
import unittest
import xml.etree.ElementTree as ET
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
os.environ["BENCH_CONTRACT"] = os.path.join(ROOT, "tests", "fixture", "contract.json")
from compare import compare as C  # noqa: E402
from compare import stats as S  # noqa: E402
from tests.compare.run_tests import fault_rows, meta  # noqa: E402


class MannWhitney(unittest.TestCase):
    # SciPy's scipy.stats.mannwhitneyu documentation, after its reference
    # [4]: ages at a type II diabetes diagnosis, males 19 22 16 29 24,
    # females 20 11 17 12; U_M = 17, U_F = 3, exact two-sided p = 0.1111.
    MALES, FEMALES = [19, 22, 16, 29, 24], [20, 11, 17, 12]

    def test_published_example(self):
        # By hand: in order 11 12 16 17 19 20 22 24 29 the males hold
        # ranks 3 5 7 8 9, R = 32, U = 32 - 5 x 6 / 2 = 17; min(17, 20 -
        # 17) = 3.  Orders with U <= 3 of C(9, 4) = 126: U = 0, 1, 2, 3 in
        # 1, 1, 2, 3 ways, so p = 2 x 7 / 126 = 0.1111.
        u, p, how = S.mann_whitney(self.MALES, self.FEMALES)
        self.assertEqual((u, how), (17, "exact"))
        self.assertAlmostEqual(p, 14 / 126, places=12)
        self.assertEqual(S._u_exact_counts(5, 4)[:4], [1, 1, 2, 3])

    def test_symmetric_in_its_samples(self):
        # U of one side plus U of the other is n1 x n2, the p the same:
        # exact (the published example, 17 + 3 = 20), and under the
        # normal approximation with ties (0.5 + 24.5 = 25)
        for a, b in ((self.MALES, self.FEMALES), ([1, 1, 2, 2, 3], [3, 4, 4, 5, 5])):
            ua, pa, how_a = S.mann_whitney(a, b)
            ub, pb, how_b = S.mann_whitney(b, a)
            self.assertEqual(ua + ub, len(a) * len(b))
            self.assertEqual(how_a, how_b)
            self.assertAlmostEqual(pa, pb, places=12)


class Bootstrap(unittest.TestCase):
    """Samples of one or two values, whose resampled medians can be
    counted by hand: the percentile interval is known."""

    def test_interval_of_b_resampled(self):
        # A = 100 always; B = 90, 110: a resample of B is 90 90 (median 90,
        # chance 1/4), 90 110 or 110 90 (100, 1/2), 110 110 (110, 1/4), so
        # the delta is -10, 0 or +10 % with chances 1/4, 1/2, 1/4: the 2.5
        # and 97.5 percentiles of 2000 draws are -10 and +10.  Resampling
        # A alone would give 0, 0.
        lo, hi = S.bootstrap_ci([100.0], [90.0, 110.0])
        self.assertAlmostEqual(lo, -10.0, places=9)
        self.assertAlmostEqual(hi, 10.0, places=9)

    def test_interval_of_a_resampled(self):
        # the sides swapped: A's median 90, 100 or 110 against B's 100:
        # (100 - 110) / 110 = -9.0909 %, 0, (100 - 90) / 90 = +11.111 %.
        # Resampling B alone would give 0, 0.
        lo, hi = S.bootstrap_ci([90.0, 110.0], [100.0])
        self.assertAlmostEqual(lo, -100.0 / 11, places=9)
        self.assertAlmostEqual(hi, 100.0 / 9, places=9)

    def test_interval_of_a_median_by_theory(self):
        # B = 1, 2 ... 400 against A = 200.5, its median: the median of n
        # draws from a density f has a standard deviation near 1 / (2 f
        # sqrt n) = 400 / (2 x 20) = 10, so the 95 % interval is 200.5
        # +- 1.96 x 10, +-9.78 % of 200.5 (to within the noise of 2000
        # resamples, well under 1 point).  Percentiles taken at 92.5 %
        # instead of 97.5 % would give +-7.2 %.
        lo, hi = S.bootstrap_ci([200.5], [float(x) for x in range(1, 401)])
        self.assertLess(abs(lo + 9.78), 1.0, lo)
        self.assertLess(abs(hi - 9.78), 1.0, hi)

    def test_delta_by_hand(self):
        # delta of B's median against A's: medians 100 (of 90 100 110) and
        # 112.5 (of 110 112 113 115): +12.5 %; the other way round
        # (100 - 112.5) / 112.5 = -11.111 %
        a, b = [110.0, 90.0, 100.0], [113.0, 110.0, 115.0, 112.0]
        self.assertAlmostEqual(S.delta_pct(a, b), 12.5, places=12)
        self.assertAlmostEqual(S.delta_pct(b, a), -100.0 / 9, places=12)
        # spread (max - min) / median: 20 / 100, 5 / 112.5
        self.assertAlmostEqual(S.rel_spread(a), 0.2, places=12)
        self.assertAlmostEqual(S.rel_spread(b), 5 / 112.5, places=12)


class Verdicts(unittest.TestCase):
    def test_swapping_the_sides_swaps_the_verdict(self):
        # 5 timed runs a side wholly apart: exact p = 2 / C(10, 5) =
        # 2 / 252 = 0.0079; delta +10 % one way, -9.09 % the other
        a = [100.0, 101.0, 99.0, 100.5, 99.5]
        b = [110.0, 111.0, 109.0, 110.5, 109.5]
        ab, ba = S.verdict(a, b, threshold=5.0), S.verdict(b, a, threshold=5.0)
        self.assertEqual((ab["verdict"], ba["verdict"]), ("REGRESSION", "improvement"))
        self.assertAlmostEqual(ab["p"], 2 / 252, places=12)
        self.assertAlmostEqual(ab["p"], ba["p"], places=12)
        self.assertAlmostEqual(ab["delta_pct"], 10.0, places=9)
        self.assertAlmostEqual(ba["delta_pct"], -100.0 / 11, places=9)

    def test_an_improvement_needs_the_whole_interval_below_zero(self):
        # A = 100 x 6, B = 80 x 5 and 120: B's median 80, delta -20 %.
        # Ranks: 80 x 5 share 3, 100 x 6 share 8.5, 120 is 12; R_A = 51,
        # U = 51 - 21 = 30, mu = 18; ties 5 and 6: sum(t^3 - t) = 120 +
        # 210 = 330, var = 36 / 12 (13 - 330 / 132) = 31.5; z = (12 -
        # 0.5) / 5.612 = 2.049, p = 0.0405 < 0.05.  But a resample of B
        # has median 100 or more when 3 or more of its 6 draws are 120:
        # P = 1 - P(0, 1, 2 of 6 at 1/6) = 0.0623 > 2.5 %, so the interval
        # reaches delta 0: [-20, 0], not wholly below zero: no change.
        r = S.verdict([100.0] * 6, [80.0] * 5 + [120.0], threshold=5.0)
        self.assertAlmostEqual(r["p"], 0.0405, places=4)
        self.assertEqual((r["ci_lo"], r["ci_hi"]), (-20.0, 0.0))
        self.assertEqual(r["verdict"], "no change")


# Two points, four instruction-count runs a side (compare.collect gathers
# one value per run): devhugetlb's setup 100 on A, 110 on B, repetitions
# that agree (exact comparison); maphugetlb's 100 on A and 90, 110, 90,
# 110 on B, a spread of 20 / 100 = 20 % that sends it to the statistics.
A_RUNS = [(meta(), fault_rows({("devhugetlb", "setup"): 100.0,
                               ("maphugetlb", "setup"): 100.0})) for _ in range(4)]
B_RUNS = [(meta(), fault_rows({("devhugetlb", "setup"): 110.0,
                               ("maphugetlb", "setup"): v})) for v in (90.0, 110.0, 90.0, 110.0)]


class Shown(unittest.TestCase):
    """The table compare prints and the overlay figure's data and labels."""

    @classmethod
    def setUpClass(cls):
        cls.out = io.StringIO()
        cls.status, cls.results = C.compare_runs(A_RUNS, B_RUNS, 5.0, out=cls.out)

    def line(self, backing):
        return next(l for l in self.out.getvalue().splitlines()
                    if l.startswith("fault %s setup 4M " % backing))

    def test_table_exact_point(self):
        # devhugetlb: medians 100 and 110, delta (110 - 100) / 100 = +10 %,
        # every resample the same, so the interval is [+10, +10]; exact, so
        # no p; 10 % beyond the 5 % threshold: a regression
        self.assertEqual(self.status, C.EXIT_REGRESSION)
        self.assertRegex(self.line("devhugetlb"),
                         r"^fault devhugetlb setup 4M +us_per_call +100 +110 +\+10\.00 "
                         r"+\[ *\+10\.00, +\+10\.00\] +n/a +icount +REGRESSION$")
        self.assertIn("compare: 1 point(s) regressed beyond 5.0 %: fault devhugetlb setup 4M",
                      self.out.getvalue())

    def test_summary_json(self):
        # summary.json holds the same numbers as the table
        with tempfile.TemporaryDirectory() as d:
            C.save_summary(d, self.results, self.status, {"a": "x"})
            with open(os.path.join(d, "summary.json")) as f:
                s = json.load(f)
        self.assertEqual(s["status"], C.EXIT_REGRESSION)
        got = {p["point"][1]: (p["median_a"], p["median_b"], p["delta_pct"], p["ci_lo"],
                               p["ci_hi"], p["verdict"]) for p in s["points"]}
        self.assertEqual(got, {"devhugetlb": (100, 110, 10, 10, 10, "REGRESSION"),
                               "maphugetlb": (100, 100, 0, -10, 10, "no change")})

    def test_table_statistical_point(self):
        # maphugetlb: median of 90 90 110 110 = 100, delta 0.  Resamples
        # of B's four: k of 4 draws 110 (binomial, 1/2): k <= 1 median 90
        # (5/16), k = 2 100 (6/16), k >= 3 110 (5/16): interval [-10, +10].
        # Ranks of 100 x 4 among 90 90 100 x 4 110 110: 4.5 each, R = 18,
        # U = 18 - 10 = 8 = n1 n2 / 2: z <= 0, p = 1 (ties: the normal
        # approximation).  4 v 4 can reach p < 0.05 (2 / 70), so the
        # verdict is no change.
        self.assertRegex(self.line("maphugetlb"),
                         r"^fault maphugetlb setup 4M +us_per_call +100 +100 +\+0\.00 "
                         r"+\[ *-10\.00, +\+10\.00\] +1 +normal +no change$")

    def test_overlay_data(self):
        # .dat: every run's value, side 0 (A) then side 1 (B); .med:
        # medians, delta and verdict, as worked out above
        rs = [r for r in self.results if r["point"][1] == "devhugetlb"]
        with tempfile.TemporaryDirectory() as d:
            base = os.path.join(d, "o")
            C.write_overlay_data(base, rs, C.collect(A_RUNS), C.collect(B_RUNS))
            with open(base + ".dat") as f:
                dat = [l.split() for l in f if not l.startswith("#")]
            with open(base + ".med") as f:
                med = [l.strip() for l in f if not l.startswith("#")]
        self.assertEqual(dat, [["0", '"setup', '4M"', "0", "100"]] * 4
                         + [["0", '"setup', '4M"', "1", "110"]] * 4)
        self.assertEqual(med, ['0 "setup 4M" 100 110 10.000 "REGRESSION"'])

    def test_overlay_figure_labels(self):
        # each point's label: the delta and the verdict
        if not shutil.which("gnuplot"):
            self.skipTest("no gnuplot")
        with tempfile.TemporaryDirectory() as d:
            with mock.patch("sys.stdout", io.StringIO()):
                C.write_figures(self.results, A_RUNS, B_RUNS, d, "a", "b")
            texts = {}
            for b in ("devhugetlb", "maphugetlb"):
                root = ET.parse(os.path.join(d, "overlay-fault-%s.svg" % b)).getroot()
                texts[b] = ["".join(t.itertext()) for t in
                            root.iter("{http://www.w3.org/2000/svg}text")]
        self.assertIn("+10.00%  REGRESSION", texts["devhugetlb"])
        self.assertIn("+0.00%  no change", texts["maphugetlb"])
        self.assertTrue(any(re.fullmatch(r"setup 4M", t) for t in texts["devhugetlb"]))


if __name__ == "__main__":
    unittest.main()
