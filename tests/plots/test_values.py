# SPDX-License-Identifier: GPL-2.0
"""What each figure and summary section SHOWS, against numbers worked out
by hand (in the comments) from small CSVs written here (issue 36, point
1): not that a figure was drawn, but which rows, columns and units it
draws and what the summary prints.

Figures: gnuplot runs each figure's script under `set table`, which writes
the points it would draw instead of pixels (the helper test_columns_plot.py
uses, here keeping every curve in drawing order, SVG pass only), so a panel
in the wrong unit, from the wrong column or the wrong working set shows as
a wrong number.  Summary: render.py renders a run folder of the same
CSVs; its sections are checked in summary.txt (the printed summary, word
for word) and index.html.

Run by make test-plots, or alone: python3 -m unittest tests.plots.test_values"""
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

from tests.plots.test_plots import CONTRACT, PLOTS, RENDER, svg_text
from bench import contract  # BENCH_CONTRACT set by test_plots

KIB, MIB = 1 << 10, 1 << 20
PREFIX = {"": 1, "k": KIB, "M": MIB, "G": 1 << 30}
# One x of `set table`: a byte axis prints its unit ("64ki", "4 kiB").
X = re.compile(r"^([-+0-9.eE]+)([kMG])?i?B?$")


def point(line):
    """(x, y) of one point line of `set table` ("x y [more] type"), None
    for an undefined point (type u: not drawn) or another line."""
    t = line.split()
    if len(t) > 1 and re.match(r"^[kMG]iB$", t[1]):  # "4 kiB": x and its unit
        t = [t[0] + t[1]] + t[2:]
    m = X.match(t[0]) if len(t) >= 3 else None
    if not m or t[-1] not in ("i", "o"):
        return None
    return float(m.group(1)) * PREFIX[m.group(2) or ""], float(t[1])


