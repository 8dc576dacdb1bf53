# SPDX-License-Identifier: GPL-2.0
"""bench/multiload.c, loaded latency as multichase's multiload measures it
(issue 34, point 4).

Rows: one per backing, hop and load kind; the row's arithmetic (ratio),
its load threads on the CPUs the chase is not on, a load that covered
every window and did the work it counted.
Distorted: the checks the row carries (its oracle) seen failing:
--distort idle (threads that load nothing: below_floor, 0 GB/s), fake
(threads that count chunks they did not read: unverified; copies that
write nothing: unverified), early
(threads that stop after one chunk: uncovered) each flag the row, never
report it as loaded.
Alone: with one CPU there is nothing to load with: the backing is
skipped, saying so.
Profiles: multiload in every profile, its working set and the load's
buffers within the pool, the quick guest's TCG time by an estimate.

No timing is asserted on an undistorted run (below_floor and
below_unloaded there depend on what else the machine runs: a load thread
whose CPU other processes hold moves nothing in a short window); the
checks that do not (coverage, verification) are, and the distortions are
caught by construction, short by halving the loaded chase (caught unless
the machine doubles a chase's time between repetitions)."""
import argparse
import os
import unittest

from bench import benchrun as run_py
from bench import contract
from tests.bench.benchbin import BenchRun
from tests.bench import quiet
from tests.bench.common import columns

MB = 1 << 20
# Under TCG a hop of the chase costs about 300 ns (docs/machine.md's
# chase: 275-315 ns); a word of the load's fill (mix64, a store, a sum)
# is taken at 30 ns: estimates, not measurements (no guest run here).
TCG_NS_PER_HOP = 300
TCG_NS_PER_FILL_WORD = 30
QUICK_GUEST_S = 30

FAST = ["--reps", "3", "--warmup", "0", "--load-bytes", "4M"]


def multiload(args, wrap=()):
    return BenchRun("multiload", args, wrap=wrap)


def others():
    return len(os.sched_getaffinity(0)) - 1


