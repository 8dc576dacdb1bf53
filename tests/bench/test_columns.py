# SPDX-License-Identifier: GPL-2.0
"""A benchmark's CSV columns are one list of {name, conversion} pairs (its
.columns, bench/runner.h): the header, the contract and every row come
from it, and a row that does not fit it fails loudly.  In a copy of
bench/, chase.c is drifted three ways (a column without a field, a field without a column, a
field of another kind than its column's conversion); each build runs and
must end with an @error naming the column, status 70, and no row.
realprog writes its rows through the same protocol (bench/rows.h) against
its own table (bench/realprog/table.h), drifted the same three ways."""
import glob
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from tests.bench.benchbin import BenchRun
from tests.bench.common import BINDIR, ROOT, benchtool
import json

from tests.bench.test_contract import fake_xz

CHASE_COLS = re.compile(r"\t\.columns = .*?\",\n", re.S)

# (what, the edit of chase.c's column array, the column the @error names)
DRIFTS = [
    ("a column without a field",
     lambda t: t.replace('faults %u"', 'faults %u, extra %u"'),
     "extra", "no field"),
    ("a field without a column",
     lambda t: t.replace(', faults %u"', '"'),
     "(past the last)", "a field"),
    ("a field of another kind",
     lambda t: t.replace('ns_min %.3f', 'ns_min %d'),
     "ns_min", "a value of another kind"),
]


def lib_sources(bench_dir):
    """The runner library bench.mk links every benchmark with."""
    return [p for p in glob.glob(os.path.join(bench_dir, "*.c"))
            if os.path.basename(p) not in ("main.c", "benchtool.c")
            and not re.search(r"^BENCH_REGISTER", open(p).read(), re.M)]


