# SPDX-License-Identifier: GPL-2.0
"""The multiload figure and summary section (plots/multiload.gp, plots/
benches/multiload.py), on copies of the KVM and TCG fixtures with a
multiload.csv written here: at 256 MB, devzero's chase 100 ns unloaded
and 150 ns loaded, the 2 MB backings 60 and 80; a flagged row drawn as
no loaded bar and compared with nothing.  The contract is
tests/fixture/contract.json plus multiload's entry, pinned below like the
fixture's.  Run by tests/plots/test_plots.py (make test-plots)."""
import os
import shutil
import subprocess
import tempfile
import unittest

from tests.plots.test_plots import (CONTRACT, FIXTURE, PLOTS, RENDER, contract_with,  # noqa
                                    series_titles, svg_text, write_csv)

COLUMNS = ["backing", "page_kb", "wss_bytes", "hop", "load", "load_threads", "ns_unloaded",
           "ns_loaded", "ratio", "load_gbps", "solo_gbps", "coverage", "thread_share_min",
           "load_verified", "flags", "flagged", "ns_unloaded_min", "ns_unloaded_max",
           "ns_loaded_min", "ns_loaded_max", "cv_unloaded", "cv_loaded", "reps", "hops",
           "load_bytes", "chase_cpu", "load_cpus"]
BENCH = {"name": "multiload", "binary": "multiload", "columns": COLUMNS,
         "key": ["backing", "hop", "load", "wss_bytes", "load_threads"],
         "metric": "ns_loaded", "lower_is_better": True, "options": []}
MB = 1 << 20
# (unloaded, loaded) ns per hop at 256 MB, per load
NS = {"devzero": {"read": (100.0, 150.0), "copy": (100.0, 170.0)},
      "devhugetlb": {"read": (60.0, 80.0), "copy": (60.0, 90.0)},
      "thp": {"read": (62.0, 84.0), "copy": (62.0, 93.0)}}


def rows(ns=NS, flagged=None, wss=256 * MB):
    out = []
    for b, loads in ns.items():
        kb = 4 if b == "devzero" else 2048
        for load, (u, l) in loads.items():
            f = (flagged or {}).get((b, load), "ok")
            out.append([b, kb, wss, "line", load, 1, u, l, l / u, 10.0, 12.0,
                        1.0 if "uncovered" not in f else 0.2, 0.8, 0 if "unverified" in f else 1,
                        f, int(f != "ok"), u * 0.98, u * 1.02, l * 0.97, l * 1.05, 0.01, 0.02,
                        5, 1 << 20, 64 * MB, 1, "0"])
    return out


