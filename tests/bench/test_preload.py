#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""hugepreload.so (bench/realprog/hugepreload.c) on this host's kernel, and
the realprog driver that runs xz and memcached under it.

tests/bench/preload_probe.c mallocs, mmaps, munmaps, mremaps, forks and
runs threads under the library with each backing the host has (none, thp,
maphugetlb, hugetlbfs; /dev/hugetlb only in the guest, see guest_test.py),
and prints what smaps says it got.  The hugetlb cases raise the 2 MB pool
by what they need and mount hugetlbfs in a temporary folder when none is
mounted; both are put back afterwards.  They need root and skip without it.
"""
import ctypes
import json
import os
import re
import subprocess
import tempfile
import unittest

from bench import benchrun
from tests.bench.common import ROOT, benchtool

SO = os.path.join(ROOT, "build", "bench", "hugepreload.so")
REALPROG = os.path.join(ROOT, "build", "bench", "realprog")
PROBE_SRC = os.path.join(ROOT, "tests", "bench", "preload_probe.c")
POOL = "/sys/kernel/mm/hugepages/hugepages-2048kB/%s"
THP = "/sys/kernel/mm/transparent_hugepage/enabled"
MB = 1 << 20
PROBE_PAGES = 48        # 2 MB pages the probe holds at most at once


def read_int(path):
    with open(path) as f:
        return int(f.read())


def thp_mode():
    try:
        with open(THP) as f:
            return re.search(r"\[(\w+)\]", f.read()).group(1)
    except (OSError, AttributeError):
        return None


class Preload(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        for f in (SO, REALPROG):
            if not os.path.exists(f):
                raise unittest.SkipTest("%s not built (make test-bench "
                                        "builds it)" % f)
        cls.tmp = tempfile.TemporaryDirectory()
        cls.probe = os.path.join(cls.tmp.name, "probe")
        subprocess.run(["gcc", "-O2", "-Wall", "-Werror", "-o", cls.probe,
                        PROBE_SRC,
                        "-lpthread"], check=True)
        cls.saved_pool = None
        cls.mount = None

    @classmethod
    def tearDownClass(cls):
        if cls.mount:
            subprocess.run(["umount", cls.mount])
            os.rmdir(cls.mount)
        if cls.saved_pool is not None:
            with open(POOL % "nr_hugepages", "w") as f:
                f.write("%d\n" % cls.saved_pool)
        cls.tmp.cleanup()

    def run_probe(self, backing, *args, env=None):
        e = dict(os.environ, LD_PRELOAD=SO, HUGEPRELOAD_BACKING=backing)
        e.update(env or {})
        p = subprocess.run([self.probe, *map(str, args)], env=e,
                           capture_output=True, text=True, timeout=120)
        return p.returncode, p.stdout, p.stderr

    def facts(self, out):
        """{name: {key: int}} from the probe's "NAME KEY=VALUE" lines."""
        got = {}
        for line in out.splitlines():
            kv = re.findall(r"(\w+)=(-?\d+)", line)
            if kv and not line.startswith(("ok", "not ok")):
                got[line.split()[0]] = {k: int(v) for k, v in kv}
        return got

    def assert_probe_ok(self, rc, out, err):
        bad = [l for l in out.splitlines() if l.startswith("not ok")]
        self.assertEqual(bad, [], out + err)
        self.assertEqual(rc, 0, out + err)

    def need_root(self):
        if os.geteuid():
            self.skipTest("needs root to size the hugetlb pool")

    def need_pool(self):
        """At least PROBE_PAGES free 2 MB pages, raising the pool if not."""
        self.need_root()
        free = read_int(POOL % "free_hugepages")
        if free < PROBE_PAGES:
            cls = type(self)
            total = read_int(POOL % "nr_hugepages")
            if cls.saved_pool is None:
                cls.saved_pool = total
            with open(POOL % "nr_hugepages", "w") as f:
                f.write("%d\n" % (total + PROBE_PAGES - free))
            if read_int(POOL % "free_hugepages") < PROBE_PAGES:
                self.skipTest("the kernel gave fewer than %d free 2 MB "
                              "pages" % PROBE_PAGES)

    def need_hugetlbfs(self):
        with open("/proc/mounts") as f:
            for line in f:
                w = line.split()
                if w[2] == "hugetlbfs" and ("pagesize=" not in w[3] or
                                            "pagesize=2M" in w[3]):
                    return
        cls = type(self)
        cls.mount = tempfile.mkdtemp(prefix="hugepreload-test-")
        subprocess.run(["mount", "-t", "hugetlbfs", "-o", "pagesize=2M",
                        "none", cls.mount], check=True)

    def check_pages(self, facts, kb, thp=False):
        # malloc1536K: above the default threshold (1 MB), below 2 MB
        for name in ("malloc8M", "malloc1536K", "realloc4M", "mmap3M", "mremap6M"):
            if thp and name == "malloc1536K":
                continue        # THP backs it or not, as the kernel decides
            f = facts[name]
            if thp:
                self.assertGreater(f["anon_huge_kb"], 0, name)
            else:
                self.assertEqual(f["kernel_page_kb"], kb, name)
                if kb == 4:
                    self.assertEqual(f["anon_huge_kb"], 0, name)

    def test_none_4k_pages(self):
        rc, out, err = self.run_probe("none")
        self.assert_probe_ok(rc, out, err)
        f = self.facts(out)
        self.check_pages(f, 4)
        self.assertEqual(f["munmap_unaligned"]["rc"], 0)
        self.assertEqual(err, "")

    def test_thp(self):
        if thp_mode() in (None, "never"):
            self.skipTest("THP is off or absent (%s)" % thp_mode())
        rc, out, err = self.run_probe("thp")
        self.assert_probe_ok(rc, out, err)
        f = self.facts(out)
        self.check_pages(f, 4, thp=True)
        # 2 MB rounding: the slack past 3M+4K went with the munmap
        self.assertEqual(f["munmap_slack"]["mapped"], 0)
        # and a split mapping's tail keeps its slack to take along
        self.assertEqual(f["split_tail_slack"], {"rc": 0, "mapped": 0})

    def hugetlb_case(self, backing):
        self.need_pool()
        rc, out, err = self.run_probe(backing)
        self.assert_probe_ok(rc, out, err)
        f = self.facts(out)
        self.check_pages(f, 2048)
        self.assertEqual(f["munmap_slack"]["mapped"], 0)
        self.assertEqual(f["split_tail_slack"], {"rc": 0, "mapped": 0})
        # off a 2 MB boundary: refused as the kernel refuses MAP_HUGETLB's
        self.assertEqual(f["munmap_unaligned"], {"rc": -1, "errno": 22})
        self.assertEqual(err, "")

    def test_maphugetlb(self):
        self.hugetlb_case("maphugetlb")

    def test_hugetlbfs(self):
        self.need_root()
        self.need_hugetlbfs()
        self.hugetlb_case("hugetlbfs")

    def test_fallback_one_line(self):
        """More than the pool holds: normal pages and exactly one line."""
        self.need_root()
        big = (read_int(POOL % "nr_hugepages") + 8) * 2 * MB
        rc, out, err = self.run_probe("maphugetlb", big)
        self.assert_probe_ok(rc, out, err)
        f = self.facts(out)
        self.assertEqual(f["big_malloc"]["kernel_page_kb"], 4)
        self.assertEqual(f["big_mmap"]["kernel_page_kb"], 4)
        lines = err.splitlines()
        self.assertEqual(len(lines), 1, err)
        self.assertRegex(lines[0], r"^hugepreload: maphugetlb: no free 2048 "
                         r"kB huge pages for \d+ kB \(ENOMEM\)")

    def test_threshold(self):
        self.need_pool()
        rc, out, err = self.run_probe("maphugetlb",
                                      env={"HUGEPRELOAD_MIN": "16M"})
        self.assert_probe_ok(rc, out, err)
        self.assertEqual(self.facts(out)["malloc8M"]["kernel_page_kb"], 4)

    def test_bad_settings_exit_2(self):
        cases = [({"HUGEPRELOAD_BACKING": "bogus"},
                  "unknown HUGEPRELOAD_BACKING 'bogus'"),
                 ({"HUGEPRELOAD_BACKING": "maphugetlb-3000kB"},
                  "unknown HUGEPRELOAD_BACKING"),
                 ({"HUGEPRELOAD_BACKING": "none", "HUGEPRELOAD_MIN": "lots"},
                  "HUGEPRELOAD_MIN is not a size"),
                 ({"HUGEPRELOAD_BACKING": ""},
                  "HUGEPRELOAD_BACKING is not set")]
        if not os.path.exists("/dev/hugetlb"):
            cases.append(({"HUGEPRELOAD_BACKING": "devhugetlb"},
                          "/dev/hugetlb: No such file"))
        for env, msg in cases:
            e = dict(os.environ, LD_PRELOAD=SO, **env)
            p = subprocess.run(["true"], env=e, capture_output=True,
                               text=True)
            self.assertEqual(p.returncode, 2, env)
            self.assertIn(msg, p.stderr, env)

    def conform(self, backing=None, env=None):
        """{case: {key: value}} and {name: pages} of `probe conform`, under
        the preload with backing, or with glibc alone (backing None)."""
        e = dict(os.environ)
        if backing:
            e.update(LD_PRELOAD=SO, HUGEPRELOAD_BACKING=backing)
        e.update(env or {})
        p = subprocess.run([self.probe, "conform"], env=e,
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        cases = {l.split()[1]: l.split(None, 2)[2:]
                 for l in p.stdout.splitlines() if l.startswith("case ")}
        self.assertGreater(len(cases), 30, p.stdout)
        return cases, self.facts(p.stdout)

    def assert_conforms(self, backing):
        """Every case answers as glibc does without the preload."""
        glibc, _ = self.conform()
        mine, pages = self.conform(backing)
        for name in glibc:
            with self.subTest(case=name, glibc=glibc[name]):
                self.assertEqual(mine.get(name), glibc[name], backing)
        return pages

    ALIGNED = ["%s_%d" % (f, a) for f in ("memalign", "aligned_alloc",
                                           "posix_memalign")
               for a in (4096, 64 << 10, 2 * MB)]

    def test_conform_none(self):
        """The malloc family under the preload (4 KB pages) answers as
        glibc does: errno, alignment, overflow, zeroing, usable size,
        realloc contents."""
        self.assert_conforms("none")

    def test_conform_maphugetlb_aligned_blocks_huge(self):
        """... and on huge pages, where big blocks of any alignment up to
        the huge page get huge pages too."""
        self.need_pool()
        pages = self.assert_conforms("maphugetlb")
        for name in self.ALIGNED:
            self.assertEqual(pages[name]["kernel_page_kb"], 2048, name)

    def test_conform_thp_aligned_blocks_huge(self):
        if thp_mode() in (None, "never"):
            self.skipTest("THP is off or absent (%s)" % thp_mode())
        pages = self.assert_conforms("thp")
        for name in self.ALIGNED:
            self.assertGreater(pages[name]["anon_huge_kb"], 0, name)

    def test_realprog_driver(self):
        """The driver's protocol, and xz's output the same on each backing."""
        p = subprocess.run([REALPROG, "--corpus", "64K", "--reps", "2",
                            "--backings", "off,none", "--dir", self.tmp.name,
                            "--sample-ms", "20"],
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        lines = p.stdout.splitlines()
        header = [l for l in lines if l.startswith("@header realprog ")]
        self.assertEqual(len(header), 1)
        cols = header[0].split()[2].split(",")
        rows = [dict(zip(cols, l.split(" ", 2)[2].split(",")))
                for l in lines if l.startswith("@row realprog ")]
        self.assertEqual(len(rows), 4)
        self.assertTrue(all(len(r) == len(cols) for r in rows))
        self.assertEqual({(r["backing"], r["rep"]) for r in rows},
                         {(b, n) for b in ("off", "none") for n in "12"})
        self.assertEqual(len({(r["out_bytes"], r["out_fnv"]) for r in rows}),
                         1, rows)
        self.assertTrue(all(r["page_kb"] == "4" and r["fallback"] == "0"
                            for r in rows))
        # xz's own rusage: some CPU time, no more than its wall time on
        # every CPU, and faults.  Not user time alone: a run of a few ms
        # may have all its ticks in the kernel (the pages it faults in),
        # and then reports 0 s of user time.
        for r in rows:
            cpu = float(r["user_s"]) + float(r["sys_s"])
            self.assertGreater(cpu, 0, r)
            self.assertLessEqual(cpu, float(r["wall_s"]) * os.cpu_count() + 0.01, r)
            self.assertGreater(int(r["minflt"]), 0, r)
        self.assertIn("@done realprog 0", lines)

    # A stand-in for xz (--xz): maps 64 MB through malloc (so the preload
    # backs it), touches it, and writes the backing's FAKE_OUT_<backing>
    # (or "same"); its stderr line names the CPUs it may run on.  With
    # FAKE_HUGE_LATER it then moves to a MAP_HUGETLB mapping: its pages
    # change in the middle of the run.  With FAKE_HUGE_HALF it maps 64 MB
    # of MAP_HUGETLB instead and touches half of it; with FAKE_HUGE_SOME,
    # 36 MB of 4 kB pages and 24 MB of 2 MB pages (40 % huge).
    FAKE_XZ = """#!/usr/bin/python3
import mmap, os, sys, time
sys.stdin.buffer.read()
status = open("/proc/self/status").read()
# the line in pieces, as an unbuffered writer sends it: the driver
# must echo it whole
for piece in ("cp", "us ", status.split("Cpus_allowed_list:")[1].split()[0],
              "\\n"):
    sys.stderr.write(piece)
    sys.stderr.flush()
    time.sleep(0.01)
if os.environ.get("FAKE_HUGE_HALF"):
    m = mmap.mmap(-1, 64 << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS
                  | 0x40000)
    for i in range(0, 32 << 20, 2 << 20):
        m[i] = 1
    time.sleep(0.3)
    sys.stdout.write("same")
    sys.exit(0)
if os.environ.get("FAKE_HUGE_SOME"):
    small = mmap.mmap(-1, 36 << 20, flags=mmap.MAP_PRIVATE
                      | mmap.MAP_ANONYMOUS)
    small.madvise(mmap.MADV_NOHUGEPAGE)
    for i in range(0, len(small), 4096):
        small[i] = 1
    m = mmap.mmap(-1, 24 << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS
                  | 0x40000)
    for i in range(0, len(m), 2 << 20):
        m[i] = 1
    time.sleep(0.3)
    sys.stdout.write("same")
    sys.stdout.flush()
    # at once: an exit that unmapped the 4 kB pages first would leave a
    # last sample mostly huge
    os._exit(0)
buf = bytearray(64 << 20)
for i in range(0, len(buf), 4096):
    buf[i] = 1
if os.environ.get("FAKE_FALLBACK"):
    # the line hugepreload writes when the pool is short
    sys.stderr.write("hugepreload: maphugetlb: no free 2048 kB huge pages "
                     "for 65536 kB (ENOMEM)\\n")
    sys.stderr.flush()
time.sleep(0.3)
if os.environ.get("FAKE_HUGE_LATER"):
    del buf
    m = mmap.mmap(-1, 64 << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS
                  | 0x40000)
    for i in range(0, len(m), 2 << 20):
        m[i] = 1
    time.sleep(0.3)
be = os.environ.get("HUGEPRELOAD_BACKING", "off")
sys.stdout.write(os.environ.get("FAKE_OUT_" + be, "same"))
"""

    # Another stand-in, on 4 kB pages and 2 MB ones at once: 36 MB of
    # 4 kB pages (MADV_NOHUGEPAGE), touched first, then 28 MB touched of a
    # 32 MB MAP_HUGETLB mapping.  Huge pages hold 28 / 64 of what it
    # touched (a little less: the interpreter's own arenas count too).
    FAKE_MIXED = """#!/usr/bin/python3
import mmap, sys, time
sys.stdin.buffer.read()
private = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS
small = mmap.mmap(-1, 36 << 20, flags=private)
small.madvise(mmap.MADV_NOHUGEPAGE)
for i in range(0, len(small), 4096):
    small[i] = 1
huge = mmap.mmap(-1, 32 << 20, flags=private | 0x40000)     # MAP_HUGETLB
for i in range(0, 28 << 20, 2 << 20):
    huge[i] = 1
time.sleep(0.4)
sys.stdout.write("same")
"""

    @staticmethod
    def no_thp():
        """The fake programs are Python, whose own startup memory (obmalloc's
        1 MB arenas, the heap) THP may back where enabled is "always": a
        smaps sample taken before a fake touches its mappings would vote
        2 MB.  PR_SET_THP_DISABLE (41) for the driver and its children
        (kept across fork and execve); MAP_HUGETLB is no THP."""
        ctypes.CDLL(None, use_errno=True).prctl(41, 1, 0, 0, 0)

    def fake_driver(self, backings, env=None, *extra, program=None):
        xz = os.path.join(self.tmp.name, "fake-xz")
        with open(xz, "w") as f:
            f.write(program or self.FAKE_XZ)
        os.chmod(xz, 0o755)
        p = subprocess.run([REALPROG, "--corpus", "4K", "--reps", "2",
                            "--backings", backings, "--dir", self.tmp.name,
                            "--sample-ms", "20", "--xz", xz, *extra],
                           capture_output=True, text=True, timeout=300,
                           env=dict(os.environ, **(env or {})), preexec_fn=self.no_thp)
        lines = p.stdout.splitlines()
        cols = next(l for l in lines if l.startswith("@header realprog ")
                    ).split()[2].split(",")
        rows = [dict(zip(cols, l.split(" ", 2)[2].split(",")))
                for l in lines if l.startswith("@row realprog ")]
        return p, rows

    def test_realprog_other_output_excluded(self):
        """A run whose output differs from the first backing's is in the
        CSV, marked invalid, said in an @error and counted as excluded."""
        p, rows = self.fake_driver("off,none", {"FAKE_OUT_none": "other"})
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        valid = {(r["backing"], r["rep"]): r["valid"] for r in rows}
        self.assertEqual(valid, {("off", "1"): "1", ("off", "2"): "1",
                                 ("none", "1"): "0", ("none", "2"): "0"})
        self.assertIn("@error realprog none: xz wrote other bytes than on "
                      "off", p.stdout)
        self.assertRegex(p.stdout, r'"none": \{"status": "failed", .*'
                         r'"excluded": 2')

    def test_realprog_fallback_excluded(self):
        """A run the preload could not back (its ENOMEM line on the
        program's stderr) is in the CSV with fallback = 1, marked invalid
        and said in an @error."""
        p, rows = self.fake_driver("none", {"FAKE_FALLBACK": "1"})
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertEqual({(r["fallback"], r["valid"]) for r in rows}, {("1", "0")},
                         rows)
        self.assertIn("@error realprog none: hugepreload fell back to normal pages",
                      p.stdout)

    def test_realprog_pinned_and_sampled(self):
        """The program runs on the one CPU the driver names in every row,
        and page_kb is the vote of many smaps samples that all agree."""
        cpu = sorted(os.sched_getaffinity(0))[-1]
        p, rows = self.fake_driver("off,none")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(p.stdout.count("xz stderr: cpus %d\n" % cpu), 4,
                         p.stdout)
        for r in rows:
            self.assertEqual(r["cpu"], str(cpu), r)
            self.assertGreaterEqual(int(r["samples"]), 5, r)
            self.assertEqual(r["page_agree"], r["samples"], r)
            self.assertEqual((r["page_kb"], r["valid"]), ("4", "1"), r)
        # each repetition starts one backing further, so that neither
        # always runs first (cold caches, page cache)
        self.assertEqual([(r["backing"], r["rep"]) for r in rows],
                         [("off", "1"), ("none", "1"), ("none", "2"),
                          ("off", "2")])
        p, rows = self.fake_driver("off", {}, "--cpu", "0")
        self.assertEqual({r["cpu"] for r in rows}, {"0"})
        self.assertEqual(p.stdout.count("xz stderr: cpus 0\n"), 2)

    def test_realprog_page_shares(self):
        """What a run touched, and the share of it in huge pages, from
        smaps: 28 MB of 2 MB pages beside 36 MB of 4 kB ones is under
        half, so the run is on 4 kB pages (every sample says so), and
        huge_pct is the share of resident memory, not of the mappings'
        sizes (4 MB of the huge mapping is never touched)."""
        self.need_pool()
        p, rows = self.fake_driver("off", program=self.FAKE_MIXED)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(len(rows), 2)
        for r in rows:
            huge, res, big = (int(r[k]) for k in ("huge_kb", "resident_kb",
                                                  "big_kb"))
            self.assertEqual(huge, 28 << 10, r)
            self.assertGreaterEqual(res, (36 + 28) << 10, r)
            self.assertGreaterEqual(big, res + (4 << 10), r)
            self.assertAlmostEqual(float(r["huge_pct"]), 100.0 * huge / res,
                                   delta=0.051, msg=r)
            self.assertTrue(33.4 < float(r["huge_pct"]) < 100.0 * 28 / 64 + 0.05, r)
            self.assertEqual((r["page_kb"], r["valid"]), ("4", "1"), r)
            self.assertEqual(r["page_agree"], r["samples"], r)

    def test_realprog_pages_changing_mid_run_excluded(self):
        """Pages that change during the run (4 kB, then 2 MB) are seen by
        some samples and not others: the run is not valid."""
        self.need_pool()
        p, rows = self.fake_driver("off", {"FAKE_HUGE_LATER": "1"})
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        for r in rows:
            self.assertLess(int(r["page_agree"]), int(r["samples"]), r)
            self.assertEqual(r["valid"], "0", r)
        self.assertIn("smaps samples", p.stdout)

    def test_realprog_huge_pct_of_what_was_resident(self):
        """huge_pct is the share of what was resident that is on huge
        pages, not of the big mappings' size: 64 MB of 2 MB pages with
        half of them touched is all huge."""
        self.need_pool()
        p, rows = self.fake_driver("off", {"FAKE_HUGE_HALF": "1"})
        self.assertEqual(len(rows), 2, p.stdout + p.stderr)
        for r in rows:
            big, res, huge = (int(r[k]) for k in ("big_kb", "resident_kb",
                                                  "huge_kb"))
            self.assertGreaterEqual(big, 65536, r)
            self.assertGreaterEqual(huge, 32768, r)
            self.assertAlmostEqual(float(r["huge_pct"]), 100.0 * huge / res,
                                   delta=0.06, msg=r)
            self.assertGreater(float(r["huge_pct"]), 75, r)

    def test_realprog_page_size_of_most_of_it(self):
        """A sample votes for the page size holding most of what was
        resident: with 40 % on 2 MB pages, every sample says 4 kB."""
        self.need_pool()
        p, rows = self.fake_driver("off", {"FAKE_HUGE_SOME": "1"})
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(len(rows), 2, p.stdout)
        for r in rows:
            self.assertTrue(30 < float(r["huge_pct"]) < 45, r)
            self.assertEqual((r["page_kb"], r["page_agree"], r["valid"]),
                             ("4", r["samples"], "1"), r)

    # A program that maps 16 MB, advises MADV_HUGEPAGE itself, touches it
    # and prints the mapping's AnonHugePages (kB), as memcached -L does
    # with its cache.
    ADVISER = """
import ctypes, mmap, re
m = mmap.mmap(-1, 16 << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
m.madvise(mmap.MADV_HUGEPAGE)
for i in range(0, len(m), 4096):
    m[i] = 1
addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
inside = False
for line in open("/proc/self/smaps"):
    r = re.match(r"([0-9a-f]+)-([0-9a-f]+) ", line)
    if r:
        inside = int(r.group(1), 16) <= addr < int(r.group(2), 16)
    elif inside and line.startswith("AnonHugePages:"):
        print(line.split()[1])
"""

    def test_program_advice_left_to_the_backing(self):
        """A program's own MADV_HUGEPAGE on memory the library placed does
        nothing: none stays on 4 kB pages, thp is huge either way; on
        memory it did not place (below HUGEPRELOAD_MIN) the advice reaches
        the kernel, as it does without the library."""
        if thp_mode() not in ("always", "madvise"):
            self.skipTest("THP is %s here: MADV_HUGEPAGE cannot take effect"
                          % thp_mode())

        def huge_kb(env):
            p = subprocess.run(["python3", "-c", self.ADVISER], env=dict(
                os.environ, **env), capture_output=True, text=True, timeout=60,
                check=True)
            return int(p.stdout.split()[0])
        pre = {"LD_PRELOAD": SO}
        self.assertEqual(huge_kb(dict(pre, HUGEPRELOAD_BACKING="none")), 0)
        self.assertEqual(huge_kb(dict(pre, HUGEPRELOAD_BACKING="thp")), 16384)
        self.assertEqual(huge_kb(dict(pre, HUGEPRELOAD_BACKING="none",
                                      HUGEPRELOAD_MIN="64M")), 16384)
        self.assertEqual(huge_kb({}), 16384)

    # -- memcached, the second program ------------------------------------

    MEMCACHED = "/usr/bin/memcached"
    KV = ["--kv-items", "20000", "--kv-gets", "20000"]

    def need_memcached(self):
        if not os.access(self.MEMCACHED, os.X_OK):
            self.skipTest("no %s: make deps installs Debian's memcached"
                          % self.MEMCACHED)

    def kv_driver(self, backings, *extra, wrapper=None, thp=True):
        """realprog --programs memcached, through a wrapper script (bash:
        its text) in place of memcached where given; thp=False runs it
        under PR_SET_THP_DISABLE."""
        mc = self.MEMCACHED
        if wrapper:
            mc = os.path.join(self.tmp.name, "memcached-wrapper")
            with open(mc, "w") as f:
                f.write("#!/bin/bash\n" + wrapper)
            os.chmod(mc, 0o755)
        p = subprocess.run([REALPROG, "--programs", "memcached", "--memcached", mc,
                            "--reps", "2", "--backings", backings, "--dir",
                            self.tmp.name, "--sample-ms", "20", *self.KV, *extra],
                           capture_output=True, text=True, timeout=300,
                           preexec_fn=None if thp else self.no_thp)
        lines = p.stdout.splitlines()
        cols = next(l for l in lines if l.startswith("@header realprog ")
                    ).split()[2].split(",")
        rows = [dict(zip(cols, l.split(" ", 2)[2].split(",")))
                for l in lines if l.startswith("@row realprog ")]
        return p, rows

    @staticmethod
    def kv_expected(items, gets, seed=1, value=100, batch=100):
        """memcached's answers to the driver's requests, worked out here
        from the seeded stream (layout.h's mix64, realprog.c's keys and
        values) without memcached: (bytes, FNV-1a)."""
        m = (1 << 64) - 1

        def mix64(z):
            z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & m
            z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & m
            return z ^ (z >> 31)

        def val(k):
            out, x = bytearray(), 0
            for i in range(value):
                if i % 12 == 0:
                    x = mix64((seed * 0x9e3779b97f4a7c15 + k * 64 + i) & m)
                out.append(97 + x % 26)
                x //= 26
            return bytes(out)
        parts, s, left = [b"STORED\r\n" * items], seed, gets
        while left:
            for _ in range(min(batch, left)):
                s += 1
                k = mix64(s) % items
                parts.append(b"VALUE k%010d 0 %d\r\n%s\r\n" % (k, value, val(k)))
            left -= min(batch, left)
            parts.append(b"END\r\n")
        data = b"".join(parts)
        h = 0xcbf29ce484222325
        for c in data:
            h = ((h ^ c) * 0x100000001b3) & m
        return len(data), "%016x" % h

    def test_realprog_memcached(self):
        """memcached -L, unmodified, on off (the program as it is: THP by
        its own madvise) and none: its answers are exactly the values the
        driver set (bytes and hash worked out here without memcached), the
        same on both; none stays on 4 kB pages although memcached advises
        MADV_HUGEPAGE on its cache (hugepreload keeps page-size advice
        off what it placed), off gets 2 MB where THP is on."""
        self.need_memcached()
        mode = thp_mode()
        if mode not in ("always", "madvise"):
            self.skipTest("THP is %s here: memcached -L wants it" % mode)
        p, rows = self.kv_driver("off,none")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(len(rows), 4, p.stdout)
        want = self.kv_expected(20000, 20000)
        for r in rows:
            self.assertEqual((int(r["out_bytes"]), r["out_fnv"]), want, r)
            self.assertTrue(r["program"].startswith("memcached -L -m "), r)
            self.assertEqual(r["corpus_bytes"], str(20000 * 100), r)
            self.assertEqual((r["valid"], r["fallback"]), ("1", "0"), r)
            self.assertEqual(r["page_agree"], r["samples"], r)
            self.assertGreater(int(r["resident_kb"]), 32 << 10, r)
            if r["backing"] == "none":
                self.assertEqual((r["page_kb"], r["huge_kb"]), ("4", "0"), r)
            else:
                self.assertEqual(r["page_kb"], "2048", r)
                self.assertGreater(float(r["huge_pct"]), 90, r)
        self.assertIn('"programs": "memcached"', p.stdout)

    def test_realprog_memcached_other_output_excluded(self):
        """The output oracle on memcached: a cache too small for the keys
        on none (a wrapper gives it -m 40, memcached's least with -L)
        evicts, its answers miss keys: none's runs are invalid."""
        self.need_memcached()
        p, rows = self.kv_driver("off,none", wrapper=(
            'a=("$@")\n'
            'if [ "$HUGEPRELOAD_BACKING" = none ]; then\n'
            '  for i in "${!a[@]}"; do [ "${a[$i]}" = -m ] && a[$((i+1))]=40; done\n'
            'fi\n'
            'exec %s "${a[@]}"\n' % self.MEMCACHED))
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertEqual({(r["backing"], r["valid"]) for r in rows},
                         {("off", "1"), ("none", "0")}, rows)
        self.assertIn("@error realprog none: memcached wrote other bytes than "
                      "on off", p.stdout)

    def test_realprog_memcached_wrong_pages_excluded(self):
        """The smaps oracle on memcached: maphugetlb promises 2 MB pages;
        a wrapper that raises HUGEPRELOAD_MIN past everything leaves the
        cache to memcached's own THP advice, which PR_SET_THP_DISABLE
        refuses: 4 kB pages, the runs invalid."""
        self.need_memcached()
        self.need_pool()
        p, rows = self.kv_driver("maphugetlb", thp=False, wrapper=(
            "HUGEPRELOAD_MIN=1G exec %s \"$@\"\n" % self.MEMCACHED))
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertEqual(len(rows), 2, p.stdout)
        for r in rows:
            self.assertEqual((r["page_kb"], r["valid"]), ("4", "0"), r)
        self.assertIn("@error realprog maphugetlb: promised 2048 kB pages, "
                      "smaps showed most of its big mappings on 4 kB", p.stdout)
        # the same without the wrapper: 2 MB pages, valid
        self.need_pool()
        p, rows = self.kv_driver("maphugetlb", thp=False)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        for r in rows:
            self.assertEqual((r["page_kb"], r["valid"], r["fallback"]),
                             ("2048", "1", "0"), r)
            self.assertGreater(float(r["huge_pct"]), 99, r)

    def test_realprog_bad_program(self):
        p = subprocess.run([REALPROG, "--programs", "xz,redis"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 2)
        self.assertIn("unknown program 'redis'", p.stderr)

    def test_realprog_backings_are_the_contracts(self):
        """Past off and none, realprog's backings are rows of the backing
        table, with its meaning (hugetlbfs: a private mapping, as the
        library's), and a backing the host lacks is skipped with the
        benchmarks' own reason (bench/backing.c's check, linked)."""
        p = subprocess.run([REALPROG, "--backings", "nope"],
                           capture_output=True, text=True)
        names = p.stderr.split("use one of", 1)[1].split()
        self.assertEqual(names[:2], ["off", "none"])
        exported = json.loads(benchtool("contract").stdout)
        # the list bench/run.py and the guest test read is realprog's own
        self.assertEqual(exported["realprog_backings"], names)
        rows = {b["name"]: b for b in exported["backings"]}
        for n in names[2:]:
            self.assertIn(n, rows)
        self.assertIn("MAP_PRIVATE", rows["hugetlbfs"]["desc"])
        p = subprocess.run([REALPROG, "--backings", "devhugetlb",
                            "--corpus", "4K", "--reps", "1", "--dir",
                            self.tmp.name], capture_output=True, text=True)
        got = json.loads(p.stdout.split("@meta realprog_backings ")[1]
                         .splitlines()[0])
        chase = subprocess.run([os.path.join(ROOT, "build", "bench",
                                             "chase"), "--backings",
                                "devhugetlb", "--sizes", "4M"],
                               capture_output=True, text=True)
        meta = [json.loads(l.split(" ", 2)[2]) for l in
                chase.stdout.splitlines() if l.startswith("@meta backing ")]
        if meta[0]["status"] != "skipped":
            self.skipTest("this kernel has /dev/hugetlb: no skip to compare")
        self.assertEqual(got["devhugetlb"]["status"], "skipped")
        self.assertEqual(got["devhugetlb"]["reason"], meta[0]["reason"])

    def test_realprog_bad_backing(self):
        p = subprocess.run([REALPROG, "--backings", "none,hugepages"],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("unknown backing 'hugepages'", p.stderr)


class RealprogProfiles(unittest.TestCase):
    """memcached, realprog's second program, in every profile: its cache
    within the 2 MB pool the step is given (REALPROG_POOL), past the
    reach of 4 kB TLB entries natively, and the quick guest's six runs
    within their stated TCG estimate."""

    # memcached's CPU time per command (a set, or a key fetched),
    # measured natively on this 2-CPU host, loaded (1M keys set, 4M
    # fetched: 6.3 s of user + sys); TCG at the slow end of the 10-50x
    # that profiles.py states
    NATIVE_US_PER_OP = 1.3
    TCG_SLOWDOWN = 50
    QUICK_GUEST_S = 90

    def kv(self, a):
        return (int(a[a.index("--kv-items") + 1]), int(a[a.index("--kv-gets") + 1]))

    def test_every_profile_runs_memcached(self):
        for name in ("tiny", "quick", "full"):
            for mode in ("guest", "native"):
                p = benchrun.profile(name, mode, mem_available=8 << 30)
                a = benchrun.profile_args(p, benchrun.REALPROG)
                self.assertEqual(a[a.index("--programs") + 1], "xz,memcached", (name, mode))
                items, _ = self.kv(a)
                # realprog.c's kv_mb() (-m) and its hash table (8 B a
                # bucket, a bucket a key), each in whole 2 MB pages
                cache = ((items * 256) >> 20) + 64
                table = max(items, 1 << 16) * 8 / MB
                self.assertLessEqual((cache + 2) + table + 2,
                                     benchrun.REALPROG_POOL / MB, (name, mode))
        native = benchrun.profile("quick", "native", mem_available=8 << 30)
        items, gets = self.kv(benchrun.profile_args(native, benchrun.REALPROG))
        # 100-byte values in 192-byte chunks: far past the 6 MB a
        # 1536-entry 4 kB TLB reaches
        self.assertGreaterEqual(items * 192, 128 * MB)
        self.assertGreaterEqual(gets, 2 * items)

    def test_quick_guest_within_estimate(self):
        p = benchrun.profile("quick", "guest", None)
        items, gets = self.kv(benchrun.profile_args(p, benchrun.REALPROG))
        runs = 6        # off, none, thp, hugetlbfs, maphugetlb, devhugetlb; 1 rep
        est = runs * (items + gets) * self.NATIVE_US_PER_OP * self.TCG_SLOWDOWN / 1e6
        self.assertLess(est, self.QUICK_GUEST_S, (items, gets, est))


if __name__ == "__main__":
    unittest.main()
