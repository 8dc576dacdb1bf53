# SPDX-License-Identifier: GPL-2.0
"""The gups figure and summary section (plots/gups.gp, plots/benches/
gups.py), on copies of the KVM and TCG fixtures with a gups.csv written
here: devzero at 10 ns per update at 256 MB, the 2 MB backings faster.
The contract is tests/fixture/contract.json plus gups's entry, pinned
below like the fixture's.  Run by tests/plots/test_plots.py (make
test-plots)."""
import os
import shutil
import subprocess
import tempfile
import unittest

from tests.plots.test_plots import (CONTRACT, FIXTURE, PLOTS, RENDER, contract_with,  # noqa
                                    series_titles, svg_text, write_csv)

COLUMNS = ["backing", "page_kb", "wss_bytes", "table_bytes", "updates", "ns_per_update",
           "ns_min", "ns_max", "gups", "cv", "reps", "errors", "error_bound", "verified",
           "passes_verified", "l1_dtlb_misses_per_1k", "walks_per_1k", "faults"]
BENCH = {"name": "gups", "binary": "gups", "columns": COLUMNS,
         "key": ["backing", "wss_bytes"], "metric": "ns_per_update",
         "lower_is_better": True, "options": []}
MB = 1 << 20
# ns per update at 64K, 16M and 256M
NS = {"devzero": (1.0, 4.0, 10.0), "devhugetlb": (1.0, 3.0, 5.0),
      "maphugetlb": (1.0, 3.0, 5.0), "thp": (1.0, 3.5, 8.0),
      "devhugetlb-1G": (1.0, 3.0, 4.0)}


def rows(ns=NS, errors=None):
    out = []
    for b, vals in ns.items():
        kb = 4 if b == "devzero" else 1048576 if b.endswith("-1G") else 2048
        for wss, v in zip((64 << 10, 16 * MB, 256 * MB), vals):
            e = (errors or {}).get(b, 0)
            out.append([b, kb, wss, wss, wss // 2, v, v * 0.95, v * 1.1, 1 / v, 0.02, 3, e,
                        wss // 800, "within_bound" if e else "exact", 6, "", "", 0])
    return out


class GupsFigure(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="plots-gups-")
        self.contract = contract_with(os.path.join(self.tmp, "contract.json"), BENCH)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def make_run(self, fixture, ns=NS, errors=None):
        run = os.path.join(self.tmp, fixture)
        shutil.copytree(os.path.join(FIXTURE, fixture), run)
        write_csv(os.path.join(run, "gups.csv"), COLUMNS, rows(ns, errors))
        return run

    def render(self, run, contract=None):
        p = subprocess.run(RENDER + [run, "--no-link"], capture_output=True, text=True,
                           env=dict(os.environ, BENCH_CONTRACT=contract or self.contract))
        return p.returncode, p.stdout, p.stderr

    def section(self, out):
        text = out[out.index("GUPS at the largest table"):]
        return text[:text.index("\n\n")].splitlines()

    def test_figure_a_line_per_backing(self):
        run = self.make_run("kvm")
        rc, out, err = self.render(run)
        self.assertEqual((rc, err), (0, ""), out[-2000:])
        svg = os.path.join(run, "gups.svg")
        self.assertEqual(set(NS), series_titles(svg))
        text = svg_text(svg)
        self.assertIn("GUPS (HPCC RandomAccess, single-threaded)", text)
        self.assertIn("x = table_bytes, y = ns_per_update", text)
        self.assertIn("GUP/s", text)
        with open(os.path.join(run, "gups.png"), "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        with open(os.path.join(run, "index.html")) as f:
            self.assertIn('src="gups.svg"', f.read())

    def test_summary_saves_against_devzero_at_the_largest_table(self):
        run = self.make_run("kvm", errors={"thp": 3})
        rc, out, err = self.render(run)
        self.assertEqual(rc, 0, err)
        sec = self.section(out)
        self.assertIn("against devzero", sec[0])
        self.assertNotIn("not what a CPU does", sec[0])
        by = {l.split()[0]: l.split() for l in sec[2:]}
        # devzero 10 ns, devhugetlb 5 ns at 256 MiB: 5 ns, 50 % saved
        self.assertEqual(by["devzero"][1:6], ["256", "MiB", "10.0", "ns", "0.1000"])
        self.assertEqual(by["devzero"][6], "baseline")
        self.assertEqual(by["devhugetlb"][3:10],
                         ["5.00", "ns", "0.2000", "5.00", "ns", "50%", "exact"])
        self.assertEqual(by["thp"][8:], ["20%", "3", "wrong", "(within", "1", "%)"] +
                         by["thp"][14:])

    def test_tcg_says_emulated(self):
        run = self.make_run("tcg", ns={"devzero": NS["devzero"], "thp": NS["thp"]})
        rc, out, err = self.render(run)
        self.assertEqual((rc, err), (0, ""))
        self.assertIn("TCG", self.section(out)[0])
        self.assertIn("not what a CPU does", self.section(out)[0])
        self.assertIn("TCG: emulated timing, not hardware",
                      svg_text(os.path.join(run, "gups.svg")))

    def test_no_baseline_nothing_to_compare(self):
        run = self.make_run("kvm", ns={"thp": NS["thp"]})
        rc, out, err = self.render(run)
        self.assertEqual((rc, err), (0, ""))
        self.assertEqual(self.section(out)[1], "  (nothing to compare)")

    def test_contract_without_gups(self):
        run = self.make_run("kvm")
        rc, out, err = self.render(run, CONTRACT)
        self.assertEqual((rc, err), (0, ""))
        self.assertIn("gups skipped: the contract lists no gups benchmark", out)
        self.assertFalse(os.path.exists(os.path.join(run, "gups.svg")))

    def test_by_hand_is_silent(self):
        run = self.make_run("kvm")
        out = os.path.join(self.tmp, "byhand")
        p = subprocess.run(["gnuplot", "-c", os.path.join(PLOTS, "gups.gp"),
                            os.path.join(run, "gups.csv"), out],
                           capture_output=True, text=True)
        self.assertEqual((p.returncode, p.stdout + p.stderr), (0, ""))
        self.assertIn("unlabelled", svg_text(out + ".svg"))
        self.assertEqual(set(NS), series_titles(out + ".svg"))


if __name__ == "__main__":
    unittest.main()
