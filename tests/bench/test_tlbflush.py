# SPDX-License-Identifier: GPL-2.0
"""tlbflush: rows per backing, kind and thread count with the columns the
contract names; the kinds where they apply (and said, when asked for by
name, where not); every drop checked by the value read back and the fault
count (--no-drop is caught by both); the threads overlap and are pinned in
turn; and the oracle: the kernel's own count of TLB shootdowns
(/proc/interrupts, read here around a run) agrees with the operations the
row claims, with one thread next to none, and catches --as-processes
(tasks with no shared memory map: no shootdown, rows that look fine).
Profiles: tlbflush in every profile, the quick guest within its stated
TCG estimate."""
import argparse
import os
import unittest

from bench import benchrun as run_py
from bench import contract
from bench.benchrun import shootdowns
from tests.bench import quiet
from tests.bench.benchbin import BenchRun, run_thp_tolerant
from tests.bench.common import BINDIR, columns, pools_with_free_or_skip

CPUS = sorted(os.sched_getaffinity(0))
N = len(CPUS)
MB = 1 << 20


def tlbflush(backings, *extra, threads="1", size="1M", ms=50):
    return run_thp_tolerant("tlbflush", [
        "--backings", backings, "--sizes", size, "--reps", "1",
        "--warmup", "0", "--threads", str(threads), "--duration-ms",
        str(ms)] + list(extra))


class Rows(unittest.TestCase):
    def test_devzero_rows(self):
        res = tlbflush("devzero", threads=",".join(
            map(str, range(1, min(N, 2) + 1))))
        self.assertEqual(res.returncode, 0, res.describe())
        self.assertEqual(res.header, columns("tlbflush"))
        got = {(r["kind"], int(r["threads"])) for r in res.rows}
        want = {(k, n) for k in ("anon", "unmap")
                for n in range(1, min(N, 2) + 1)}
        self.assertEqual(got, want, res.describe())
        for r in res.rows:
            self.assertGreater(int(r["ops"]), 0)
            # the touch after each drop faults (anon: the write's and the
            # read-back's, 2; unmap: the write into a new mapping, 1)
            want = {"anon": 2.0, "unmap": 1.0}[r["kind"]]
            self.assertGreaterEqual(float(r["faults_per_op"]), want, r)
            self.assertLess(float(r["faults_per_op"]), want + 0.01, r)
            self.assertEqual(int(r["bytes_per_op"]), 4096)
            ops_s = float(r["ops_per_s"])
            self.assertAlmostEqual(float(r["ops_per_s_per_thread"]),
                                   ops_s / int(r["threads"]), delta=0.1)
            # ops over the window is the rate, to the window's precision
            self.assertAlmostEqual(int(r["ops"]) / (float(r["wall_ms"]) /
                                                    1e3), ops_s,
                                   delta=0.02 * ops_s)
            self.assertEqual(r["cpus"], ";".join(
                str(CPUS[i % N]) for i in range(int(r["threads"]))))

    @unittest.skipIf(N < 2, "one CPU: no threads to overlap")
    def test_windows_give_the_row(self):
        """--verbose's windows (each thread's start..end:ops in ns from the
        first start) give the row's rate and overlap again; a thread
        started late (--stagger-ms) makes the row low_overlap"""
        for stagger, low in ((0, None), (150, 1)):
            res = tlbflush("devzero", "--kind", "anon", "--verbose",
                           "--stagger-ms", str(stagger), threads=2, ms=100)
            self.assertEqual(res.returncode, 0, res.describe())
            (r,) = res.rows
            w = [line.split("rep 0:")[1].split(" tlb_irqs")[0].split()
                 for line in res.stdout.splitlines()
                 if "windows devzero kind=anon" in line][0]
            spans = [tuple(map(float, x.replace(":", "..").split("..")))
                     for x in w]
            first = min(s[0] for s in spans)
            last = max(s[1] for s in spans)
            ops = sum(s[2] for s in spans)
            both = min(s[1] for s in spans) - max(s[0] for s in spans)
            overlap = max(both, 0) / (last - first)
            self.assertEqual(int(r["ops"]), ops)
            self.assertAlmostEqual(float(r["ops_per_s"]),
                                   ops / ((last - first) / 1e9),
                                   delta=1e-3 * float(r["ops_per_s"]))
            self.assertAlmostEqual(float(r["overlap"]), overlap, delta=1e-3)
            self.assertEqual(int(r["low_overlap"]),
                             int(round(overlap, 3) < 0.9), r)
            if low is not None:
                self.assertEqual(int(r["low_overlap"]), low, r)

    def test_kinds_asked_for_by_name_are_skipped_saying_why(self):
        res = tlbflush("devzero", "--kind", "file,shared")
        self.assertEqual(res.returncode, 0, res.describe())
        self.assertEqual(res.rows, [])
        why = {s["point"]: s["reason"] for s in res.meta.get("skip", [])}
        self.assertIn("hugetlbfs, memfd", why["kind=file"])
        self.assertIn("hugetlbfs, memfd, shm", why["kind=shared"])

    def test_thp_drops_2m(self):
        res = tlbflush("thp", "--kind", "anon", size="4M")
        self.assertEqual(res.returncode, 0, res.describe())
        self.assertEqual([int(r["bytes_per_op"]) for r in res.rows],
                         [2 * MB])

    def test_hugetlb_kinds(self):
        # two regions of 4 MB (file: the file and its copies), one page
        self.addCleanup(pools_with_free_or_skip(
            8, "for tlbflush's 2 MB backings").restore)
        res = tlbflush("hugetlbfs,shm,maphugetlb,memfd", size="4M")
        if res.returncode and "insufficient huge pages" in res.stdout:
            self.skipTest("the pool shrank under the test (another user)")
        self.assertEqual(res.returncode, 0, res.describe())
        got = {(r["backing"], r["kind"]) for r in res.rows}
        self.assertEqual(got, {
            ("hugetlbfs", "file"), ("hugetlbfs", "shared"),
            ("hugetlbfs", "unmap"), ("shm", "shared"), ("shm", "unmap"),
            ("maphugetlb", "anon"), ("maphugetlb", "unmap"),
            ("memfd", "file"), ("memfd", "shared"), ("memfd", "unmap")},
            res.describe())
        for r in res.rows:
            self.assertEqual(int(r["bytes_per_op"]), 2 * MB)
            self.assertGreaterEqual(float(r["faults_per_op"]), 1.0, r)


