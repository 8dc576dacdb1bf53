# SPDX-License-Identifier: GPL-2.0
"""Figures and summary read columns by name: a run whose every CSV has its
columns in another order (as a reordered emit_row would write them, with
the contract listing them in that order), or whose columns the figures do
not read are renamed, renders to the same figures and the same summary.

The run holds every benchmark's CSV, with the columns of bench/'s
contract, the rows from each plot module's fixture() (plots/benches/), and
the KVM or TCG fixture's meta.json: a benchmark added with its plot
module is in it.  Each figure is compared as its SVG, whose paths are the
plotted points, byte for byte; the summary as the printed text.  Run by
tests/plots/test_plots.py (make test-plots) or alone:
python3 -m unittest tests.plots.test_reorder_plot"""
import csv
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

from tests.plots.test_plots import FIXTURE, REPO, RENDER, write_csv
from plots import benches
from bench import contract
from tests.plots import make_fixture


def bench_contract(path):
    """The contract of bench/'s C tables (build/bench/benchtool contract)
    written to path, so that a benchmark added there is in the run."""
    try:
        contract.build_benchtool(REPO)
    except contract.ContractError as e:
        raise unittest.SkipTest(f"{e} (make build/bench/benchtool)")
    p = subprocess.run([os.path.join(REPO, contract.BENCHTOOL), "contract"],
                       capture_output=True, text=True, check=True)
    with open(path, "w") as f:
        f.write(p.stdout)
    return json.loads(p.stdout)


def full_run(tmp, fixture):
    """fixture's meta.json and, from every plot module's fixture(), its
    benchmark's CSV with the columns of bench/'s contract (realprog's, not
    in it, with the columns its rows have): (run, contract path)."""
    run = os.path.join(tmp, "run")
    os.makedirs(run)
    shutil.copy(os.path.join(FIXTURE, fixture, "meta.json"), run)
    path = os.path.join(tmp, "contract.json")
    data = bench_contract(path)
    columns = {b["name"]: b["columns"] for b in data["benches"]}
    spec = make_fixture.SPECS[fixture]
    rng = random.Random(fixture)
    for m in benches.modules():
        name = m.__name__.split(".")[-1]
        rows = m.fixture(spec, rng)
        cols = columns.get(name) or list(rows[0])
        with open(os.path.join(run, name + ".csv"), "w", newline="") as f:
            # a column the module writes that the contract lacks is an error
            w = csv.DictWriter(f, cols, restval="", lineterminator="\n")
            w.writeheader()
            w.writerows(rows)
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
    p = subprocess.run(RENDER + [run, "--no-link"], capture_output=True,
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
        # every plot module's figures were drawn, so each is compared below
        for m in benches.modules():
            for fig in m.FIGURES:
                self.assertIn(fig + ".svg", want)
        with open(path) as f:
            data = json.load(f)
        for bench in data["benches"]:
            bench["columns"] = change(run, bench["name"] + ".csv", bench["columns"])
            # the text columns by their new names, as benchtool would list them
            bench["text"] = [t if t in bench["columns"] else t + "_renamed"
                             for t in bench.get("text", ())]
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

    @staticmethod
    def renamed(run, name, columns):
        """Every column that plots/ does not name renamed: a quoted name in
        a plot module, .gp or shared module there is one it may read."""
        with open(os.path.join(run, name), newline="") as f:
            header = next(csv.reader(f))
        text = ""
        for folder, _, files in os.walk(os.path.join(REPO, "plots")):
            for fn in files:
                if fn.endswith((".py", ".gp")):
                    with open(os.path.join(folder, fn)) as f:
                        text += f.read()
        unread = {c: c + "_renamed" for c in header
                  if not re.search(r"[\"']%s[\"']" % re.escape(c), text)}
        return rewrite(run, name, rename=unread)

    # one fixture each, to keep the suite short: kvm has both hop kinds
    # (the hop column) and counters, tcg the figures of a run without them
    def test_renamed_unread_columns_change_nothing(self):
        self.check("tcg", self.renamed)

    def test_reordered_columns_change_nothing(self):
        self.check("kvm", self.reordered)


if __name__ == "__main__":
    unittest.main()
