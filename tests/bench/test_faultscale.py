# SPDX-License-Identifier: GPL-2.0
"""faultscale: each task's fault count is pages x iterations (4 KB and
2 MB pages), processes and threads both run, N tasks run at once, each on
the CPU it was given, task counts a pool cannot hold are skipped and said
so, bad options are refused by name, and bench/run.py gives the guest the
vCPUs and the pool the regions it needs."""
import os
import subprocess
import tempfile
import unittest

from benchbin import BenchRun
from common import BINDIR, load_run_module

CPUS = sorted(os.sched_getaffinity(0))
N = len(CPUS)
MB = 1 << 20


def pool(name):
    try:
        with open("/sys/kernel/mm/hugepages/hugepages-2048kB/" + name) as f:
            return int(f.read())
    except OSError:
        return 0


def free_2m():
    return pool("free_hugepages") - pool("resv_hugepages")


def expected_faults(r):
    page = int(r["page_kb"]) * 1024
    return int(r["tasks"]) * int(r["iterations"]) * \
        int(r["region_bytes"]) // page


class Counts(unittest.TestCase):
    def check_counts(self, res, backing, page_kb):
        self.assertEqual(res.returncode, 0, res.describe())
        rows = [r for r in res.rows if r["backing"] == backing]
        self.assertEqual({(r["mode"], int(r["tasks"])) for r in rows},
                         {(m, n) for m in ("process", "thread")
                          for n in range(1, min(N, 2) + 1)}, res.describe())
        for r in rows:
            self.assertEqual(int(r["page_kb"]), page_kb, r)
            self.assertEqual(int(r["faults"]), expected_faults(r), r)
            self.assertGreater(float(r["faults_per_s"]), 0, r)
            self.assertAlmostEqual(float(r["faults_per_s_per_task"]),
                                   float(r["faults_per_s"]) / int(r["tasks"]),
                                   delta=0.1 + 1e-3 * float(r["faults_per_s"]))

    def test_4k_pages(self):
        res = BenchRun("faultscale", [
            "--backings", "devzero", "--sizes", "8M", "--reps", "2",
            "--warmup", "0", "--iterations", "3",
            "--tasks", ",".join(map(str, range(1, min(N, 2) + 1)))])
        self.check_counts(res, "devzero", 4)
        (r,) = [r for r in res.rows if r["mode"] == "process" and
                r["tasks"] == "1"]
        self.assertEqual(int(r["faults"]), 3 * 2048)

    def stray_run(self, stray):
        return BenchRun("faultscale", [
            "--backings", "devzero", "--sizes", "1M", "--reps", "2",
            "--warmup", "0", "--iterations", "1", "--tasks", "1",
            "--mode", "process", "--stray", str(stray)])

    def test_a_stray_fault_takes_the_repetition_again(self):
        # two strays (--stray adds one fault outside the region to each of
        # the first N repetitions): the recount keeps the exact count
        res = self.stray_run(2)
        self.check_counts_exact(res)
        self.assertEqual(res.stdout.count("1 outside its region: repetition "
                                          "taken again"), 2, res.describe())
        # a stray in every take (three) fails the point instead
        res = self.stray_run(3)
        self.assertNotEqual(res.returncode, 0, res.describe())
        self.assertIn("faults outside the region in 3 takes in a row",
                      " ".join(res.errors))
        self.assertEqual(res.rows, [])

    def check_counts_exact(self, res):
        self.assertEqual(res.returncode, 0, res.describe())
        (r,) = res.rows
        self.assertEqual(int(r["faults"]), expected_faults(r), r)

    def test_2m_thp(self):
        res = BenchRun("faultscale", [
            "--backings", "thp", "--sizes", "8M", "--reps", "2",
            "--warmup", "0", "--iterations", "3",
            "--tasks", ",".join(map(str, range(1, min(N, 2) + 1)))])
        self.check_counts(res, "thp", 2048)

    @unittest.skipUnless(free_2m() >= 8, "needs 8 free 2 MB huge pages "
                         "(raise /proc/sys/vm/nr_hugepages); has %d" % free_2m())
    def test_2m_hugetlb(self):
        res = BenchRun("faultscale", [
            "--backings", "maphugetlb,memfd", "--sizes", "8M", "--reps", "2",
            "--warmup", "0", "--iterations", "2",
            "--tasks", ",".join(map(str, range(1, min(N, 2) + 1)))])
        if res.returncode and free_2m() < 8:
            self.skipTest("the pool shrank under the test (another user)")
        self.check_counts(res, "maphugetlb", 2048)
        self.check_counts(res, "memfd", 2048)


