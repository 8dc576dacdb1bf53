# SPDX-License-Identifier: GPL-2.0
"""fault: faults are counted in every mode (populate included), an empty
cell where nothing was measured, setup reported per call, and the timed
region holds only the calls each mode claims (seen with strace)."""
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from tests.bench.benchbin import BenchRun, run_thp_tolerant
from tests.bench.common import BINDIR, raise_free
from bench import benchrun

SIZE = 4 << 20
ARGS = ["--sizes", "4M", "--reps", "3", "--warmup", "1"]
POOL_PAGES = 4      # one 4 MB mapping of 2 MB pages at a time, and slack


def expected_faults_per_mb(page_kb):
    # one fault per page of the backing, for demand and populate alike
    return 1024.0 / page_kb


class TestFaultCounts(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.res = run_thp_tolerant("fault", ["--backings", "devzero,thp"] +
                                   ARGS)

    def rows(self, backing, mode):
        return [r for r in self.res.rows
                if r["backing"] == backing and r["mode"] == mode]

    def test_exit(self):
        self.assertEqual(self.res.returncode, 0, self.res.describe())

    def test_demand_and_populate_count_one_fault_per_page(self):
        for backing, kb in (("devzero", 4), ("thp", 2048)):
            for mode in ("demand", "populate"):
                (r,) = self.rows(backing, mode)
                want = expected_faults_per_mb(kb)
                # one stray fault (a stack page) in 4 MB is tolerated
                self.assertAlmostEqual(float(r["faults_per_mb"]), want,
                                       delta=0.25 + 1e-9,
                                       msg="%s %s: %r" % (backing, mode, r))
                self.assertGreater(float(r["us_per_fault"]), 0)

    def test_no_zero_for_nothing_counted(self):
        for r in self.res.rows:
            if float(r["faults_per_mb"]) == 0:
                self.assertEqual(r["us_per_fault"], "", r)

    def test_setup_is_per_call(self):
        for backing in ("devzero", "thp"):
            (r,) = self.rows(backing, "setup")
            self.assertEqual(r["us_per_mb"], "", r)
            self.assertEqual(r["us_min_per_mb"], "", r)
            self.assertGreater(float(r["us_per_call"]), 0, r)
            self.assertEqual(float(r["faults_per_mb"]), 0, r)
        for r in self.res.rows:
            if r["mode"] != "setup":
                mb = int(r["size_bytes"]) / (1 << 20)
                self.assertAlmostEqual(float(r["us_per_call"]) / mb,
                                       float(r["us_per_mb"]),
                                       delta=float(r["us_per_mb"]) * 1e-3 +
                                       1e-3, msg=r)


# What a timed region may call, in every mode (bench/fault.c,
# results/README.md): attach, detach and release
TIMED_CALLS = {"mmap", "munmap", "madvise", "shmat", "shmdt", "shmctl",
               "close"}
ROW = re.compile(r'write\(1, "@row fault [^,]+,\d+,(\w+),')
CALL = re.compile(r"^(?:\d+ +)?(\w+)\(")


@unittest.skipUnless(shutil.which("strace"), "strace is not installed")
class TestFaultTimedRegion(unittest.TestCase):
    """The fault counts are read (getrusage) right before the first clock
    reading and right after the last, so the syscalls strace shows
    between a pair of getrusage calls are the timed ones.  The hugetlb
    cases raise the 2 MB pool by the pages they map (and put it back), so
    whether they run does not depend on what other processes hold."""

    @classmethod
    def setUpClass(cls):
        cls.pools = benchrun.HugePools()
        # root only: without it a pool that happens to have free pages
        # would decide, and hugetlbfs and SHM_HUGETLB need root anyway
        cls.pool_ok = os.geteuid() == 0 and raise_free(cls.pools, 2048, POOL_PAGES)
        cls.addClassCleanup(cls.pools.restore)

    def need_pool(self):
        if not self.pool_ok:
            self.skipTest("could not raise the 2 MB pool by %d pages (needs "
                          "root: sudo make test-bench)" % POOL_PAGES)

    def regions(self, backing):
        with tempfile.TemporaryDirectory() as d:
            log = os.path.join(d, "strace")
            proc = subprocess.run(
                ["strace", "-f", "-s", "80", "-o", log,
                 os.path.join(BINDIR, "fault"), "--backings", backing] + ARGS,
                capture_output=True, text=True, timeout=300)
            self.assertEqual(proc.returncode, 0, proc.stdout[-2000:])
            with open(log) as f:
                lines = f.read().splitlines()
        by_mode, pending, inside, calls = {}, [], False, []
        for line in lines:
            m = CALL.match(line)
            if not m:
                continue
            name = m.group(1)
            if name == "getrusage":
                if inside:
                    pending.append(calls)
                inside, calls = not inside, []
            elif inside:
                calls.append(name)
            r = ROW.search(line)
            if r:
                by_mode.setdefault(r.group(1), []).extend(pending)
                pending = []
        return by_mode

    def check(self, backing):
        by_mode = self.regions(backing)
        self.assertEqual(sorted(by_mode), ["demand", "populate", "setup"])
        for mode, regions in by_mode.items():
            self.assertEqual(len(regions), 4, (mode, regions))  # warmup + reps
            for calls in regions:
                self.assertTrue(set(calls) <= TIMED_CALLS,
                                "%s %s timed %s" % (backing, mode, calls))
                self.assertTrue({"mmap", "shmat"} & set(calls), calls)
        # setup times the same calls as demand, the release included
        # (where a reservation is dropped: munmap, shmdt or the last close)
        self.assertEqual(by_mode["setup"], by_mode["demand"])
        return by_mode

    def test_devzero(self):
        self.check("devzero")

    def test_hugetlbfs_prepares_outside(self):
        # the mount lookup, mkstemp, unlink and ftruncate are preparation
        self.need_pool()
        self.check("hugetlbfs")

    def test_memfd_and_shm(self):
        self.need_pool()
        self.check("memfd")
        self.check("shm")

    def test_the_mount_is_looked_up_once(self):
        """prepare_us_per_call times making a hugetlbfs file, not finding
        the mount: /proc/mounts is read once in a run of 12 prepare steps
        (3 modes, a warmup and 3 repetitions each), whether the benchmark
        finds a mount (one this test makes) or makes its own (none there)."""
        self.need_pool()
        with tempfile.TemporaryDirectory() as d:
            mnt = os.path.join(d, "mnt")
            os.mkdir(mnt)
            self.assertEqual(self.mount_lookups(d), 1, "no mount")
            subprocess.run(["mount", "-t", "hugetlbfs", "-o", "pagesize=2M",
                            "none", mnt], check=True)
            try:
                self.assertEqual(self.mount_lookups(d), 1, "a mount there")
            finally:
                subprocess.run(["umount", mnt], check=True)

    def mount_lookups(self, d):
        """openat calls of /proc/mounts in a hugetlbfs run of fault."""
        log = os.path.join(d, "strace")
        proc = subprocess.run(
            ["strace", "-f", "-o", log, "-e", "trace=openat", "-P",
             "/proc/mounts", os.path.join(BINDIR, "fault"), "--backings",
             "hugetlbfs"] + ARGS, capture_output=True, text=True, timeout=300)
        self.assertEqual(proc.returncode, 0, proc.stdout[-2000:])
        with open(log) as f:
            return sum("openat(" in ln for ln in f)


@unittest.skipUnless(shutil.which("strace"), "strace is not installed "
                     "(make deps)")
class TestFaultClock(unittest.TestCase):
    """The clock against syscalls strace holds up for a known time: a
    delay in the preparation (opening /dev/zero) must not reach the
    reported time, and one in the release (munmap, inside the window)
    must, whole.  The first fails if the clock starts before prepare, the
    second if the window's seconds are scaled wrong; the delays are large
    beside a 4 MB window, which takes milliseconds even on a loaded host."""
    ARGS = ["--backings", "devzero", "--sizes", "4M", "--reps", "1",
            "--warmup", "0", "--warm-pass", "0"]
    DELAY_US = 1100000      # over a second: the window spans a second tick

    def delayed(self, trace):
        return BenchRun("fault", self.ARGS, wrap=[
            "strace", "-f", "-o", os.devnull] + trace + [
            "-e", "inject=%s:delay_enter=%d" % (trace[-1].split("=")[1],
                                                 self.DELAY_US)])

    def us_per_call(self, res, col="us_per_call"):
        self.assertEqual(res.returncode, 0, res.describe())
        self.assertEqual(sorted(r["mode"] for r in res.rows),
                         ["demand", "populate", "setup"], res.describe())
        return {r["mode"]: float(r[col]) for r in res.rows}

    def test_preparation_is_outside_the_clock(self):
        """...and inside prepare's own: prepare_us_per_call holds it."""
        res = self.delayed(["-P", "/dev/zero", "-e", "trace=openat"])
        for mode, us in self.us_per_call(res).items():
            self.assertLess(us, self.DELAY_US, "%s timed the open of "
                            "/dev/zero (delayed by strace)" % mode)
        for mode, us in self.us_per_call(res, "prepare_us_per_call").items():
            self.assertGreaterEqual(us, self.DELAY_US, "%s: prepare's clock "
                                    "lost the open strace delayed" % mode)

    def test_closing_the_object_is_inside_the_clock(self):
        """Releasing the object (close(), IPC_RMID) belongs to the window
        as unmapping does: a hugetlb file may free its pages there."""
        res = self.delayed(["-P", "/dev/zero", "-e", "trace=close"])
        for mode, us in self.us_per_call(res).items():
            self.assertGreaterEqual(us, self.DELAY_US, "%s: the window "
                                    "lost the close strace delayed" % mode)

    def test_release_is_inside_the_clock(self):
        res = self.delayed(["-e", "trace=munmap"])
        for mode, us in self.us_per_call(res).items():
            self.assertGreaterEqual(us, self.DELAY_US, "%s: the window "
                                    "lost the munmap strace delayed" % mode)
        for mode, us in self.us_per_call(res, "prepare_us_per_call").items():
            self.assertLess(us, self.DELAY_US, "%s: prepare's clock held "
                            "the munmap strace delayed" % mode)


class TestPerFault(unittest.TestCase):
    def test_us_per_fault_is_the_median_call_over_its_faults(self):
        """us_per_fault = us_per_call (the median call) / the median
        faults per call (faults_per_mb x MB): not the fastest call's.  The
        calls of a row differ by a few percent at least (checked: one row
        where the fastest is 1 % under the median tells them apart)."""
        res = BenchRun("fault", ["--backings", "devzero", "--sizes", "1M",
                                 "--reps", "9", "--warmup", "1"])
        self.assertEqual(res.returncode, 0, res.describe())
        apart = 0
        for r in res.rows:
            if r["mode"] == "setup":
                self.assertEqual(r["us_per_fault"], "", r)
                continue
            faults = float(r["faults_per_mb"]) * int(r["size_bytes"]) / (1 << 20)
            self.assertAlmostEqual(float(r["us_per_fault"]),
                                   float(r["us_per_call"]) / faults,
                                   delta=1e-3 * float(r["us_per_fault"]), msg=r)
            apart += float(r["us_min_per_mb"]) < 0.99 * float(r["us_per_mb"])
        self.assertGreater(apart, 0, "every call of every row took the same "
                           "time to 1 %%: the median and the fastest were not "
                           "told apart (%s)" % res.rows)


if __name__ == "__main__":
    unittest.main()
