#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Unit tests of compare/: statistics and verdicts (stats.py), run folders
(runs.py), metadata refusal and the driver (compare.py).

Runs without a kernel or a guest, against the contract the tests pin
(tests/fixture/contract.json).  Ends with "N passed, N failed"; exit
status 1 if any failed."""
import argparse
import io
import json
import math
import os
import random
import sys
import shutil
import subprocess
import tempfile
import unittest
import xml.etree.ElementTree as ET
from unittest import mock

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))
os.environ["BENCH_CONTRACT"] = os.path.join(ROOT, "tests", "fixture",
                                           "contract.json")
from compare import compare as C  # noqa: E402
from compare import runs as R  # noqa: E402
from compare import stats as S  # noqa: E402
from bench import contract  # noqa: E402
from tests import harness  # noqa: E402


def close(a, b, tol=1e-9):
    return abs(a - b) <= tol * max(1.0, abs(a), abs(b))


def meta(**kw):
    m = {"run_id": "r", "mode": "guest", "profile": "tiny",
         "host_cpu": "Cpu X", "timing_source": "icount", "status": "complete",
         "qemu": {"accel": "tcg", "icount": True, "version": "7.2"}}
    q = kw.pop("qemu", {})
    m["qemu"] = dict(m["qemu"], **q)
    m.update(kw)
    return m


def fault_rows(vals):
    """vals: {(backing, mode): the fault benchmark's metric}"""
    metric = contract.load().bench("fault")["metric"]
    return {"fault": [{"backing": b, "mode": m, "size_bytes": "4194304",
                       metric: str(v)} for (b, m), v in vals.items()]}


class CompareTests(unittest.TestCase):
    def test_median_and_delta(self):
        assert S.median([3, 1, 2]) == 2
        assert S.median([4, 1, 2, 3]) == 2.5
        assert close(S.delta_pct([100, 100], [110, 110]), 10.0)
        assert close(S.delta_pct([10], [9]), -10.0)
        assert S.rel_spread([5, 5, 5]) == 0.0

    def test_mwu_exact_separated(self):
        # scipy.stats.mannwhitneyu([1..5], [6..10], method="exact") -> p 0.00794
        u, p, how = S.mann_whitney([1, 2, 3, 4, 5], [6, 7, 8, 9, 10])
        assert how == "exact", how
        assert u == 0
        assert close(p, 2.0 / 252, 1e-12), p
        u, p2, _ = S.mann_whitney([6, 7, 8, 9, 10], [1, 2, 3, 4, 5])
        assert u == 25 and close(p, p2)

    def test_mwu_exact_known_value(self):
        # U = 2 (6 > 4, 6 > 5) for n1 = n2 = 4: P(U <= 2) = 4/70, two-sided 8/70
        u, p, how = S.mann_whitney([1, 2, 3, 6], [4, 5, 7, 8])
        assert how == "exact"
        assert u == 2, u
        counts = S._u_exact_counts(4, 4)
        assert sum(counts) == 70
        assert counts[:3] == [1, 1, 2], counts
        assert close(p, 8.0 / 70), p

    def test_mwu_counts_sum_to_binomial(self):
        for n1, n2 in ((1, 1), (2, 3), (5, 5), (7, 4)):
            assert sum(S._u_exact_counts(n1, n2)) == math.comb(n1 + n2, n1)

    def test_mwu_ties_and_no_spread(self):
        u, p, how = S.mann_whitney([5, 5, 5], [5, 5, 5])
        assert p == 1.0 and how == "no spread"
        u, p, how = S.mann_whitney([1, 1, 2, 2, 3], [3, 4, 4, 5, 5])
        assert how == "normal"
        assert 0 < p < 0.05, p

    def test_mwu_same_distribution_not_significant(self):
        rng = random.Random(7)
        a = [rng.gauss(100, 5) for _ in range(8)]
        b = [rng.gauss(100, 5) for _ in range(8)]
        _, p, _ = S.mann_whitney(a, b)
        assert p > 0.05, p

    def test_bootstrap_ci_covers_and_is_seeded(self):
        a = [100, 101, 99, 100.5, 99.5]
        b = [110, 111, 109, 110.5, 109.5]
        lo, hi = S.bootstrap_ci(a, b)
        assert lo <= 10.0 <= hi, (lo, hi)
        assert lo > 0
        assert (lo, hi) == S.bootstrap_ci(a, b)
        lo, hi = S.bootstrap_ci([7, 7], [7, 7])
        assert lo == hi == 0

    def test_verdict_aa_noisy_is_no_change(self):
        rng = random.Random(3)
        for trial in range(20):
            a = [rng.gauss(100, 8) for _ in range(5)]
            b = [rng.gauss(100, 8) for _ in range(5)]
            r = S.verdict(a, b, threshold=5.0, seed=trial)
            assert r["verdict"] != "REGRESSION" or r["worse_pct"] > 5, r

    def test_verdict_regression_and_improvement(self):
        a = [100, 102, 98, 101, 99]
        b = [120, 122, 118, 121, 119]
        r = S.verdict(a, b, threshold=5.0)
        assert r["verdict"] == "REGRESSION", r
        r = S.verdict(b, a, threshold=5.0)
        assert r["verdict"] == "improvement", r
        # higher is better (bandwidth): B higher is an improvement
        r = S.verdict(a, b, threshold=5.0, lower_is_better=False)
        assert r["verdict"] == "improvement", r

    def test_verdict_below_threshold_is_no_change(self):
        a = [100, 100.1, 99.9, 100.05, 99.95]
        b = [103, 103.1, 102.9, 103.05, 102.95]
        r = S.verdict(a, b, threshold=5.0)
        assert r["verdict"] == "no change", r
        assert r["p"] < 0.05  # significant, but small

    def test_verdict_too_few_reps_cannot_tell(self):
        # 2 vs 2: the smallest two-sided exact p is 1/3: never significant,
        # so neither "REGRESSION" nor "no change" can be claimed
        r = S.verdict([100, 101], [150, 151], threshold=5.0)
        assert r["verdict"] == "cannot tell" and r["needs"] == 4, r
        # 3 vs 3 at +50 %: still 0.1 at best
        r = S.verdict([100, 101, 99], [150, 151, 149], threshold=5.0)
        assert r["verdict"] == "cannot tell", r
        # 4 vs 4 can tell: 2/70 < 0.05
        r = S.verdict([100, 101, 99, 100.5], [150, 151, 149, 150.5],
                      threshold=5.0)
        assert r["verdict"] == "REGRESSION", r

    def test_verdict_needs_the_test_as_well_as_the_ci(self):
        # 5 vs 5: the bootstrap CI lies wholly above zero (+1.6 .. +27.9 %)
        # but Mann-Whitney's p is 0.056: not a regression
        a = [90.6, 95.0, 107.8, 105.4, 93.1]
        b = [110.2, 121.5, 103.8, 114.5, 107.1]
        r = S.verdict(a, b, threshold=5.0)
        assert r["ci_lo"] > 0 and r["p"] > 0.05, r
        assert r["verdict"] == "no change", r

    def test_min_p_and_runs_needed(self):
        assert close(S.min_p(3, 3), 0.1) and close(S.min_p(4, 4), 2 / 70)
        assert close(S.min_p(1, 1), 1.0)
        assert S.runs_needed(0.05) == 4 and S.runs_needed(0.01) == 5
        # the exact test agrees: wholly apart samples give min_p
        for n in (3, 4, 5):
            _, p, how = S.mann_whitney(list(range(n)),
                                       list(range(10, 10 + n)))
            assert how == "exact" and close(p, S.min_p(n, n)), (n, p)

    def test_verdict_deterministic_exact(self):
        r = S.verdict([1000.0], [1060.0], threshold=5.0, deterministic=True)
        assert r["test"] == "icount" and r["verdict"] == "REGRESSION", r
        r = S.verdict([1000.0], [1040.0], threshold=5.0, deterministic=True)
        assert r["verdict"] == "no change", r
        r = S.verdict([1000.0, 1000.1], [900.0, 900.05], threshold=5.0,
                      deterministic=True)
        assert r["verdict"] == "improvement", r

    def test_verdict_deterministic_spread_falls_back_to_test(self):
        # icount claimed but the repetitions spread 20 %: statistics decide,
        # and 2 vs 2 cannot be significant.
        r = S.verdict([1000, 1200], [1300, 1500], threshold=5.0,
                      deterministic=True)
        assert r["test"] != "icount" and r["verdict"] == "cannot tell", r

    def test_meta_same_is_clean(self):
        ref, warn = C.check_meta([meta(), meta()], [meta()])
        assert ref == [] and warn == [], (ref, warn)

    def test_meta_refusals(self):
        for kw in ({"qemu": {"accel": "kvm"}}, {"qemu": {"icount": False}},
                   {"timing_source": "tcg"}, {"profile": "quick"},
                   {"mode": "native"}, {"status": "failed"}):
            ref, _ = C.check_meta([meta()], [meta(**kw)])
            assert ref, kw

    def test_meta_host_cpu(self):
        # instruction counts: a loud warning; timed: a refusal
        ref, warn = C.check_meta([meta()], [meta(host_cpu="Cpu Y")])
        assert not ref and any("host_cpu" in w for w in warn), (ref, warn)
        t = {"timing_source": "tcg", "qemu": {"icount": False}}
        ref, _ = C.check_meta([meta(**t)], [meta(host_cpu="Cpu Y", **t)])
        assert any("host_cpu" in r for r in ref), ref

    def test_compare_runs_exit_status(self):
        base = {("devhugetlb", "setup"): 10.0, ("devhugetlb", "demand"): 50.0,
                ("devhugetlb", "populate"): 40.0}
        same = [(meta(), fault_rows(base))]
        out = io.StringIO()
        st, res = C.compare_runs(same, same, 3.0, out=out)
        assert st == C.EXIT_OK and len(res) == 3, out.getvalue()
        assert all(r["verdict"] == "no change" for r in res)
        slow = dict(base)
        slow[("devhugetlb", "setup")] = 12.0
        st, res = C.compare_runs(same, [(meta(), fault_rows(slow))], 3.0, out=out)
        assert st == C.EXIT_REGRESSION, out.getvalue()
        # populate is not gated by check-regression
        pop = dict(base)
        pop[("devhugetlb", "populate")] = 80.0
        st, _ = C.compare_runs(same, [(meta(), fault_rows(pop))], 3.0,
                               gate=C.CHECK_GATE, out=out)
        assert st == C.EXIT_OK, out.getvalue()

    def test_compare_runs_refuses_mismatch(self):
        rows = fault_rows({("devhugetlb", "setup"): 10.0})
        out = io.StringIO()
        st, res = C.compare_runs([(meta(), rows)],
                                 [(meta(qemu={"icount": False},
                                        timing_source="tcg"), rows)], 3.0,
                                 out=out)
        assert st == C.EXIT_MISMATCH and res == [], out.getvalue()
        assert "MISMATCH" in out.getvalue()
        out = io.StringIO()
        st, res = C.compare_runs([(meta(), rows)],
                                 [(meta(qemu={"accel": "kvm"}), rows)], 3.0,
                                 allow_mismatch=True, out=out)
        assert st == C.EXIT_OK and res, out.getvalue()
        assert "NOT comparable" in out.getvalue()

    def test_load_run_reads_csv_and_meta(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "meta.json"), "w") as f:
                f.write('{"status": "complete"}')
            with open(os.path.join(d, "fault.csv"), "w") as f:
                f.write("backing,page_kb,mode,us_per_call,faults_per_mb,size_bytes\n"
                        "devhugetlb,2048,setup,12.5,0,4194304\n")
            m, rows = R.load_run(d)
            pts = C.collect([(m, rows)])
            assert pts == {("fault", "devhugetlb", "setup", "4194304"): [12.5]}, pts

    def test_series_dirs(self):
        with tempfile.TemporaryDirectory() as w:
            names = lambda d: sorted(os.listdir(d))  # noqa: E731
            cur = names(C.series_dir("current", w))
            slow = names(C.series_dir("slow", w))
            rfc = names(C.series_dir("rfc", w))
            assert cur == sorted(os.listdir(os.path.join(ROOT, "kernel",
                                                         "patches")))
            assert slow[:len(cur)] == cur and len(slow) > len(cur)
            assert slow[-1].startswith("9000-test-only-"), slow
            assert rfc and rfc != cur
            head = names(C.series_dir("HEAD", w))
            assert any(n.endswith(".patch") for n in head), head
            try:
                C.series_dir("no-such-rev-xyz", w)
            except SystemExit:
                pass
            else:
                raise AssertionError("bad revision accepted")


    def test_points_keyed_as_the_contract_says(self):
        rows = {"stream": [{"backing": "thp", "kernel": "read",
                            "wss_bytes": "1048576", "gb_per_s": "9.5"}]}
        pts = C.collect([(meta(), rows)])
        self.assertEqual(pts, {("stream", "thp", "read", "1048576"): [9.5]})
        self.assertEqual(C.point_label(("stream", "thp", "read", "1048576")),
                         "stream thp read 1M")

    def test_overlay_labels_are_data_not_code(self):
        if not shutil.which("gnuplot"):
            self.skipTest("no gnuplot")
        runs_a = [(meta(), fault_rows({("devhugetlb", "setup"): v}))
                  for v in (10.0, 10.2)]
        runs_b = [(meta(), fault_rows({("devhugetlb", "setup"): v}))
                  for v in (11.0, 11.1)]
        _, results = C.compare_runs(runs_a, runs_b, 3.0, out=io.StringIO())
        with tempfile.TemporaryDirectory() as d:
            out = io.StringIO()
            with mock.patch("sys.stdout", out):
                made = C.write_figures(results, runs_a, runs_b, d,
                                       "it's A", 'B"; system("false")')
            self.assertEqual(out.getvalue(), "")
            self.assertEqual(sorted(os.path.basename(m) for m in made),
                             ["overlay-fault-devhugetlb.png",
                              "overlay-fault-devhugetlb.svg"])
            with open(os.path.join(d, "overlay-fault-devhugetlb.svg")) as f:
                svg = f.read()
        for want in ("A = it's A (each boot)", 'B = B"; system("false") (each boot)',
                     "instruction-count time (QEMU -icount)"):
            self.assertTrue(want in svg, want)

    def test_overlay_of_zeros_and_of_one_value(self):
        """A metric that is 0 everywhere (modelled walks where every page
        fits the TLB) has no log axis, and one value everywhere (exact
        instruction counts) no empty range: both drawn, gnuplot silent."""
        if not shutil.which("gnuplot"):
            self.skipTest("no gnuplot")
        for v in (0.0, 15.3):
            with self.subTest(value=v):
                runs = [(meta(), fault_rows({("devhugetlb", "setup"): v}))
                        for _ in range(2)]
                _, results = C.compare_runs(runs, runs, 3.0, out=io.StringIO())
                with tempfile.TemporaryDirectory() as d:
                    out = io.StringIO()
                    with mock.patch("sys.stdout", out):
                        made = C.write_figures(results, runs, runs, d, "a", "b")
                    self.assertEqual(out.getvalue(), "")
                    self.assertEqual(len(made), 2)
                    for m in made:
                        self.assertGreater(os.path.getsize(m), 0, m)

    def test_overlay_title_is_broken_to_fit(self):
        # Run folders as labels: one line would run off both edges.
        if not shutil.which("gnuplot"):
            self.skipTest("no gnuplot")
        runs_a = [(meta(), fault_rows({("devhugetlb", "setup"): v})) for v in (10.0, 10.2)]
        runs_b = [(meta(), fault_rows({("devhugetlb", "setup"): v})) for v in (11.0, 11.1)]
        _, results = C.compare_runs(runs_a, runs_b, 3.0, out=io.StringIO())
        la, lb = "results/kept-20261204-emeraldrapids-native", "results/20261205-guest-quick"
        with tempfile.TemporaryDirectory() as d:
            with mock.patch("sys.stdout", io.StringIO()):
                C.write_figures(results, runs_a, runs_b, d, la, lb)
            root = ET.parse(os.path.join(d, "overlay-fault-devhugetlb.svg")).getroot()
        ns = "{http://www.w3.org/2000/svg}"
        texts = ["".join(t.itertext()) for t in root.iter(ns + "text")]
        self.assertIn("fault, devhugetlb: A=" + la, texts)
        self.assertIn("vs B=" + lb, texts)
        self.assertIn("(us_per_call; instruction-count time (QEMU -icount), not hardware)", texts)

    def test_builds_go_through_the_makefile(self):
        calls = []
        with mock.patch.object(C, "sh", lambda cmd, **kw: calls.append(cmd) or 0):
            with tempfile.TemporaryDirectory() as w:
                C.build("slow", w)
                C.build("current", w, variant="bzImage")
                # A clean clone has no kernel yet: an image of our own
                image = os.path.join(w, "bzImage")
                open(image, "w").close()
                C.build("image:" + image, w)
                with self.assertRaisesRegex(SystemExit, "no kernel image"):
                    C.build("image:" + image + ".missing", w)
        for cmd in calls:
            self.assertEqual(cmd[:4], ["make", "--no-print-directory", "-C", ROOT])
            self.assertIn("initramfs", cmd)
        self.assertIn("KERNEL_VARIANT=cmp-slow", calls[0])
        self.assertTrue(any(a.startswith("KERNEL_PATCHES=") for a in calls[0]))
        self.assertIn("KERNEL_VARIANT=bzImage", calls[1])
        self.assertFalse(any(a.startswith("KERNEL_PATCHES=") for a in calls[1]))
        self.assertEqual(calls[2][calls[2].index("-o") + 1], "kernel")

    def test_rounds_rotate_the_backings(self):
        cmds = []

        def fake_sh(cmd, **kw):
            cmds.append(cmd)
            res = cmd[cmd.index("--results-dir") + 1]
            os.makedirs(os.path.join(res, "run%d" % len(cmds)))
            with open(os.path.join(res, "run%d" % len(cmds), "meta.json"), "w") as f:
                f.write("{}")
            return 0
        args = mock.Mock(profile="tiny", benches="fault", backings="devzero,memfd",
                         icount=False)
        with tempfile.TemporaryDirectory() as d, mock.patch.object(C, "sh", fake_sh):
            sides = [{"name": n, "rev": n, "kernel": "k", "initrd": "i",
                      "results": os.path.join(d, n)} for n in ("A", "B")]
            C.interleaved(sides, 3, args, os.path.join(d, "log"))
        rot = [c[c.index("--rotate") + 1] for c in cmds]
        self.assertEqual(rot, ["0", "0", "1", "1", "2", "2"])
        self.assertTrue(all(c[1:3] == ["-m", "bench.run"] for c in cmds))

    # TAP as kselftest.h prints it: ok, not ok, "ok N # SKIP reason"
    TAP_A = ("TAP version 13\n1..5\n# a message, not a check\n"
             "ok 1 hugetlb: /dev/hugetlb exists\n"
             "not ok 2 hugetlb: length rounded up\n"
             "ok 3 # SKIP hugetlb: 1 GB pool empty\n"
             "ok 4 hugetlb: zero fill\nok 5 hugetlb: zero fill\n"
             "# Totals: pass:3 fail:1 xfail:0 xpass:0 skip:1 error:0\n")

    def test_tap_results(self):
        self.assertEqual(C.tap_results(self.TAP_A), [
            ("hugetlb: /dev/hugetlb exists", "pass"),
            ("hugetlb: length rounded up", "FAIL"),
            ("hugetlb: 1 GB pool empty", "skip"),
            ("hugetlb: zero fill", "pass"),
            ("hugetlb: zero fill #2", "pass")])
        self.assertEqual(C.tally(C.tap_results(self.TAP_A)),
                         {"pass": 3, "FAIL": 1, "skip": 1})

    def test_semantic_diff(self):
        a = C.tap_results(self.TAP_A)
        b = [("hugetlb: /dev/hugetlb exists", "pass"),
             ("hugetlb: length rounded up", "pass"),
             ("hugetlb: 1 GB pool empty", "skip"),
             ("hugetlb: zero fill", "pass"), ("hugetlb: zero fill #2", "pass"),
             ("hugetlb: noexec honoured", "pass")]
        self.assertEqual(C.semantic_diff(a, b), [
            ("hugetlb: length rounded up", "FAIL", "pass"),
            ("hugetlb: noexec honoured", "absent", "pass")])
        self.assertEqual(C.semantic_diff(a, a), [])

    def test_run_boots_each_kernel_with_its_selftest(self):
        """compare run ends with one kselftest boot per side, lists the
        checks that differ, and a boot that gives no checks is exit 2
        with the cost report kept."""
        runs = [(meta(), fault_rows({("devhugetlb", "setup"): 10.0}))]
        args = mock.Mock(threshold=5.0, alpha=0.05, allow_mismatch=False)
        for broken in (False, True):
            boots = []

            def fake_run(cmd, **kw):
                boots.append(cmd)
                if "a.cpio" in cmd:
                    return mock.Mock(returncode=1, stdout=self.TAP_A, stderr="")
                if broken:
                    return mock.Mock(returncode=125, stdout="", stderr="panic")
                return mock.Mock(returncode=0, stderr="", stdout=self.TAP_A.replace(
                    "not ok 2", "ok 2"))
            with tempfile.TemporaryDirectory() as d, \
                    mock.patch.object(C.subprocess, "run", fake_run), \
                    mock.patch.object(C, "write_figures", lambda *a: []), \
                    mock.patch("sys.stdout", io.StringIO()):
                sides = [{"name": n, "rev": n.lower(), "kernel": "k" + n,
                          "initrd": n.lower() + ".cpio"} for n in "AB"]
                st = C.finish(args, d, runs, runs, "a", "b",
                              sem=C.semantics(sides, d))
                with open(os.path.join(d, "report.txt")) as f:
                    rep = f.read()
                with open(os.path.join(d, "summary.json")) as f:
                    summary = f.read()
            self.assertEqual(len(boots), 2)
            for cmd in boots:
                self.assertTrue(cmd[0].endswith("run-qemu.sh"), cmd)
                self.assertEqual(cmd[-2:], ["--", "/selftests/hugetlb_dev"])
            self.assertIn("fault devhugetlb setup", rep)
            self.assertIn("A (a): 3 passed, 1 failed, 1 skipped", rep)
            self.assertIn('"semantics"', summary)
            if broken:
                self.assertEqual(st, C.EXIT_ERROR, rep)
                self.assertIn("kselftest boot of B failed (exit 125, 0 checks)",
                              rep)
            else:
                self.assertEqual(st, C.EXIT_OK, rep)
                self.assertIn("1 checks differ", rep)
                self.assertRegex(rep, r"hugetlb: length rounded up +FAIL +pass")