class Concurrency(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.res = BenchRun("faultscale", [
            "--backings", "devzero", "--sizes", "16M", "--reps", "2",
            "--warmup", "0", "--iterations", "3", "--tasks", "2",
            "--oversubscribe"])

    def test_exit(self):
        self.assertEqual(self.res.returncode, 0, self.res.describe())

    def test_processes_and_threads_both_run(self):
        self.assertEqual(sorted(r["mode"] for r in self.res.rows),
                         ["process", "thread"])

    def test_tasks_overlap(self):
        # released together, each starts before the other ends (how much
        # they share depends on the host's other load)
        for r in self.res.rows:
            self.assertGreater(float(r["overlap"]), 0, r)
            self.assertLessEqual(float(r["overlap"]), 1.0, r)

    def test_pinned_to_the_allowed_cpus_in_turn(self):
        want = ";".join(str(CPUS[i % N]) for i in range(2))
        for r in self.res.rows:
            self.assertEqual(r["cpus"], want, r)
            self.assertEqual(r["oversubscribed"], "1" if N < 2 else "0", r)
        (meta,) = self.res.meta["faultscale"]
        self.assertEqual(meta["allowed_cpus"], ";".join(map(str, CPUS)))

    def test_one_mode_only(self):
        res = BenchRun("faultscale", [
            "--backings", "devzero", "--sizes", "1M", "--reps", "1",
            "--warmup", "0", "--iterations", "1", "--tasks", "1",
            "--mode", "thread"])
        self.assertEqual([r["mode"] for r in res.rows], ["thread"],
                         res.describe())


class Oversubscribed(unittest.TestCase):
    def test_more_tasks_than_cpus_are_labelled(self):
        res = BenchRun("faultscale", [
            "--backings", "devzero", "--sizes", "1M", "--reps", "1",
            "--warmup", "0", "--iterations", "1", "--tasks", str(N + 1),
            "--oversubscribe", "--mode", "process"])
        self.assertEqual(res.returncode, 0, res.describe())
        (r,) = res.rows
        self.assertEqual(r["oversubscribed"], "1")
        self.assertEqual(r["cpus"].split(";"),
                         [str(CPUS[i % N]) for i in range(N + 1)])
        self.assertIn("(oversubscribed)", res.stdout)


def mem_available_kb():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1])
    return 0


