# SPDX-License-Identifier: GPL-2.0
"""The faultlat figure and summary section (plots/faultlat.gp,
plots/benches/faultlat.py), on copies of the KVM and TCG fixtures with a
faultlat.csv written here from the module's own fixture rows (which pass
its oracle, check_row), and one row distorted to fail it.  The contract
is tests/fixture/contract.json plus faultlat's entry.  Run by
tests/plots/test_plots.py (make test-plots)."""
import os
import random
import shutil
import subprocess
import tempfile
import types
import unittest

from plots.benches import faultlat
from tests.plots.test_plots import (CONTRACT, FIXTURE, PLOTS, RENDER, contract_with,  # noqa
                                    svg_text, write_csv)

COLUMNS = ["backing", "page_kb", "condition", "size_bytes", "faults", "p50_us", "p90_us",
           "p99_us", "max_us", "mean_us", "huge_faults", "kernel_page_kb", "anon_huge_kb",
           "minflt", "wall_us", "sum_us", "loop_ns_per_iter", "clock_ns_per_iter",
           "free_2m_blocks", "frag_bytes", "frag_build_s", "thp_fault_alloc",
           "thp_fault_fallback", "compact_stall", "htlb_buddy_alloc_success",
           "htlb_buddy_alloc_fail"]
BENCH = {"name": "faultlat", "binary": "faultlat", "columns": COLUMNS,
         "key": ["backing", "condition", "size_bytes"], "metric": "p99_us",
         "lower_is_better": True, "options": []}
BACKINGS = [("devzero", 4), ("thp", 2048), ("devhugetlb", 2048), ("maphugetlb", 2048)]


def rows(backings=BACKINGS, edit=None):
    spec = types.SimpleNamespace(backings=backings, fault_scale=1.0)
    out = faultlat.fixture(spec, random.Random(1))
    for r in out:
        (edit or (lambda r: None))(r)
    return [[r[c] for c in COLUMNS] for r in out]


class FaultlatFigure(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="plots-faultlat-")
        self.contract = contract_with(os.path.join(self.tmp, "contract.json"), BENCH)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def make_run(self, fixture, **kw):
        run = os.path.join(self.tmp, fixture)
        shutil.copytree(os.path.join(FIXTURE, fixture), run)
        write_csv(os.path.join(run, "faultlat.csv"), COLUMNS, rows(**kw))
        return run

    def render(self, run, contract=None):
        p = subprocess.run(RENDER + [run, "--no-link"], capture_output=True, text=True,
                           env=dict(os.environ, BENCH_CONTRACT=contract or self.contract))
        return p.returncode, p.stdout, p.stderr

    def section(self, out):
        text = out[out.index("Fault latency per fault"):]
        return text[:text.index("\n\n")].splitlines()

    def test_figure_a_group_per_backing(self):
        run = self.make_run("kvm")
        rc, out, err = self.render(run)
        self.assertEqual((rc, err), (0, ""), out[-2000:])
        text = svg_text(os.path.join(run, "faultlat.svg"))
        for b, _ in BACKINGS:
            self.assertIn(b, text)
        self.assertIn("First-touch fault latency per fault", text)
        self.assertIn("box = p50_us..p90_us", text)
        self.assertIn("aged (fragmenter)", text)
        with open(os.path.join(run, "faultlat.png"), "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")

    def test_summary_against_devzero(self):
        run = self.make_run("kvm")
        rc, out, err = self.render(run)
        self.assertEqual(rc, 0, err)
        sec = self.section(out)
        self.assertIn("against devzero", sec[0])
        self.assertNotIn("not what a CPU does", sec[0])
        lines = [l.split() for l in sec[2:]]
        by = {(l[0], l[1]): l for l in lines}
        self.assertEqual(set(by), {(b, c) for b, _ in BACKINGS for c in ("fresh", "aged")})
        self.assertIn("baseline", by[("devzero", "fresh")])
        # every fixture row passes the oracle
        self.assertTrue(all(l[-1] == "ok" for l in lines), lines)
        # thp aged: 28 of 32 faults huge, compaction stalls in vmstat
        self.assertIn("28/32", by[("thp", "aged")])
        self.assertIn("compact_stall=32", " ".join(by[("thp", "aged")]))

    def test_a_distorted_row_is_flagged(self):
        def half(r):
            if r["backing"] == "devhugetlb" and r["condition"] == "fresh":
                r["faults"] //= 2
                r["sum_us"] /= 2
        run = self.make_run("kvm", edit=half)
        rc, out, err = self.render(run)
        self.assertEqual(rc, 0, err)
        line = next(l for l in self.section(out) if l.split()[:2] == ["devhugetlb", "fresh"])
        self.assertIn("FAILS: clock:", line)
        self.assertIn("count: 16 faults timed, the mapping has 32 pages", line)

    def test_tcg_says_emulated(self):
        run = self.make_run("tcg", backings=BACKINGS[:2])
        rc, out, err = self.render(run)
        self.assertEqual((rc, err), (0, ""))
        self.assertIn("not what a CPU does", self.section(out)[0])
        self.assertIn("TCG: emulated timing, not hardware",
                      svg_text(os.path.join(run, "faultlat.svg")))

    def test_contract_without_faultlat(self):
        run = self.make_run("kvm")
        rc, out, err = self.render(run, CONTRACT)
        self.assertEqual((rc, err), (0, ""))
        self.assertIn("faultlat skipped: the contract lists no faultlat benchmark", out)
        self.assertFalse(os.path.exists(os.path.join(run, "faultlat.svg")))

    def test_by_hand_is_silent(self):
        run = self.make_run("kvm")
        out = os.path.join(self.tmp, "byhand")
        p = subprocess.run(["gnuplot", "-c", os.path.join(PLOTS, "faultlat.gp"),
                            os.path.join(run, "faultlat.csv"), out],
                           capture_output=True, text=True)
        self.assertEqual((p.returncode, p.stdout + p.stderr), (0, ""))
        self.assertIn("unlabelled", svg_text(out + ".svg"))


if __name__ == "__main__":
    unittest.main()