class ReferenceStatistics(unittest.TestCase):
    """The statistics against values worked out by hand from the textbook
    formulas (scipy.stats.mannwhitneyu's asymptotic method gives the same),
    and the bootstrap's properties, not its code."""

    def test_mwu_normal_with_ties_known_value(self):
        # a = 1 1 2 2 3, b = 3 4 4 5 5: mean ranks 1.5 1.5 3.5 3.5 5.5 for
        # a, so R1 = 15.5 and U = 15.5 - 15 = 0.5; mu = 12.5.  Five tie
        # groups of 2: sum(t^3 - t) = 30, var = 25/12 (11 - 30/90) =
        # 22.222; with continuity z = (12 - 0.5) / 4.7140 = 2.4395,
        # p = erfc(z / sqrt 2) = 0.014707.  Without the continuity
        # correction p would be 0.01091, without the tie correction
        # 0.01629.
        u, p, how = S.mann_whitney([1, 1, 2, 2, 3], [3, 4, 4, 5, 5])
        self.assertEqual(how, "normal")
        self.assertEqual(u, 0.5)
        self.assertAlmostEqual(p, 0.014707, places=5)

    def test_mwu_large_samples_use_the_normal_approximation(self):
        # 25 x 20 > 400 pairs, no ties, a entirely below b: U = 0,
        # mu = 250, var = 500 / 12 x 46 = 1916.67, z = 249.5 / 43.780
        # = 5.6990: p = erfc(z / sqrt 2) = 1.2053e-08
        u, p, how = S.mann_whitney(list(range(25)), list(range(100, 120)))
        self.assertEqual((u, how), (0, "normal"))
        self.assertAlmostEqual(p / 1.2053e-08, 1.0, places=3)

    SPREAD_A = [97.1, 103.4, 99.2, 101.8, 95.6, 104.9, 100.3, 98.4]
    SPREAD_B = [106.2, 111.9, 104.1, 109.5, 113.0, 107.7, 102.8, 110.4]

    def test_bootstrap_resamples(self):
        """The interval has width and holds the observed delta inside."""
        a, b = self.SPREAD_A, self.SPREAD_B
        lo, hi = S.bootstrap_ci(a, b)
        d = S.delta_pct(a, b)
        self.assertLess(lo, d)
        self.assertGreater(hi, d)
        self.assertGreater(hi - lo, 1.0)

    def test_bootstrap_is_seeded_by_its_argument(self):
        a, b = self.SPREAD_A, self.SPREAD_B
        runs = {S.bootstrap_ci(a, b, seed=s) for s in (1, 1, 1)}
        self.assertEqual(len(runs), 1, runs)
        others = {S.bootstrap_ci(a, b, seed=s) for s in range(2, 7)}
        self.assertGreater(len(others), 1,
                           "five seeds gave one interval: seed unused?")

    def test_bootstrap_level_narrows_both_ends(self):
        a, b = self.SPREAD_A, self.SPREAD_B
        lo95, hi95 = S.bootstrap_ci(a, b, level=0.95)
        lo50, hi50 = S.bootstrap_ci(a, b, level=0.50)
        self.assertLess(lo95, lo50)
        self.assertGreater(hi95, hi50)