def plotted(script, data, backings, tmp, extra="", hop=""):
    """[(curve title, [(x, y)])] of every curve script draws from data
    (only rows whose column hop holds hop, if given), in drawing order,
    for one format (SVG): undefined points left out."""
    table = os.path.join(tmp, script + ".table")
    wrap = os.path.join(tmp, script + ".wrap.gp")
    with open(wrap, "w") as f:
        # arguments: DATA OUT CAPTION TIMING BACKINGS EXTRA HOPCOL HOP COLOURS
        f.write('set table "%s"\ncall "%s" "%s" "%s" "caption" "" "%s" "%s" "%s" "%s" ""\n'
                % (table, os.path.join(PLOTS, script), data,
                   os.path.join(tmp, script + ".svg"), " ".join(backings), extra,
                   "hop" if hop else "", hop))
    p = subprocess.run(["gnuplot", wrap], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    curves = []
    with open(table) as f:
        for line in f:
            # each curve opens with "# Curve N of M"; a titled one names
            # its title on the next line
            if re.match(r"# Curve \d+ of", line):
                curves.append(["", []])
                continue
            m = re.match(r'# Curve title: "(.*)"', line)
            if m:
                curves[-1][0] = m.group(1)
            elif not line.startswith("#") and curves:
                p = point(line)
                if p:
                    curves[-1][1].append(p)
    return [tuple(c) for c in curves]


def write(path, columns, rows):
    """A CSV with columns, rows as dicts (a missing cell is empty)."""
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, columns, restval="", lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def columns(bench):
    return contract.load(CONTRACT).bench(bench)["columns"]


# -- the fixture: two backings, devzero (4 KB) and thp (2 MB)

def chase(b, kb, wss, ns, l1, walks, model_l1, model_walks, hop="line"):
    return dict(backing=b, page_kb=kb, wss_bytes=wss, ns_per_access=ns, ns_min=ns - 1,
                ns_max=ns + 5, l1_dtlb_misses_per_1k=l1, walks_per_1k=walks,
                model_l1_misses_per_1k=model_l1, model_walks_per_1k=model_walks,
                hop=hop, model_preset="skylake")


# measured and modelled columns set apart (x10, x1.5), and ns_min, ns_max
# (ns - 1, ns + 5) from ns_per_access, so that a figure or table reading
# the wrong one shows
CHASE = [chase("devzero", 4, MIB, 10, 20, 5, 30, 8),
         chase("devzero", 4, 4 * MIB, 40, 200, 50, 300, 80),
         chase("thp", 2048, MIB, 9, 2, 0.5, 3, 0),
         chase("thp", 2048, 4 * MIB, 12, 4, 1, 6, 4),
         # the page hop (one access per 4 KB page) at 4 MiB: ten times the line's
         chase("devzero", 4, 4 * MIB, 400, 2000, 500, 3000, 800, hop="page"),
         chase("thp", 2048, 4 * MIB, 120, 40, 10, 60, 40, hop="page")]


def stream(b, kb, wss, kernel, gbs, ns=""):
    return dict(backing=b, page_kb=kb, wss_bytes=wss, kernel=kernel, gb_per_s=gbs,
                ns_per_access=ns)


# the 64 MiB rows are all 20 GB/s and 1 ns: a figure that draws them shows
STREAM = [stream(b, kb, 64 * MIB, k, 20, 1 if k == "stride" else "")
          for b, kb in (("devzero", 4), ("thp", 2048))
          for k in ("read", "write", "copy", "stride")] + [
    stream("devzero", 4, 256 * MIB, "read", 9), stream("devzero", 4, 256 * MIB, "write", 6),
    stream("devzero", 4, 256 * MIB, "copy", 5),
    stream("devzero", 4, 256 * MIB, "stride", 0.1, 80),
    stream("thp", 2048, 256 * MIB, "read", 10), stream("thp", 2048, 256 * MIB, "write", 7),
    stream("thp", 2048, 256 * MIB, "copy", 5.5),
    stream("thp", 2048, 256 * MIB, "stride", 0.13, 60)]


def fault(b, kb, mode, us_per_mb="", faults_per_mb="", us_per_call=""):
    return dict(backing=b, page_kb=kb, mode=mode, us_per_mb=us_per_mb,
                faults_per_mb=faults_per_mb, size_bytes=4 * MIB, us_per_call=us_per_call)


# demand and populate twice each: the sections show their medians
FAULT = [fault("devzero", 4, "demand", 200, 256, 800), fault("devzero", 4, "demand", 220, 256, 880),
         fault("devzero", 4, "populate", 100, 256, 400),
         fault("devzero", 4, "populate", 120, 256, 480),
         fault("devzero", 4, "setup", faults_per_mb=0, us_per_call=5),
         fault("thp", 2048, "demand", 50, 0.5, 200), fault("thp", 2048, "demand", 60, 0.5, 240),
         fault("thp", 2048, "populate", 40, 0.25, 160),
         fault("thp", 2048, "populate", 44, 0.25, 176),
         fault("thp", 2048, "setup", faults_per_mb=0, us_per_call=6)]


def streamk(b, kb, arr, mbs, llc_x):
    return [dict(backing=b, page_kb=kb, wss_bytes=3 * arr, kernel=k, mb_per_s=v,
                 array_bytes=arr, bytes_per_iter=n * arr, llc_x=llc_x)
            for k, n, v in zip(("copy", "scale", "add", "triad"), (2, 2, 3, 3), mbs)]


# each backing at two sizes: 4 MiB arrays (9999 MB/s, a figure or table
# that reads them shows) and 32 MiB arrays, the largest
STREAMK = (streamk("devzero", 4, 4 * MIB, (9999,) * 4, 0.5)
           + streamk("devzero", 4, 32 * MIB, (1000, 1100, 1200, 1300), 4.0)
           + streamk("thp", 2048, 4 * MIB, (9999,) * 4, 0.5)
           + streamk("thp", 2048, 32 * MIB, (2000, 2100, 2200, 2300), 3.5))

META = {"run_id": "values", "timing_source": "kvm", "profile": "quick",
        "qemu": {"accel": "kvm", "version": "7.2", "icount": False}}


class Figures(unittest.TestCase):
    """Each figure's points against the fixture's rows, worked by hand."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="plots-values-")
        for name, rows in (("chase", CHASE), ("stream", STREAM), ("fault", FAULT),
                           ("streamk", STREAMK)):
            write(os.path.join(cls.tmp, name + ".csv"), columns(name), rows)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        if not shutil.which("gnuplot"):
            self.skipTest("no gnuplot: make deps (Debian package gnuplot-nox)")

    def draw(self, script, data, backings=("devzero", "thp"), extra="", hop=""):
        return plotted(script, os.path.join(self.tmp, data), backings, self.tmp, extra, hop)

    def assertCurves(self, got, want):
        """got (plotted()) against want [(title, [(x, y)])], y to 6 digits."""
        self.assertEqual([t for t, _ in got], [t for t, _ in want])
        for (title, pts), (_, wpts) in zip(got, want):
            self.assertEqual(len(pts), len(wpts), (title, pts))
            for (x, y), (wx, wy) in zip(pts, wpts):
                self.assertAlmostEqual(x, wx, places=6, msg=(title, pts))
                self.assertAlmostEqual(y / wy if wy else y, 1.0 if wy else 0.0,
                                       places=5, msg=(title, pts))

    def test_largest_working_set_named(self):
        # the figures drawn at the largest working set name it: stream's
        # 256 MiB, streamk's 3 x 32 MiB = 96 MiB, mlp's 4 MiB
        rows = [dict(backing="devzero", page_kb=4, wss_bytes=w, chains=n, ns_per_access=10 / n,
                     ns_min=9 / n, ns_max=11 / n) for w in (MIB, 4 * MIB) for n in (1, 2)]
        write(os.path.join(self.tmp, "mlp-wss.csv"), list(rows[0]), rows)
        for script, data, want in (("bandwidth.gp", "stream.csv", "rows with wss_bytes = 256 MiB"),
                                   ("streamk.gp", "streamk.csv", "rows with wss_bytes = 96 MiB"),
                                   ("mlp.gp", "mlp-wss.csv", "ns per access at 4 MiB")):
            svg = os.path.join(self.tmp, "named-" + script + ".svg")
            p = subprocess.run(["gnuplot", "-c", os.path.join(PLOTS, script),
                                os.path.join(self.tmp, data), svg],
                               capture_output=True, text=True, timeout=120)
            self.assertEqual((p.returncode, p.stderr), (0, ""))
            self.assertIn(want, svg_text(svg), script)

    def test_latency(self):
        # x = wss_bytes, y = ns_per_access: devzero 10 at 1 MiB, 40 at
        # 4 MiB; thp 9 and 12
        self.assertCurves(self.draw("latency.gp", "chase.csv", hop="line"), [
            ("devzero", [(MIB, 10), (4 * MIB, 40)]), ("thp", [(MIB, 9), (4 * MIB, 12)])])

    def test_latency_page_hop(self):
        # render.py's latency-page: the page hop's rows alone, 400 and 120
        self.assertCurves(self.draw("latency.gp", "chase.csv", hop="page"), [
            ("devzero", [(4 * MIB, 400)]), ("thp", [(4 * MIB, 120)])])

    def test_tlb_measured(self):
        # left panel l1_dtlb_misses_per_1k (devzero 20, 200; thp 2, 4),
        # right panel walks_per_1k (5, 50; 0.5, 1): the measured columns,
        # not the model's (30, 300; 8, 80)
        self.assertCurves(self.draw("tlb.gp", "chase.csv", hop="line"), [
            ("devzero", [(MIB, 20), (4 * MIB, 200)]), ("thp", [(MIB, 2), (4 * MIB, 4)]),
            ("devzero", [(MIB, 5), (4 * MIB, 50)]), ("thp", [(MIB, 0.5), (4 * MIB, 1)])])

    def test_tlb_model(self):
        # left model_l1_misses_per_1k (30, 300; 3, 6), right
        # model_walks_per_1k (8, 80; 0, 4): the model's columns
        self.assertCurves(self.draw("tlb-model.gp", "chase.csv", hop="line"), [
            ("devzero", [(MIB, 30), (4 * MIB, 300)]), ("thp", [(MIB, 3), (4 * MIB, 6)]),
            ("devzero", [(MIB, 8), (4 * MIB, 80)]), ("thp", [(MIB, 0), (4 * MIB, 4)])])

    def test_bandwidth(self):
        # Only the largest working set (256 MiB; the 64 MiB rows would be
        # 20).  Two backings: bar width BW = 0.8 / 2 = 0.4, offsets
        # (i - 1.5) x 0.4 = -0.2 (devzero), +0.2 (thp) from the kernel's
        # x (read 1, write 2, copy 3): devzero 0.8 -> 9, 1.8 -> 6, 2.8 -> 5,
        # thp 1.2 -> 10, 2.2 -> 7, 3.2 -> 5.5.  Stride panel, x = the
        # backing's position: ns_per_access with EXTRA naming it (80, 60),
        # else gb_per_s (0.1, 0.13).
        left = [("devzero", [(0.8, 9), (1.8, 6), (2.8, 5)]),
                ("thp", [(1.2, 10), (2.2, 7), (3.2, 5.5)])]
        self.assertCurves(self.draw("bandwidth.gp", "stream.csv", extra="ns_per_access"),
                          left + [("devzero", [(1, 80)]), ("thp", [(2, 60)])])
        self.assertCurves(self.draw("bandwidth.gp", "stream.csv"),
                          left + [("devzero", [(1, 0.1)]), ("thp", [(2, 0.13)])])

    def test_faults(self):
        # Every row, no medians: backing i's demand bars at i - 0.2,
        # populate at i + 0.2.  Panel 1 us_per_mb: devzero 200, 220 |
        # 100, 120; thp 50, 60 | 40, 44.  Panel 2 faults_per_mb: 256 |
        # 256; 0.5 | 0.25.  Panel 3 us_per_call of the setup rows at i:
        # 5, 6 (not the demand rows' 800 ... 240).
        got = [(t, pts) for t, pts in self.draw("faults.gp", "fault.csv") if pts]
        self.assertCurves(got, [
            ("devzero", [(0.8, 200), (0.8, 220)]), ("thp", [(1.8, 50), (1.8, 60)]),
            ("", [(1.2, 100), (1.2, 120)]), ("", [(2.2, 40), (2.2, 44)]),
            ("", [(0.8, 256), (0.8, 256)]), ("", [(1.8, 0.5), (1.8, 0.5)]),
            ("", [(1.2, 256), (1.2, 256)]), ("", [(2.2, 0.25), (2.2, 0.25)]),
            ("", [(1, 5)]), ("", [(2, 6)])])

    def test_streamk(self):
        # Only the largest wss_bytes (3 x 32 MiB; the 4 MiB arrays would
        # be 9999).  Offsets -0.2 and +0.2 as in bandwidth from copy 1,
        # scale 2, add 3, triad 4: devzero 0.8 -> 1000 ... 3.8 -> 1300,
        # thp 1.2 -> 2000 ... 4.2 -> 2300.
        self.assertCurves(self.draw("streamk.gp", "streamk.csv"), [
            ("devzero", [(0.8, 1000), (1.8, 1100), (2.8, 1200), (3.8, 1300)]),
            ("thp", [(1.2, 2000), (2.2, 2100), (3.2, 2200), (4.2, 2300)])])

    def test_mlp(self):
        # x = chains, y = ns_per_access at the largest working set (4 MiB):
        # devzero 80 (1 chain), 45 (2), not the 1 MiB row's 50; thp 60, 30
        rows = [dict(backing=b, page_kb=kb, wss_bytes=w, chains=n, ns_per_access=v,
                     ns_min=v, ns_max=v, chain_ns=v * n)
                for b, kb, w, n, v in (("devzero", 4, MIB, 1, 50), ("devzero", 4, 4 * MIB, 1, 80),
                                       ("devzero", 4, 4 * MIB, 2, 45),
                                       ("thp", 2048, 4 * MIB, 1, 60),
                                       ("thp", 2048, 4 * MIB, 2, 30))]
        write(os.path.join(self.tmp, "mlp.csv"), list(rows[0]), rows)
        self.assertCurves(self.draw("mlp.gp", "mlp.csv"), [
            ("devzero", [(1, 80), (2, 45)]), ("thp", [(1, 60), (2, 30)])])

    def test_faultscale(self):
        # Top: faults_per_s against tasks; bottom: GB/s faulted in =
        # faults_per_s x page_kb x 1024 / 1e9.  devzero (4 kB) processes
        # 1000, 1800/s -> 1000 x 4096 / 1e9 = 0.004096, 0.0073728 GB/s;
        # thp (2048 kB) 100, 200/s -> 100 x 2097152 / 1e9 = 0.2097152,
        # 0.4194304.  devzero's threads: 900/s at N=1 (0.0036864 GB/s), and
        # at N=2 1500/s with low overlap, out of the line, a point of its
        # own (1500 x 4096 / 1e9 = 0.006144).
        rows = [dict(backing=b, page_kb=kb, mode=m, kind="anon", tasks=n, faults_per_s=v,
                     low_overlap=low, oversubscribed=0)
                for b, kb, m, n, v, low in (
                    ("devzero", 4, "process", 1, 1000, 0), ("devzero", 4, "process", 2, 1800, 0),
                    ("devzero", 4, "thread", 1, 900, 0), ("devzero", 4, "thread", 2, 1500, 1),
                    ("thp", 2048, "process", 1, 100, 0), ("thp", 2048, "process", 2, 200, 0))]
        write(os.path.join(self.tmp, "faultscale.csv"), list(rows[0]), rows)
        got = [(t, pts) for t, pts in self.draw("faultscale.gp", "faultscale.csv") if pts]
        self.assertCurves(got, [
            ("devzero", [(1, 1000), (2, 1800)]), ("thp", [(1, 100), (2, 200)]),
            ("", [(1, 900)]), ("", [(2, 1500)]),
            ("", [(1, 0.004096), (2, 0.0073728)]), ("", [(1, 0.2097152), (2, 0.4194304)]),
            ("", [(1, 0.0036864)]), ("", [(2, 0.006144)])])

    def test_faultscale_mapped(self):
        # faultscale-mapped.gp: faults_per_s against tasks of kind shared
        # (top) and read (bottom), processes left, threads right; anon
        # rows (memfd's 99/s) in neither.  Shared processes: memfd 1000,
        # 1800/s at N=1, 2; shm 2000/s at N=1.  Shared threads: memfd
        # 900/s at N=1; shm 2500/s at N=3, oversubscribed, in the line and
        # an open point.  Read processes: memfd 500, 950/s.  Read threads:
        # memfd 800/s at N=1 in the line, 700/s at N=2 with low overlap an
        # x outside it.  Only the first panel's lines carry titles (the key).
        rows = [dict(backing=b, page_kb=2048, mode=m, kind=k, tasks=n, faults_per_s=v,
                     low_overlap=low, oversubscribed=over)
                for b, m, k, n, v, low, over in (
                    ("memfd", "process", "shared", 1, 1000, 0, 0),
                    ("memfd", "process", "shared", 2, 1800, 0, 0),
                    ("memfd", "thread", "shared", 1, 900, 0, 0),
                    ("memfd", "process", "read", 1, 500, 0, 0),
                    ("memfd", "process", "read", 2, 950, 0, 0),
                    ("memfd", "thread", "read", 1, 800, 0, 0),
                    ("memfd", "thread", "read", 2, 700, 1, 0),
                    ("memfd", "process", "anon", 1, 99, 0, 0),
                    ("shm", "process", "shared", 1, 2000, 0, 0),
                    ("shm", "thread", "shared", 3, 2500, 0, 1))]
        write(os.path.join(self.tmp, "faultscale-mapped.csv"), list(rows[0]), rows)
        got = [(t, pts) for t, pts in self.draw("faultscale-mapped.gp", "faultscale-mapped.csv",
                                                 backings=("memfd", "shm")) if pts]
        self.assertCurves(got, [
            ("memfd", [(1, 1000), (2, 1800)]), ("shm", [(1, 2000)]),
            ("", [(1, 900)]), ("", [(3, 2500)]), ("", [(3, 2500)]),
            ("", [(1, 500), (2, 950)]),
            ("", [(1, 800)]), ("", [(2, 700)])])

    def test_realprog(self):
        # Bars = medians of the kept runs (fallback 0, valid 1): none's
        # user_s 10, 12, 11 -> 11, wall_s 20, 30, 25 -> 25, minflt 1000,
        # 3000, 2000 -> 2000; thp's 8, 9 -> 8.5, 16, 18 -> 17, 10, 30 ->
        # 20.  none's fallback run (99) and thp's invalid run (1) are in
        # neither bars nor points.  Labels: page_kb and huge_pct medians,
        # thp's huge_pct 90, 100 -> 95.
        def run(b, kb, user, wall, flt, pct, fallback=0, valid=1):
            return dict(backing=b, page_kb=kb, user_s=user, wall_s=wall, minflt=flt,
                        huge_pct=pct, fallback=fallback, valid=valid)
        rows = [run("none", 4, 10, 20, 1000, 0), run("none", 4, 12, 30, 3000, 0),
                run("none", 4, 11, 25, 2000, 0), run("none", 4, 99, 99, 99, 0, fallback=1),
                run("thp", 2048, 8, 16, 10, 90), run("thp", 2048, 9, 18, 30, 100),
                run("thp", 2048, 1, 1, 1, 100, valid=0)]
        write(os.path.join(self.tmp, "realprog.csv"), list(rows[0]), rows)
        got = self.draw("realprog.gp", "realprog.csv", backings=("none", "thp"))
        self.assertCurves(got, [
            ("", [(1, 11)]), ("", [(2, 8.5)]),
            ("", [(1, 10), (1, 12), (1, 11)]), ("", [(2, 8), (2, 9)]),
            ("", [(1, 25)]), ("", [(2, 17)]),
            ("", [(1, 20), (1, 30), (1, 25)]), ("", [(2, 16), (2, 18)]),
            ("", [(1, 2000)]), ("", [(2, 20)]),
            ("", [(1, 1000), (1, 3000), (1, 2000)]), ("", [(2, 10), (2, 30)])])
        # the labels are text of the figure itself (no points under `set table`)
        svg = os.path.join(self.tmp, "realprog-labels.svg")
        p = subprocess.run(["gnuplot", "-c", os.path.join(PLOTS, "realprog.gp"),
                            os.path.join(self.tmp, "realprog.csv"), svg, "", "", "none thp"],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual((p.returncode, p.stderr), (0, ""))
        text = svg_text(svg)
        self.assertIn("4 kB, 0% huge", text)
        self.assertIn("2048 kB, 95% huge", text)

    def test_tlbreach(self):
        # Left x = pages, right x = pages x stride_bytes; y = excess_min_ns
        # drawn at 0.05 where it is below.  devzero (4 KB stride) 16, 32
        # pages: 0.01 -> 0.05, 1.5; bytes 16 x 4096 = 64 KiB, 128 KiB.
        # thp's own stride (2 MiB): 0.2, 3 at 32 MiB, 64 MiB; its 4 KB
        # stride (right only): 0.3, 0.4 at 64 KiB, 128 KiB.
        rows = [dict(backing=b, page_kb=kb, stride_bytes=st, pages=n, excess_min_ns=v)
                for b, kb, st, n, v in (
                    ("devzero", 4, 4096, 16, 0.01), ("devzero", 4, 4096, 32, 1.5),
                    ("thp", 2048, 2 * MIB, 16, 0.2), ("thp", 2048, 2 * MIB, 32, 3),
                    ("thp", 2048, 4096, 16, 0.3), ("thp", 2048, 4096, 32, 0.4))]
        write(os.path.join(self.tmp, "tlbreach.csv"), list(rows[0]), rows)
        self.assertCurves(self.draw("tlbreach.gp", "tlbreach.csv"), [
            ("devzero (page)", [(16, 0.05), (32, 1.5)]), ("thp (page)", [(16, 0.2), (32, 3)]),
            ("devzero (page)", [(64 * KIB, 0.05), (128 * KIB, 1.5)]),
            ("thp (page)", [(32 * MIB, 0.2), (64 * MIB, 3)]),
            ("thp (4 KB)", [(64 * KIB, 0.3), (128 * KIB, 0.4)])])


class Summary(unittest.TestCase):
    """The summary's sections as render.py prints them, writes them to
    summary.txt and shows them in index.html, from the same CSVs (the
    measured columns set apart from the model's, see CHASE)."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="plots-values-summary-")
        cls.rundir = os.path.join(cls.tmp, "run")
        os.mkdir(cls.rundir)
        for name, rows in (("chase", CHASE), ("fault", FAULT), ("streamk", STREAMK)):
            write(os.path.join(cls.rundir, name + ".csv"), columns(name), rows)
        with open(os.path.join(cls.rundir, "meta.json"), "w") as f:
            json.dump(META, f)
        p = subprocess.run(RENDER + [cls.rundir, "--no-link"],
                           capture_output=True, text=True)
        cls.rc, cls.out, cls.err = p.returncode, p.stdout, p.stderr
        with open(os.path.join(cls.rundir, "summary.txt")) as f:
            cls.txt = f.read()
        with open(os.path.join(cls.rundir, "index.html")) as f:
            cls.html = f.read()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def table(self, title, hop="line"):
        """{first cell: the row's cells} of the section whose title starts
        with title (and names hop, when its title names one), in
        summary.txt, cells split at two spaces.  Titles are matched by
        their first words only, and rows by assertCells: other changes
        may reword a title or add a column."""
        for block in self.txt.split("\n\n"):
            lines = block.splitlines()
            if lines and lines[0].startswith(title) and \
                    (", hop " not in lines[0] or f", hop {hop}" in lines[0]):
                return {c[0]: c for c in (re.split(r"\s{2,}", l.strip()) for l in lines[2:])}
        self.fail(f"no section {title} in summary.txt")

    def html_row(self, title, backing):
        """The cells of backing's row in index.html's table under the first
        title starting with title."""
        i = self.html.index("<h3>" + title)
        table = self.html[i:self.html.index("</table>", i)]
        for row in re.findall(r"<tr>(.*?)</tr>", table):
            cells = re.findall(r"<td[^>]*>(.*?)</td>", row)
            if cells and cells[0] == backing:
                return cells
        self.fail(f"no {backing} row under {title}")

    def assertCells(self, row, want):
        """Each of want is a cell of row, in want's order (columns added
        between them change nothing)."""
        it = iter(row)
        self.assertTrue(all(any(c == w for c in it) for w in want), (row, want))

    def test_rendered(self):
        self.assertEqual(self.rc, 0, self.out + self.err)
        self.assertIn(self.txt.strip(), self.out)

    def test_walks_saved(self):
        # Measured walks_per_1k at the largest working set both have (4
        # MiB): devzero 50, thp 1: 49 saved, 49 / 50 = 98 %.  (From the
        # model it would be 80 - 4 = 76, 95 %.)
        want = ["thp", "4 MiB", "50.0", "1.00", "49.0", "98%"]
        row = self.table("Page walks saved")["thp"]
        self.assertCells(row, want)
        self.assertIn("measured", row[-1])
        self.assertCells(self.html_row("Page walks saved", "thp"), want)

    def test_latency(self):
        # ns_per_access at each backing's largest working set (4 MiB):
        # devzero 40, thp 12; min..max from ns_min, ns_max: 40 - 1 = 39
        # .. 40 + 5 = 45, 11..17
        t = self.table("Latency at the largest")
        self.assertCells(t["devzero"], ["devzero", "4 MiB", "40.0 ns", "39.0..45.0"])
        self.assertCells(t["thp"], ["thp", "4 MiB", "12.0 ns", "11.0..17.0"])
        # the page hop's section: 400 (399..405), 120 (119..125)
        t = self.table("Latency at the largest", hop="page")
        self.assertCells(t["devzero"], ["devzero", "4 MiB", "400 ns", "399..405"])
        self.assertCells(t["thp"], ["thp", "4 MiB", "120 ns", "119..125"])

    def test_fault_cost(self):
        # medians of two runs: devzero demand (200 + 220) / 2 = 210,
        # populate (100 + 120) / 2 = 110; thp demand 55, populate 42;
        # thp against devzero 55 / 210 = 0.2619 -> 0.26x
        t = self.table("Fault cost")
        self.assertCells(t["devzero"], ["devzero", "210 us/MB", "110 us/MB", "1.00x"])
        self.assertCells(t["thp"], ["thp", "55.0 us/MB", "42.0 us/MB", "0.26x"])
        self.assertCells(self.html_row("Fault cost", "thp"),
                         ["thp", "55.0 us/MB", "42.0 us/MB", "0.26x"])

    def test_faults_per_mb(self):
        # medians of 256, 256 and of 0.5, 0.5 | 0.25, 0.25
        t = self.table("Faults per MB")
        self.assertCells(t["devzero"], ["devzero", "256", "256"])
        self.assertCells(t["thp"], ["thp", "0.50", "0.25"])

    def test_streamk(self):
        # best MB/s at each backing's largest wss_bytes (3 x 32 MiB arrays),
        # not the 4 MiB arrays' 9999; llc_x 4.0 meets the 4x rule, 3.5
        # does not
        t = self.table("STREAM kernels")
        self.assertCells(t["devzero"], ["devzero", "32 MiB", "1000 MB/s", "1100 MB/s",
                                        "1200 MB/s", "1300 MB/s", "met"])
        self.assertCells(t["thp"], ["thp", "32 MiB", "2000 MB/s", "2100 MB/s", "2200 MB/s",
                                    "2300 MB/s"])
        self.assertIn("3.50x LLC", t["thp"][-1])
        self.assertCells(self.html_row("STREAM kernels", "thp"), ["thp", "2000 MB/s"])


class ModelWalks(unittest.TestCase):
    """The walks saved from the model where no counter counted."""

    def test_walks_saved_from_the_model(self):
        # walks_per_1k empty: model_walks_per_1k at 4 MiB, devzero 80,
        # thp 4: 76 saved, 76 / 80 = 95 %, from the model
        from plots.benches import chase as mod
        from plots.table import Table
        with tempfile.TemporaryDirectory() as d:
            write(os.path.join(d, "chase.csv"), columns("chase"),
                  [dict(r, walks_per_1k="", l1_dtlb_misses_per_1k="") for r in CHASE])
            t = Table.read(d, "chase", mod.DEFAULTS)
            self.assertIsNone(t.problem)
            meta = {"timing_source": "tcg", "tlb_model": {"preset": "skylake"}}
            sec = [s for s in mod.sections_of(t, meta, {}) if s.title.startswith("Page walks")]
        self.assertEqual([r[0] for r in sec[0].rows], ["thp"])
        self.assertCells(sec[0].rows[0], ["thp", "4 MiB", "80.0", "4.00", "76.0", "95%"])
        # the source cell names the model and its preset
        self.assertIn("MODEL skylake", sec[0].rows[0][-1])

    assertCells = Summary.assertCells


class RealProgSection(unittest.TestCase):
    """The real program's summary section (plots/benches/realprog.py),
    checked on its numbers alone: its columns are being reworded."""

    def test_medians_of_the_kept_runs(self):
        # none: user_s 10, 12, 15 -> median 12.0 (the mean would be
        # 12.3); user + sys 10+2, 12+3, 15+5 = 12, 15, 20 -> 15.0; wall_s
        # 20, 30, 25 -> 25.0; minflt 1000, 3000, 2500 -> 2500; its fourth
        # run fell back (fallback 1, user 99): excluded.
        # thp: user 8, 9 -> 8.50; user + sys 8+1, 9+2 = 9, 11 -> 10.0;
        # wall 16, 18 -> 17.0; minflt 10, 30 -> 20.0; its third run was
        # marked invalid (valid 0): excluded.  thp against none: user +
        # sys 10 / 15 = 0.667x, wall 17 / 25 = 0.680x.  Runs counted: the
        # kept ones, 3 and 2.  majflt (7) is no column of the table.
        # resident_kb (the working set): none 1024, 3072, 2048 -> median
        # 2048 kB = 2 MiB; thp 4096, 6144 -> 5120 kB = 5 MiB (the
        # excluded runs' 99 and 1 left out).
        from plots.benches import realprog

        def run(b, kb, user, sys_s, wall, flt, res, fallback=0, valid=1):
            return {k: str(v) for k, v in dict(
                backing=b, page_kb=kb, huge_pct=0 if kb == 4 else 100, user_s=user,
                sys_s=sys_s, wall_s=wall, minflt=flt, majflt=7, resident_kb=res,
                fallback=fallback, valid=valid, program="xz -9",
                corpus_bytes=16 * MIB).items()}
        rows = [run("none", 4, 10, 2, 20, 1000, 1024), run("none", 4, 12, 3, 30, 3000, 3072),
                run("none", 4, 15, 5, 25, 2500, 2048),
                run("none", 4, 99, 99, 99, 99, 99, fallback=1),
                run("thp", 2048, 8, 1, 16, 10, 4096), run("thp", 2048, 9, 2, 18, 30, 6144),
                run("thp", 2048, 1, 1, 1, 1, 1, valid=0)]
        sec = realprog.section_of(rows, {"timing_source": "kvm"})
        got = {r[0]: " | ".join(r) for r in sec.rows}
        self.assertEqual(list(got), ["none", "thp"])
        for b, nums in (("none", ["3", "2 MiB", "12.0", "15.0", "25.0", "2500",
                                  "1.000x"]),
                        ("thp", ["2", "5 MiB", "8.50", "10.0", "17.0", "20.0",
                                 "0.667x", "0.680x"])):
            for n in nums:
                self.assertRegex(got[b], r"(^|[ (])%s\b" % re.escape(n), b)
        for b in ("none", "thp"):
            self.assertNotRegex(got[b], r"(^|[ (])(99|1\.00|7)( |$)", b)
        self.assertIn("16 MiB", sec.title)


if __name__ == "__main__":
    unittest.main()