class MultiloadFigure(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="plots-multiload-")
        self.contract = contract_with(os.path.join(self.tmp, "contract.json"), BENCH)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def make_run(self, fixture, ns=NS, flagged=None, extra=()):
        run = os.path.join(self.tmp, fixture)
        shutil.copytree(os.path.join(FIXTURE, fixture), run)
        write_csv(os.path.join(run, "multiload.csv"), COLUMNS,
                  rows(ns, flagged) + list(extra))
        return run

    def render(self, run, contract=None):
        p = subprocess.run(RENDER + [run, "--no-link"], capture_output=True, text=True,
                           env=dict(os.environ, BENCH_CONTRACT=contract or self.contract))
        return p.returncode, p.stdout, p.stderr

    def section(self, out):
        text = out[out.index("Loaded latency: each backing"):]
        return text[:text.index("\n\n")].splitlines()

    def by(self, sec):
        return {(l.split()[0], l.split()[1]): l.split() for l in sec[2:]}

    def test_figure_loaded_and_unloaded_bars(self):
        run = self.make_run("kvm")
        rc, out, err = self.render(run)
        self.assertEqual((rc, err), (0, ""), out[-2000:])
        svg = os.path.join(run, "multiload.svg")
        self.assertEqual({"unloaded", "loaded"}, series_titles(svg))
        text = svg_text(svg)
        self.assertIn("Loaded latency (multiload)", text)
        self.assertIn("load: read", text)
        self.assertIn("load: copy", text)
        self.assertNotIn("flagged", text.replace("flagged rows: no loaded bar", ""))
        with open(os.path.join(run, "multiload.png"), "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        with open(os.path.join(run, "index.html")) as f:
            self.assertIn('src="multiload.svg"', f.read())

    def test_summary_against_devzero_under_the_same_load(self):
        run = self.make_run("kvm")
        rc, out, err = self.render(run)
        self.assertEqual(rc, 0, err)
        sec = self.section(out)
        self.assertIn("against devzero", sec[0])
        self.assertIn("at 256 MiB, hop line", sec[0])
        self.assertNotIn("not what a CPU does", sec[0])
        by = self.by(sec)
        self.assertEqual(by[("devzero", "read")][2:], ["100", "ns", "150", "ns", "x1.50",
                                                       "10.00", "baseline", "0.01/0.02",
                                                       "ok"])
        # devhugetlb loaded 80 against devzero's 150 under read: -70 ns, -47 %
        self.assertEqual(by[("devhugetlb", "read")][4:], ["80.0", "ns", "x1.33", "10.00",
                                                          "-70.0", "ns", "(-47%)", "0.01/0.02",
                                                          "ok"])
        self.assertEqual(by[("thp", "copy")][6:], ["x1.50", "10.00", "-77.0", "ns", "(-45%)",
                                                   "0.01/0.02", "ok"])

    def test_a_flagged_row_is_neither_drawn_nor_compared(self):
        run = self.make_run("kvm", flagged={("thp", "read"): "uncovered;below_floor"})
        rc, out, err = self.render(run)
        self.assertEqual((rc, err), (0, ""))
        by = self.by(self.section(out))
        self.assertEqual(by[("thp", "read")][2:], ["62.0", "ns", "flagged", "0.01/0.02",
                                                   "uncovered;below_floor"])
        self.assertIn("multiload: rows of thp flagged (not drawn): uncovered;below_floor", out)
        self.assertIn("flagged", svg_text(os.path.join(run, "multiload.svg"))
                      .replace("flagged rows: no loaded bar", ""))

    def test_a_flagged_baseline_compares_nothing(self):
        run = self.make_run("kvm", flagged={("devzero", "read"): "unverified"})
        rc, out, err = self.render(run)
        self.assertEqual((rc, err), (0, ""))
        by = self.by(self.section(out))
        self.assertEqual(by[("devhugetlb", "read")][8], "n/a")

    def test_the_largest_working_set_is_drawn(self):
        small = [r for r in rows(wss=4 * MB)]
        run = self.make_run("kvm", extra=small)
        rc, out, err = self.render(run)
        self.assertEqual((rc, err), (0, ""))
        self.assertIn("at 256 MiB", self.section(out)[0])

    def test_tcg_says_emulated(self):
        run = self.make_run("tcg", ns={"devzero": NS["devzero"], "thp": NS["thp"]})
        rc, out, err = self.render(run)
        self.assertEqual((rc, err), (0, ""))
        self.assertIn("TCG", self.section(out)[0])
        self.assertIn("not what a CPU does", self.section(out)[0])
        self.assertIn("TCG: emulated timing, not hardware",
                      svg_text(os.path.join(run, "multiload.svg")))

    def test_one_load_only(self):
        run = self.make_run("kvm", ns={b: {"read": v["read"]} for b, v in NS.items()})
        rc, out, err = self.render(run)
        self.assertEqual((rc, err), (0, ""))
        self.assertIn("no rows of this load", svg_text(os.path.join(run, "multiload.svg")))

    def test_contract_without_multiload(self):
        run = self.make_run("kvm")
        rc, out, err = self.render(run, CONTRACT)
        self.assertEqual((rc, err), (0, ""))
        self.assertIn("multiload skipped: the contract lists no multiload benchmark", out)
        self.assertFalse(os.path.exists(os.path.join(run, "multiload.svg")))

    def test_by_hand_is_silent(self):
        run = self.make_run("kvm")
        out = os.path.join(self.tmp, "byhand")
        p = subprocess.run(["gnuplot", "-c", os.path.join(PLOTS, "multiload.gp"),
                            os.path.join(run, "multiload.csv"), out],
                           capture_output=True, text=True)
        self.assertEqual((p.returncode, p.stdout + p.stderr), (0, ""))
        self.assertIn("unlabelled", svg_text(out + ".svg"))


if __name__ == "__main__":
    unittest.main()
