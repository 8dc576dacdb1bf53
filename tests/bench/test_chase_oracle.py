# SPDX-License-Identifier: GPL-2.0
"""The chase against an oracle of its own (issue 19, points 5 and 9).

tests/bench/minichase.c is a minimal chase (one process, one mapping, one
Sattolo cycle over every line, or with -p over every 4 KB page at a random
line of it, no pinning) that shares nothing with bench/.  BothHops: natively
the chase against minichase in pairs on the same page size (devzero and
4 KB pages, maphugetlb and 2 MB), the line hop past four times the LLC,
the page hop (the one that isolates the TLB) at 64 MB; the median of the
pairs' ratios within a fixed 10 % of 1; a chase whose path is sixteen
times too short must fall outside it (the negative control).  Each try is
judged on its own runs, so a retry never widens the band, by
tests/bench/quiet.py's policy: a busy machine skips, saying so; it is a
timing test (bench.mk's TIMING_TESTS, make test-timing).

NativeAgreement (only with HUGETLB_TIMING_TESTS=1): the chase's
interleaved run must agree with single-backing runs at 16M and 64M; on a
host shared with other work each side keeps its least time over up to
ATTEMPTS attempts of RUNS runs.  The run.py half (bench-native's check on
every backing) is tested with a fake oracle, which needs no timing at
all."""
import csv
import glob
import os
import shutil
import stat
import sys
import tempfile
import unittest
from unittest import mock

from tests.bench.benchbin import BenchRun
from tests.bench.common import BINDIR, past_the_llc, raise_free
from tests.bench import quiet
from bench import benchrun as run_py

MB = 1 << 20
RUNS, ATTEMPTS = 3, 3
TOLERANCE = 0.10
HOPS = "512K"


def chase_rows(backings, wss, hop):
    """One chase run's rows: 3 repetitions of HOPS hops at wss."""
    r = BenchRun("chase", ["--sizes", str(wss), "--hop", hop,
                           "--hops", HOPS, "--reps", "3",
                           "--model-cap", "1K",
                           "--backings", ",".join(backings)])
    if r.returncode:
        raise AssertionError(r.describe())
    return r.rows


def chase_min(backings, wss, runs=RUNS, hop="line"):
    """{backing: least ns_min} over runs runs of the chase."""
    best = {}
    for _ in range(runs):
        for row in chase_rows(backings, wss, hop):
            ns = float(row["ns_min"])
            best[row["backing"]] = min(best.get(row["backing"], ns), ns)
    return best


def chase_median(backing, wss, hop):
    """One chase run: (its ns_per_access, the median of its repetitions;
    the CPU it pinned itself to, -1 for none)."""
    r = BenchRun("chase", ["--sizes", str(wss), "--hop", hop,
                           "--hops", HOPS, "--reps", "3",
                           "--model-cap", "1K", "--backings", backing])
    if r.returncode:
        raise AssertionError(r.describe())
    return (float(r.rows[0]["ns_per_access"]),
            r.meta["method"][0]["cpu_pinned"])


