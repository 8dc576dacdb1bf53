# SPDX-License-Identifier: GPL-2.0
"""Figures and summary read columns by name: a run whose every CSV has its
columns in another order (as a reordered emit_row would write them, with
the contract listing them in that order), or whose columns the figures do
not read are renamed, renders to the same figures and the same summary.

The run holds every benchmark's CSV: the KVM and TCG fixtures' chase,
stream, fault and streamk, plus faultscale, mlp, tlbreach and realprog
written here.  Each figure is compared as its SVG, whose paths are the
plotted points, byte for byte; the summary as the printed text.  Run by
tests/plots/test_plots.py (make test-plots) or alone:
python3 -m unittest tests.plots.test_reorder_plot"""
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from test_plots import CONTRACT, FIXTURE, RENDER  # noqa: E402
import test_faultscale_plot as faultscale  # noqa: E402
import test_tlbreach_plot as tlbreach  # noqa: E402

MLP_COLUMNS = ["backing", "page_kb", "wss_bytes", "chains", "ns_per_access", "ns_min",
               "ns_max", "chain_ns", "stride", "tlb_group", "cv", "reps", "accesses",
               "walks_per_1k", "model_walks_per_1k", "cycles_per_access", "model_preset"]
MLP = {"name": "mlp", "binary": "mlp", "columns": MLP_COLUMNS,
       "key": ["backing", "chains", "wss_bytes"], "metric": "ns_per_access",
       "lower_is_better": True, "options": []}


def mlp_rows():
    """Two working sets, five chain counts; devzero slower than thp."""
    out = []
    for b, kb, ns in (("devzero", 4, 120.0), ("thp", 2048, 80.0)):
        for wss in (16 << 20, 64 << 20):
            for n in (1, 2, 4, 8, 16):
                v = ns * (wss >> 24) / n ** 0.8
                out.append([b, kb, wss, n, round(v, 3), round(v * 0.9, 3),
                            round(v * 1.2, 3), round(v * n, 3), 4096, 1, 0.02, 5,
                            100000, "", round(900 / n, 1), "", "zen3"])
    return out


def write_csv(path, columns, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(columns)
        w.writerows(rows)


def full_run(tmp, fixture):
    """A copy of a fixture with every benchmark's CSV, and its contract."""
    run = os.path.join(tmp, "run")
    shutil.copytree(os.path.join(FIXTURE, fixture), run)
    write_csv(os.path.join(run, "faultscale.csv"), faultscale.COLUMNS, faultscale.rows())
    write_csv(os.path.join(run, "tlbreach.csv"), tlbreach.COLUMNS, tlbreach.rows())
    write_csv(os.path.join(run, "mlp.csv"), MLP_COLUMNS, mlp_rows())
    shutil.copy(os.path.join(HERE, "fixture-realprog", "realprog.csv"), run)
    with open(CONTRACT) as f:
        data = json.load(f)
    data["benches"] += [faultscale.BENCH, tlbreach.BENCH, MLP]
    path = os.path.join(tmp, "contract.json")
    with open(path, "w") as f:
        json.dump(data, f)
    return run, path


def rewrite(run, name, order=None, rename=None):
    """name's CSV with its columns in order (a list of the header's names)
    and the columns of rename {old: new} renamed; returns the new header."""
    path = os.path.join(run, name)
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header = rows[0]
    order = order or header
    idx = [header.index(c) for c in order]
    new = [(rename or {}).get(c, c) for c in order]
    write_csv(path, new, ([r[i] if i < len(r) else "" for i in idx] for r in rows[1:]))
    return new


def reorder(columns):
    """Another order: reversed, so that no column keeps its place (the
    middle one of an odd count moves too, as the first goes last)."""
    rev = columns[::-1]
    return rev[1:] + rev[:1] if len(columns) % 2 else rev


def render(run, contract):
    p = subprocess.run([sys.executable, RENDER, run, "--no-link"], capture_output=True,
                       text=True, env=dict(os.environ, BENCH_CONTRACT=contract))
    return p.returncode, p.stdout.replace(run, "RUN"), p.stderr


def outputs(run):
    """{file: bytes} of the SVGs and index.html render wrote."""
    out = {}
    for name in sorted(os.listdir(run)):
        if name.endswith(".svg") or name == "index.html":
            with open(os.path.join(run, name), "rb") as f:
                out[name] = f.read()
    return out


class Reordered(unittest.TestCase):
    """fixture rendered as written, then with every CSV's columns (and the
    contract's) reordered, or the columns no figure or summary reads
    renamed: the same figures, the same summary."""

    def setUp(self):
        if not shutil.which("gnuplot"):
            self.skipTest("no gnuplot: make deps (Debian package gnuplot-nox)")
        self.tmp = tempfile.mkdtemp(prefix="plots-reorder-")
        self.addCleanup(shutil.rmtree, self.tmp)

    def check(self, fixture, change):
        run, path = full_run(os.path.join(self.tmp, fixture), fixture)
        rc, before, err = render(run, path)
        self.assertEqual((rc, err), (0, ""), before[-2000:])
        want = outputs(run)
        # every benchmark's figure was drawn, so each is compared below
        for fig in ("latency", "tlb", "bandwidth", "faults", "streamk", "faultscale",
                    "mlp", "tlbreach", "realprog"):
            self.assertIn(fig + ".svg", want)
        with open(path) as f:
            data = json.load(f)
        for bench in data["benches"]:
            bench["columns"] = change(run, bench["name"] + ".csv", bench["columns"])
        change(run, "realprog.csv", None)
        with open(path, "w") as f:
            json.dump(data, f)
        rc, after, err = render(run, path)
        self.assertEqual((rc, err), (0, ""), after[-2000:])
        self.assertEqual(after, before)
        got = outputs(run)
        self.assertEqual(sorted(got), sorted(want))
        for name in want:
            self.assertTrue(got[name] == want[name], name + " changed")

    @staticmethod
    def reordered(run, name, columns):
        if columns is None:  # realprog.csv: no contract entry
            with open(os.path.join(run, name), newline="") as f:
                columns = next(csv.reader(f))
        return rewrite(run, name, order=reorder(columns))

    def test_reordered_columns_change_nothing(self):
        for fixture in ("kvm", "tcg"):
            with self.subTest(fixture=fixture):
                self.check(fixture, self.reordered)


if __name__ == "__main__":
    unittest.main()
