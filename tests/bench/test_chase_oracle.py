# SPDX-License-Identifier: GPL-2.0
"""The chase against an oracle of its own (issue 19, points 5 and 9).

tests/bench/minichase.c is a minimal chase (one process, one mapping, one
Sattolo cycle over every line, no pinning) that shares nothing with bench/.
Natively at 64M (beyond the LLC and the 4 KB pages' TLB reach) the chase's
ns_min on devzero (4 KB pages) and maphugetlb (2 MB pages) must be within
10 % of the oracle's on the same page size, and the chase's interleaved
run must agree with single-backing runs at 16M and 64M.

These are wall-time measurements, run only with HUGETLB_TIMING_TESTS=1
(see NativeAgreement); on a host shared with other work each
side keeps its least time over up to ATTEMPTS attempts of RUNS runs: an
attempt that disagrees is retried (the retries are printed), and only a
disagreement that outlives every attempt fails.  When an attempt disagrees
while the load average is above the CPU count, the test skips and says so
(with that load, runs of one program differ by 2x: seen on the 2-CPU
development VM at load 12).  The
run.py half (bench-native's check on every backing) is tested with a fake
oracle, which needs no timing at all."""
import csv
import glob
import os
import shutil
import stat
import sys
import tempfile
import unittest
from unittest import mock

from benchbin import BenchRun
from common import BINDIR, raise_free
import quiet

MB = 1 << 20
RUNS, ATTEMPTS = 3, 3
HOPS = "512K"
import benchrun as run_py  # noqa: E402


def chase_min(backings, wss, runs=RUNS):
    """{backing: least ns_min} over runs runs of the chase (line hop)."""
    best = {}
    for _ in range(runs):
        r = BenchRun("chase", ["--sizes", str(wss), "--hop", "line",
                               "--hops", HOPS, "--reps", "3",
                               "--model-cap", "1K",
                               "--backings", ",".join(backings)])
        if r.returncode:
            raise AssertionError(r.describe())
        for row in r.rows:
            ns = float(row["ns_min"])
            best[row["backing"]] = min(best.get(row["backing"], ns), ns)
    return best


# On an idle run of this project's 2-vCPU VM, three attempts at 16 MB still
# read devzero 73.5 ns interleaved against 112.7 ns alone (thp 94.1 against
# 71.0): wall time on a shared VM cannot gate make test.  These run on
# request, on a quiet host; make bench-native checks its own chase against
# minichase on every backing in every run (bench/run.py).
@unittest.skipUnless(os.environ.get("HUGETLB_TIMING_TESTS") == "1",
                     "wall-time agreement is not repeatable on a shared VM: run "
                     "HUGETLB_TIMING_TESTS=1 make test-bench ONLY=test_chase_oracle "
                     "on a quiet host (make bench-native checks the chase against "
                     "minichase in every run)")
