# SPDX-License-Identifier: GPL-2.0
"""bench/gups.c against an oracle of its own (issue 34, point 3).

tests/bench/minigups.c is HPCC RandomAccess written again (one process,
one mapping, its own branch-free LFSR, its lanes' starting values found by
stepping the stream from 1, one untimed and one timed pass, both verified,
no pinning) that shares nothing with bench/.
AgainstMinigups (a timing test, bench.mk's TIMING_TESTS, make
test-timing): natively on a table past four times the LLC (common.py
past_the_llc: 128 MB on a 32 MB L3, 2 GB on a 260 MB one; past the 4 KB
pages' TLB reach, inside the 2 MB pages' on every host this project has
met), UPDATES updates a pass on both
sides, gups's ns per update against minigups's on the same page size
(devzero and 4k; maphugetlb and 2m), in pairs run back to back on the CPU
gups pins itself to, the median of the pairs' ratios within a fixed 10 %
of 1 under tests/bench/quiet.py's policy (a busy machine skips, saying
so); the negative control: gups on a table 16 times smaller, reported
against minigups on the whole one, must fall outside the band.
RunPyOracle: bench-native's check (bench/benchrun/native.py
check_gups_oracle) with a fake minigups, which needs no timing.
(tests/bench/test_gups.py checks the stream and the verification, which
catch a distorted update stream without any timing.)"""
import csv
import os
import shutil
import stat
import subprocess
import tempfile
import unittest
from unittest import mock

from bench import benchrun as run_py
from tests.bench import quiet
from tests.bench.benchbin import BenchRun
from tests.bench.common import BINDIR, past_the_llc, raise_free

MB = 1 << 20


def gups(args):
    return BenchRun("gups", args)


def gups_median(backing, wss, updates):
    """One gups run on one backing: (ns_per_update, the median of its 3
    repetitions of updates updates; the CPU it pinned itself to)."""
    r = gups(["--backings", backing, "--sizes", str(wss), "--reps", "3",
              "--warmup", "0", "--updates", str(updates)])
    if r.returncode or len(r.rows) != 1:
        raise AssertionError(r.describe())
    return (float(r.rows[0]["ns_per_update"]),
            r.meta["method"][0]["cpu_pinned"])


def minigups(kind, wss, updates, cpu):
    """One minigups run (its one timed pass) on cpu (-1: anywhere)."""
    pin = None if cpu < 0 else (lambda: os.sched_setaffinity(0, {cpu}))
    p = subprocess.run([os.path.join(BINDIR, "minigups"), kind, str(wss),
                        str(updates)],
                       capture_output=True, text=True, preexec_fn=pin)
    if p.returncode:
        raise AssertionError("minigups %s %d: rc %d %s%s" % (
            kind, wss, p.returncode, p.stdout, p.stderr))
    out = dict(line.split() for line in p.stdout.splitlines())
    if out["errors"] != "0":
        raise AssertionError("minigups's own verification: %s" % p.stdout)
    return float(out["ns_per_update"])


