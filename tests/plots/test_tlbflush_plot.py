# SPDX-License-Identifier: GPL-2.0
"""The tlbflush figure and summary section (plots/tlbflush.gp,
plots/benches/tlbflush.py), on copies of the KVM and TCG fixtures with a
tlbflush.csv written here: devzero's 4 KB drops and the 2 MB backings',
1 and 2 threads, thp's two threads apart (low overlap).  The contract is
tests/fixture/contract.json plus tlbflush's entry, pinned below like the
fixture's.  Run by tests/plots/test_plots.py (make test-plots)."""
import os
import shutil
import subprocess
import tempfile
import unittest

from tests.plots.test_plots import (CONTRACT, FIXTURE, PLOTS, RENDER, contract_with,  # noqa
                                    series_titles, svg_text, write_csv)
from tests.plots.test_values import plotted

COLUMNS = ["backing", "page_kb", "kind", "threads", "ops_per_s", "ops_per_s_per_thread",
           "us_per_op", "region_bytes", "bytes_per_op", "ops", "faults_per_op",
           "tlb_irqs_per_op", "wall_ms", "overlap", "ops_per_s_min", "ops_per_s_max", "cv",
           "reps", "oversubscribed", "cpus", "start_skew_us", "low_overlap", "short_window"]
BENCH = {"name": "tlbflush", "binary": "tlbflush", "columns": COLUMNS,
         "key": ["backing", "kind", "threads", "region_bytes"], "metric": "ops_per_s",
         "lower_is_better": False, "options": []}
MB = 1 << 20
# (backing, kind): drops per second at 1 and 2 threads
OPS = {("devzero", "anon"): (100000.0, 150000.0), ("devzero", "unmap"): (80000.0, 90000.0),
       ("thp", "anon"): (5000.0, 6000.0), ("maphugetlb", "anon"): (5000.0, 7500.0),
       ("memfd", "shared"): (300000.0, 400000.0)}


def rows(ops=OPS, low=(("thp", "anon", 2),)):
    out = []
    for (b, kind), vals in ops.items():
        kb = 4 if b == "devzero" else 2048
        for n, v in zip((1, 2), vals):
            lo = (b, kind, n) in low
            out.append([b, kb, kind, n, v, v / n, 1e6 * n / v, 4 * MB, kb * 1024,
                        int(v / 5), 2.0, 1.0 if n == 2 else 0.0, 200.0,
                        0.3 if lo else 1.0, v * 0.95, v * 1.05, 0.02, 3, 0,
                        ";".join(str(i) for i in range(n)), 3.0, int(lo), 0])
    return out