class Skips(unittest.TestCase):
    def test_tasks_beyond_memory_are_skipped_and_said(self):
        # one region of 1/200 of the free memory fits, 256 of them do not
        region_mb = max(mem_available_kb() // 200 // 1024, 1)
        res = BenchRun("faultscale", [
            "--backings", "devzero", "--sizes", "%dM" % region_mb,
            "--reps", "1", "--warmup", "0", "--iterations", "1",
            "--tasks", "1,256", "--oversubscribe", "--mode", "thread"])
        self.assertEqual(res.returncode, 0, res.describe())
        self.assertEqual([r["tasks"] for r in res.rows], ["1"])
        (skip,) = res.meta["skip"]
        self.assertEqual((skip["bench"], skip["backing"], skip["point"]),
                         ("faultscale", "devzero", "mode=thread tasks=256"))
        self.assertIn("256 tasks x %d kB need %d kB; MemAvailable is" % (
            region_mb * 1024, 256 * region_mb * 1024), skip["reason"])

    @unittest.skipUnless(free_2m() >= 2, "needs 2 free 2 MB huge pages; "
                         "has %d" % free_2m())
    def test_tasks_beyond_the_pool_are_skipped_and_said(self):
        # one region fits the pool, two do not
        pages = free_2m() // 2 + 1
        res = BenchRun("faultscale", [
            "--backings", "maphugetlb", "--sizes", "%dM" % (2 * pages),
            "--reps", "1", "--warmup", "0", "--iterations", "1",
            "--tasks", "1,2", "--oversubscribe", "--mode", "process"])
        if res.returncode and free_2m() < pages:
            self.skipTest("the pool shrank under the test (another user)")
        self.assertEqual(res.returncode, 0, res.describe())
        self.assertEqual([r["tasks"] for r in res.rows], ["1"])
        (skip,) = res.meta["skip"]
        self.assertEqual((skip["bench"], skip["backing"], skip["point"]),
                         ("faultscale", "maphugetlb", "mode=process tasks=2"))
        self.assertIn("need %d pages of 2048 kB" % (2 * pages),
                      skip["reason"])

    def test_run_py_keeps_every_skip(self):
        run = load_run_module()
        with tempfile.TemporaryDirectory() as d:
            res = run.Results(d, "r", {})
            for n in (2, 3):
                res.handle('@meta skip {"bench": "faultscale", "backing": '
                           '"shm", "point": "tasks=%d", "reason": "x"}' % n)
            self.assertEqual([p["point"] for p in
                              res.meta["skipped_points"]],
                             ["tasks=2", "tasks=3"])


class BadOptions(unittest.TestCase):
    def refused(self, args, *words):
        p = subprocess.run([os.path.join(BINDIR, "faultscale"),
                            "--backings", "devzero"] + args,
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 64, p.stdout + p.stderr)
        self.assertNotIn("@row", p.stdout)
        for w in words:
            self.assertIn(w, p.stderr)

    def test_bad_task_counts(self):
        self.refused(["--tasks", "0"], "--tasks: '0' is not a task count")
        self.refused(["--tasks", "1,x"], "--tasks: 'x' is not a task count")
        self.refused(["--tasks", "1000"], "each 1 to 256")

    def test_more_tasks_than_cpus_needs_oversubscribe(self):
        self.refused(["--tasks", str(N + 1)], "add --oversubscribe",
                     "%d CPU(s)" % N)

    def test_bad_mode_and_iterations(self):
        self.refused(["--mode", "fibers"], "--mode: 'fibers' is not a valid")
        self.refused(["--iterations", "0"], "--iterations: '0'",
                     "at least 1")


class Profiles(unittest.TestCase):
    """bench/run.py: the most tasks' regions fit max_bytes (the pool), the
    guest gets GUEST_CPUS vCPUs, quick natively faults 1 GB in all."""

    def setUp(self):
        self.run = load_run_module()

    def args(self, p):
        a = p["faultscale"]
        return (int(a[a.index("--sizes") + 1]),
                [int(x) for x in a[a.index("--tasks") + 1].split(",")], a)

    def test_regions_fit(self):
        for name in ("tiny", "quick", "full"):
            for mode in ("guest", "native"):
                p = self.run.profile(name, mode, 8 << 30)
                region, counts, a = self.args(p)
                cpus = self.run.GUEST_CPUS if mode == "guest" else N
                self.assertEqual(counts[:cpus], list(range(1, cpus + 1)))
                self.assertLessEqual(region * max(counts), p["max_bytes"])
                self.assertLessEqual(
                    region * max(counts) // (2 * MB), p["hugepages"])
                self.assertEqual("--oversubscribe" in a, max(counts) > cpus)

    def test_quick_native_is_1g_over_the_cpus(self):
        region, counts, _ = self.args(self.run.profile("quick", "native"))
        self.assertEqual(counts, list(range(1, N + 1)))
        self.assertEqual(region, (1 << 30) // N // (2 * MB) * (2 * MB))

    def test_guest_boots_with_the_vcpus(self):
        run = self.run
        c = run.contract.load()
        args = run.parse_args(["--mode", "guest", "--profile", "quick"], c)
        p = run.profile("quick", "guest", None, c)
        runs = run.invocations(p, args, "auto", c.bench_names(), c)
        cmd = run.guest_command(p, args, runs, c)
        self.assertEqual(cmd[cmd.index("--smp") + 1], str(run.GUEST_CPUS))
        fs = [a for b, a in runs if b == "faultscale"]
        self.assertTrue(fs)
        for a in fs:
            self.assertNotIn("-1G", a[a.index("--backings") + 1])
        runs = [r for r in runs if r[0] != "faultscale"]
        self.assertNotIn("--smp", run.guest_command(p, args, runs, c))


if __name__ == "__main__":
    unittest.main()
