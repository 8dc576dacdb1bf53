# SPDX-License-Identifier: GPL-2.0
"""bench/faultlat.c, first-touch fault latency as a distribution, fresh
and aged (issue 34, point 2).

Rows: one per backing and condition; every page of the mapping timed once;
the percentiles the row gives are the ones this file recomputes (nearest
rank) from every fault's latency (--samples); the vmstat counters absent
on this kernel are named, the others given.
Oracle (plots/benches/faultlat.py check_row): the undistorted instrument
passes it, and each distorted one (--distort) fails it: half (every other
fault timed: the count and the clock), clock (each fault's clock 20 %
slow: the clock), claim-huge (a 4 KB row claiming huge pages: smaps),
p99 (the top 1 % left out: the recomputed percentiles).  The clock check
is the loop's own accounting, not a comparison of runs, but a preemption
between two timed stores lands in no fault's time: an undistorted run
passes if one of three tries passes (each retry says why), a distorted
one must fail all three.
Aged: the fragmenter's mechanics (what it held, the oracle still holds).
Profiles: faultlat in every profile; the quick guest's TCG time by an
estimate.
NativeCheck: bench-native's check after faultlat fails the run on a
distorted instrument's rows."""
import argparse
import csv
import json
import os
import shutil
import tempfile
import types
import unittest

from bench import benchrun as run_py
from bench import contract
from bench.benchrun import native
from plots.benches.faultlat import check_row
from tests.bench.benchbin import BenchRun
from tests.bench.common import BINDIR, columns

MB = 1 << 20
TRIES = 3
# TCG estimates (not measured here: no guest run was possible in this
# worktree): a 4 KB fault ~20 us, a 2 MB fault ~5 ms (clearing 2 MB), an
# aged THP fault that compacts ~50 ms, the fragmenter ~25 us per 4 KB page
# filled and freed; the runner's own mapping and check ~ the fresh pass
TCG_US = {"fault4k": 20.0, "fault2m": 5000.0, "compact": 50000.0, "frag_page": 25.0}
QUICK_GUEST_S = 60.0


def faultlat(args):
    return BenchRun("faultlat", args, bindir=BINDIR)


