# SPDX-License-Identifier: GPL-2.0
"""bench/gups.c, HPCC RandomAccess by its rules (issue 34, point 3).

Rows: one per backing and size, the table the largest power of two that
fits, 4 x its words updated, every pass verified.
Stream: the binary's LFSR (--check-stream) against one written here, which
steps the stream one value at a time from 1.
Verification: a distorted update stream (--drop N leaves out every N-th
update) is caught by HPCC's verification: the count of wrong words the
binary reports is the one this file predicts from the dropped updates,
over 1 % of the table the point is an @error with no row, under it the
row says within_bound.
Profiles: gups in every profile, the quick guest's TCG time by an
estimate.
The timing oracle, gups against tests/bench/minigups.c natively, and
bench-native's check with it, are tests/bench/test_gups_oracle.py (apart,
so that this module runs in seconds: the mutants of bench/gups.c run it)."""
import argparse
import unittest

from bench import benchrun as run_py
from bench import contract
from tests.bench.benchbin import BenchRun
from tests.bench.common import BINDIR, columns

MB = 1 << 20
POLY = 7
PERIOD = 1317624576693539401
M64 = (1 << 64) - 1
LANES = 128


def step(v):
    """One value of HPCC's stream to the next."""
    return ((v << 1) & M64) ^ (POLY if v >> 63 else 0)


def stream(n):
    """r_0 .. r_n, from r_0 = 1."""
    out, v = [1], 1
    for _ in range(n):
        v = step(v)
        out.append(v)
    return out


def gups(args, bindir=BINDIR):
    r = BenchRun("gups", args, bindir=bindir)
    return r


def wrong_after_drop(words, drop, n=None):
    """The table words HPCC's verification finds wrong after one pass of n
    updates (HPCC's 4 x words by default) that left out every drop-th
    update, the updates counted in the order the lanes run them (step i of
    lane 0 .. 127, then step i + 1): the dropped updates alone are left,
    XORed into their words."""
    n = n or 4 * words
    per = n // LANES
    r = stream(n)
    left = {}
    k = 0
    for i in range(per):
        for j in range(LANES):
            k += 1
            if k % drop == 0:
                v = r[per * j + i + 1]
                left[v & (words - 1)] = left.get(v & (words - 1), 0) ^ v
    return sum(1 for x in left.values() if x)


