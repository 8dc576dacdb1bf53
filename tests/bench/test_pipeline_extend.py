# SPDX-License-Identifier: GPL-2.0
"""A new backing is one row in bench/backing.c's table; a new benchmark is
its C file bench/<name>.c, its plot module plots/benches/<name>.py (with
the .gp of its figure) and its test, and nothing else.

In a copy of the tree, one row is added (a second 4 KB baseline on the
devzero functions, with its own colour); then, with no other file touched,
the new backing is measured (a native tiny run, twice), drawn
(plots/render.py) and compared (compare/compare.py diff of the two runs).
In another copy a benchmark is added as those files alone; it is then
measured and compared the same way, drawn with its figure and summary
section, and the plot tests run there: its test, and the reordering and
renaming of every benchmark's columns (tests/plots/test_reorder_plot.py),
which now takes in its CSV from its plot module's fixture().
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

from tests.bench.common import ROOT, thp_shortfall
from tests.bench.test_extend import NEW_BENCH  # the C side's test benchmark, bench/touch.c

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
        cls.runs = [cls.native_run(i) for i in range(2)]

    @classmethod
    def native_run(cls, i):
        """The tiny profile natively into results-i; once more when THP
        pages could not be had, then a skip saying so (common.thp_shortfall)."""
        for attempt in (1, 2):
            res = os.path.join(cls.tmp, "results-%d-%d" % (i, attempt))
            r = cls.sh([sys.executable, "-m", "bench.run",
                        "--mode", "native", "--profile", "tiny", "--results-dir", res]
                       + cls.run_args)
            run = os.path.realpath(os.path.join(res, "latest"))
            why = r.returncode and thp_shortfall(run)
            if not why:
                return r, run
            print("test_pipeline_extend: try %d: %s" % (attempt, why), flush=True)
        shutil.rmtree(cls.tmp, ignore_errors=True)
        raise unittest.SkipTest("no THP pages on two tries (%s): the host's memory is "
                                "fragmented or taken; rerun on a quieter host" % why)

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
        r = self.sh([sys.executable, "-m", "compare.compare",
                     "diff", self.runs[0][1], self.runs[1][1], "--out", out])
        # compared, and one native (timed) run a side can tell nothing:
        # exit 4, "cannot tell" (2 or 3 would be a failure to compare)
        self.assertEqual(r.returncode, 4, r.stdout[-2000:] + r.stderr[-1000:])
        return r, out


class TestNewBacking(Extended):
    run_args = ["--backings", "devzero," + NEW]
    extend = staticmethod(add_row)

    def test_only_backing_c_differs(self):
        for rel in ("bench/backing.c", "bench/backing.h", "bench/run.py",
                    "plots/render.py", "plots/common.gp", "plots/table.py",
                    "compare/compare.py"):
            with open(os.path.join(ROOT, rel)) as a, open(os.path.join(self.tree, rel)) as b:
                self.assertEqual(a.read() != b.read(), rel == "bench/backing.c", rel)

    def test_measured(self):
        rows = self.check_measured("chase.csv", NEW + ",")
        self.assertTrue(all(l.split(",")[1] == "4" for l in rows))

    def test_drawn(self):
        run = self.runs[0][1]
        r = self.sh([sys.executable, "-m", "plots.render", run,
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


# touch's plot module: a figure, a summary section and fixture rows
NEW_PLOT = '''# SPDX-License-Identifier: GPL-2.0
"""touch.csv (bench/touch.c): ns to write one byte per page."""
from plots.parts import Job, Parts, Section
from plots.table import at_largest, fmt_bytes, fmt_num, order_key

ORDER = 90
RANK = 90
FIGURES = {"touch": "ns to write one byte per page against working-set size (touch.csv)."}


def section_of(t):
    at = at_largest(t.rows, "ns_per_page")
    return Section("Touch: ns per page at the largest working set",
                   "touch.csv: ns_per_page, median at each backing's largest wss_bytes",
                   ["backing", "working set", "ns/page"],
                   [[b, fmt_bytes(at[b][0]), fmt_num(at[b][1], "ns")]
                    for b in sorted(at, key=order_key)], RANK)


def parts(run):
    if not run.exists("touch.csv"):
        return Parts()
    t = run.usable("touch")
    if t is None:
        return Parts()
    return Parts([Job("touch", "touch.gp", t.path, t.backings(), timing=run.timing)],
                 [section_of(t)])


def fixture(spec, rng):
    return [dict(backing=b, page_kb=kb, wss_bytes=w,
                 ns_per_page=round((300 if kb == 4 else 40) * rng.uniform(0.9, 1.1), 3))
            for b, kb in spec.backings for w in spec.wss[:4]]
'''
NEW_GP = '''# SPDX-License-Identifier: GPL-2.0
# touch.gp -- ns to write one byte per page against the working set (touch.csv).
FIG_W = 900; FIG_H = 560
FIGTITLE = "Time to write one byte per page"
SOURCENOTE = "x = wss_bytes, y = ns_per_page"
call ARG0[1:strlen(ARG0)-strlen("touch.gp")] . "common.gp" ARG1 ARG2 ARG3 ARG4 ARG5 ARG6 ARG7 ARG8 ARG9
set logscale x 2
set format x "%.0b %BB"
set xlabel "working-set size (log2 scale)"
set ylabel "ns per page (ns_per_page)"
set key outside right top vertical title "backing"
set rmargin 18
want(b) = isb(b) && has("ns_per_page")
eval SELECT
do for [fmt in OUTFMTS] {
    eval TERM(fmt)
    eval SET_HEAD
    set output OUTSTEM . "." . fmt
    CLAUSES = CLAUSE("SEL", "DATA using (column('wss_bytes')):(isb(B(s)) ? " . \\
        "column('ns_per_page') : NaN) with linespoints lc rgb bcolor(B(s)) title B(s)")
    NOTE = "no ns_per_page values"
    eval PLOT_OR_NOTE
    unset output
}
'''
# touch's test: the section's median at the largest working set
NEW_TEST = '''import unittest

from plots import benches


class Touch(unittest.TestCase):
    def test_median_at_the_largest_working_set(self):
        rows = [{"backing": "devzero", "wss_bytes": w, "ns_per_page": v}
                for w, v in (("65536", "9"), ("131072", "30"), ("131072", "20"),
                             ("131072", "25"))]
        sec = benches.module("touch").section_of(type("T", (), {"rows": rows}))
        self.assertEqual(sec.rows, [["devzero", "128 KiB", "25.0 ns"]])
'''
TOUCH_FILES = {"bench/touch.c": NEW_BENCH, "plots/benches/touch.py": NEW_PLOT,
               "plots/touch.gp": NEW_GP, "tests/plots/test_touch_plot.py": NEW_TEST}


def add_touch(tree):
    for rel, text in TOUCH_FILES.items():
        with open(os.path.join(tree, rel), "w") as f:
            f.write(text)


class TestNewBenchmark(Extended):
    run_args = ["--benches", "touch", "--backings", "devzero,thp"]
    extend = staticmethod(add_touch)

    def test_only_its_own_files_are_new(self):
        # every file of the tree is as it was; the benchmark's are added
        files = subprocess.run(["git", "-C", ROOT, "ls-files", "-co", "--exclude-standard",
                                "-z"], capture_output=True, text=True, check=True).stdout
        for rel in filter(None, files.split("\0")):
            if os.path.isfile(os.path.join(ROOT, rel)):
                with open(os.path.join(ROOT, rel), "rb") as a, \
                        open(os.path.join(self.tree, rel), "rb") as b:
                    self.assertEqual(a.read(), b.read(), rel)
        for rel in TOUCH_FILES:
            self.assertFalse(os.path.exists(os.path.join(ROOT, rel)), rel)

    def test_measured(self):
        self.check_measured("touch.csv", "devzero,4,")

    def test_drawn(self):
        run = self.runs[0][1]
        r = self.sh([sys.executable, "-m", "plots.render", run,
                     "--no-link", "--strict"])
        self.assertEqual((r.returncode, r.stderr), (0, ""), r.stdout[-1500:])
        self.assertIn("Touch: ns per page at the largest working set", r.stdout)
        self.assertRegex(r.stdout, r"(?m)^figures: .*\btouch\b")
        with open(os.path.join(run, "touch.svg")) as f:
            self.assertIn("<title>thp</title>", f.read())

    def test_plot_tests_take_it_in(self):
        # its own test, and every benchmark's columns reordered and renamed
        # with touch.csv among them (from touch.py's fixture())
        r = self.sh([sys.executable, "-m", "tests.plots.test_plots",
                     "test_touch_plot", "test_reorder_plot"])
        self.assertEqual(r.returncode, 0, r.stdout[-2000:] + r.stderr[-2000:])
        self.assertIn("3 passed, 0 failed", r.stdout + r.stderr)

    def test_compared(self):
        r, out = self.compare()
        self.assertRegex(r.stdout, r"(?m)^touch devzero 64K +ns_per_page ")
        self.assertTrue(os.path.exists(os.path.join(out, "overlay-touch-devzero.svg")))


if __name__ == "__main__":
    unittest.main()