class AgainstMinigups(unittest.TestCase):
    """gups against minigups natively, like for like: RUNS pairs of one
    gups run (the median of its 3 repetitions) and one minigups run (its
    one timed pass after one untimed), back to back, in turn which goes
    first, each a new mapping, minigups pinned to the CPU gups pinned
    itself to (on a VM one vCPU is not another: tests/bench/
    test_chase_oracle.py); the median of the pairs' ratios must lie
    within a fixed 10 % of 1.  A try counts only on a quiet machine
    (quiet.judge strict), each try stands alone.  What it misses: a
    distortion under 10 %, and what both share (the clock, the CPU, the
    HPCC algorithm as both read it, the page size the kernel gave)."""

    TRIES = 4
    RUNS = 5
    TOLERANCE = 0.10
    # HPCC's 4 x the table's words at 64 MB, the same at every table size,
    # so that a try takes about as long whatever the LLC (HPCC's count took
    # 13 to 22 s a pass on the 2 GB table of this project's Intel VM, 260
    # MB of L3); both sides take the stream's first UPDATES elements in the
    # same 128 lanes.
    UPDATES = 1 << 25

    @classmethod
    def setUpClass(cls):
        cls.WSS = past_the_llc()
        cls.pools = run_py.HugePools()
        cls.huge = raise_free(cls.pools, 2048, cls.WSS // (2 * MB) + 8)

    @classmethod
    def tearDownClass(cls):
        cls.pools.restore()

    def pairs(self):
        return [("devzero", "4k")] + \
            ([("maphugetlb", "2m")] if self.huge else [])

    def judge(self, gups_wss, want_agree):
        def measure():
            detail, ok = [], True
            for b, kind in self.pairs():
                r, ours, theirs, cpu = quiet.paired(
                    lambda: gups_median(b, gups_wss, self.UPDATES),
                    lambda cpu: minigups(kind, self.WSS, self.UPDATES, cpu),
                    self.RUNS)
                ok &= (abs(r - 1) <= self.TOLERANCE) is want_agree
                detail.append("%s %.2f ns/update vs minigups %s %.2f on CPU "
                              "%d (pairs' median ratio %+.0f %%)"
                              % (b, ours, kind, theirs, cpu, 100 * (r - 1)))
            return ok, ", ".join(detail)
        quiet.verdict(self, quiet.judge(measure, self.TRIES, strict=True),
                      "gups at %d MB %s minigups at %d MB within 10 %%"
                      % (gups_wss // MB, "agrees with" if want_agree else
                         "is caught out of", self.WSS // MB))
        if not self.huge:
            self.skipTest("4 KB pages checked; 2 MB not: cannot raise the "
                          "2 MB pool by %d pages (run as root)"
                          % (self.WSS // (2 * MB) + 8))

    def test_agrees(self):
        self.judge(self.WSS, True)

    def test_a_table_16_times_smaller_is_caught(self):
        """The negative control: gups on a table 16 times smaller (a
        quarter to a half of the LLC), as an instrument that updated a
        sixteenth of the table it claims, must fall outside the band
        (on this project's Intel VM, 128 MB against 2 GB: -52 % on 4 KB
        pages, -33 % on 2 MB)."""
        self.judge(self.WSS // 16, False)


class FakeResults:
    def __init__(self, d):
        self.dir = d
        self.meta = {"errors": []}

    def csv_path(self, bench):
        return os.path.join(self.dir, bench + ".csv")

    def write_meta(self):
        pass


class RunPyOracle(unittest.TestCase):
    """bench-native's check (run.py check_gups_oracle) on every backing,
    with a fake minigups that prints 10 ns per update (or what
    fake_sequence gives it), no timing at all."""

    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.dir)
        self.fake("echo ns_per_update 10.000; echo errors 0")
        self.res = FakeResults(self.dir)

    def fake(self, body):
        exe = os.path.join(self.dir, "minigups")
        with open(exe, "w") as f:
            f.write("#!/bin/sh\necho \"$*\" >> %s/calls\n"
                    "grep Cpus_allowed_list: /proc/$$/status | cut -f2 "
                    ">> %s/cpus\n%s\n" % (self.dir, self.dir, body))
        os.chmod(exe, stat.S_IRWXU)

    def write_rows(self, rows):
        """rows of (backing, page_kb, table_bytes, ns_per_update)."""
        with open(self.res.csv_path("gups"), "w") as f:
            w = csv.writer(f)
            w.writerow(["backing", "page_kb", "wss_bytes", "table_bytes",
                        "ns_per_update"])
            w.writerows((b, kb, t, t, ns) for b, kb, t, ns in rows)

    def check(self, load=0.0):
        with mock.patch.object(os, "getloadavg",
                               return_value=(load, load, load)):
            return run_py.check_gups_oracle(self.res, self.dir)

    def test_agreement_at_the_largest_table_in_range(self):
        self.write_rows([("devzero", 4, 256 * MB, 10.5),
                         ("thp", 2048, 256 * MB, 9.5),
                         ("hugetlbfs-1G", 1048576, 256 * MB, 9.0),
                         ("devzero", 4, 16 * MB, 3.0),
                         ("devzero", 4, 1 << 30, 30.0)])
        self.assertEqual(self.check(), 0)
        o = self.res.meta["gups_oracle"]
        self.assertEqual((o["table_bytes"], o["attempts"]), (256 * MB, 1))
        self.assertEqual(o["backings"]["devzero"]["ratio"], 1.05)
        self.assertEqual(o["backings"]["devzero"]["gups_ns"], 10.5)
        self.assertTrue(o["backings"]["thp"]["agree"])
        self.assertIsNone(o["backings"]["hugetlbfs-1G"]["agree"])
        with open(os.path.join(self.dir, "calls")) as f:
            calls = set(f.read().split("\n"))
        self.assertEqual(calls - {""}, {"4k %d" % (256 * MB),
                                        "2m %d" % (256 * MB)})
        self.assertFalse(self.res.meta["errors"])

    def test_pinned_to_gups_cpu(self):
        cpu = sorted(os.sched_getaffinity(0))[-1]
        self.res.meta["method"] = {"per_bench": {"gups": {"cpu_pinned": cpu}}}
        self.write_rows([("devzero", 4, 64 * MB, 10.0)])
        self.assertEqual(self.check(), 0)
        with open(os.path.join(self.dir, "cpus")) as f:
            self.assertEqual(set(f.read().split()), {str(cpu)})
        self.assertEqual(self.res.meta["gups_oracle"]["cpu"], cpu)

    def test_disagreement_fails_the_run(self):
        self.write_rows([("devzero", 4, 64 * MB, 11.1),
                         ("memfd", 2048, 64 * MB, 10.0)])
        self.assertEqual(self.check(), 2)
        o = self.res.meta["gups_oracle"]
        self.assertEqual(o["attempts"], run_py.ORACLE_ATTEMPTS)
        self.assertFalse(o["backings"]["devzero"]["agree"])
        self.assertTrue(o["backings"]["memfd"]["agree"])
        self.assertIn("devzero 11.10 ns vs 10.00 to 10.00 ns",
                      self.res.meta["errors"][0])

    def test_oracle_errors_are_no_agreement(self):
        """minigups's own verification failing is no verdict on gups: the
        backing is not judged, and says why."""
        self.fake("echo ns_per_update 10.000; echo errors 5; exit 1")
        self.write_rows([("devzero", 4, 64 * MB, 10.0)])
        self.assertEqual(self.check(), 0)
        v = self.res.meta["gups_oracle"]["backings"]["devzero"]
        self.assertIsNone(v["agree"])
        self.assertIn("errors 5", v["reason"])

    def test_disagreement_on_a_loaded_host_is_a_note(self):
        self.write_rows([("devzero", 4, 64 * MB, 15.0)])
        self.assertEqual(self.check(load=99.0), 0)
        self.assertFalse(self.res.meta["errors"])
        self.assertIn("not judged", self.res.meta["notes"][0])

    def test_small_tables_are_not_checked(self):
        self.write_rows([("devzero", 4, 16 * MB, 3.0)])
        self.assertEqual(self.check(), 0)
        self.assertIn("not checked", self.res.meta["gups_oracle"]["reason"])
        self.assertFalse(os.path.exists(os.path.join(self.dir, "calls")))


if __name__ == "__main__":
    unittest.main()
