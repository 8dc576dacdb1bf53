# SPDX-License-Identifier: GPL-2.0
"""What the backings and the runner promise a user reads right: lengths
round up to whole pages of the backing (and THP to whole 2 MB pages),
populate asks the kernel to populate (MAP_POPULATE or MADV_POPULATE_WRITE,
seen with strace, inside the timed region), the @meta hugepages line
copies the pool files, a page size other than the promised one is
refused, the LLC is read from sysfs in K, M or G at the
highest data or unified level (CPUID only when sysfs has none), and a cpu
list whose range runs backwards is refused."""
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from tests.bench.benchbin import BenchRun
from tests.bench.common import BINDIR, benchtool
from bench import benchrun

POOL = "/sys/kernel/mm/hugepages/hugepages-2048kB/"


def pool_files():
    out = {}
    for name, key in (("nr_hugepages", "total"), ("free_hugepages", "free"),
                      ("resv_hugepages", "resv")):
        with open(POOL + name) as f:
            out[key] = int(f.read())
    return out


class Lengths(unittest.TestCase):
    def size_bytes(self, backing, size):
        r = BenchRun("fault", ["--backings", backing, "--sizes", size,
                               "--reps", "1", "--warmup", "0"])
        if r.returncode and backing == "thp" and "AnonHugePages" in r.stdout:
            self.skipTest("no THP pages at this moment: " + r.errors[0])
        self.assertEqual(r.returncode, 0, r.describe())
        return {int(row["size_bytes"]) for row in r.rows}

    def test_rounded_up_to_whole_pages(self):
        self.assertEqual(self.size_bytes("devzero", "5000"), {8192})

    def test_thp_rounded_up_to_whole_huge_pages(self):
        self.assertEqual(self.size_bytes("thp", "3M"), {4 << 20})


@unittest.skipUnless(shutil.which("strace"), "strace is not installed "
                     "(make deps: Debian package strace)")
class Populate(unittest.TestCase):
    """The timed calls of each mode, with their arguments: populate asks
    the kernel to fill the mapping, demand does not."""

    @classmethod
    def setUpClass(cls):
        cls.pools = benchrun.HugePools()
        held = cls.pools.read(2048) - cls.pools.read(2048, "free_hugepages")
        # root only: without it a pool that happens to have free pages
        # would decide whether the test runs
        cls.pool_ok = os.geteuid() == 0 and \
            cls.pools.raise_to(2048, held + 4) >= held + 4
        cls.addClassCleanup(cls.pools.restore)

    def timed_calls(self, backing):
        """{mode: [strace line]} of the calls between each pair of
        getrusage calls (fault.c's timed region)."""
        with tempfile.TemporaryDirectory() as d:
            log = os.path.join(d, "strace")
            p = subprocess.run(["strace", "-f", "-s", "80", "-o", log,
                                os.path.join(BINDIR, "fault"), "--backings",
                                backing, "--sizes", "4M", "--reps", "1",
                                "--warmup", "0"],
                               capture_output=True, text=True, timeout=300)
            self.assertEqual(p.returncode, 0, p.stdout[-2000:])
            with open(log) as f:
                lines = f.read().splitlines()
        out, inside, pending = {}, False, []
        for line in lines:
            if re.search(r"\bgetrusage\(", line):
                inside = not inside
                continue
            if inside:
                pending.append(line)
            m = re.search(r'write\(1, "@row fault [^,]+,\d+,(\w+),', line)
            if m:
                out.setdefault(m.group(1), []).extend(pending)
                pending = []
        return out

    def test_madvise_populate(self):
        calls = self.timed_calls("devzero")
        self.assertTrue(any("MADV_POPULATE_WRITE" in c for c in calls["populate"]),
                        calls["populate"])
        self.assertFalse(any("POPULATE" in c for c in calls["demand"]),
                         calls["demand"])

    def test_map_populate(self):
        if not self.pool_ok:
            self.skipTest("could not raise the 2 MB pool by 4 pages (needs "
                          "root: sudo make test-bench)")
        calls = self.timed_calls("maphugetlb")
        self.assertTrue(any(c.split("(")[0].endswith("mmap") and "MAP_POPULATE" in c
                            for c in calls["populate"]), calls["populate"])
        self.assertFalse(any("POPULATE" in c for c in calls["demand"]),
                         calls["demand"])