class Verdicts(unittest.TestCase):
    """The verdict rules at their edges: the threshold is exclusive both
    ways, higher-is-better metrics turn the directions round."""

    def test_exactly_at_threshold_is_no_change(self):
        r = S.verdict([1000.0], [1050.0], threshold=5.0, deterministic=True)
        self.assertEqual(r["worse_pct"], 5.0)
        self.assertEqual(r["verdict"], "no change", r)
        r = S.verdict([1000.0], [950.0], threshold=5.0, deterministic=True)
        self.assertEqual(r["verdict"], "no change", r)

    def test_significant_p_with_a_ci_reaching_zero_is_no_change(self):
        # 8 a side, B's median 7 % worse and Mann-Whitney p = 0.029, but
        # three of A's runs at 80 let the seeded bootstrap CI of the
        # delta reach 0 ([0.0, +38.75]): a regression needs both
        a = [101, 80, 100, 80, 104, 102, 100, 80]
        b = [101, 112, 104, 115, 100, 115, 100, 110]
        r = S.verdict(a, b, threshold=5.0)
        self.assertLess(r["p"], 0.05)
        self.assertAlmostEqual(r["delta_pct"], 7.0)
        self.assertEqual(r["ci_lo"], 0.0)
        self.assertEqual(r["verdict"], "no change", r)

    def test_small_betterment_is_no_change(self):
        r = S.verdict([1000.0], [980.0], threshold=5.0, deterministic=True)
        self.assertEqual(r["verdict"], "no change", r)

    def test_higher_is_better_loss_is_a_regression(self):
        # timed (not icount): Mann-Whitney and the CI must agree
        a = [100, 102, 98, 101, 99]
        b = [80, 82, 78, 81, 79]
        r = S.verdict(a, b, threshold=5.0, lower_is_better=False)
        self.assertEqual(r["verdict"], "REGRESSION", r)
        r = S.verdict(b, a, threshold=5.0, lower_is_better=False)
        self.assertEqual(r["verdict"], "improvement", r)

    def stream_rows(self, v):
        return {"stream": [{"backing": "thp", "kernel": "read",
                            "wss_bytes": "1048576", "gb_per_s": str(v)}]}

    def test_compare_runs_reads_direction_from_the_contract(self):
        """stream's gb_per_s is higher-is-better in the contract: B 10 %
        lower regresses, B 10 % higher does not."""
        out = io.StringIO()
        st, res = C.compare_runs([(meta(), self.stream_rows(10.0))],
                                 [(meta(), self.stream_rows(9.0))], 5.0,
                                 out=out)
        self.assertEqual((st, res[0]["verdict"]),
                         (C.EXIT_REGRESSION, "REGRESSION"), out.getvalue())
        st, res = C.compare_runs([(meta(), self.stream_rows(10.0))],
                                 [(meta(), self.stream_rows(11.0))], 5.0,
                                 out=out)
        self.assertEqual((st, res[0]["verdict"]), (C.EXIT_OK, "improvement"))