class TlbflushFigure(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="plots-tlbflush-")
        self.contract = contract_with(os.path.join(self.tmp, "contract.json"), BENCH)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def make_run(self, fixture, ops=OPS):
        run = os.path.join(self.tmp, fixture)
        shutil.copytree(os.path.join(FIXTURE, fixture), run)
        write_csv(os.path.join(run, "tlbflush.csv"), COLUMNS, rows(ops))
        return run

    def render(self, run, contract=None):
        p = subprocess.run(RENDER + [run, "--no-link"], capture_output=True, text=True,
                           env=dict(os.environ, BENCH_CONTRACT=contract or self.contract))
        return p.returncode, p.stdout, p.stderr

    def section(self, out):
        text = out[out.index("TLB shootdowns: drops per second"):]
        return text[:text.index("\n\n")].splitlines()

    def test_figure_a_key_entry_per_backing(self):
        run = self.make_run("kvm")
        rc, out, err = self.render(run)
        self.assertEqual((rc, err), (0, ""), out[-2000:])
        svg = os.path.join(run, "tlbflush.svg")
        self.assertEqual({b for b, _ in OPS}, series_titles(svg))
        text = svg_text(svg)
        self.assertIn("TLB shootdowns: drops per second", text)
        self.assertIn("anon: MADV_DONTNEED of private memory (tlb_flush2)", text)
        self.assertIn("no file rows (hugetlbfs, memfd)", text)
        self.assertIn("x = overlap below 0.9, not in the line", text)
        with open(os.path.join(run, "index.html")) as f:
            self.assertIn('src="tlbflush.svg"', f.read())

    def test_summary_against_devzero_per_byte(self):
        rc, out, err = self.render(self.make_run("kvm"))
        self.assertEqual(rc, 0, err)
        sec = self.section(out)
        self.assertIn("against devzero", sec[0])
        self.assertNotIn("not what a CPU does", sec[0])
        by = {tuple(line.split()[:2]): line.split() for line in sec[2:]}
        # devzero anon at N=2: 150000/s of 4 KB = 586 MB/s, the baseline
        self.assertEqual(by[("devzero", "anon")][4:9],
                         ["N=2", "150000/s", "586", "MB/s", "baseline"])
        # maphugetlb: 7500/s of 2 MB = 15000 MB/s, 26x devzero's; 1.5x one
        # thread; one shootdown a drop, 0.5 a MB
        self.assertEqual(by[("maphugetlb", "anon")][4:14],
                         ["N=2", "7500/s", "15000", "MB/s", "26x", "1.50x", "267", "us",
                          "1.000", "0.5"])
        # thp's two threads ran apart: its row is N=1's, no scaling claimed
        self.assertEqual(by[("thp", "anon")][4], "N=1")
        self.assertIn("n/a", by[("thp", "anon")][9:11])
        self.assertIn("overlap below 0.9 (1 rows)", out)

    def test_tcg_says_emulated(self):
        run = self.make_run("tcg", ops={k: v for k, v in OPS.items() if k[0] != "memfd"})
        rc, out, err = self.render(run)
        self.assertEqual((rc, err), (0, ""))
        self.assertIn("not what a CPU does", self.section(out)[0])

    def test_contract_without_tlbflush(self):
        run = self.make_run("kvm")
        rc, out, err = self.render(run, CONTRACT)
        self.assertEqual((rc, err), (0, ""))
        self.assertIn("tlbflush skipped: the contract lists no tlbflush benchmark", out)
        self.assertFalse(os.path.exists(os.path.join(run, "tlbflush.svg")))

    def test_by_hand_is_silent(self):
        run = self.make_run("kvm")
        out = os.path.join(self.tmp, "byhand")
        p = subprocess.run(["gnuplot", "-c", os.path.join(PLOTS, "tlbflush.gp"),
                            os.path.join(run, "tlbflush.csv"), out],
                           capture_output=True, text=True)
        self.assertEqual((p.returncode, p.stdout + p.stderr), (0, ""))
        self.assertEqual({b for b, _ in OPS}, series_titles(out + ".svg"))

    def test_points_drawn(self):
        # gnuplot's `set table` of the figure, curves in drawing order: the
        # key's entries (no points), then per panel the lines, the x's of
        # low overlap and the open points.  anon: devzero 100000, 150000/s
        # at N=1, 2 in the line; maphugetlb 5000, 7500; thp 5000 at N=1 in
        # its line and its N=2 (6000/s, overlap 0.3) an x apart.  No file
        # rows.  shared: memfd 300000, 400000.  unmap: devzero 80000, 90000.
        data = os.path.join(self.tmp, "tlbflush.csv")
        write_csv(data, COLUMNS, rows())
        # (the file panel's note is drawn over "plot 2": its 100 samples
        # are no row's)
        got = [pts for _, pts in plotted("tlbflush.gp", data,
                                         ("devzero", "thp", "maphugetlb", "memfd"), self.tmp)
               if pts and len(pts) < 100]
        self.assertEqual(got, [[(1, 100000), (2, 150000)], [(1, 5000)],
                               [(1, 5000), (2, 7500)], [(2, 6000)],
                               [(1, 300000), (2, 400000)], [(1, 80000), (2, 90000)]])


if __name__ == "__main__":
    unittest.main()