class PageSizeRefusal(unittest.TestCase):
    """backing_verify's verdict on what smaps says, fed by hand (benchtool
    pagecheck): no kernel here maps smaller pages than a backing asks for,
    and a THP mapping is only in part huge when memory is fragmented."""
    MB4 = str(4 << 20)

    def verdict(self, backing, size, kernel_kb, anon_huge_kb):
        p = subprocess.run([os.path.join(BINDIR, "benchtool"), "pagecheck",
                            backing, size, str(kernel_kb), str(anon_huge_kb)],
                           capture_output=True, text=True)
        return p.returncode, p.stdout.split()[:2]

    def test_promised_pages_accepted(self):
        self.assertEqual(self.verdict("hugetlbfs", self.MB4, 2048, 0),
                         (0, ["ok", "2048"]))
        self.assertEqual(self.verdict("devzero", self.MB4, 4, 0),
                         (0, ["ok", "4"]))

    def test_smaller_or_larger_pages_than_promised_refused(self):
        for backing, kb in (("maphugetlb", 4), ("devhugetlb-1G", 2048),
                            ("devzero", 2048)):
            self.assertEqual(self.verdict(backing, str(1 << 30), kb, 0)[0], 1,
                             "%s on %d kB pages" % (backing, kb))

    def test_thp_only_when_the_whole_mapping_is_huge(self):
        self.assertEqual(self.verdict("thp", self.MB4, 4, 4096),
                         (0, ["ok", "2048"]))
        self.assertEqual(self.verdict("thp", self.MB4, 4, 2048)[0], 1)
        self.assertEqual(self.verdict("thp", self.MB4, 4, 0)[0], 1)

    def test_thp_on_a_small_page_backing_refused(self):
        self.assertEqual(self.verdict("devzero", self.MB4, 4, 2048)[0], 1)


class HugepagesMeta(unittest.TestCase):
    def test_pool_files_copied(self):
        for _ in range(3):      # other processes may change the pool meanwhile
            before = pool_files()
            r = BenchRun("fault", ["--backings", "devzero", "--sizes", "4K",
                                   "--reps", "1", "--warmup", "0"])
            if pool_files() == before:
                break
        else:
            self.skipTest("the 2 MB pool changed during each of 3 runs")
        self.assertEqual(r.returncode, 0, r.describe())
        self.assertEqual(r.meta["hugepages"][0]["2048"], before)


class Llc(unittest.TestCase):
    def sysfs(self, caches):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        base = os.path.join(d, "sys/devices/system/cpu/cpu0/cache")
        for i, (level, typ, size) in enumerate(caches):
            idx = os.path.join(base, "index%d" % i)
            os.makedirs(idx)
            for name, val in (("level", level), ("type", typ), ("size", size)):
                with open(os.path.join(idx, name), "w") as f:
                    f.write("%s\n" % val)
        return d

    def llc(self, root, *extra):
        p = benchtool("llc", "--sysfs", root, *extra)
        self.assertEqual(p.returncode, 0, p.stderr)
        return json.loads(p.stdout)

    def test_sizes_in_m_and_g(self):
        for size, want in (("36M", 36 << 20), ("1G", 1 << 30), ("512K", 512 << 10)):
            root = self.sysfs([(1, "Data", "48K"), (3, "Unified", size)])
            self.assertEqual(self.llc(root, "--no-cpuid")["llc_bytes"], want)

    def test_a_data_cache_counts(self):
        root = self.sysfs([(1, "Instruction", "32K"), (2, "Data", "2048K")])
        self.assertEqual(self.llc(root, "--no-cpuid"),
                         {"llc_bytes": 2 << 20, "level": 2, "source": "sysfs",
                          "caches": 1, "plan": [0]})

    def test_sysfs_wins_over_cpuid(self):
        root = self.sysfs([(2, "Unified", "3M")])
        self.assertEqual(self.llc(root),
                         {"llc_bytes": 3 << 20, "level": 2, "source": "sysfs",
                          "caches": 1, "plan": [0]})


class CpuLists(unittest.TestCase):
    def test_a_backwards_range_is_refused(self):
        with tempfile.TemporaryDirectory() as d:
            for allowed, rc in (("1-3", 0), ("3-1", 64), ("0,2-", 64)):
                p = benchtool("pickcpu", "--sysfs", d, "--allowed", allowed)
                self.assertEqual(p.returncode, rc, (allowed, p.stdout, p.stderr))
            p = benchtool("pickcpu", "--sysfs", d, "--allowed", "1-3")
            self.assertTrue(p.stdout.startswith("cpu 3 "), p.stdout)


if __name__ == "__main__":
    unittest.main()