class ByColumnName(unittest.TestCase):
    """compare reads points by column name: the same runs with the CSV's
    columns and the contract's key in another order give the same
    verdicts, and the CI gate (fault's demand and setup) still holds."""

    BASE = {("devhugetlb", "setup"): 10.0, ("devhugetlb", "demand"): 50.0,
            ("devhugetlb", "populate"): 40.0}

    def write_run(self, d, vals, order):
        """A run folder whose fault.csv has its columns in order."""
        os.makedirs(d)
        with open(os.path.join(d, "meta.json"), "w") as f:
            json.dump(meta(), f)
        rows = fault_rows(vals)["fault"]
        with open(os.path.join(d, "fault.csv"), "w") as f:
            f.write(",".join(order) + "\n")
            for r in rows:
                f.write(",".join(r.get(c, "0") for c in order) + "\n")
        return R.load_run(d)

    def verdicts(self, d, order):
        slow = dict(self.BASE)
        slow[("devhugetlb", "setup")] = 12.0       # gated: a regression
        slow[("devhugetlb", "populate")] = 80.0    # not gated
        a = self.write_run(os.path.join(d, "a"), self.BASE, order)
        b = self.write_run(os.path.join(d, "b"), slow, order)
        st, res = C.compare_runs([a], [b], 3.0, gate=C.CHECK_GATE,
                                 out=io.StringIO())
        return st, sorted((r["label"], r["verdict"], r["gated"])
                          for r in res)

    def test_reordered_columns_and_key_give_the_same_verdicts(self):
        c = contract.load()
        cols = list(c.bench("fault")["columns"])
        with tempfile.TemporaryDirectory() as d:
            st, want = self.verdicts(os.path.join(d, "as-is"), cols)
            self.assertEqual(st, C.EXIT_REGRESSION, want)
            # another contract: fault's columns reversed, its key rotated
            with open(c.source) as f:
                data = json.load(f)
            for b in data["benches"]:
                if b["name"] == "fault":
                    b["columns"] = cols[::-1]
                    b["key"] = b["key"][1:] + b["key"][:1]
            path = os.path.join(d, "contract.json")
            with open(path, "w") as f:
                json.dump(data, f)
            with mock.patch.dict(os.environ, {"BENCH_CONTRACT": path}):
                got_st, got = self.verdicts(os.path.join(d, "reordered"),
                                            cols[::-1])
            # labels name the key's values in the contract's order
            norm = lambda v: sorted(  # noqa: E731
                (" ".join(sorted(lab.split())), vd, g) for lab, vd, g in v)
            self.assertEqual((got_st, norm(got)), (st, norm(want)))


