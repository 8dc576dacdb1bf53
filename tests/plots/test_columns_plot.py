# SPDX-License-Identifier: GPL-2.0
"""Each figure draws the column its source note names: gnuplot runs the
figure's script under `set table`, which writes the plotted points instead
of pixels, and the points are compared with the CSV (the KVM fixture).
Run by tests/plots/test_plots.py (make test-plots) or alone:
python3 -m unittest tests.plots.test_columns_plot"""
import csv
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from tests.plots.test_plots import FIXTURE, PLOTS


def plotted(script, data, backings, tmp):
    """{curve title: [(x, y)]} of every curve script plots from data, in
    drawing order (a title seen again, e.g. in the PNG pass, adds on)."""
    table = os.path.join(tmp, script + ".table")
    wrap = os.path.join(tmp, script + ".wrap.gp")
    with open(wrap, "w") as f:
        f.write('set table "%s"\ncall "%s" "%s" "%s" "caption" "" "%s" "" "" "" ""\n'
                % (table, os.path.join(PLOTS, script), data,
                   os.path.join(tmp, script), " ".join(backings)))
    p = subprocess.run(["gnuplot", wrap], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    curves, title = {}, None
    with open(table) as f:
        for line in f:
            m = re.match(r'# Curve title: "(.*)"', line)
            if m:
                title = m.group(1)
                curves.setdefault(title, [])
            elif line.strip() and not line.startswith("#") and title:
                # x may be printed with a unit ("4 kiB"); y is the number after it
                nums = re.findall(r"[-+0-9.e]+(?: [kMG]iB)?", line)
                curves[title].append((nums[0], float(nums[1])))
    return curves


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


class FigureColumns(unittest.TestCase):
    def setUp(self):
        if not shutil.which("gnuplot"):
            self.skipTest("no gnuplot: make deps (Debian package gnuplot-nox)")
        self.tmp = tempfile.mkdtemp(prefix="columns-test-")
        self.addCleanup(shutil.rmtree, self.tmp)

    def test_latency_draws_ns_per_access(self):
        data = os.path.join(FIXTURE, "kvm", "chase.csv")
        curves = plotted("latency.gp", data, ["devzero", "thp"], self.tmp)
        for b in ("devzero", "thp"):
            want = {float(r["ns_per_access"]) for r in rows(data)
                    if r["backing"] == b}
            self.assertEqual({y for _, y in curves[b]}, want, b)

    def test_faults_populate_bars_draw_populate(self):
        data = os.path.join(FIXTURE, "kvm", "fault.csv")
        curves = plotted("faults.gp", data, ["devzero", "thp"], self.tmp)
        pts = [p for c in curves.values() for p in c]
        # devzero is backing 1: demand bars at x 0.8, populate at 1.2
        cost = {m: float(r["us_per_mb"]) for r in rows(data)
                for m in [r["mode"]] if r["backing"] == "devzero" and
                m in ("demand", "populate")}
        at = {x: {y for xx, y in pts if xx == x} for x in ("0.8", "1.2")}
        self.assertIn(cost["demand"], at["0.8"])
        self.assertIn(cost["populate"], at["1.2"])
        self.assertNotIn(cost["demand"], at["1.2"])

    def test_tlb_walks_drawn_without_l1_counts(self):
        # a CPU with a page-walk event but no L1 dTLB one: the walks panel
        # is drawn from walks_per_1k alone
        data = os.path.join(self.tmp, "chase.csv")
        src = rows(os.path.join(FIXTURE, "kvm", "chase.csv"))
        with open(data, "w", newline="") as f:
            w = csv.DictWriter(f, list(src[0]))
            w.writeheader()
            w.writerows(dict(r, l1_dtlb_misses_per_1k="") for r in src)
        curves = plotted("tlb.gp", data, ["devzero", "thp"], self.tmp)
        want = {float(r["walks_per_1k"]) for r in src
                if r["backing"] == "devzero"}
        self.assertEqual({y for _, y in curves.get("devzero", [])}, want)


if __name__ == "__main__":
    unittest.main()