class TestDrift(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        src = os.path.join(ROOT, "bench")
        cls.dir = os.path.join(cls.tmp.name, "bench")
        shutil.copytree(src, cls.dir,
                        ignore=shutil.ignore_patterns("__pycache__"))
        # the library once, as objects: each drift only rebuilds chase.c
        cls.objs = []
        for c in lib_sources(cls.dir) + [
                os.path.join(cls.dir, "main.c"),
                os.path.join(BINDIR, "pmu-events.c")]:
            o = os.path.join(cls.tmp.name, os.path.basename(c) + ".o")
            cls.cc(["-c", "-o", o, c])
            cls.objs.append(o)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    @classmethod
    def cc(cls, args):
        p = subprocess.run(["gcc", "-O0", "-Wall", "-Wextra", "-I" + cls.dir]
                           + args, capture_output=True, text=True)
        if p.returncode:
            raise AssertionError("gcc %s: %s" % (args, p.stderr[-2000:]))

    def build(self, name, edit):
        with open(os.path.join(ROOT, "bench", "chase.c")) as f:
            text = f.read()
        cols = CHASE_COLS.search(text)
        self.assertTrue(cols, "no .columns in bench/chase.c")
        drifted = edit(cols.group(0))
        self.assertNotEqual(drifted, cols.group(0), name)
        path = os.path.join(self.tmp.name, name + ".c")
        with open(path, "w") as f:
            f.write(text.replace(cols.group(0), drifted))
        binary = os.path.join(self.tmp.name, name)
        self.cc(["-o", binary, path] + self.objs + ["-lm"])
        return binary

    def run_chase(self, binary):
        return subprocess.run(
            [binary, "--backings", "devzero", "--sizes", "64K", "--reps",
             "1", "--warmup", "0", "--hops", "4K"],
            capture_output=True, text=True, timeout=120)

    def test_undrifted_copy_writes_rows(self):
        """The control: the same build of the copy, undrifted, runs."""
        p = self.run_chase(self.build("same", lambda t: t + "\n"))
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("@row chase ", p.stdout)

    def test_drift_fails_naming_the_column(self):
        for i, (what, edit, col, why) in enumerate(DRIFTS):
            with self.subTest(what):
                p = self.run_chase(self.build("drift%d" % i, edit))
                self.assertEqual(p.returncode, 70, p.stdout + p.stderr)
                self.assertNotIn("@row chase ", p.stdout)
                err = [l for l in p.stdout.splitlines()
                       if l.startswith("@error chase ")]
                self.assertEqual(len(err), 1, p.stdout)
                self.assertIn("column %s gets %s" % (col, why), err[0])
                self.assertIn("@done chase 70", p.stdout)

    def test_conversion_it_does_not_print_refused_at_start(self):
        p = self.run_chase(self.build("badfmt", lambda t: t.replace(
            "ns_min %.3f", "ns_min %5.3f")))
        self.assertEqual(p.returncode, 70, p.stdout + p.stderr)
        self.assertNotIn("@header", p.stdout)
        self.assertIn("column ns_min: '%5.3f' is not %s, %d, %u", p.stderr)


class TestColumnValues(unittest.TestCase):
    """A column with a fixed set of values exports it (column_values), and
    the rows hold only those: STREAM's kernel names live in streamk.c."""

    def test_streamk_kernels_exported(self):
        c = json.loads(benchtool("contract").stdout)
        b = {x["name"]: x for x in c["benches"]}
        self.assertEqual(b["streamk"]["column_values"],
                         {"kernel": ["copy", "scale", "add", "triad"]})
        for x in c["benches"]:
            for col in x["column_values"]:
                self.assertIn(col, x["columns"], x["name"])

    def test_rows_hold_the_exported_kernels(self):
        run = BenchRun("streamk", ["--backings", "devzero", "--sizes", "1M",
                                   "--reps", "1", "--warmup", "1"])
        self.assertEqual(run.returncode, 0, run.describe())
        self.assertEqual([r["kernel"] for r in run.rows],
                         ["copy", "scale", "add", "triad"])


# realprog's table: its columns string, and its drifts as chase's
REALPROG_COLS = re.compile(r"\t\.columns = .*?\",\n", re.S)
REALPROG_DRIFTS = [
    ("a column without a field",
     lambda t: t.replace('valid %d"', 'valid %d, extra %d"'),
     "extra", "no field"),
    ("a field without a column",
     lambda t: t.replace(', valid %d"', '"'),
     "(past the last)", "a field"),
    ("a field of another kind",
     lambda t: t.replace("huge_pct %.1f", "huge_pct %d"),
     "huge_pct", "a value of another kind"),
]


def realprog_lib(bench_dir):
    """The library sources realprog links (realprog.mk's REALPROG_LIB), in
    bench_dir: the build's own list, so that the copy links as it does."""
    with open(os.path.join(ROOT, "bench", "realprog", "realprog.mk")) as f:
        line = next(l for l in f if l.startswith("REALPROG_LIB :="))
    return [os.path.join(bench_dir, os.path.relpath(src, "bench"))
            for src in line.split(":=", 1)[1].split()]


class TestRealprogDrift(unittest.TestCase):
    """realprog, built from a copy of bench/ whose table.h drifted, runs
    a stand-in for xz on "off" and must refuse its first row."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = os.path.join(cls.tmp.name, "bench")
        shutil.copytree(os.path.join(ROOT, "bench"), cls.dir,
                        ignore=shutil.ignore_patterns("__pycache__"))
        cls.xz = fake_xz(cls.tmp.name)
        with open(os.path.join(ROOT, "bench", "realprog", "table.h")) as f:
            cls.table = f.read()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def build(self, name, edit):
        cols = REALPROG_COLS.search(self.table)
        self.assertTrue(cols, "no .columns in bench/realprog/table.h")
        drifted = edit(cols.group(0))
        self.assertNotEqual(drifted, cols.group(0), name)
        with open(os.path.join(self.dir, "realprog", "table.h"), "w") as f:
            f.write(self.table.replace(cols.group(0), drifted))
        binary = os.path.join(self.tmp.name, name)
        p = subprocess.run(
            ["gcc", "-O0", "-Wall", "-Wextra", "-I" + self.dir, "-o", binary,
             os.path.join(self.dir, "realprog", "realprog.c")] + realprog_lib(self.dir),
            capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        return binary

    def run_realprog(self, binary):
        work = tempfile.mkdtemp(dir=self.tmp.name)
        p = subprocess.run(
            [binary, "--backings", "off", "--reps", "1", "--corpus", "4K",
             "--xz", self.xz, "--preload", self.xz, "--dir", work],
            capture_output=True, text=True, timeout=120)
        # the corpus goes whatever ends the run (atexit in realprog.c)
        self.assertEqual(os.listdir(work), [], p.stdout)
        return p

    def test_undrifted_copy_writes_rows(self):
        """The control: the same build of the copy, undrifted, runs."""
        p = self.run_realprog(self.build("same", lambda t: t + "\n"))
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("@row realprog off,1,", p.stdout)

    def test_drift_fails_naming_the_column(self):
        for i, (what, edit, col, why) in enumerate(REALPROG_DRIFTS):
            with self.subTest(what):
                p = self.run_realprog(self.build("drift%d" % i, edit))
                self.assertEqual(p.returncode, 70, p.stdout + p.stderr)
                self.assertNotIn("@row realprog ", p.stdout)
                err = [l for l in p.stdout.splitlines()
                       if l.startswith("@error realprog ")]
                self.assertEqual(len(err), 1, p.stdout)
                self.assertIn("bench/realprog/realprog.c: a row of", err[0])
                self.assertIn("column %s gets %s" % (col, why), err[0])
                self.assertIn("@done realprog 70", p.stdout)


if __name__ == "__main__":
    unittest.main()