class ExitStatuses(unittest.TestCase):
    """What compare.py answers when it cannot judge: an error (2) or a
    refusal (3), never a regression (1) or a pass (0)."""

    def test_no_common_point_is_an_error(self):
        out = io.StringIO()
        a = fault_rows({("devhugetlb", "setup"): 10.0})
        b = fault_rows({("maphugetlb", "setup"): 10.0})
        st, res = C.compare_runs([(meta(), a)], [(meta(), b)], 3.0, out=out)
        self.assertEqual((st, res), (C.EXIT_ERROR, []), out.getvalue())
        self.assertIn("fault devhugetlb setup 4M measured on A only",
                      out.getvalue())
        self.assertIn("fault maphugetlb setup 4M measured on B only",
                      out.getvalue())

    def test_incomplete_run_is_refused(self):
        rows = fault_rows({("devhugetlb", "setup"): 10.0})
        for status in ("interrupted", "running", None):
            out = io.StringIO()
            st, _ = C.compare_runs([(meta(), rows)],
                                   [(meta(status=status), rows)], 3.0, out=out)
            self.assertEqual(st, C.EXIT_MISMATCH, (status, out.getvalue()))

    def test_selftest_boot_without_checks_is_an_error(self):
        side = {"name": "A", "rev": "a", "kernel": "k", "initrd": "i"}
        for stdout in ("", "booted, then nothing\n"):
            with tempfile.TemporaryDirectory() as d, \
                    mock.patch.object(C.subprocess, "run", lambda *a, **k:
                                      mock.Mock(returncode=0, stdout=stdout,
                                                stderr="")), \
                    mock.patch("sys.stdout", io.StringIO()):
                results, err = C.run_selftest(side, d)
            self.assertEqual(results, [])
            self.assertIn("0 checks", err or "")

    def test_record_baseline_refuses_a_timed_run(self):
        with tempfile.TemporaryDirectory() as d:
            run = os.path.join(d, "run")
            os.makedirs(run)
            with open(os.path.join(run, "meta.json"), "w") as f:
                json.dump(meta(timing_source="tcg", qemu={"icount": False}), f)
            with open(os.path.join(run, "fault.csv"), "w") as f:
                f.write("backing,mode,size_bytes,us_per_call\n"
                        "devhugetlb,setup,4194304,10\n")
            out = os.path.join(d, "baseline")
            with mock.patch("sys.stdout", io.StringIO()):
                st = C.main(["record-baseline", "--from-run", run,
                             "--out", out])
            self.assertEqual(st, C.EXIT_ERROR)
            self.assertFalse(os.path.exists(out))
            with open(os.path.join(run, "meta.json"), "w") as f:
                json.dump(meta(), f)
            with mock.patch("sys.stdout", io.StringIO()):
                st = C.main(["record-baseline", "--from-run", run,
                             "--out", out])
            self.assertEqual(st, C.EXIT_OK)
            self.assertTrue(os.path.exists(os.path.join(out, "fault.csv")))