class NativeAgreement(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.pools = run_py.HugePools()
        cls.huge = raise_free(cls.pools, 2048, 40)

    @classmethod
    def tearDownClass(cls):
        cls.pools.restore()

    def agree(self, what, measure):
        """Runs measure() -> {name: (a, b)} up to ATTEMPTS times, keeping
        each side's least; passes when every a/b is within 10 %."""
        best = {}
        for attempt in range(1, ATTEMPTS + 1):
            with quiet.Others() as load:
                got = measure()
            for k, (a, b) in got.items():
                pa, pb = best.get(k, (a, b))
                best[k] = (min(pa, a), min(pb, b))
            off = {k: a / b for k, (a, b) in best.items()
                   if abs(a / b - 1) > 0.10}
            if not off:
                if attempt > 1:
                    print("%s: agreed on attempt %d: %s" % (what, attempt,
                                                           best),
                          file=sys.stderr)
                return best
            if not load.quiet:
                self.skipTest("%s: ratios %s are over 10 %% off on attempt "
                              "%d, while %s (rerun on an idle host)"
                              % (what, off, attempt, load))
            print("%s: attempt %d disagrees (ratios %s), retrying"
                  % (what, attempt, off), file=sys.stderr)
        self.fail("%s: over 10 %% apart after %d attempts: %s"
                  % (what, ATTEMPTS, best))

    def test_chase_agrees_with_minichase_at_64m(self):
        pairs = [("devzero", "4k")] + \
            ([("maphugetlb", "2m")] if self.huge else [])

        def measure():
            suite = chase_min([b for b, _ in pairs], 64 * MB)
            out = {}
            for b, kind in pairs:
                ns, err = run_py.minichase(BINDIR, kind, 64 * MB, 512 << 10)
                self.assertIsNone(err)
                out[b] = (suite[b], min(ns))
            return out
        self.agree("chase vs minichase", measure)
        if not self.huge:
            self.skipTest("4 KB pages checked; 2 MB not: cannot raise the "
                          "2 MB pool by 40 pages (run as root)")

    def test_interleaved_agrees_with_single_backing(self):
        backings = ["devzero", "thp"]
        for wss in (16 * MB, 64 * MB):
            def measure():
                both = chase_min(backings, wss)
                return {b: (both[b], chase_min([b], wss)[b])
                        for b in backings}
            self.agree("interleaved vs single at %d MB" % (wss // MB),
                       measure)


class FakeResults:
    def __init__(self, d):
        self.dir = d
        self.meta = {"errors": []}

    def csv_path(self, bench):
        return os.path.join(self.dir, bench + ".csv")

    def write_meta(self):
        pass


class RunPyOracle(unittest.TestCase):
    """bench-native's check (run.py check_chase_oracle) on every backing,
    with a fake minichase that prints 100 ns per hop."""

    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.dir)
        fake = os.path.join(self.dir, "minichase")
        with open(fake, "w") as f:
            f.write("#!/bin/sh\n[ \"$1\" = 1g ] && { echo no pool >&2; "
                    "exit 1; }\necho \"$*\" >> %s/calls\n"
                    "echo ns_per_hop 100.0\n" % self.dir)
        os.chmod(fake, stat.S_IRWXU)
        self.res = FakeResults(self.dir)

    def write_rows(self, rows):
        with open(self.res.csv_path("chase"), "w") as f:
            w = csv.writer(f)
            w.writerow(["backing", "page_kb", "wss_bytes", "ns_min", "hop"])
            w.writerows(rows)

    def test_agreement_on_every_backing(self):
        self.write_rows([("devzero", 4, 1 << 30, 105, "line"),
                         ("thp", 2048, 1 << 30, 95, "line"),
                         ("hugetlbfs-1g", 1048576, 1 << 30, 90, "line"),
                         ("devzero", 4, 1 << 30, 500, "page"),
                         ("devzero", 4, 1 << 20, 500, "line"),
                         ("devzero", 4, 2 << 30, 500, "line")])
        self.assertEqual(self.check(), 0)
        o = self.res.meta["chase_oracle"]
        self.assertEqual(o["wss_bytes"], 1 << 30)
        self.assertEqual(o["attempts"], 1)
        self.assertEqual(o["backings"]["devzero"]["ratio"], 1.05)
        self.assertTrue(o["backings"]["thp"]["agree"])
        self.assertIsNone(o["backings"]["hugetlbfs-1g"]["agree"])
        self.assertIn("no pool", o["backings"]["hugetlbfs-1g"]["reason"])
        with open(os.path.join(self.dir, "calls")) as f:
            calls = f.read().split("\n")
        self.assertIn("4k %d %d %d" % (1 << 30, 4 << 20, 4 << 20), calls)
        self.assertFalse(self.res.meta["errors"])

    def check(self, load=0.0):
        with mock.patch.object(os, "getloadavg",
                               return_value=(load, load, load)):
            return run_py.check_chase_oracle(self.res, self.dir)

    def test_disagreement_fails_the_run(self):
        self.write_rows([("devzero", 4, 64 << 20, 111, "line"),
                         ("memfd", 2048, 64 << 20, 100, "line")])
        self.assertEqual(self.check(), 2)
        o = self.res.meta["chase_oracle"]
        self.assertEqual(o["attempts"], run_py.ORACLE_ATTEMPTS)
        self.assertFalse(o["backings"]["devzero"]["agree"])
        self.assertTrue(o["backings"]["memfd"]["agree"])
        self.assertIn("devzero 111.0 ns vs 100.0 to 100.0 ns",
                      self.res.meta["errors"][0])

    def test_the_chase_is_judged_against_the_oracles_range(self):
        """Each oracle run maps anew, as the chase did once: the chase
        agrees anywhere in the runs' range widened by 10 %, not only near
        their least (on a VM host the least of many mappings is far below
        a typical one)."""
        self.fake_sequence([100, 130, 115])
        self.write_rows([("devzero", 4, 1 << 30, 140, "line"),
                         ("thp", 2048, 1 << 30, 92, "line")])
        self.assertEqual(self.check(), 0)
        o = self.res.meta["chase_oracle"]["backings"]
        self.assertEqual((o["devzero"]["oracle_ns_min"],
                          o["devzero"]["oracle_ns_max"],
                          o["devzero"]["oracle_runs"]), (100, 130, 3))
        self.assertTrue(o["devzero"]["agree"] and o["thp"]["agree"])
        # a second attempt adds its runs to the first's: 100 then 140
        # together take 125, either alone would not
        self.fake_sequence([100, 100, 100, 140])
        self.write_rows([("devzero", 4, 1 << 30, 125, "line")])
        self.assertEqual(self.check(), 0)
        o = self.res.meta["chase_oracle"]
        self.assertEqual(o["attempts"], 2)
        self.assertEqual(o["backings"]["devzero"]["oracle_runs"], 6)
        for ns in (144, 89):      # past 130 + 10 %, under 100 - 10 %
            self.fake_sequence([100, 130, 115])
            self.write_rows([("devzero", 4, 1 << 30, ns, "line")])
            self.assertEqual(self.check(), 2, ns)
            self.assertIn("devzero %.1f ns vs 100.0 to 130.0 ns" % ns,
                          self.res.meta["errors"][-1])

    def fake_sequence(self, values):
        """A fake minichase printing values in turn for each page size,
        then the last."""
        with open(os.path.join(self.dir, "minichase"), "w") as f:
            f.write("#!/bin/sh\nc=%s/n.$1\nn=$(cat $c 2>/dev/null || "
                    "echo 0)\necho $((n + 1)) > $c\nset -- %s\n"
                    "shift $((n < $# ? n : $# - 1))\necho ns_per_hop $1\n"
                    % (self.dir, " ".join(map(str, values))))
        for n in glob.glob(os.path.join(self.dir, "n.*")):
            os.unlink(n)

    def test_disagreement_on_a_loaded_host_is_a_note(self):
        self.write_rows([("devzero", 4, 64 << 20, 150, "line")])
        self.assertEqual(self.check(load=99.0), 0)
        self.assertFalse(self.res.meta["errors"])
        self.assertIn("not a failure: load average 99.0",
                      self.res.meta["notes"][0])
        self.assertFalse(
            self.res.meta["chase_oracle"]["backings"]["devzero"]["agree"])

    def test_small_sizes_are_not_checked(self):
        # the tiny profile's chase: all of it in the caches
        self.write_rows([("devzero", 4, 8 << 20, 300, "line")])
        self.assertEqual(self.check(), 0)
        self.assertIn("not checked", self.res.meta["chase_oracle"]["reason"])
        self.assertFalse(os.path.exists(os.path.join(self.dir, "calls")))

    def test_no_chase_rows_no_check(self):
        self.assertEqual(self.check(), 0)
        self.assertEqual(self.res.meta["chase_oracle"]["backings"], {})


if __name__ == "__main__":
    unittest.main()
