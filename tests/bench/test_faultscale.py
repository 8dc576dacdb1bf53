# SPDX-License-Identifier: GPL-2.0
"""faultscale: each task's fault count is pages x iterations (4 KB and
2 MB pages) in every kind (will-it-scale's page_fault1, 2, 3 and 4), processes
and threads both run, N tasks start together from a spinning barrier, each
on the CPU it was given, no object is made or destroyed in the timed
window, windows reach --min-faults, a THP fallback is said as such, task
counts a pool cannot hold are skipped and said so, bad options are refused
by name, a read fault of a private file mapping maps the file's page and
takes none of its own (pagemap in the binary, the pool's free count here),
and bench/run.py gives the guest the vCPUs and the pool the regions it
needs."""
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from tests.bench.benchbin import run_thp_tolerant
from tests.bench.common import BINDIR, contract
from tests.bench import quiet
from bench import benchrun

CPUS = sorted(os.sched_getaffinity(0))
N = len(CPUS)
ONE_TWO = ",".join(map(str, range(1, min(N, 2) + 1)))  # --tasks 1,2 on two CPUs, else 1
MB = 1 << 20


def faultscale(backings, size, reps, tasks, *extra, iterations=1):
    """faultscale on backings, --sizes size, --reps, --tasks, then extra;
    no warm-up (these tests count faults) and --iterations (None: not
    given, the runner aims at --min-faults)."""
    argv = ["--backings", backings, "--sizes", size, "--reps", str(reps),
            "--warmup", "0", "--tasks", str(tasks)]
    if iterations is not None:
        argv += ["--iterations", str(iterations)]
    return run_thp_tolerant("faultscale", argv + list(extra))


def pool(name):
    try:
        with open("/sys/kernel/mm/hugepages/hugepages-2048kB/" + name) as f:
            return int(f.read())
    except OSError:
        return 0


def free_2m():
    return pool("free_hugepages") - pool("resv_hugepages")


def base_faults(r):
    page = int(r["page_kb"]) * 1024
    return int(r["tasks"]) * int(r["iterations"]) * \
        int(r["region_bytes"]) // page


def expected_faults(r):
    """pages x iterations x tasks, plus 511 for each 2 MB range of thp
    that fell back to 4 KB pages (thp_fallbacks counts them over all the
    repetitions, faults is the first one's): the count itself when it is
    one the row allows, else the base count (so that the test shows it)"""
    extra = int(r["faults"]) - base_faults(r)
    ok = extra % 511 == 0 and 0 <= extra // 511 <= int(r["thp_fallbacks"])
    return int(r["faults"]) if ok else base_faults(r)


POOL_HINT = ("raise the pool: echo 64 | flock /run/lock/hugetlb-helpers.lock "
             "tee /proc/sys/vm/nr_hugepages")
KINDS = {"devzero": ["anon"], "thp": ["anon"], "maphugetlb": ["anon"],
         "hugetlbfs": ["fresh", "cow", "shared", "read"],
         "memfd": ["fresh", "cow", "shared", "read"], "shm": ["fresh", "shared"]}
# what a task may call between its two fault-count readings (getrusage):
# the mapping calls, nothing that makes, sizes, opens or destroys an object
WINDOW_CALLS = {"getrusage", "mmap", "munmap", "madvise", "shmat", "shmdt"}


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
        res = faultscale("devzero", "8M", 2, ONE_TWO, iterations=3)
        self.check_counts(res, "devzero", 4)
        (r,) = [r for r in res.rows if r["mode"] == "process" and
                r["tasks"] == "1"]
        self.assertEqual(int(r["faults"]), 3 * 2048)

    def stray_run(self, stray):
        return faultscale("devzero", "1M", 2, 1, "--mode", "process", "--stray", str(stray))

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
        res = faultscale("thp", "8M", 2, ONE_TWO, iterations=3)
        self.check_counts(res, "thp", 2048)

    @unittest.skipUnless(free_2m() >= 8, "needs 8 free 2 MB huge pages "
                         "(raise /proc/sys/vm/nr_hugepages); has %d" % free_2m())
    def test_2m_hugetlb(self):
        res = faultscale("maphugetlb,memfd", "8M", 2, ONE_TWO, iterations=2)
        if res.returncode and free_2m() < 8:
            self.skipTest("the pool shrank under the test (another user)")
        self.check_counts(res, "maphugetlb", 2048)
        self.check_counts(res, "memfd", 2048)