def timed(**kw):
    return meta(timing_source="tcg", qemu={"icount": False}, **kw)


class CannotTell(unittest.TestCase):
    """Where significance is out of reach compare says so (exit 4), and
    never "no change"."""

    def sides(self, n, factor):
        base = {("devhugetlb", "demand"): 50.0, ("devhugetlb", "setup"): 10.0}
        a = [(timed(), fault_rows({k: v * (1 + i / 100)
                                   for k, v in base.items()}))
             for i in range(n)]
        b = [(timed(), fault_rows({k: v * factor * (1 + i / 100)
                                   for k, v in base.items()}))
             for i in range(n)]
        return a, b

    def test_fifty_percent_at_3_v_3_cannot_tell(self):
        for n in (1, 3):
            out = io.StringIO()
            st, res = C.compare_runs(*self.sides(n, 1.5), 3.0, out=out)
            self.assertEqual(st, C.EXIT_CANNOT_TELL, out.getvalue())
            self.assertEqual({r["verdict"] for r in res}, {"cannot tell"})
            self.assertIn("needs at least 4 runs a side", out.getvalue())
            self.assertNotIn("no change", out.getvalue())

    def test_enough_runs_tell(self):
        out = io.StringIO()
        st, _ = C.compare_runs(*self.sides(5, 1.5), 3.0, out=out)
        self.assertEqual(st, C.EXIT_REGRESSION, out.getvalue())
        st, _ = C.compare_runs(*self.sides(5, 1.0), 3.0, out=out)
        self.assertEqual(st, C.EXIT_OK, out.getvalue())

    def test_regression_elsewhere_outranks_cannot_tell(self):
        # icount points decide exactly at any n; one regressed
        out = io.StringIO()
        a = [(meta(), fault_rows({("devhugetlb", "setup"): 10.0}))]
        b = [(meta(), fault_rows({("devhugetlb", "setup"): 12.0}))]
        st, res = C.compare_runs(a, b, 3.0, out=out)
        self.assertEqual((st, res[0]["verdict"]),
                         (C.EXIT_REGRESSION, "REGRESSION"))
        self.assertIn(" n/a ", out.getvalue())

    def test_icount_only_when_both_sides_count(self):
        # A in instruction counts, B timed (compared anyway): one run a
        # side decides exactly only if both are counts; here it cannot
        out = io.StringIO()
        a = [(meta(), fault_rows({("devhugetlb", "setup"): 10.0}))]
        b = [(timed(), fault_rows({("devhugetlb", "setup"): 12.0}))]
        st, res = C.compare_runs(a, b, 3.0, allow_mismatch=True, out=out)
        self.assertEqual((st, res[0]["verdict"]),
                         (C.EXIT_CANNOT_TELL, "cannot tell"), out.getvalue())
        st, res = C.compare_runs(b, a, 3.0, allow_mismatch=True, out=out)
        self.assertEqual(res[0]["verdict"], "cannot tell", out.getvalue())

    def test_a_gated_point_lost_on_one_side_fails_the_gate(self):
        both = {("devhugetlb", "setup"): 10.0, ("devhugetlb", "demand"): 5.0}
        lost = {("devhugetlb", "setup"): 10.0}
        out = io.StringIO()
        st, _ = C.compare_runs([(meta(), fault_rows(both))],
                               [(meta(), fault_rows(lost))], 3.0,
                               gate=C.CHECK_GATE, out=out)
        self.assertEqual(st, C.EXIT_ERROR, out.getvalue())
        self.assertIn("ERROR: point fault devhugetlb demand 4M measured on A "
                      "only", out.getvalue())
        # a point the gate does not count stays a warning
        pop = dict(both)
        pop[("devhugetlb", "populate")] = 7.0
        st, _ = C.compare_runs([(meta(), fault_rows(pop))],
                               [(meta(), fault_rows(both))], 3.0,
                               gate=C.CHECK_GATE, out=out)
        self.assertEqual(st, C.EXIT_OK, out.getvalue())