class Rows(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.got = gups(["--backings", "devzero,thp", "--sizes",
                        "64K,100K,1M", "--reps", "3", "--warmup", "1"])

    def test_one_row_per_backing_and_size(self):
        self.assertEqual(self.got.returncode, 0, self.got.describe())
        self.assertEqual(self.got.header, columns("gups"))
        got = sorted((r["backing"], int(r["wss_bytes"])) for r in self.got.rows)
        self.assertEqual(got, sorted((b, s) for b in ("devzero", "thp")
                                     for s in (64 << 10, 100 << 10, 1 << 20)))

    def test_hpcc_table_and_updates(self):
        for r in self.got.rows:
            wss, table = int(r["wss_bytes"]), int(r["table_bytes"])
            # the largest power of two that fits: 100K takes 64K
            self.assertEqual(table & (table - 1), 0, r)
            self.assertLessEqual(table, wss)
            self.assertGreater(2 * table, wss)
            self.assertEqual(int(r["updates"]), 4 * table // 8, r)
            self.assertEqual(int(r["error_bound"]), table // 8 // 100, r)

    def test_verified_exactly(self):
        for r in self.got.rows:
            self.assertEqual((r["errors"], r["verified"]), ("0", "exact"), r)
            # --warmup 1, and each of 3 timed passes after a warm pass
            self.assertEqual(int(r["passes_verified"]), 1 + 3 * 2, r)
            self.assertEqual(r["faults"] or "0", "0", r)

    def test_rates(self):
        for r in self.got.rows:
            ns = float(r["ns_per_update"])
            self.assertGreater(ns, 0)
            self.assertLessEqual(float(r["ns_min"]), ns)
            self.assertGreaterEqual(float(r["ns_max"]), ns)
            self.assertAlmostEqual(float(r["gups"]), 1 / ns, delta=1e-4 + 1e-3 / ns)
            self.assertEqual(r["reps"], "3")


class Stream(unittest.TestCase):
    """The binary's r_n (x^n modulo x^64 + x^2 + x + 1, by squaring)
    against the stream stepped here one value at a time."""

    def test_stream_values(self):
        r = gups(["--backings", "devzero", "--sizes", "64K", "--reps", "1",
                  "--warmup", "0", "--check-stream"])
        self.assertEqual(r.returncode, 0, r.describe())
        (m,) = r.meta["gups_stream"]
        self.assertEqual((m["poly"], m["period"]), (POLY, PERIOD))
        self.assertEqual(m["updates"], 4 * (64 << 10) // 8)
        at = {n: int(v, 16) for n, v in m["at"]}
        want = stream(max(n for n in at if 0 <= n < PERIOD))
        for n, v in at.items():
            if 0 <= n < PERIOD:
                self.assertEqual(v, want[n], n)
        # HPCC's PERIOD is the stream's: r_PERIOD = 1, r_-1 steps to 1
        self.assertEqual(at[PERIOD], 1)
        self.assertEqual(step(at[-1]), 1)
        self.assertNotEqual(at[-1], 1)


class Verification(unittest.TestCase):
    """--drop N: the instrument distorted, its verification catches it."""
    WSS = 64 << 10
    WORDS = WSS // 8

    def run_drop(self, drop):
        r = gups(["--backings", "devzero", "--sizes", str(self.WSS),
                  "--reps", "2", "--warmup", "0", "--drop", str(drop)])
        return r

    def test_the_undistorted_stream_verifies_exactly(self):
        r = self.run_drop(0)
        self.assertEqual(r.returncode, 0, r.describe())
        self.assertEqual(r.rows[0]["errors"], "0")

    def test_a_shortened_stream_over_the_bound_is_refused(self):
        # every 50th update left out: 655 of 32768, 8 % of the table
        want = wrong_after_drop(self.WORDS, 50)
        self.assertGreater(want, self.WORDS // 100)
        r = self.run_drop(50)
        self.assertNotEqual(r.returncode, 0, r.describe())
        self.assertEqual(r.rows, [])
        self.assertTrue(any("%d of %d table words wrong" % (want, self.WORDS)
                            in e and "no row" in e for e in r.errors),
                        r.errors)
        (b,) = r.meta["backing"]
        self.assertEqual(b["status"], "failed")

    def test_a_few_lost_updates_within_the_bound_are_said(self):
        # every 2000th: 16 words wrong, under HPCC's 1 % (81)
        want = wrong_after_drop(self.WORDS, 2000)
        self.assertTrue(0 < want <= self.WORDS // 100, want)
        r = self.run_drop(2000)
        self.assertEqual(r.returncode, 0, r.describe())
        (row,) = r.rows
        self.assertEqual((int(row["errors"]), row["verified"]),
                         (want, "within_bound"))


class Updates(unittest.TestCase):
    """--updates N: a pass of the stream's first N elements in HPCC's
    lanes (lane j from element N/128 x j), verified as a whole run is."""
    WSS = 64 << 10
    WORDS = WSS // 8

    def run_updates(self, n, *more):
        return gups(["--backings", "devzero", "--sizes", str(self.WSS),
                     "--reps", "1", "--warmup", "0", "--updates", str(n)]
                    + list(more))

    def test_the_count_is_the_rows_and_verifies_exactly(self):
        r = self.run_updates(1024, "--check-stream")
        self.assertEqual(r.returncode, 0, r.describe())
        (row,) = r.rows
        self.assertEqual((row["updates"], row["errors"], row["verified"]),
                         ("1024", "0", "exact"))
        (m,) = r.meta["gups_stream"]
        self.assertEqual(m["updates"], 1024)
        at = dict((n, int(v, 16)) for n, v in m["at"])
        self.assertEqual(at[1024 // LANES], stream(1024 // LANES)[-1])

    def test_the_lanes_are_the_first_n_elements(self):
        # 16384 updates, half HPCC's count here, every 2000th left out: the
        # words left wrong are those this file predicts only if lane j
        # runs elements 128 x j + 1 .. 128 x (j + 1) of the stream
        want = wrong_after_drop(self.WORDS, 2000, 16384)
        self.assertNotEqual(want, wrong_after_drop(self.WORDS, 2000))
        r = self.run_updates(16384, "--drop", "2000")
        self.assertEqual(r.returncode, 0, r.describe())
        (row,) = r.rows
        self.assertEqual((int(row["errors"]), row["verified"]),
                         (want, "within_bound"))

    def test_not_a_multiple_of_the_lanes_is_refused(self):
        r = self.run_updates(1000)
        self.assertEqual(r.returncode, 64, r.describe())
        self.assertEqual(r.rows, [])
        self.assertIn("--updates 1000 is not a multiple of 128", r.stderr)


# Under TCG an update costs about this much (an estimate: streamk's TCG
# time gives about 40 ns per 8-byte access; an update is a load, a store
# and the stream's step), and the quick guest run gives gups this long.
TCG_NS_PER_UPDATE, QUICK_GUEST_S = 100, 60


class Profiles(unittest.TestCase):
    """gups in every profile, in the guest and natively, with powers of
    two; the quick guest's passes (each with its verification, which
    costs as much) fit its minute of TCG time by the estimate above."""

    def sizes(self, a):
        return [run_py.size_bytes(x) for x in a[a.index("--sizes") + 1].split(",")]

    def test_every_profile_has_gups(self):
        for name in ("tiny", "quick", "full"):
            for mode in ("guest", "native"):
                p = run_py.profile(name, mode, mem_available=8 << 30)
                a = run_py.profile_args(p, "gups")
                for s in self.sizes(a):
                    self.assertEqual(s & (s - 1), 0, (name, mode, s))
                    self.assertLessEqual(s, p["max_bytes"], (name, mode))
        native = run_py.profile("quick", "native", mem_available=8 << 30)
        # past the 4 KB pages' TLB reach (the model's L2: 6 MB and more)
        self.assertGreaterEqual(max(self.sizes(native["gups"])), 256 * MB)

    def test_quick_guest_fits_its_tcg_minute(self):
        c = contract.load()
        p = run_py.profile("quick", "guest", None, c)
        a = run_py.profile_args(p, "gups")
        reps = int(a[a.index("--reps") + 1])
        warmup = int(a[a.index("--warmup") + 1])
        # the runner's warm pass before each timed one (its default, 1)
        self.assertNotIn("--warm-pass", a)
        passes = warmup + 2 * reps
        n = len(run_py.bench_backings(
            p, "gups", argparse.Namespace(backings=None, arch="x86_64"), c))
        updates = sum(2 * passes * 4 * s // 8 for s in self.sizes(a))
        est = n * updates * TCG_NS_PER_UPDATE / 1e9
        self.assertLess(est, QUICK_GUEST_S, (n, self.sizes(a), est))

    def test_sizes_override(self):
        p = run_py.profile("quick", "native", mem_available=8 << 30)
        run_py.override_sizes(p, "64K,8M")
        self.assertEqual(p["gups"][:2], ["--sizes", "64K,8M"])


if __name__ == "__main__":
    unittest.main()