class Verification(unittest.TestCase):
    """A drop left out is caught by the value read back (anon, file) and by
    the fault count (shared, where the object keeps the value either way)."""

    def test_no_drop_is_caught_by_the_value(self):
        res = tlbflush("devzero", "--kind", "anon", "--no-drop")
        self.assertNotEqual(res.returncode, 0)
        self.assertEqual(res.rows, [])
        self.assertTrue(any("read back 1 after the drop, not 0" in e
                            for e in res.errors), res.describe())

    def test_no_drop_is_caught_by_the_faults(self):
        self.addCleanup(pools_with_free_or_skip(
            4, "for tlbflush's memfd").restore)
        res = tlbflush("memfd", "--kind", "shared", "--no-drop", size="4M")
        self.assertNotEqual(res.returncode, 0)
        self.assertEqual(res.rows, [])
        self.assertTrue(any("some drops did not happen" in e
                            for e in res.errors), res.describe())

    def test_bad_options_are_refused_by_name(self):
        for argv, word in ((["--kind", "cow"], "--kind"),
                           (["--threads", "0"], "--threads"),
                           (["--threads", str(N + 1)], "--oversubscribe")):
            res = BenchRun("tlbflush", argv + ["--backings", "devzero"])
            self.assertNotEqual(res.returncode, 0)
            self.assertIn(word, res.stdout + res.stderr)


def oracle_try(threads, extra=(), want=True):
    """one run under the oracle: (ok, detail, clean, count_only) for
    judge() below; ok when the oracle's verdict is want; clean False when
    it could not judge (threads apart, no row); count_only when the
    verdict does not hang on the machine's load: flush_via "ipi" (every
    remote flush an IPI, whoever else runs), or a count of essentially no
    shootdown at all (under a hundredth of the bound)"""
    def measure():
        v = shootdowns.check(BINDIR, threads=threads, extra=extra)
        if v["ok"] is None:
            return False, v["why"], False, False
        none = v["delta"] - v["noise"] < 0.01 * v["bound"]
        return (v["ok"] == want, v["why"], True,
                v["flush_via"] == "ipi" or (threads > 1 and none))
    return measure


def judge(measure, tries=3):
    """quiet.judge's policy, but a failing try whose verdict does not hang
    on the load (count_only) is judged on a busy machine too: a count of
    IPIs is not a time.  Returns what quiet.judge returns."""
    notes, judged = [], 0
    for n in range(1, tries + 1):
        with quiet.Others() as load:
            ok, detail, clean, count_only = measure()
        why = [] if load.quiet or count_only else ["busy: not judged"]
        why += [] if clean or ok else ["could not judge"]
        notes.append("try %d (%s): %s%s" % (n, load, detail,
                                            "".join("; " + w for w in why)))
        if ok:
            return "pass", notes
        if not why:
            judged += 1
            if judged == quiet.FAILS_TO_JUDGE:
                return "fail", notes
    return "cannot tell", notes


@unittest.skipIf(shootdowns.tlb_irqs() is None, "no TLB line in "
                 "/proc/interrupts: remote flushes are not IPIs here "
                 "(arm64 broadcasts TLBI)")
