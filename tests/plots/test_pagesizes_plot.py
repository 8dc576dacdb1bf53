#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The four huge page sizes of an arm64 run are told apart in the figures,
and its model geometry, long enough to wrap, keeps clear of the panels.

    python3 -m tests.plots.test_pagesizes_plot  (also run by test_plots.py)

The TCG fixture (tests/plots/fixture/tcg) is copied and given -64K and -32M
variants of devhugetlb: their rows are devhugetlb's with the page size
changed, and the contract is tests/fixture/contract.json plus their rows
(the colour of their 2 MB row, as bench/backing.c gives them).  A size
variant shares its base's colour, so the line's dashes, the points and the
bars' fill are what says which size a series is (plots/common.gp).
"""
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
# plots/render.py as a module; the tests run from the repository root
RENDER = [sys.executable, "-m", "plots.render"]
CONTRACT = os.path.join(REPO, "tests", "fixture", "contract.json")
from tests import harness  # noqa: E402

SIZES = {"devhugetlb": 2048, "devhugetlb-64K": 64, "devhugetlb-32M": 32768,
         "devhugetlb-1G": 1048576}


def add_variants(path):
    """Appends -64K and -32M copies of path's devhugetlb rows."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
        fields = list(rows[0])
    new = []
    for name in ("devhugetlb-64K", "devhugetlb-32M"):
        for r in rows:
            if r["backing"] == "devhugetlb":
                new.append(dict(r, backing=name, page_kb=SIZES[name])
                           if "page_kb" in r else dict(r, backing=name))
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fields)
        w.writeheader()
        w.writerows(rows + new)


def series(svg, title):
    """The SVG text of the series gnuplot titled title."""
    m = re.search(r"<title>%s</title>(.*?)(?=<g id=\"gnuplot_plot_|\Z)"
                  % re.escape(title), svg, re.S)
    return m.group(1) if m else None


class PageSizes(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="plots-sizes-")
        run = os.path.join(cls.tmp, "run")
        shutil.copytree(os.path.join(HERE, "fixture", "tcg"), run)
        for name in ("chase.csv", "fault.csv"):
            add_variants(os.path.join(run, name))
        with open(os.path.join(run, "meta.json")) as f:
            meta = json.load(f)
        meta["arch"] = "arm64"
        with open(os.path.join(run, "meta.json"), "w") as f:
            json.dump(meta, f)
        with open(CONTRACT) as f:
            data = json.load(f)
        base = next(b for b in data["backings"] if b["name"] == "devhugetlb")
        for name in ("devhugetlb-64K", "devhugetlb-32M"):
            data["backings"].append(dict(base, name=name, page_kb=SIZES[name],
                                         pool_kb=SIZES[name]))
        contract = os.path.join(cls.tmp, "contract.json")
        with open(contract, "w") as f:
            json.dump(data, f)
        p = subprocess.run(RENDER + [run, "--no-link"],
                           capture_output=True, text=True,
                           env=dict(os.environ, BENCH_CONTRACT=contract))
        cls.rc, cls.err = p.returncode, p.stderr
        cls.svg = {}
        for fig in ("latency", "faults"):
            with open(os.path.join(run, fig + ".svg")) as f:
                cls.svg[fig] = f.read()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_rendered_silently(self):
        self.assertEqual((self.rc, self.err), (0, ""))

    def test_lines_share_the_colour_and_differ_in_dashes_and_points(self):
        dashes, points, colours = {}, {}, {}
        for b in SIZES:
            s = series(self.svg["latency"], b)
            self.assertIsNotNone(s, "latency.svg has no series " + b)
            m = re.search(r"<path stroke='([^']+)'(?: stroke-dasharray='([^']+)')?", s)
            colours[b], dashes[b] = m.group(1), m.group(2)
            points[b] = re.search(r"xlink:href='#(gpPt\d+)'", s).group(1)
        self.assertEqual(len(set(colours.values())), 1, colours)
        self.assertIsNone(dashes["devhugetlb"], "the 2 MB row is solid")
        self.assertEqual(len(set(dashes.values())), 4, dashes)
        self.assertEqual(len(set(points.values())), 4, points)

    def test_bars_differ_in_fill(self):
        fills = {}
        for b in SIZES:
            s = series(self.svg["faults"], b)
            self.assertIsNotNone(s, "faults.svg has no series " + b)
            fills[b] = re.search(r"fill-opacity = '([0-9.]+)'", s).group(1)
        self.assertEqual(len(set(fills.values())), 4, fills)

    def test_caption_names_the_arm64_guest(self):
        self.assertTrue("arm64 guest" in self.svg["latency"],
                        "latency.svg does not name the arm64 guest")


class LongGeometry(unittest.TestCase):
    """A model geometry that wraps to several lines (the neoverse-n1
    preset's does) stays above the panels of tlb-model."""

    def test_panels_start_below_the_geometry(self):
        with tempfile.TemporaryDirectory() as tmp:
            run = os.path.join(tmp, "run")
            shutil.copytree(os.path.join(HERE, "fixture", "tcg"), run)
            with open(os.path.join(run, "meta.json")) as f:
                meta = json.load(f)
            meta.setdefault("other", {})["tlb_geometry"] = {
                "name": "neoverse-n1", "spec": "l1=4K:48:48", "source": "TRM",
                "leaves_out": " ".join(["page-walk caches"] * 30) + " LASTWORD"}
            with open(os.path.join(run, "meta.json"), "w") as f:
                json.dump(meta, f)
            p = subprocess.run(RENDER + [run, "--no-link"],
                               capture_output=True, text=True,
                               env=dict(os.environ, BENCH_CONTRACT=CONTRACT))
            self.assertEqual((p.returncode, p.stderr), (0, ""))
            with open(os.path.join(run, "tlb-model.svg")) as f:
                svg = f.read()
        last = re.search(r"translate\([0-9.]+,([0-9.]+)\)[^>]*>\s*<text>"
                         r"[^<]*LASTWORD", svg)
        self.assertIsNotNone(last, "the geometry's last line is not drawn")
        points = [float(y) for y in re.findall(
            r"xlink:href='#gpPt\d+' transform='translate\([0-9.]+,([0-9.]+)\)",
            svg)]
        self.assertTrue(points)
        self.assertLess(float(last.group(1)), min(points))


if __name__ == "__main__":
    sys.exit(harness.run_unittest(
        unittest.defaultTestLoader.loadTestsFromModule(sys.modules[__name__])))