class BadDataNamed(unittest.TestCase):
    """A run folder that is missing, cut short or damaged: exit 2 naming
    the file and line, no traceback, never a verdict."""
    HEADER = "backing,mode,size_bytes,us_per_call\n"

    def write_run(self, d, meta_text=None, csv_text=None):
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "meta.json"), "w") as f:
            f.write(meta_text if meta_text is not None else
                    json.dumps(meta()))
        with open(os.path.join(d, "fault.csv"), "w") as f:
            f.write(csv_text if csv_text is not None else self.HEADER +
                    "devhugetlb,setup,4194304,10\n"
                    "devhugetlb,demand,4194304,50\n")
        return d

    def diff(self, a, b):
        p = subprocess.run([sys.executable, "-m", "compare.compare", "diff", a, b, "--out",
            os.path.join(os.path.dirname(a), "out")],
            capture_output=True, text=True)
        self.assertNotIn("Traceback", p.stderr)
        return p

    def check(self, damage, where, what):
        with tempfile.TemporaryDirectory() as t:
            good = self.write_run(os.path.join(t, "a"))
            bad = self.write_run(os.path.join(t, "b"), **damage)
            p = self.diff(good, bad)
            self.assertEqual(p.returncode, C.EXIT_ERROR, p.stdout + p.stderr)
            self.assertIn("bad data: " + os.path.join(bad, where), p.stderr)
            self.assertIn(what, p.stderr)

    def test_a_missing_folder(self):
        with tempfile.TemporaryDirectory() as t:
            good = self.write_run(os.path.join(t, "a"))
            p = self.diff(good, os.path.join(t, "nosuch"))
            self.assertEqual(p.returncode, C.EXIT_ERROR, p.stderr)
            self.assertIn("no such run folder", p.stderr)

    def test_a_row_cut_short(self):
        self.check({"csv_text": self.HEADER + "devhugetlb,setup,4194304,10\n"
                    "devhugetlb,dem"}, "fault.csv:3", "cut short")
        # cut inside the last number: the fields are all there
        self.check({"csv_text": self.HEADER + "devhugetlb,setup,4194304,10\n"
                    "devhugetlb,demand,4194304,5"}, "fault.csv:3",
                   "no newline at its end")
        self.check({"csv_text": self.HEADER + "devhugetlb,setup\n"
                    "devhugetlb,demand,4194304,50\n"}, "fault.csv:2",
                   "2 fields where the header has 4")

    def test_a_cut_meta(self):
        self.check({"meta_text": '{"run_id": "r",\n "mode": "gu'},
                   "meta.json:2", "not JSON")

    def test_a_non_numeric_metric(self):
        self.check({"csv_text": self.HEADER + "devhugetlb,setup,4194304,10\n"
                    "devhugetlb,demand,4194304,fast\n"}, "fault.csv:3",
                   "us_per_call is 'fast', not a number")

    def test_an_empty_metric_is_a_point_not_measured(self):
        with tempfile.TemporaryDirectory() as t:
            d = self.write_run(t, csv_text=self.HEADER +
                               "devhugetlb,setup,4194304,\n")
            _, rows = R.load_run(d)
            self.assertEqual(C.collect([({}, rows)]), {})


class TimingByDefault(unittest.TestCase):
    """Under TCG compare counts instructions unless asked for TCG time,
    which it then labels; under KVM it times (issue 30, point 2)."""

    def decide(self, accel, **flags):
        args = argparse.Namespace(icount=False, timed=False)
        for k, v in flags.items():
            setattr(args, k, v)
        with mock.patch.object(C, "guest_accel", return_value=accel):
            said = C.timing(args)
        return args.icount, said

    def test_tcg_counts_instructions(self):
        icount, said = self.decide("tcg")
        self.assertTrue(icount)
        self.assertIn("instruction counts", said)

    def test_timed_tcg_only_on_request_and_labelled(self):
        icount, said = self.decide("tcg", timed=True)
        self.assertFalse(icount)
        self.assertIn("TCG time, on request", said)
        self.assertIn("not hardware", said)

    def test_kvm_times(self):
        icount, said = self.decide("kvm")
        self.assertFalse(icount)
        self.assertIn("wall time under kvm", said)

    def test_contradictions_refused(self):
        for accel, flags in (("kvm", {"icount": True}),
                             ("tcg", {"icount": True, "timed": True})):
            with self.subTest(accel=accel, flags=flags):
                with self.assertRaises(SystemExit) as e:
                    self.decide(accel, **flags)
                self.assertIn("compare:", str(e.exception.code))