class BothHops(unittest.TestCase):
    """The chase against minichase natively, both hops, a fixed band.

    One try: RUNS pairs of one chase run and one minichase run, back to
    back, in turn which goes first, each a new mapping, minichase pinned
    to the CPU the chase pinned itself to; like for like, each pair's
    ratio is the chase's ns_per_access (the median of its repetitions)
    over minichase's one timed pass, and the median of the pairs' ratios
    must lie within a fixed 10 % of 1.  Why pairs on one CPU: on a VM one
    vCPU is not another, and the machine drifts between minutes (on this
    project's quiet Intel VM, minichase's page hop read 23.5 ns on CPU 0
    and 20.5 on CPU 1 six runs in a row, yet minutes later the pairs'
    median with minichase on CPU 0 and the chase on CPU 1 read -4 to +7 %,
    and one pair read 50 and 56 ns where the pairs around it read 21 and 22;
    the chase, pinned there, agreed with minichase on its CPU within 3 %
    on all but that one; this test's tries: -1 to +1 % on both hops), and
    CI's quiet run of the old test, the chase on its CPU against an
    unpinned minichase, median against median, failed both hops at +12
    to +42 %.  (The chase's ns_min, the least of its repetitions, read
    low: in CI's first quiet run its 2 MB page hop sat 10 and 21 % under
    minichase.)  A try counts only on a quiet machine (quiet.judge
    strict: noise moves either side into the band as easily as out of
    it), and each try stands alone, so a retry never widens the band.
    What it misses: a distortion under 10 %, and anything both share
    (the clock, the CPU, the VM's nested paging, the host's page
    placement).
    """

    # The line hop past four times the LLC (common.py past_the_llc: 128 MB
    # on a 32 MB L3, 2 GB on a 260 MB one), as its name says: it measures
    # memory.  The page hop at 64 MB: 16384 4 KB pages, past every L2
    # TLB's 4 KB reach this project has met (2048 or 3072 entries, 8 or 12
    # MB), its 16384 lines (1 MB) inside the LLC, so that a hop costs the
    # walk and not DRAM (past the LLC, 2 GB on this project's Intel VM, it
    # read 254 to 330 ns on 4 KB pages against 26 at 64 MB: DRAM's time).
    PAGE_WSS = 64 * MB
    TRIES = 4
    # pairs in a try: each is a new mapping on each side, and on this
    # project's VM one mapping's page hop differs from the next by up to
    # 13 % (its lines at random offsets of pages at new frames: 16384
    # lines, the size of the L2); the median of 7 ratios holds that well
    # inside the band
    RUNS = 7

    @classmethod
    def setUpClass(cls):
        cls.wss = {"line": past_the_llc(), "page": cls.PAGE_WSS}
        cls.pool_pages = max(cls.wss.values()) // (2 * MB) + 8
        cls.pools = run_py.HugePools()
        cls.huge = raise_free(cls.pools, 2048, cls.pool_pages)

    @classmethod
    def tearDownClass(cls):
        cls.pools.restore()

    def pairs(self):
        return [("devzero", "4k")] + \
            ([("maphugetlb", "2m")] if self.huge else [])

    def judge(self, hop, chase_wss, want_agree):
        """quiet.judge over TRIES tries: each try agrees (or, with
        want_agree False, disagrees) on every backing, or it does not."""
        def measure():
            detail, ok = [], True
            for b, kind in self.pairs():
                r, a, o, cpu = quiet.paired(
                    lambda: chase_median(b, chase_wss, hop),
                    lambda cpu: self.minichase(kind, hop, cpu), self.RUNS)
                ok &= (abs(r - 1) <= TOLERANCE) is want_agree
                detail.append("%s %.1f ns vs minichase %s %.1f ns on CPU "
                              "%d (pairs' median ratio %+.0f %%)"
                              % (b, a, kind, o, cpu, 100 * (r - 1)))
            return ok, ", ".join(detail)
        quiet.verdict(self, quiet.judge(measure, self.TRIES, strict=True),
                      "the chase's %s hop at %d MB %s minichase's at %d MB "
                      "within 10 %%" % (hop, chase_wss // MB,
                                        "agrees with" if want_agree else
                                        "is caught out of",
                                        self.wss[hop] // MB))
        if not self.huge:
            self.skipTest("4 KB pages checked; 2 MB not: cannot raise the "
                          "2 MB pool by %d pages (run as root)"
                          % self.pool_pages)

    def minichase(self, kind, hop, cpu):
        """One minichase run at the hop's size on cpu (the chase's: -1,
        none)."""
        ns, err = run_py.minichase(BINDIR, kind, self.wss[hop], 512 << 10,
                                   runs=1, hop=hop,
                                   cpu=cpu if cpu >= 0 else None)
        self.assertIsNone(err)
        return ns[0]

    def test_line_hop(self):
        self.judge("line", self.wss["line"], True)

    def test_page_hop(self):
        self.judge("page", self.wss["page"], True)

    def test_a_shortened_path_is_caught(self):
        """The negative control: a chase over a sixteenth of the working
        set (a shortened path, as a chase that skipped most of its cycle:
        the line hop's a quarter to a half of the LLC, the page hop's 4 MB,
        inside the 4 KB L2 TLB's reach) must fall outside the band, for
        each hop.  (A quarter, 16 MB against 64, was no reliable control
        on a busy VM: its line hop read 210-440 ns against minichase's
        240-450 ns.)"""
        for hop in ("line", "page"):
            self.judge(hop, self.wss[hop] // 16, False)


# On an idle run of this project's 2-vCPU VM, three attempts at 16 MB still
# read devzero 73.5 ns interleaved against 112.7 ns alone (thp 94.1 against
# 71.0): wall time on a shared VM cannot gate make test.  These run on
# request, on a quiet host; make bench-native checks its own chase against
# minichase on every backing in every run (bench/run.py).
@unittest.skipUnless(os.environ.get("HUGETLB_TIMING_TESTS") == "1",
                     "wall-time agreement is not repeatable on a shared VM: run "
                     "HUGETLB_TIMING_TESTS=1 make test-bench "
                     "ONLY=test_chase_oracle.NativeAgreement on a quiet host "
                     "(BothHops, a timing test, checks the chase against "
                     "minichase)")
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
                    "grep Cpus_allowed_list: /proc/$$/status | cut -f2 "
                    ">> %s/cpus\necho ns_per_hop 100.0\n"
                    % (self.dir, self.dir))
        os.chmod(fake, stat.S_IRWXU)
        self.res = FakeResults(self.dir)

    def write_rows(self, rows):
        """rows of (backing, page_kb, wss, ns_per_access, hop); each row's
        ns_min, its least repetition, a fifth under its median, so a check
        that read the least would judge other numbers."""
        with open(self.res.csv_path("chase"), "w") as f:
            w = csv.writer(f)
            w.writerow(["backing", "page_kb", "wss_bytes", "ns_per_access",
                        "ns_min", "hop"])
            w.writerows(r[:4] + (r[3] * 0.8,) + r[4:] for r in rows)

    def test_agreement_on_every_backing(self):
        self.write_rows([("devzero", 4, 1 << 30, 105, "line"),
                         ("thp", 2048, 1 << 30, 95, "line"),
                         ("hugetlbfs-1g", 1048576, 1 << 30, 90, "line"),
                         ("devzero", 4, 1 << 30, 108, "page"),
                         ("devzero", 4, 1 << 20, 500, "line"),
                         ("devzero", 4, 2 << 30, 500, "line")])
        self.assertEqual(self.check(), 0)
        # the page hop too, against minichase -p, one hop per 4 KB page
        p = self.res.meta["chase_oracle_page"]
        self.assertEqual((p["hop"], p["hops"]), ("page", (1 << 30) // 4096))
        self.assertEqual(p["backings"]["devzero"]["ratio"], 1.08)
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
        self.assertIn("-p 4k %d %d %d" % (1 << 30, 1 << 18, 1 << 18), calls)
        self.assertFalse(self.res.meta["errors"])

    def test_pinned_to_the_chases_cpu(self):
        """minichase runs on the CPU the chase pinned itself to (its
        @meta method, in meta.json), and where the chase was not pinned
        (-1) or said nothing, wherever the scheduler puts it."""
        rows = [("devzero", 4, 1 << 30, 100, "line"),
                ("devzero", 4, 1 << 30, 100, "page")]
        allowed = sorted(os.sched_getaffinity(0))
        for cpu, want in ((allowed[-1], str(allowed[-1])), (-1, None),
                          (None, None)):
            self.res.meta["method"] = {} if cpu is None else \
                {"per_bench": {"chase": {"cpu_pinned": cpu}}}
            self.write_rows(rows)
            self.assertEqual(self.check(), 0)
            with open(os.path.join(self.dir, "cpus")) as f:
                got = set(f.read().split())
            os.unlink(os.path.join(self.dir, "cpus"))
            self.assertEqual(self.res.meta["chase_oracle"]["cpu"],
                             None if want is None else int(want))
            if want is None:
                # the whole allowed set, as this process has it
                self.assertEqual(len(got), 1)
                self.assertNotEqual(got, {str(allowed[-1])} if
                                    len(allowed) > 1 else set())
            else:
                self.assertEqual(got, {want})

    def test_a_page_hop_disagreement_fails_the_run(self):
        self.write_rows([("devzero", 4, 1 << 30, 100, "line"),
                         ("devzero", 4, 1 << 30, 150, "page")])
        self.assertEqual(self.check(), 2)
        self.assertTrue(self.res.meta["chase_oracle"]["backings"]["devzero"]["agree"])
        self.assertFalse(
            self.res.meta["chase_oracle_page"]["backings"]["devzero"]["agree"])
        self.assertIn("(page hop)", self.res.meta["errors"][0])

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
        # the ratio is against the oracle's least: 140 / 100, 92 / 100
        self.assertEqual((o["devzero"]["ratio"], o["thp"]["ratio"]), (1.4, 0.92))
        self.assertTrue(o["devzero"]["agree"] and o["thp"]["agree"])
        # each attempt is judged on its own runs: 100 then 140 together
        # would take 125, either alone does not, so a retry cannot widen
        # the band into agreement
        self.fake_sequence([100, 100, 100, 140])
        self.write_rows([("devzero", 4, 1 << 30, 125, "line")])
        self.assertEqual(self.check(), 2)
        o = self.res.meta["chase_oracle"]
        self.assertEqual(o["attempts"], run_py.ORACLE_ATTEMPTS)
        self.assertEqual(o["backings"]["devzero"]["oracle_runs"], 3)
        for ns in (144, 89):      # past 130 + 10 %, under 100 - 10 %
            self.fake_sequence([100, 130, 115])
            self.write_rows([("devzero", 4, 1 << 30, ns, "line")])
            self.assertEqual(self.check(), 2, ns)
            # named with the last attempt's band (the fake's later runs)
            self.assertIn("devzero %.1f ns vs 115.0 to 115.0 ns" % ns,
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
        self.assertIn("not judged (neither passed nor failed): load "
                      "average 99.0",
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