@unittest.skipIf(others() < 1, "multiload needs two CPUs; this process may use one")
class Rows(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.got = multiload(["--backings", "devzero,thp", "--sizes", "4M",
                             "--hop", "both", "--hops", "64K"] + FAST)

    def test_one_row_per_backing_hop_and_load(self):
        self.assertEqual(self.got.returncode, 0, self.got.describe())
        self.assertEqual(self.got.header, columns("multiload"))
        got = sorted((r["backing"], r["hop"], r["load"]) for r in self.got.rows)
        want = sorted((b, h, l) for b in ("devzero", "thp") for h in ("line", "page")
                      for l in ("read", "copy"))
        self.assertEqual(got, want, self.got.describe())

    def test_arithmetic(self):
        for r in self.got.rows:
            un, ld = float(r["ns_unloaded"]), float(r["ns_loaded"])
            self.assertAlmostEqual(float(r["ratio"]), ld / un, delta=1e-3 + 1e-3 * ld / un)
            self.assertLessEqual(float(r["ns_unloaded_min"]), un)
            self.assertGreaterEqual(float(r["ns_unloaded_max"]), un)
            self.assertLessEqual(float(r["ns_loaded_min"]), ld)
            self.assertGreaterEqual(float(r["ns_loaded_max"]), ld)
            self.assertEqual(int(r["reps"]), 3)
            self.assertEqual(int(r["hops"]), 64 << 10)
            self.assertEqual(int(r["flagged"]), int(r["flags"] != "ok"))

    def test_load_threads_on_the_other_cpus(self):
        cpus = sorted(os.sched_getaffinity(0))
        for r in self.got.rows:
            n = int(r["load_threads"])
            self.assertEqual(n, len(cpus) - 1)
            load = [int(c) for c in r["load_cpus"].split(";")]
            self.assertEqual(len(load), n)
            self.assertNotIn(int(r["chase_cpu"]), load)
            self.assertTrue(set(load) <= set(cpus), (load, cpus))

    def test_no_load_thread_on_the_chase_cpu_when_it_is_the_first(self):
        # the runner pins the chase to the last allowed CPU by default,
        # where load threads taken in order would miss it anyway
        first = sorted(os.sched_getaffinity(0))[0]
        got = multiload(["--backings", "devzero", "--sizes", "1M", "--hops", "16K",
                         "--load", "read", "--cpu", str(first)] + FAST)
        self.assertEqual(got.returncode, 0, got.describe())
        for r in got.rows:
            self.assertEqual(int(r["chase_cpu"]), first)
            self.assertNotIn(first, [int(c) for c in r["load_cpus"].split(";")], r)

    def test_the_load_covered_every_window_and_did_its_work(self):
        # by construction, whatever the machine runs: the chase's clock
        # starts after every thread stamped its start, and they stop after
        # it stopped; the sums and copies are exact
        for r in self.got.rows:
            self.assertEqual(float(r["coverage"]), 1.0, r)
            self.assertEqual(int(r["load_verified"]), 1, r)
            self.assertNotIn("uncovered", r["flags"])
            self.assertNotIn("unverified", r["flags"])
            # a thread moves at least one chunk between its start and end
            # (it checks for the end after each); in the chase's window it
            # may move none where other processes hold its CPU, which the
            # row flags (below_floor): not asserted here
            self.assertGreater(float(r["solo_gbps"]), 0, r)
            self.assertGreaterEqual(float(r["load_gbps"]), 0, r)

    def test_thp_load_buffers_got_huge_pages(self):
        # the runner's check of the working set's page size (smaps), and the
        # load's own of each buffer: a row says the working set's
        kb = {r["backing"]: int(r["page_kb"]) for r in self.got.rows}
        self.assertEqual(kb["devzero"], 4)
        self.assertIn(kb["thp"], (4, 2048))

    def test_meta_says_the_rules(self):
        m = self.got.meta["multiload"][0]
        self.assertEqual(m["floor_share"], 0.1)
        self.assertEqual(m["distort"], "none")
        self.assertIn("wall time", m["clock"])


@unittest.skipIf(others() < 1, "multiload needs two CPUs; this process may use one")
class Distorted(unittest.TestCase):
    """Each distortion must flag every row (not drawn, not compared)."""

    def run_distort(self, how, load="read,copy"):
        got = multiload(["--backings", "devzero", "--sizes", "4M", "--hops", "256K",
                         "--load", load, "--distort", how] + FAST)
        self.assertEqual(got.returncode, 0, got.describe())
        self.assertEqual(len(got.rows), len(load.split(",")), got.describe())
        for r in got.rows:
            self.assertEqual(int(r["flagged"]), 1, r)
        return got

    def test_idle_threads_are_below_the_floor(self):
        for r in self.run_distort("idle").rows:
            self.assertIn("below_floor", r["flags"].split(";"))
            self.assertEqual(float(r["load_gbps"]), 0.0)

    def test_counting_without_loading_is_unverified(self):
        got = self.run_distort("fake")
        for r in got.rows:
            self.assertIn("unverified", r["flags"].split(";"))
            self.assertEqual(int(r["load_verified"]), 0)
        self.assertIn("the sum of its loads is not that of the", got.stdout)

    def test_a_copy_that_writes_nothing_is_unverified(self):
        got = self.run_distort("nowrite", "copy")
        for r in got.rows:
            self.assertIn("unverified", r["flags"].split(";"))
        self.assertIn("of its copy does not hold pass", got.stdout)

    def test_a_load_that_stops_early_is_uncovered(self):
        for r in self.run_distort("early").rows:
            self.assertIn("uncovered", r["flags"].split(";"))
            self.assertLess(float(r["coverage"]), 1.0)

    def test_a_loaded_chase_faster_than_unloaded_is_flagged(self):
        """Half the hops in the loaded chases: ns_loaded about half of
        ns_unloaded, far below its minimum (the rule allows NOISE, 5 %).
        Wall time decides this flag, unlike the others here, so it is
        judged by tests/bench/quiet.py's policy (a try that flags passes;
        one that does not counts only on a quiet machine) and runs again
        in make test-timing: beside kernel builds (load 3 to 4, on the
        2-vCPU Zen 3 VM) the unloaded chase's minimum fell below the
        loaded median often enough that the binary flagged 17 of 30 runs
        and this test, unjudged, failed 4 of 10."""
        def measure():
            got = multiload(["--backings", "devzero", "--sizes", "4M",
                             "--hops", "256K", "--load", "read",
                             "--distort", "short"] + FAST)
            self.assertEqual(got.returncode, 0, got.describe())
            self.assertEqual(len(got.rows), 1, got.describe())
            r = got.rows[0]
            flags = r["flags"].split(";")
            ok = ("below_unloaded" in flags and int(r["flagged"]) == 1
                  and float(r["ratio"]) < 0.95)
            return ok, "ratio %s, flags %s" % (r["ratio"], r["flags"])
        quiet.verdict(self, quiet.judge(measure, 3),
                      "a loaded chase of half the hops is flagged "
                      "below_unloaded")

    def test_the_figure_and_summary_leave_flagged_rows_out(self):
        from plots.benches.multiload import section_of
        from plots.table import Table  # noqa: F401  (the module's own reader)

        class T:
            rows = self.run_distort("idle", "read").rows
        sec = section_of(T, {"timing_source": "native"})
        self.assertEqual([row[3] for row in sec.rows], ["flagged"])


class Alone(unittest.TestCase):
    def test_one_cpu_is_skipped_saying_why(self):
        cpu = sorted(os.sched_getaffinity(0))[0]
        got = multiload(["--backings", "devzero", "--sizes", "1M", "--hops", "16K"] + FAST,
                        wrap=("taskset", "-c", str(cpu)))
        self.assertEqual(got.returncode, 0, got.describe())
        self.assertEqual(got.rows, [])
        skips = got.meta.get("skip", [])
        self.assertTrue(any("two CPUs" in s["reason"] for s in skips), got.describe())


class Profiles(unittest.TestCase):
    def arg(self, a, opt):
        return run_py.size_bytes(a[a.index(opt) + 1])

    def test_every_profile_has_multiload_within_its_pool(self):
        for name in ("tiny", "quick", "full"):
            for mode in ("guest", "native"):
                for cpus in (None, 16):
                    p = run_py.profile(name, mode, mem_available=8 << 30, cpus=cpus)
                    a = run_py.profile_args(p, "multiload")
                    wss, load = self.arg(a, "--sizes"), self.arg(a, "--load-bytes")
                    n = 1 if mode == "guest" else (cpus or len(os.sched_getaffinity(0))) - 1
                    n = max(n, 1)
                    if "--load-threads" in a:
                        n = int(a[a.index("--load-threads") + 1])
                    self.assertLessEqual(wss + n * load, p["max_bytes"], (name, mode, cpus))
                    self.assertEqual(load % (2 * MB), 0)
        p = run_py.profile("quick", "native", mem_available=8 << 30)
        # past the 4 KB pages' TLB reach and the caches
        self.assertGreaterEqual(self.arg(p["multiload"], "--sizes"), 256 * MB)

    def test_quick_guest_fits_its_tcg_budget(self):
        c = contract.load()
        p = run_py.profile("quick", "guest", None, c)
        a = run_py.profile_args(p, "multiload")
        reps = int(a[a.index("--reps") + 1])
        warmup = int(a[a.index("--warmup") + 1])
        hops = self.arg(a, "--hops")
        load = self.arg(a, "--load-bytes")
        n = len(run_py.bench_backings(
            p, "multiload", argparse.Namespace(backings=None, arch="x86_64"), c))
        self.assertNotIn("--load", a)       # both loads
        points = n * 2
        chase = points * 2 * (reps + warmup + 1) * hops * TCG_NS_PER_HOP
        fill = points * (load // 8) * TCG_NS_PER_FILL_WORD
        est = (chase + fill) / 1e9
        self.assertLess(est, QUICK_GUEST_S, (n, est))
        self.assertEqual(p["smp"], 2)


if __name__ == "__main__":
    unittest.main()