def nearest_rank(sorted_ns, p):
    n = len(sorted_ns)
    k = max(1, min(n, -(-p * n // 100)))
    return sorted_ns[k - 1]


class Rows(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.got = faultlat(["--backings", "devzero,thp", "--sizes", "8M",
                            "--condition", "fresh", "--samples"])

    def test_one_row_per_backing(self):
        self.assertEqual(self.got.returncode, 0, self.got.describe())
        self.assertEqual(self.got.header, columns("faultlat"))
        by = {r["backing"]: r for r in self.got.rows}
        self.assertEqual(set(by), {"devzero", "thp"})
        self.assertEqual(int(by["devzero"]["faults"]), 8 * MB // 4096)
        self.assertEqual(int(by["thp"]["faults"]), 4)
        for r in by.values():
            self.assertEqual(r["condition"], "fresh")
            self.assertEqual(int(r["frag_bytes"]), 0)

    def test_percentiles_are_the_samples(self):
        samples = self.got.stdout.count("@meta faultlat_samples")
        self.assertEqual(samples, 2, self.got.describe())
        for line in self.got.stdout.splitlines():
            if not line.startswith("@meta faultlat_samples"):
                continue
            m = json.loads(line.split(" ", 2)[2])
            r = next(r for r in self.got.rows if r["backing"] == m["backing"])
            ns = sorted(m["ns"])
            self.assertEqual(len(ns), int(r["faults"]))
            for col, p in (("p50_us", 50), ("p90_us", 90), ("p99_us", 99)):
                self.assertAlmostEqual(float(r[col]), nearest_rank(ns, p) / 1e3, delta=0.0015,
                                       msg=(m["backing"], col))
            self.assertAlmostEqual(float(r["max_us"]), ns[-1] / 1e3, delta=0.0015)

    def test_vmstat_named(self):
        with open("/proc/vmstat") as f:
            have = {l.split()[0] for l in f}
        absent = set(self.got.meta["faultlat_vmstat"][0]["absent"])
        for col in ("thp_fault_alloc", "thp_fault_fallback", "compact_stall",
                    "htlb_buddy_alloc_success", "htlb_buddy_alloc_fail"):
            self.assertEqual(col in absent, col not in have, col)
            for r in self.got.rows:
                self.assertEqual(r[col] == "", col not in have, (col, r[col]))
        thp = next(r for r in self.got.rows if r["backing"] == "thp")
        if int(thp["huge_faults"]) == 4 and "thp_fault_alloc" in have:
            # system-wide: another process's THP faults may add to ours
            self.assertGreaterEqual(int(thp["thp_fault_alloc"]), 4)


class Oracle(unittest.TestCase):
    """check_row on the undistorted instrument and on each distortion."""

    def tries(self, args):
        """Up to TRIES runs: (rows' check_row failures of each try)."""
        out = []
        for _ in range(TRIES):
            got = faultlat(["--sizes", "8M", "--condition", "fresh"] + args)
            if "skipped" in str(got.meta.get("backing")):
                self.skipTest(got.describe())
            self.assertEqual(got.returncode, 0, got.describe())
            self.assertTrue(got.rows, got.describe())
            out.append({r["backing"]: check_row(r) for r in got.rows})
        return out

    def test_the_instrument_passes(self):
        seen = []
        for _ in range(TRIES):
            t = self.tries(["--backings", "devzero,thp"])[0]
            seen.append(t)
            if not any(t.values()):
                return
        self.fail(f"check_row failed on {TRIES} tries of the undistorted instrument: {seen}")

    def assert_caught(self, distort, backing, what):
        for t in self.tries(["--backings", backing, "--distort", distort]):
            self.assertTrue(any(what in x for x in t[backing]), (distort, t))

    def test_half_the_faults_timed_is_caught(self):
        self.assert_caught("half", "devzero", "count:")
        self.assert_caught("half", "devzero", "clock:")

    def test_a_slow_clock_is_caught(self):
        self.assert_caught("clock", "devzero", "clock:")

    def test_huge_pages_claimed_on_4k_are_caught(self):
        self.assert_caught("claim-huge", "devzero", "page:")

    def test_a_cut_tail_is_caught_by_the_samples(self):
        got = faultlat(["--backings", "devzero", "--sizes", "8M", "--condition", "fresh",
                        "--samples", "--distort", "p99"])
        line = next(l for l in got.stdout.splitlines()
                    if l.startswith("@meta faultlat_samples"))
        ns = sorted(json.loads(line.split(" ", 2)[2])["ns"])
        r = got.rows[0]
        self.assertNotAlmostEqual(float(r["max_us"]), ns[-1] / 1e3, delta=0.0015)


class Aged(unittest.TestCase):
    def test_the_fragmenter_holds_half_of_what_it_filled(self):
        got = faultlat(["--backings", "devzero,thp", "--sizes", "8M",
                        "--condition", "aged", "--frag-max", "64M"])
        self.assertEqual(got.returncode, 0, got.describe())
        for r in got.rows:
            self.assertEqual(r["condition"], "aged")
            self.assertEqual(int(r["frag_bytes"]), 32 * MB, r)
            self.assertGreater(float(r["frag_build_s"]), 0)
            self.assertNotEqual(r["free_2m_blocks"], "")
            self.assertEqual([x for x in check_row(r) if not x.startswith("clock")], [], r)

    def test_no_room_to_age_is_said_not_failed(self):
        got = faultlat(["--backings", "devzero", "--sizes", "4M", "--frag-max", "1M"])
        self.assertEqual(got.returncode, 0, got.describe())
        self.assertEqual([r["condition"] for r in got.rows], ["fresh"])
        skipped = got.meta["faultlat_aged_skipped"][0]
        self.assertEqual(skipped["backing"], "devzero")
        self.assertIn("--frag-max 1 MB", skipped["reason"])


class Profiles(unittest.TestCase):
    def test_every_profile_has_faultlat(self):
        for name in ("tiny", "quick", "full"):
            for mode in ("guest", "native"):
                p = run_py.profile(name, mode, mem_available=8 << 30)
                a = run_py.profile_args(p, "faultlat")
                self.assertIn("--sizes", a)
                self.assertIn("--frag-max", a)

    def test_quick_guest_fits_its_tcg_minute(self):
        c = contract.load()
        p = run_py.profile("quick", "guest", None, c)
        a = run_py.profile_args(p, "faultlat")
        size = run_py.size_bytes(a[a.index("--sizes") + 1])
        frag = run_py.size_bytes(a[a.index("--frag-max") + 1])
        names = run_py.bench_backings(
            p, "faultlat", argparse.Namespace(backings=None, arch="x86_64"), c)
        us = 0.0
        for b in names:
            kb = c.needs_pool(b) or (4 if b == "devzero" else 2048)
            self.assertNotEqual(kb, 1 << 20, "the quick guest leaves 1 GB out")
            per = TCG_US["fault4k"] if kb == 4 else TCG_US["fault2m"]
            n = size // (kb * 1024)
            # the runner's check, fresh, aged (THP compacting), the fragmenter
            us += 3 * n * per + (n * TCG_US["compact"] if b == "thp" else 0)
            us += frag // 4096 * TCG_US["frag_page"]
        self.assertLess(us / 1e6, QUICK_GUEST_S, (names, us / 1e6))


if __name__ == "__main__":
    unittest.main()


class NativeCheck(unittest.TestCase):
    """bench-native's check after faultlat (native.py
    check_faultlat_oracle) on rows this test has the binary write."""

    def check(self, args):
        got = faultlat(["--sizes", "8M", "--condition", "fresh"] + args)
        self.assertEqual(got.returncode, 0, got.describe())
        tmp = tempfile.mkdtemp(prefix="faultlat-native-")
        self.addCleanup(shutil.rmtree, tmp, True)
        path = os.path.join(tmp, "faultlat.csv")
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=got.header)
            w.writeheader()
            w.writerows(got.rows)
        res = types.SimpleNamespace(meta={"errors": []}, csv_path=lambda b: path,
                                    write_meta=lambda: None)
        return native.check_faultlat_oracle(res, None), res.meta

    def test_huge_pages_claimed_fail_the_run(self):
        rc, meta = self.check(["--backings", "devzero", "--distort", "claim-huge"])
        self.assertEqual(rc, 2, meta)
        self.assertIn("faultlat disagrees with its oracle: devzero/fresh: page:",
                      meta["errors"][0])
        self.assertFalse(meta["faultlat_oracle"]["backings"]["devzero/fresh"]["agree"])

    def test_half_the_faults_fail_the_run(self):
        rc, meta = self.check(["--backings", "devzero", "--distort", "half"])
        self.assertEqual(rc, 2, meta)
        self.assertIn("count:", meta["errors"][0])