class Concurrency(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.res = faultscale("devzero", "16M", 2, 2, "--oversubscribe", iterations=3)

    def test_exit(self):
        self.assertEqual(self.res.returncode, 0, self.res.describe())

    def test_processes_and_threads_both_run(self):
        self.assertEqual(sorted(r["mode"] for r in self.res.rows),
                         ["process", "thread"])

    def test_tasks_overlap(self):
        # released together, each starts before the other ends; how much
        # they share depends on the host's other load, which may keep one
        # task off a CPU until the other is done: that judges only on a
        # quiet machine (tests/bench/quiet.py), so each try runs its own
        def measure():
            res = faultscale("devzero", "16M", 2, 2, "--oversubscribe",
                             iterations=3)
            self.assertEqual(res.returncode, 0, res.describe())
            ov = [float(r["overlap"]) for r in res.rows]
            for v in ov:
                self.assertLessEqual(v, 1.0, res.rows)
            return min(ov) > 0, "overlap %s" % ov
        quiet.verdict(self, quiet.judge(measure, 3),
                      "two tasks released together overlap")

    def test_pinned_to_the_allowed_cpus_in_turn(self):
        want = ";".join(str(CPUS[i % N]) for i in range(2))
        for r in self.res.rows:
            self.assertEqual(r["cpus"], want, r)
            self.assertEqual(r["oversubscribed"], "1" if N < 2 else "0", r)
        (meta,) = self.res.meta["faultscale"]
        self.assertEqual(meta["allowed_cpus"], ";".join(map(str, CPUS)))

    def test_one_mode_only(self):
        res = faultscale("devzero", "1M", 1, 1, "--mode", "thread")
        self.assertEqual([r["mode"] for r in res.rows], ["thread"],
                         res.describe())


class Oversubscribed(unittest.TestCase):
    def test_more_tasks_than_cpus_are_labelled(self):
        res = faultscale("devzero", "1M", 1, str(N + 1), "--oversubscribe", "--mode", "process")
        self.assertEqual(res.returncode, 0, res.describe())
        (r,) = res.rows
        self.assertEqual(r["oversubscribed"], "1")
        self.assertEqual(r["cpus"].split(";"),
                         [str(CPUS[i % N]) for i in range(N + 1)])
        self.assertIn("(oversubscribed)", res.stdout)


def meminfo_kb(key):
    """A /proc/meminfo field (MemAvailable, MemTotal) in kB; 0 if absent."""
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def strace_windows(path):
    """{pid: [syscall names between its last two getrusage calls]} from an
    `strace -f -o path` log."""
    calls = {}
    for line in open(path):
        m = re.match(r"(\d+)\s+(?:<\.\.\. )?(\w+)", line)
        if m and "resumed>" not in line:
            calls.setdefault(m.group(1), []).append(m.group(2))
    out = {}
    for pid, names in calls.items():
        at = [i for i, n in enumerate(names) if n == "getrusage"]
        if len(at) >= 2:
            out[pid] = names[at[-2] + 1:at[-1]]
    return out


class Window(unittest.TestCase):
    """Nothing but mapping calls in the timed window: objects (files,
    memfds, segments, descriptors) are made before it and destroyed after
    it, and no /proc file is read in it."""

    @unittest.skipUnless(shutil.which("strace"), "needs strace (make deps)")
    def test_no_object_calls_in_the_window(self):
        backings = ["devzero"] + (["hugetlbfs", "memfd", "shm"]
                                  if free_2m() >= 8 else [])
        with tempfile.TemporaryDirectory() as d:
            log = os.path.join(d, "strace")
            p = subprocess.run(
                ["strace", "-f", "-qq", "-o", log,
                 os.path.join(BINDIR, "faultscale"), "--backings",
                 ",".join(backings), "--sizes", "4M", "--reps", "1",
                 "--warmup", "0", "--iterations", "2", "--tasks", "1"],
                capture_output=True, text=True, timeout=300)
            self.assertEqual(p.returncode, 0, p.stdout[-2000:] + p.stderr)
            rows = p.stdout.count("@row faultscale")
            windows = strace_windows(log)
        # a task per row (the parent's getrusage pairs are not windows)
        self.assertGreaterEqual(len(windows), rows, windows)
        for pid, names in windows.items():
            self.assertLessEqual(set(names), WINDOW_CALLS, (pid, names))


class Barrier(unittest.TestCase):
    def test_tasks_spin_at_the_start(self):
        # a task waiting in FUTEX_WAIT (or any sleep) makes a voluntary
        # context switch at the start barrier; a spinning one does not
        res = faultscale("devzero", "4M", 3, 2, "--oversubscribe")
        self.assertEqual(res.returncode, 0, res.describe())
        self.assertEqual(len(res.rows), 2, res.describe())
        for r in res.rows:
            self.assertEqual(int(r["barrier_sleeps"]), 0, r)
            self.assertGreaterEqual(float(r["start_skew_us"]), 0, r)
        (meta,) = res.meta["faultscale"]
        self.assertIn("spin", meta["barrier"])


class Kinds(unittest.TestCase):
    """will-it-scale's page_fault1 (anon), 2 (cow: a private mapping of a
    filled file), 3 (shared: the task's object kept across iterations) and
    4 (read: a private read-only mapping of a filled file), plus fresh (a new object per iteration, made before the window): each
    backing runs the kinds that apply to it, and every task counts exactly
    pages x iterations faults in each."""

    def run_kinds(self, backings, extra=()):
        res = faultscale(",".join(backings), "4M", 2, "1,2", "--oversubscribe", *extra,
                         iterations=2)
        self.assertEqual(res.returncode, 0, res.describe())
        for b in backings:
            got = sorted({r["kind"] for r in res.rows if r["backing"] == b})
            self.assertEqual(got, sorted(KINDS[b]), (b, res.describe()))
        for r in res.rows:
            self.assertEqual(int(r["faults"]), expected_faults(r), r)
            self.assertEqual(int(r["faults_per_task"]),
                             int(r["iterations"]) * int(r["region_bytes"]) //
                             (int(r["page_kb"]) * 1024), r)
        return res

    def test_anonymous_backings(self):
        self.run_kinds(["devzero", "thp"])

    def test_object_backings(self):
        if free_2m() < 16:
            self.skipTest("needs 16 free 2 MB huge pages, has %d: %s" % (
                free_2m(), POOL_HINT))
        self.run_kinds(["maphugetlb", "hugetlbfs", "memfd", "shm"])

    def test_one_kind(self):
        res = faultscale("devzero", "1M", 1, 1, "--mode", "thread", "--kind", "cow")
        self.assertEqual(res.returncode, 0, res.describe())
        self.assertEqual(res.rows, [])
        (skip,) = res.meta["skip"]
        self.assertEqual(skip["point"], "kind=cow")
        self.assertIn("cow needs a file backing", skip["reason"])

    def test_read_is_for_files(self):
        # asked for by name on backings with no file to map privately:
        # devzero (nothing behind it), shm (a segment has no private
        # mapping), devhugetlb (a new empty file each mmap; skipped or
        # absent on a kernel without the device, but never measured)
        res = faultscale("devzero,shm,devhugetlb", "2M", 1, 1, "--mode", "thread",
                         "--kind", "read")
        self.assertEqual(res.returncode, 0, res.describe())
        self.assertEqual(res.rows, [])
        for skip in res.meta["skip"]:
            self.assertEqual(skip["point"], "kind=read", skip)
            self.assertIn("read needs a file with pages in it to map privately",
                          skip["reason"])
        self.assertIn("devzero", [s["backing"] for s in res.meta["skip"]])


PAGEMAP = re.compile(r"^# faultscale: pagemap (\S+) kind=(\S+) mode=(\S+) tasks=(\d+) "
                     r"rep (\d+): file pages of (\d+) per task:((?: -?\d+)+)$", re.M)


class ReadKind(unittest.TestCase):
    """page_fault4 (kind read): each task maps its filled file MAP_PRIVATE
    and PROT_READ, reads a byte of every base page and unmaps.  Its oracle
    is the one faultscale already uses, each task's exact fault count
    (pages x iterations).  A read fault that took a page of its own (a
    copy, or a new cleared page) counts the same, so the binary checks the
    pages too: in its untimed iteration, /proc/self/pagemap's PM_FILE bit
    of every page before the unmap (read: all the file's own; cow, for
    contrast: none, each a copy), and in every iteration that the bytes
    read are the file's.  The pool's free count, read here around a
    mapping of our own, says the same without pagemap."""

    def setUp(self):
        if free_2m() < 16:
            self.skipTest("needs 16 free 2 MB huge pages, has %d: %s" % (free_2m(), POOL_HINT))

    def test_counts_pages_and_windows(self):
        res = faultscale("hugetlbfs,memfd", "4M", 2, "1,2", "--oversubscribe",
                         "--kind", "read,cow", "--verbose", iterations=3)
        if res.returncode and free_2m() < 16:
            self.skipTest("the pool shrank under the test (another user)")
        self.assertEqual(res.returncode, 0, res.describe())
        self.assertEqual(sorted((r["backing"], r["kind"], r["mode"], r["tasks"])
                                for r in res.rows),
                         sorted((b, k, m, n) for b in ("hugetlbfs", "memfd")
                                for k in ("read", "cow") for m in ("process", "thread")
                                for n in ("1", "2")), res.describe())
        for r in res.rows:
            # 4 MB of 2 MB pages, 3 iterations: 6 faults a task, exactly
            self.assertEqual(int(r["faults_per_task"]), 6, r)
            self.assertEqual(int(r["faults"]), 6 * int(r["tasks"]), r)
        # pagemap, every timed repetition of every row: read's 2 pages the
        # file's own in each task, cow's none
        seen = {}
        for m in PAGEMAP.finditer(res.stdout):
            b, k, mode, n, rep, pages, got = m.groups()
            self.assertEqual(pages, "2", m.group(0))
            self.assertEqual(got.split(), [("2" if k == "read" else "0")] * int(n),
                             m.group(0))
            seen.setdefault((b, k, mode, n), set()).add(rep)
        self.assertEqual(seen, {(r["backing"], r["kind"], r["mode"], r["tasks"]): {"0", "1"}
                                for r in res.rows}, res.stdout)
        # the verbose windows: each read task's own 6 faults
        wins = [m for m in RowArithmetic.WIN.finditer(res.stdout) if m.group(2) == "read"]
        self.assertEqual(len(wins), 2 * len([r for r in res.rows if r["kind"] == "read"]))
        for m in wins:
            self.assertEqual([t.split(":")[1] for t in m.group(6).split()],
                             ["6"] * int(m.group(4)), m.group(0))

    @unittest.skipUnless(shutil.which("strace"), "needs strace (make deps)")
    def test_the_window_maps_private_and_read_only(self):
        # page_fault4's mapping: every mmap of the region in the read
        # task's window (between its last two getrusage calls) is PROT_READ
        # alone and MAP_PRIVATE of the file, one per iteration
        with tempfile.TemporaryDirectory() as d:
            log = os.path.join(d, "strace")
            p = subprocess.run(
                ["strace", "-f", "-qq", "-e", "trace=getrusage,mmap", "-o", log,
                 os.path.join(BINDIR, "faultscale"), "--backings", "memfd",
                 "--sizes", "4M", "--reps", "1", "--warmup", "0", "--iterations", "3",
                 "--tasks", "1", "--mode", "process", "--kind", "read"],
                capture_output=True, text=True, timeout=300)
            self.assertEqual(p.returncode, 0, p.stdout[-2000:] + p.stderr)
            calls = {}
            with open(log) as f:
                for line in f:
                    m = re.match(r"(\d+)\s+(getrusage|mmap)\((.*)", line)
                    if m:
                        calls.setdefault(m.group(1), []).append(m.group(2, 3))
        maps = []
        for got in calls.values():
            at = [i for i, (name, _) in enumerate(got) if name == "getrusage"]
            if len(at) >= 2:
                maps += [args for name, args in got[at[-2] + 1:at[-1]]
                         if args.startswith("NULL, 4194304,")]
        self.assertEqual(len(maps), 3, calls)
        for args in maps:
            self.assertRegex(args, r"^NULL, 4194304, PROT_READ, MAP_PRIVATE, \d+, 0\)")

    def test_a_copied_page_fails_the_row(self):
        # --read-copy 1: task 0's untimed iteration maps writable and
        # writes its first page, a private copy holding the file's bytes.
        # The timed faults are as many as ever, and the bytes read the
        # same: only the pages themselves tell, and the row fails
        res = faultscale("memfd", "4M", 1, 1, "--mode", "process", "--kind", "read",
                         "--read-copy", "1", iterations=2)
        self.assertNotEqual(res.returncode, 0, res.describe())
        self.assertEqual(res.rows, [])
        self.assertIn("task 0: 1 of the 2 pages of its private mapping were the file's own "
                      "after the reads (pagemap PM_FILE), not 2: a read fault took a page of "
                      "its own", " ".join(res.errors))

    def test_the_pool_keeps_its_free_pages(self):
        # a memfd of 2 pages, filled through a shared mapping: a private
        # read-only mapping of it reserves 2 pages at mmap, and reading
        # both takes no free page; writing a private writable one takes
        # one per page written (the copy), from that reservation
        import mmap
        size = 2 * 2 * MB
        fd = os.memfd_create("pf4", os.MFD_HUGETLB)
        try:
            os.ftruncate(fd, size)
            with mmap.mmap(fd, size, flags=mmap.MAP_SHARED) as sh:
                for off in (0, 2 * MB):
                    sh[off] = 0x5A
            free0, resv0 = pool("free_hugepages"), pool("resv_hugepages")
            with mmap.mmap(fd, size, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ) as ro:
                resv1 = pool("resv_hugepages")
                got = [ro[0], ro[2 * MB]]
                free1 = pool("free_hugepages")
            with mmap.mmap(fd, size, flags=mmap.MAP_PRIVATE) as rw:
                rw[0] = 1
                free2 = pool("free_hugepages")
                self.assertEqual(rw[2 * MB], 0x5A)
            # both unmapped, the file still open: the pool as it was
            after = (pool("free_hugepages"), pool("resv_hugepages"))
        finally:
            os.close(fd)
        if after != (free0, resv0):
            self.skipTest("the pool changed under the test (another user): "
                          "%s, not %s" % (after, (free0, resv0)))
        self.assertEqual(got, [0x5A, 0x5A])
        self.assertEqual(resv1, resv0 + 2)
        self.assertEqual(free1, free0, "a read fault took a page of the pool")
        self.assertEqual(free2, free0 - 1, "a write fault did not copy its page")


class Windows(unittest.TestCase):
    def test_iterations_reach_min_faults(self):
        # 1 MB of 4 KB pages is 256 faults: 4 iterations make 1000
        res = faultscale("devzero", "1M", 1, 1, "--mode", "process", iterations=None)
        self.assertEqual(res.returncode, 0, res.describe())
        (r,) = res.rows
        self.assertEqual((r["iterations"], r["faults_per_task"],
                          r["short_window"]), ("4", "1024", "0"), r)
        res = faultscale("devzero", "1M", 1, 1, "--mode", "process")
        (r,) = res.rows
        self.assertEqual((r["faults_per_task"], r["short_window"]),
                         ("256", "1"), r)
        self.assertIn("256 faults per task, short of 1000 (--iterations 1)",
                      res.stdout)

    def test_fresh_objects_are_held_to_the_pool(self):
        # fresh needs iterations regions per task at once: a pool of P
        # free pages gives P // 2 iterations of a 2-page region, short
        free = free_2m()
        if not 4 <= free < 500:
            self.skipTest("needs 4 to 499 free 2 MB huge pages, has %d: %s"
                          % (free, POOL_HINT))
        res = faultscale("memfd", "4M", 1, 1, "--mode", "process", "--kind", "fresh",
                         iterations=None)
        if res.returncode and free_2m() < free:
            self.skipTest("the pool shrank under the test (another user)")
        self.assertEqual(res.returncode, 0, res.describe())
        (r,) = res.rows
        self.assertEqual(r["short_window"], "1", r)
        self.assertLessEqual(int(r["iterations"]), free // 2, r)
        self.assertIn("the pool holds", res.stdout)


class Overlap(unittest.TestCase):
    def test_rows_below_0_9_are_marked(self):
        res = faultscale("devzero", "1M", 2, "1,2", "--oversubscribe")
        self.assertEqual(res.returncode, 0, res.describe())
        for r in res.rows:
            self.assertEqual(r["low_overlap"],
                             "1" if float(r["overlap"]) < 0.9 else "0", r)
            if r["tasks"] == "1":
                self.assertEqual(float(r["overlap"]), 1.0, r)


class RowArithmetic(unittest.TestCase):
    """A row's numbers done again from its tasks' own windows (--verbose
    prints each timed repetition's start..end, in ns from the first start,
    and faults per task): the window runs from the first start to the last
    end; the rate is all the tasks' faults over it; overlap is the share
    of it in which every task ran, the row's the worst repetition's;
    start skew is the last start after the first; us_per_fault the tasks'
    mean.  Per column, the median over repetitions.  (A window started
    at the last start instead of the first differs only by the skew, which
    the spinning barrier keeps to microseconds and sometimes to nothing the
    rate's tolerance can see: that error is caught when the tasks started
    apart, as forked processes mostly do.)"""

    WIN = re.compile(r"^# faultscale: windows (\S+) kind=(\S+) mode=(\S+) "
                     r"tasks=(\d+) rep (\d+):((?: \d+\.\.\d+:\d+)+)$", re.M)

    def test_columns_from_the_windows(self):
        import statistics
        res = faultscale("devzero", "1M", 3, ONE_TWO, "--kind", "anon",
                         "--verbose", iterations=4)
        self.assertEqual(res.returncode, 0, res.describe())
        reps = {}
        for m in self.WIN.finditer(res.stdout):
            tasks = [tuple(map(int, re.split(r"\.\.|:", t)))
                     for t in m.group(6).split()]
            self.assertEqual(len(tasks), int(m.group(4)), m.group(0))
            reps.setdefault(m.group(1, 2, 3, 4), {})[int(m.group(5))] = tasks
        self.assertEqual(len(reps), len(res.rows), res.stdout)
        for r in res.rows:
            got = reps[(r["backing"], r["kind"], r["mode"], r["tasks"])]
            self.assertEqual(sorted(got), [0, 1, 2], r)
            fps, wall, ov, skew, upf = [], [], [], [], []
            for tasks in got.values():
                first = min(t0 for t0, _, _ in tasks)
                last = max(t1 for _, t1, _ in tasks)
                max_start = max(t0 for t0, _, _ in tasks)
                min_end = min(t1 for _, t1, _ in tasks)
                window = last - first
                fps.append(sum(f for _, _, f in tasks) / (window / 1e9))
                wall.append(window / 1e6)
                ov.append(max(0, min_end - max_start) / window)
                skew.append((max_start - first) / 1e3)
                upf.append(statistics.mean((t1 - t0) / 1e3 / f for t0, t1, f in tasks))
            med = statistics.median
            self.assertAlmostEqual(float(r["faults_per_s"]), med(fps),
                                   delta=0.1 + 1e-5 * med(fps), msg=r)
            self.assertAlmostEqual(float(r["faults_per_s_min"]), min(fps),
                                   delta=0.1 + 1e-5 * min(fps), msg=r)
            self.assertAlmostEqual(float(r["wall_ms"]), med(wall), delta=2e-3, msg=r)
            self.assertAlmostEqual(float(r["overlap"]), round(min(ov), 3),
                                   delta=1.5e-3, msg=r)
            self.assertAlmostEqual(float(r["start_skew_us"]), med(skew), delta=0.1, msg=r)
            self.assertAlmostEqual(float(r["us_per_fault"]), med(upf), delta=2e-4, msg=r)


class ThpFallback(unittest.TestCase):
    def test_a_fallback_is_said_not_taken_again(self):
        # --thp-fallback 1: task 0 advises MADV_NOHUGEPAGE on its first
        # 2 MB in the first repetition, so that range faults as 512 4 KB
        # pages: a fallback, not 511 stray faults
        res = faultscale("thp", "8M", 2, 1, "--mode", "process", "--thp-fallback", "1")
        self.assertEqual(res.returncode, 0, res.describe())
        (r,) = res.rows
        # this host's own fallbacks may add to the one asked for
        self.assertGreaterEqual(int(r["thp_fallbacks"]), 1, r)
        self.assertGreaterEqual(int(r["faults"]), 4 + 511, r)
        self.assertEqual(int(r["faults"]), expected_faults(r), r)
        self.assertNotIn("outside its region", res.stdout)
        self.assertIn("fell back to 4 KB pages", res.stdout)


class Skips(unittest.TestCase):
    def test_tasks_beyond_memory_are_skipped_and_said(self):
        # 256 regions of 1/128 of the RAM never fit, whatever else runs;
        # one must fit MemAvailable, which another process may have taken
        region_mb = max(meminfo_kb("MemTotal") // 128 // 1024, 1)
        if meminfo_kb("MemAvailable") < 2 * region_mb * 1024:
            self.skipTest("assumes MemAvailable of at least 2 x %d MB; has "
                          "%d kB (another process holds the memory)" %
                          (region_mb, meminfo_kb("MemAvailable")))
        res = faultscale("devzero", "%dM" % region_mb, 1, "1,256", "--oversubscribe",
                         "--mode", "thread")
        if res.returncode and meminfo_kb("MemAvailable") < 2 * region_mb * 1024:
            self.skipTest("MemAvailable fell below 2 x %d MB during the "
                          "test (another process)" % region_mb)
        self.assertEqual(res.returncode, 0, res.describe())
        self.assertEqual([r["tasks"] for r in res.rows], ["1"])
        (skip,) = res.meta["skip"]
        self.assertEqual((skip["bench"], skip["backing"], skip["point"]),
                         ("faultscale", "devzero", "kind=anon mode=thread tasks=256"))
        self.assertIn("256 tasks x %d kB need %d kB; MemAvailable is" % (
            region_mb * 1024, 256 * region_mb * 1024), skip["reason"])

    @unittest.skipUnless(free_2m() >= 2, "needs 2 free 2 MB huge pages; "
                         "has %d" % free_2m())
    def test_tasks_beyond_the_pool_are_skipped_and_said(self):
        # one region fits the pool, two do not
        pages = free_2m() // 2 + 1
        res = faultscale("maphugetlb", "%dM" % (2 * pages), 1, "1,2", "--oversubscribe",
                         "--mode", "process")
        if res.returncode and free_2m() < pages:
            self.skipTest("the pool shrank under the test (another user)")
        self.assertEqual(res.returncode, 0, res.describe())
        self.assertEqual([r["tasks"] for r in res.rows], ["1"])
        (skip,) = res.meta["skip"]
        self.assertEqual((skip["bench"], skip["backing"], skip["point"]),
                         ("faultscale", "maphugetlb", "kind=anon mode=process tasks=2"))
        self.assertIn("need %d pages of 2048 kB" % (2 * pages),
                      skip["reason"])

    @unittest.skipUnless(free_2m() >= 2, "needs 2 free 2 MB huge pages; "
                         "has %d" % free_2m())
    def test_read_holds_its_file_and_a_reservation(self):
        # a private mapping of a hugetlb file reserves its length at mmap,
        # read-only or not: a read task needs two regions of the pool, so
        # a region over half the free pages is skipped at one task
        pages = free_2m() // 2 + 1
        res = faultscale("memfd", "%dM" % (2 * pages), 1, 1, "--mode", "process",
                         "--kind", "read")
        if res.returncode and free_2m() < pages:
            self.skipTest("the pool shrank under the test (another user)")
        self.assertEqual(res.returncode, 0, res.describe())
        self.assertEqual(res.rows, [])
        (skip,) = res.meta["skip"]
        self.assertEqual(skip["point"], "kind=read mode=process tasks=1")
        self.assertIn("1 tasks x 2 regions of %d kB need %d pages of 2048 kB" % (
            2 * pages * 1024, 2 * pages), skip["reason"])

    def test_run_py_keeps_every_skip(self):
        run = benchrun
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
        self.refused(["--iterations", "-1"], "--iterations: '-1'",
                     "at least 0")
        self.refused(["--kind", "anon,huge"], "--kind: 'huge' is not a kind")


class Profiles(unittest.TestCase):
    """bench/run.py: the most tasks' regions fit max_bytes (the pool) twice
    (cow holds a file and its copies, read a file and its mapping's
    reservation), the guest gets GUEST_CPUS vCPUs,
    quick natively gives each task half of 1 GB over the CPUs."""

    def setUp(self):
        self.run = benchrun

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
                self.assertLessEqual(2 * region * max(counts),
                                     p["max_bytes"])
                self.assertLessEqual(
                    2 * region * max(counts) // (2 * MB), p["hugepages"])
                self.assertEqual("--oversubscribe" in a, max(counts) > cpus)

    def test_quick_native_is_half_a_gb_over_the_cpus(self):
        region, counts, a = self.args(self.run.profile("quick", "native"))
        self.assertEqual(counts, list(range(1, N + 1)))
        self.assertEqual(region, (1 << 30) // (2 * N) // (2 * MB) * (2 * MB))
        self.assertEqual(a[a.index("--min-faults") + 1], "1000")

    def test_guest_boots_with_the_vcpus(self):
        run = self.run
        c = contract.load()
        args = run.parse_args(["--mode", "guest", "--profile", "quick"], c)
        p = run.profile("quick", "guest", None, c)
        runs = run.invocations(p, args, "auto", c.bench_names(), c)
        cmd = run.guest_command(p, args, runs, c)
        self.assertEqual(cmd[cmd.index("--smp") + 1], str(run.GUEST_CPUS))
        fs = [a for b, a in runs if b == "faultscale"]
        self.assertTrue(fs)
        for a in fs:
            self.assertNotIn("-1G", a[a.index("--backings") + 1])
        # (tlbflush's threads take the vCPUs too: tests/bench/test_tlbflush)
        runs = [r for r in runs if r[0] not in ("faultscale", "tlbflush")]
        self.assertNotIn("--smp", run.guest_command(p, args, runs, c))


if __name__ == "__main__":
    unittest.main()
