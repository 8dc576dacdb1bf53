# SPDX-License-Identifier: GPL-2.0
"""A new backing is one row in bench/backing.c's table, and a new benchmark
one file bench/<name>.c, and nothing else.

In a copy of the tree, one row is added (a second 4 KB baseline on the
devzero functions, with its own colour); then, with no other file touched,
the new backing is measured (a native tiny run, twice), drawn
(plots/render.py) and compared (compare/compare.py diff of the two runs).
In another copy one file adds a benchmark, which is then measured and
compared the same way (its figure would be a plots/*.gp of its own).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

from common import ROOT
from test_extend import NEW_BENCH  # the C side's test benchmark, bench/touch.c

NEW = "devzero-b"
ROW = '\t{ "%s", 4, 0, "#123456", &devzero_ops,\n\t  "a second 4 KB baseline" },\n' % NEW


def copy_tree(dst):
    """The tracked and untracked-but-not-ignored files of the tree."""
    files = subprocess.run(["git", "-C", ROOT, "ls-files", "-co", "--exclude-standard",
                            "-z"], capture_output=True, text=True, check=True).stdout
    for rel in filter(None, files.split("\0")):
        src = os.path.join(ROOT, rel)
        if os.path.isfile(src):
            os.makedirs(os.path.dirname(os.path.join(dst, rel)), exist_ok=True)
            shutil.copy2(src, os.path.join(dst, rel))


def add_row(tree):
    path = os.path.join(tree, "bench", "backing.c")
    with open(path) as f:
        text = f.read()
    new, n = re.subn(r"(const struct backing backings\[\] = \{\n.*?)(\};)",
                     lambda m: m.group(1) + ROW + m.group(2), text, count=1, flags=re.S)
    if n != 1:
        raise AssertionError("no backing table in bench/backing.c")
    with open(path, "w") as f:
        f.write(new)


class Extended(unittest.TestCase):
    """A copy of the tree with one change (extend()), built, and two native
    tiny runs of run_args."""
    run_args = []

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="extend-")
        cls.tree = os.path.join(cls.tmp, "tree")
        copy_tree(cls.tree)
        cls.extend(cls.tree)
        # The copy reads its own contract: no pinned fixture.
        cls.env = {k: v for k, v in os.environ.items() if k != "BENCH_CONTRACT"}
        cls.build = cls.sh(["make", "-s", "-C", cls.tree, "bench-bins"])
        cls.runs = []
        for i in range(2):
            res = os.path.join(cls.tmp, "results-%d" % i)
            r = cls.sh([sys.executable, os.path.join(cls.tree, "bench", "run.py"),
                        "--mode", "native", "--profile", "tiny", "--results-dir", res]
                       + cls.run_args)
            cls.runs.append((r, os.path.realpath(os.path.join(res, "latest"))))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    @classmethod
    def sh(cls, argv):
        return subprocess.run(argv, cwd=cls.tree, env=cls.env, capture_output=True,
                              text=True, timeout=600)

    def check_measured(self, csv_name, prefix):
        self.assertEqual(self.build.returncode, 0, self.build.stderr[-2000:])
        for r, run in self.runs:
            self.assertEqual(r.returncode, 0, r.stdout[-1500:] + r.stderr[-1500:])
            with open(os.path.join(run, csv_name)) as f:
                rows = [l for l in f if l.startswith(prefix)]
            self.assertTrue(rows)
        return rows

    def compare(self):
        out = os.path.join(self.tmp, "compare")
        r = self.sh([sys.executable, os.path.join(self.tree, "compare", "compare.py"),
                     "diff", self.runs[0][1], self.runs[1][1], "--out", out])
        # 0 or 1: compared (a native timing may move); 2 or 3 would be a failure
        self.assertIn(r.returncode, (0, 1), r.stdout[-2000:] + r.stderr[-1000:])
        return r, out


class TestNewBacking(Extended):
    run_args = ["--backings", "devzero," + NEW]
    extend = staticmethod(add_row)

    def test_only_backing_c_differs(self):
        for rel in ("bench/backing.c", "bench/backing.h", "bench/run.py",
                    "plots/render.py", "plots/common.gp", "compare/compare.py"):
            with open(os.path.join(ROOT, rel)) as a, open(os.path.join(self.tree, rel)) as b:
                self.assertEqual(a.read() != b.read(), rel == "bench/backing.c", rel)

    def test_measured(self):
        rows = self.check_measured("chase.csv", NEW + ",")
        self.assertTrue(all(l.split(",")[1] == "4" for l in rows))

    def test_drawn(self):
        run = self.runs[0][1]
        r = self.sh([sys.executable, os.path.join(self.tree, "plots", "render.py"), run,
                     "--no-link"])
        self.assertEqual((r.returncode, r.stderr), (0, ""), r.stdout[-1500:])
        with open(os.path.join(run, "latency.svg")) as f:
            svg = f.read()
        self.assertIn("<title>%s</title>" % NEW, svg)
        self.assertRegex(svg, r"rgb\(\s*18,\s*52,\s*86\)")
        self.assertIn(NEW, r.stdout)

    def test_compared(self):
        r, out = self.compare()
        self.assertRegex(r.stdout, r"(?m)^chase %s line 16K " % NEW)
        self.assertTrue(os.path.exists(os.path.join(out, "overlay-chase-%s.svg" % NEW)))


def add_touch(tree):
    with open(os.path.join(tree, "bench", "touch.c"), "w") as f:
        f.write(NEW_BENCH)


class TestNewBenchmark(Extended):
    run_args = ["--benches", "touch", "--backings", "devzero,thp"]
    extend = staticmethod(add_touch)

    def test_measured(self):
        self.check_measured("touch.csv", "devzero,4,")

    def test_compared(self):
        r, out = self.compare()
        self.assertRegex(r.stdout, r"(?m)^touch devzero 64K +ns_per_page ")
        self.assertTrue(os.path.exists(os.path.join(out, "overlay-touch-devzero.svg")))


if __name__ == "__main__":
    unittest.main()
