#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Damaged runs are named, not drawn (issue 30, point 4): a CSV cut
mid-row (what a killed run leaves) or with a non-number where its column
holds numbers makes render.py name the file and line and exit 3, leaving
that benchmark's figures and summary out and drawing the rest; a run
whose backings stopped at different working sets says so in the table
that sets them side by side; compare names the file and line too (exit
2).  On damaged copies of the kept native run (results/kept-*), never on
the committed folder."""
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
# as modules; the tests run from the repository root
RENDER = ["-m", "plots.render"]
COMPARE = ["-m", "compare.compare"]
os.environ["BENCH_CONTRACT"] = os.path.join(REPO, "tests", "fixture",
                                            "contract.json")
KEPT = sorted(glob.glob(os.path.join(REPO, "results", "kept-*")))


def run(cmd):
    p = subprocess.run([sys.executable] + cmd, capture_output=True,
                       text=True)
    return p.returncode, p.stdout, p.stderr


@unittest.skipUnless(KEPT, "no kept run under results/kept-*")
class Damaged(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="damaged-")
        self.run_dir = os.path.join(self.tmp, "run")
        shutil.copytree(KEPT[0], self.run_dir)
        self.chase = os.path.join(self.run_dir, "chase.csv")
        with open(self.chase) as f:
            self.lines = f.read().splitlines(keepends=True)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def write(self, name, text):
        with open(os.path.join(self.run_dir, name), "w") as f:
            f.write(text)

    def render(self):
        return run(RENDER + [self.run_dir, "--no-link"])

    def assertNamed(self, rc, err, line, words):
        self.assertEqual(rc, 3, err)
        self.assertNotIn("Traceback", err)
        self.assertIn("%s:%d: " % (self.chase, line), err)
        for w in words:
            self.assertIn(w, err)
        # the chase's figures are not drawn, the fault benchmark's are
        self.assertFalse(os.path.exists(os.path.join(self.run_dir,
                                                     "latency.svg")))
        self.assertTrue(os.path.exists(os.path.join(self.run_dir,
                                                    "faults.svg")))
        with open(os.path.join(self.run_dir, "index.html")) as f:
            self.assertIn("chase.csv:%d: " % line, f.read())

    def test_a_row_cut_mid_row(self):
        n = len(self.lines) // 2
        cut = self.lines[n][:len(self.lines[n]) // 3]
        self.write("chase.csv", "".join(self.lines[:n]) + cut + "\n" +
                   "".join(self.lines[n + 1:]))
        rc, _, err = self.render()
        self.assertNamed(rc, err, n + 1, ["fields", "rerun"])

    def test_the_last_row_cut_without_its_end(self):
        """A killed run's last row: every field there, the last one cut
        short, no end of line."""
        self.write("chase.csv", "".join(self.lines)[:-3])
        rc, _, err = self.render()
        self.assertNamed(rc, err, len(self.lines), ["no end of line"])

    def test_a_non_numeric_cell(self):
        cells = self.lines[4].split(",")
        cells[3] = "9.2x"       # ns_per_access
        self.lines[4] = ",".join(cells)
        self.write("chase.csv", "".join(self.lines))
        rc, _, err = self.render()
        self.assertNamed(rc, err, 5, ["ns_per_access", "'9.2x'",
                                      "not a number"])

    def test_an_empty_cell_is_no_damage(self):
        """The control: empty counter cells (not measured) draw as before."""
        rc, _, err = self.render()
        self.assertEqual(rc, 0, err)
        self.assertTrue(os.path.exists(os.path.join(self.run_dir,
                                                    "latency.svg")))

    def test_working_sets_that_differ_are_announced(self):
        """A run stopped between rows (cut at a line's end): devzero has
        reached a larger working set than the backings after it.  The
        latency table says so instead of setting them side by side."""
        head, rows = self.lines[0], self.lines[1:]
        top = max(int(r.split(",")[2]) for r in rows)
        keep = [r for r in rows if int(r.split(",")[2]) < top or
                r.startswith("devzero,")]
        self.write("chase.csv", head + "".join(keep))
        rc, out, err = self.render()
        self.assertEqual(rc, 0, err)
        self.assertIn("Latency at the largest working set, hop line "
                      "(working sets differ)", out)
        self.assertIn("WORKING SETS DIFFER between backings (devzero 4 GiB",
                      out)

    def test_compare_names_the_file_and_line(self):
        fault = os.path.join(self.run_dir, "fault.csv")
        with open(fault) as f:
            lines = f.read().splitlines(keepends=True)
        with open(fault, "w") as f:
            f.write("".join(lines[:3]) + lines[3][:5] + "\n" +
                    "".join(lines[4:]))
        rc, out, err = run(COMPARE + ["diff", KEPT[0], self.run_dir,
                            "--out", os.path.join(self.tmp, "cmp")])
        self.assertEqual(rc, 2, out + err)
        self.assertNotIn("Traceback", err)
        self.assertIn("fault.csv", err)
        self.assertIn("fault.csv:4: ", err)


if __name__ == "__main__":
    unittest.main()