@unittest.skipIf(shootdowns.invlpgb(), "INVLPGB: remote flushes are "
                 "broadcast, not IPIs")
class Oracle(unittest.TestCase):
    @unittest.skipIf(N < 2, "one CPU: no other CPU to flush")
    def test_two_threads_shoot_down(self):
        quiet.verdict(self, judge(oracle_try(2)),
                      "two threads' drops produced the shootdowns they must (a count: "
                      "a try with none at all is judged whatever the load)")

    def test_one_thread_needs_none(self):
        quiet.verdict(self, judge(oracle_try(1)),
                      "one thread's drops produced next to no shootdown")

    @unittest.skipIf(N < 2, "one CPU: no other CPU to flush")
    def test_processes_are_caught(self):
        """the distorted instrument: tasks as processes, rows unchanged
        and ops/s fine, but no shootdown: the oracle must say so"""
        res = tlbflush("devzero", "--kind", "anon", "--as-processes",
                       threads=2)
        self.assertEqual(res.returncode, 0, res.describe())
        self.assertEqual(len(res.rows), 1)
        self.assertGreater(float(res.rows[0]["ops_per_s"]), 0)
        quiet.verdict(self, judge(
            oracle_try(2, ("--as-processes",), want=False)),
            "the oracle caught tasks that share no memory map")

    def test_verdict_rule(self):
        ok, bound, _ = shootdowns.verdict(1000, 20, 1000, 2, "ipi")
        self.assertTrue(ok)
        self.assertEqual(bound, 500)
        self.assertFalse(shootdowns.verdict(400, 20, 1000, 2, "ipi")[0])
        # three threads: each drop flushes two other CPUs
        self.assertFalse(shootdowns.verdict(900, 0, 1000, 3, "ipi")[0])
        self.assertTrue(shootdowns.verdict(30, 0, 1000, 2, "kvm_pv")[0])
        self.assertFalse(shootdowns.verdict(4, 0, 1000, 2, "kvm_pv")[0])
        self.assertIsNone(shootdowns.verdict(0, 0, 1000, 2, "broadcast")[0])
        self.assertTrue(shootdowns.verdict(60, 10, 1000, 1, "ipi")[0])
        self.assertFalse(shootdowns.verdict(200, 10, 1000, 1, "ipi")[0])


class Profiles(unittest.TestCase):
    # a point's repetition under TCG: its duration plus the untimed pass
    # and the threads' start, estimated at 50 ms (not measured: no guest
    # run here)
    TCG_OVERHEAD_S = 0.05
    QUICK_GUEST_S = 30

    def test_every_profile_has_tlbflush(self):
        for name in ("tiny", "quick", "full"):
            for mode in ("guest", "native"):
                p = run_py.profile(name, mode, mem_available=8 << 30)
                a = run_py.profile_args(p, "tlbflush")
                counts = a[a.index("--threads") + 1].split(",")
                self.assertEqual(counts[0], "1")
                if mode == "guest":
                    self.assertEqual(len(counts), p["smp"])
                region = int(a[a.index("--sizes") + 1])
                # a file thread holds its file and its copies
                self.assertLessEqual(2 * len(counts) * region,
                                     p["max_bytes"], (name, mode))

    def test_guest_boots_with_the_vcpus(self):
        c = contract.load()
        args = run_py.parse_args(["--mode", "guest", "--profile", "quick"], c)
        p = run_py.profile("quick", "guest", None, c)
        runs = [r for r in run_py.invocations(p, args, "auto", c.bench_names(), c)
                if r[0] == "tlbflush"]
        self.assertEqual(len(runs), 1)
        cmd = run_py.guest_command(p, args, runs, c)
        self.assertEqual(cmd[cmd.index("--smp") + 1], str(run_py.GUEST_CPUS))

    def test_quick_guest_within_its_estimate(self):
        c = contract.load()
        p = run_py.profile("quick", "guest", None, c)
        a = run_py.profile_args(p, "tlbflush")
        backings = run_py.bench_backings(
            p, "tlbflush", argparse.Namespace(backings=None,
                                              arch="x86_64"), c)
        self.assertFalse([b for b in backings if b.endswith("-1G")])
        # the kinds each backing has (bench/tlbflush.c kind_applies)
        pairs = sum(2 if b in ("devzero", "thp", "maphugetlb", "devhugetlb",
                               "shm") else 3 for b in backings)
        reps = int(a[a.index("--reps") + 1]) + \
            int(a[a.index("--warmup") + 1])
        counts = len(a[a.index("--threads") + 1].split(","))
        ms = int(a[a.index("--duration-ms") + 1])
        est = pairs * counts * reps * (ms / 1e3 + self.TCG_OVERHEAD_S)
        self.assertLess(est, self.QUICK_GUEST_S, (pairs, counts, reps, est))


if __name__ == "__main__":
    unittest.main()