def chase_rows(model, counted="", ns=20.0, backing="devzero"):
    """One chase row (page hop, 16 MB) with its model's and the counter's
    walks per 1000 accesses."""
    return {"chase": [{"backing": backing, "hop": "page",
                       "wss_bytes": str(16 << 20), "ns_per_access": str(ns),
                       "model_walks_per_1k": str(model),
                       "walks_per_1k": str(counted)}]}


class TlbEvidence(unittest.TestCase):
    """The chase's page walks are compared beside its latency: modelled
    walks exactly (the replay is seeded: every boot gives the same
    number), counted walks by the tests, as time is."""

    def test_points_beside_the_metric(self):
        pts = C.collect([(meta(), chase_rows(593.0, 410.5))])
        key = ("chase", "devzero", "page", str(16 << 20))
        self.assertEqual(pts, {key: [20.0],
                               key + ("model_walks_per_1k",): [593.0],
                               key + ("walks_per_1k",): [410.5]})
        self.assertEqual(C.point_label(key + ("model_walks_per_1k",)),
                         "chase devzero page 16M model_walks_per_1k")
        # no counter on this host: an empty cell is no point
        self.assertNotIn(key + ("walks_per_1k",),
                         C.collect([(meta(), chase_rows(593.0))]))

    def test_model_walks_decide_exactly_in_a_timed_run(self):
        # one timed run a side: latency cannot tell, the model can
        out = io.StringIO()
        st, res = C.compare_runs([(timed(), chase_rows(500.0))],
                                 [(timed(), chase_rows(600.0))], 3.0, out=out)
        by = {r["metric"]: r for r in res}
        self.assertEqual(by["ns_per_access"]["verdict"], "cannot tell")
        self.assertEqual((by["model_walks_per_1k"]["verdict"],
                          by["model_walks_per_1k"]["test"],
                          by["model_walks_per_1k"]["delta_pct"]),
                         ("REGRESSION", "model", 20.0))
        self.assertEqual(st, C.EXIT_REGRESSION, out.getvalue())
        self.assertRegex(out.getvalue(),
                         r"chase devzero page 16M model_walks_per_1k +"
                         r"model_walks_per_1k +500 +600 +\+20\.00 .* n/a +model +"
                         r"REGRESSION")
        # fewer walks is an improvement, not a regression
        st, res = C.compare_runs([(timed(), chase_rows(600.0))],
                                 [(timed(), chase_rows(500.0))], 3.0, out=out)
        by = {r["metric"]: r for r in res}
        self.assertEqual(by["model_walks_per_1k"]["verdict"], "improvement")

    def test_counted_walks_need_the_test(self):
        a = [(timed(), chase_rows(500.0, 400.0 + i)) for i in range(3)]
        b = [(timed(), chase_rows(500.0, 600.0 + i)) for i in range(3)]
        out = io.StringIO()
        _, res = C.compare_runs(a, b, 3.0, out=out)
        by = {r["metric"]: r for r in res}
        self.assertEqual(by["walks_per_1k"]["verdict"], "cannot tell")
        self.assertEqual(by["model_walks_per_1k"]["verdict"], "no change")

    def test_a_damaged_walks_cell_is_named(self):
        with tempfile.TemporaryDirectory() as t:
            os.makedirs(os.path.join(t, "r"))
            with open(os.path.join(t, "r", "chase.csv"), "w") as f:
                f.write("backing,hop,wss_bytes,ns_per_access,"
                        "model_walks_per_1k\n"
                        "devzero,page,16777216,20,12x\n")
            with self.assertRaises(R.BadData) as e:
                R.read_csv(os.path.join(t, "r", "chase.csv"),
                           contract.load().bench("chase"))
        self.assertIn("chase.csv:2: model_walks_per_1k is '12x'",
                      str(e.exception))



class SplitPages(unittest.TestCase):
    """A run whose hardware held huge pages as smaller TLB entries (the
    report's verdict, plots/split.py): compare marks those points [split]
    and says why (issue 29 point 3); under TCG nothing applies."""

    def write_run(self, d, timing, run_id):
        os.makedirs(d)
        m = meta(run_id=run_id, timing_source=timing,
                 qemu={"accel": timing, "icount": False})
        m["host_memory"] = {"kernel_page_kb": 4}
        with open(os.path.join(d, "meta.json"), "w") as f:
            json.dump(m, f)
        with open(os.path.join(d, "chase.csv"), "w") as f:
            f.write("backing,page_kb,hop,wss_bytes,ns_per_access,"
                    "model_walks_per_1k\n"
                    "maphugetlb,2048,page,16777216,20,0\n"
                    "devzero,4,page,16777216,60,500\n")
        return d

    def diff(self, timing):
        with tempfile.TemporaryDirectory() as t:
            a = self.write_run(os.path.join(t, "a"), timing, "ra")
            b = self.write_run(os.path.join(t, "b"), timing, "rb")
            p = subprocess.run([sys.executable, "-m", "compare.compare", "diff", a, b, "--out",
                os.path.join(t, "out")], capture_output=True, text=True)
        self.assertNotIn("Traceback", p.stderr)
        return p.stdout

    def test_kvm_on_host_4k_pages_is_flagged(self):
        out = self.diff("kvm")
        lines = {l.split()[1]: l for l in out.splitlines()
                 if l.startswith("chase ")}
        self.assertTrue(lines["maphugetlb"].endswith("[split]"), out)
        self.assertNotIn("[split]", lines["devzero"])
        self.assertIn("split pages: the points marked [split] are on a page "
                      "size held as 4 KiB entries: guest RAM on host 4 KiB "
                      "pages", out)

    def test_tcg_has_no_hardware_tlb_to_split(self):
        out = self.diff("tcg")
        self.assertNotIn("[split]", out)
        self.assertNotIn("split pages", out)


def main(argv):
    """[--failfast] [NAME...]: only the tests whose name contains a NAME
    (make test-compare ONLY=mwu,verdict)."""
    failfast, names = harness.only_args(argv)
    loader = unittest.TestLoader()
    loader.testNamePatterns = ["*%s*" % n for n in names] or None
    return harness.run_unittest(
        loader.loadTestsFromModule(sys.modules[__name__]), failfast=failfast)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
