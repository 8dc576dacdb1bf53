# SPDX-License-Identifier: GPL-2.0
"""Counter reading and placement (bench/pmu.c): multiplex scaling per
repetition, and the CPU/PMU choice on hybrid parts, against a fake sysfs."""
import json
import os
import subprocess
import tempfile
import unittest

from tests.bench.benchbin import BenchRun
from tests.bench.common import BINDIR, benchtool


def scale(v0, v1, e0, e1, r0, r1):
    out = benchtool("scale", *map(str, (v0, v1, e0, e1, r0, r1)))
    assert out.returncode == 0, out.stderr
    v, ok = out.stdout.split()
    return float(v), int(ok)


class TestScale(unittest.TestCase):
    def test_second_repetition_scaled_by_its_own_times(self):
        # Repetition 1 ran all of its 100 ns.  The counts are reset before
        # repetition 2 but the times are not: it ends at enabled 200,
        # running 150, so it ran 50 of its 100 ns and its 1000 counts
        # stand for 2000.  Running totals would give 1000 * 200/150.
        self.assertEqual(scale(0, 1000, 100, 200, 100, 150), (2000.0, 1))

    def test_counts_taken_as_deltas(self):
        # without a reset in between, the count is the difference too
        self.assertEqual(scale(500, 1500, 100, 200, 100, 200), (1000.0, 1))

    def test_not_scheduled_in_this_repetition(self):
        # ran in repetition 1 (running 100), not at all in repetition 2
        self.assertEqual(scale(0, 0, 100, 200, 100, 100), (0.0, 0))


def fake_sysfs(root, pmus):
    for name, (typ, cpus) in pmus.items():
        d = os.path.join(root, "bus", "event_source", "devices", name)
        os.makedirs(d)
        with open(os.path.join(d, "type"), "w") as f:
            f.write("%d\n" % typ)
        if cpus is not None:
            with open(os.path.join(d, "cpus"), "w") as f:
                f.write(cpus + "\n")


def pick(root, allowed, cpu=None):
    args = ["pickcpu", "--sysfs", root, "--allowed", allowed]
    if cpu is not None:
        args += ["--cpu", str(cpu)]
    out = benchtool(*args)
    assert out.returncode == 0, out.stderr
    f = out.stdout.split()
    return int(f[1]), f[3], int(f[5])


class TestPickCpu(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def test_hybrid_takes_a_p_core(self):
        # cpu_core 0-7, cpu_atom 8-15: the last allowed CPU (15) is an
        # E-core; the choice is the last P-core, with cpu_core's type
        fake_sysfs(self.tmp.name, {"cpu_core": (8, "0-7"),
                                   "cpu_atom": (10, "8-15")})
        self.assertEqual(pick(self.tmp.name, "0-15"), (7, "cpu_core", 8))

    def test_hybrid_only_e_cores_allowed(self):
        fake_sysfs(self.tmp.name, {"cpu_core": (8, "0-7"),
                                   "cpu_atom": (10, "8-15")})
        self.assertEqual(pick(self.tmp.name, "9-11"), (11, "cpu_atom", 10))

    def test_hybrid_requested_cpu_keeps_its_pmu(self):
        fake_sysfs(self.tmp.name, {"cpu_core": (8, "0-3,6"),
                                   "cpu_atom": (10, "4-5,7-15")})
        self.assertEqual(pick(self.tmp.name, "0-15", 12),
                         (12, "cpu_atom", 10))
        self.assertEqual(pick(self.tmp.name, "0-15", 6), (6, "cpu_core", 8))

    def test_not_hybrid(self):
        fake_sysfs(self.tmp.name, {"cpu": (4, None)})
        self.assertEqual(pick(self.tmp.name, "0-3"), (3, "cpu", 4))

    def test_no_pmu_in_sysfs(self):
        # a guest without a PMU: no type, the CPU is still chosen
        self.assertEqual(pick(self.tmp.name, "0,2"), (2, "cpu", -1))


def chase_meta(*args):
    out = subprocess.run([os.path.join(BINDIR, "chase"), "--sizes", "16K",
                          "--reps", "1", "--warmup", "0", "--hops", "1000",
                          "--backings", "devzero"] + list(args),
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    meta = {}
    for line in out.stdout.splitlines():
        if line.startswith("@meta "):
            _, key, val = line.split(" ", 2)
            meta[key] = json.loads(val)
    return meta, out.stdout


class TestRunnerMeta(unittest.TestCase):
    """What the chase writes about its counters on this host."""

    def test_counters_say_where_they_ran(self):
        meta, _ = chase_meta()
        pmu = meta["pmu"]
        self.assertEqual(pmu["cpu"], meta["method"]["cpu_pinned"])
        for name, c in meta["counters"].items():
            self.assertIn(c["pmu"], (pmu["pmu"], "software"), name)
            if not c["available"]:
                self.assertTrue(c["reason"], name)
        cols = {c["column"]: n for n, c in meta["counters"].items()}
        self.assertIn("l1_dtlb_misses_per_1k", cols)
        self.assertIn("walks_per_1k", cols)
        self.assertNotEqual(cols["l1_dtlb_misses_per_1k"],
                            cols["walks_per_1k"])

    def test_model_auto_takes_the_cores_preset(self):
        meta, out = chase_meta("--model", "auto")
        preset = meta["pmu"]["preset"]
        if preset:
            self.assertEqual(meta["method"]["model"], preset)
            self.assertEqual(meta["tlb_geometry"]["name"], preset)
        else:
            # never another CPU's preset: its own CPUID geometry, or none
            self.assertIn(meta["method"]["model"], ("cpuid", "none"))
            self.assertIn("no preset fits", out)
        self.assertIn("auto", meta["tlb_geometry"]["why"])


class TestChaseFaults(unittest.TestCase):
    """The chase's faults column: the software page-fault event over the
    timed repetitions, so a fault there (which the timing would hide) is
    seen.  --stray N faults a fresh page in the first N of them."""

    def faults(self, stray):
        r = BenchRun("chase", ["--sizes", "64K", "--reps", "3", "--backings",
                               "devzero", "--stray", str(stray)])
        self.assertEqual(r.returncode, 0, r.describe())
        ev = r.meta["counters"][0]["page-faults"]
        if not ev["available"]:
            self.skipTest("no software page-fault event: %s" % ev["reason"])
        self.assertEqual(ev["column"], "faults")
        return [int(row["faults"]) for row in r.rows]

    def test_no_faults_in_a_warm_chase(self):
        self.assertEqual(self.faults(0), [0])

    def test_a_fault_in_a_timed_repetition_is_counted(self):
        self.assertEqual(self.faults(2), [2])


if __name__ == "__main__":
    unittest.main()
