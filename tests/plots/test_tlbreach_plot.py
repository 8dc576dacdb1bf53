# SPDX-License-Identifier: GPL-2.0
"""The tlbreach figure and summary section (plots/tlbreach.gp,
plots/render.py), on copies of the KVM and TCG fixtures with a
tlbreach.csv written here: a staircase with knees at 96 and 2048 pages on
4 KB pages, and at 64 pages of 2 MB (no second knee in the sweep).  The
contract is tests/fixture/contract.json plus tlbreach's entry, pinned
below like the fixture's.  Run by tests/plots/test_plots.py (make
test-plots)."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from tests.plots.test_plots import (FIXTURE, PLOTS, RENDER, contract_with, edit_meta,  # noqa
                        series_titles, svg_text, write_csv)

COLUMNS = ["backing", "page_kb", "wss_bytes", "pages", "stride_bytes", "excess_ns",
           "excess_min_ns", "page_ns", "page_ns_min", "page_ns_max", "line_ns",
           "line_ns_min", "line_ns_max", "page_cv", "line_cv", "reps", "hops",
           "line_pages"]
BENCH = {"name": "tlbreach", "binary": "tlbreach", "columns": COLUMNS,
         "key": ["backing", "stride_bytes", "pages"], "metric": "excess_ns",
         "lower_is_better": True, "options": []}
# (backing, page kB, stride, [(entries, rise ns)])
CURVES = [("devzero", 4, 4096, [(96, 1.6), (2048, 20.0)]),
          ("maphugetlb", 2048, 2 << 20, [(64, 1.6)]),
          ("maphugetlb", 2048, 4096, [])]
ZEN4 = {"name": "zen4", "source": "AMD 57647",
        "l1": [{"page_sizes": ["4K", "2M", "1G"], "entries": 72}],
        "l2": [{"page_sizes": ["4K", "2M"], "entries": 3072}],
        "held_as": {"l1": {"4K": "4K", "2M": "2M", "1G": "1G"},
                    "l2": {"4K": "4K", "2M": "2M", "1G": "2M"}}}
VM_NOTE = "two-dimensional"


def section(out):
    """The lines of the summary's tlbreach section (title first)."""
    text = out[out.index("TLB reach from timing"):]
    return text[:text.index("\n\n")].splitlines()


def rows(curves=CURVES):
    out = []
    for b, kb, stride, knees in curves:
        for i in range(44):
            n = round(4 * 2 ** (i / 4))
            y = sum(r for e, r in knees if n > e)
            out.append([b, kb, n * stride, n, stride, y, y, y + 1, y + 1, y + 1.1,
                        1, 1, 1.1, 0.01, 0.01, 9, 262144, 1])
    return out


class TlbreachFigure(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="plots-tlbreach-")
        self.contract = contract_with(os.path.join(self.tmp, "contract.json"), BENCH)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def make_run(self, fixture, curves=CURVES, **meta):
        run = os.path.join(self.tmp, fixture)
        shutil.copytree(os.path.join(FIXTURE, fixture), run)
        write_csv(os.path.join(run, "tlbreach.csv"), COLUMNS, rows(curves))
        if meta:
            edit_meta(run, **meta)
        return run

    def render(self, run):
        p = subprocess.run(RENDER + [run, "--no-link"],
                           capture_output=True, text=True,
                           env=dict(os.environ, BENCH_CONTRACT=self.contract))
        self.assertEqual((p.returncode, p.stderr), (0, ""), p.stdout[-2000:])
        return p.stdout

    def test_knees_and_model_in_the_summary(self):
        run = self.make_run("kvm", other={"pmu": {"preset": "zen4"},
                                          "tlb_geometry": ZEN4})
        sec = section(self.render(run))
        line = next(l for l in sec if l.startswith("  devzero "))
        self.assertIn("91..108 (364 KiB)", line)
        self.assertIn("+1.60 ns", line)
        self.assertIn("2048..2435 (8 MiB)", line)
        self.assertIn("+20.0 ns", line)
        huge = [l for l in sec if l.startswith("  maphugetlb ")]
        self.assertIn("64..76 (128 MiB)", huge[0])
        self.assertIn("no knee to 6889", huge[0])
        self.assertIn(">= 430.6 KiB", huge[0])    # 6889 x 4 KB / 64 entries
        self.assertIn("no knee to 6889 (> 26.9 MiB)", huge[1])
        model = [l for l in sec if l.startswith("  model ")]
        self.assertIn("72 (288 KiB)", model[0])
        self.assertIn("3072 (12 MiB)", model[0])
        self.assertIn("MODEL zen4", model[0])
        self.assertNotIn(VM_NOTE, sec[0])
        svg = os.path.join(run, "tlbreach.svg")
        self.assertLessEqual({"devzero (page)", "maphugetlb (page)", "maphugetlb (4 KB)"},
                             series_titles(svg))
        self.assertIn("knees: devzero 4 KiB: L1 91..108", svg_text(svg))

    def test_huge_pages_held_as_4k_entries(self):
        # a VM on 4 KB host pages: the 4 KB stride on 2 MB pages knees
        # where 4 KB pages do
        curves = CURVES[:2] + [("maphugetlb", 2048, 4096, [(64, 1.6)])]
        sec = section(self.render(self.make_run("kvm", curves)))
        huge = [l for l in sec if l.startswith("  maphugetlb ")]
        self.assertIn("4 KiB (held as 4 KB entries)", huge[0])
        # bytes are the entries times the 4 KB held, not times the stride
        self.assertIn("64..76 (256 KiB)", huge[0])
        self.assertNotIn("128 MiB", huge[0])

    def test_vm_host_says_two_dimensional(self):
        run = self.make_run("kvm", machine={"hypervisor": True})
        self.assertIn(VM_NOTE, section(self.render(run))[0])
        self.assertIn(VM_NOTE, svg_text(os.path.join(run, "tlbreach.svg")))

    def test_no_preset_leaves_no_model_rows(self):
        sec = section(self.render(self.make_run("kvm")))
        self.assertIn("the TLB model has no geometry for this CPU", sec[0])
        self.assertFalse([l for l in sec if l.startswith("  model ")])

    def test_tcg_claims_no_knee(self):
        run = self.make_run("tcg")
        sec = section(self.render(run))
        self.assertIn("says nothing of a TLB, no knees claimed", sec[0])
        self.assertNotIn("91..108", "\n".join(sec))
        text = svg_text(os.path.join(run, "tlbreach.svg"))
        self.assertIn("no knees claimed", text)
        # The footer says so once, not once a cell.
        self.assertIn("knees: none claimed (TCG", text)
        self.assertEqual(text.count("claimed"), 2, text)

    def test_footer_stays_within_its_lines(self):
        from plots.benches.tlbreach import FOOTER_LINES, FOOTER_WIDTH, footer
        from plots.parts import Section
        # Many curves with knees under hardware timing, a long model line.
        many = Section("t", "n", [], [["backing%d" % i, "2 MiB", "4 KiB", "91..108 (364 KiB)",
                                       "+1.60 ns", "2048..2435 (8 MiB)", "+20.0 ns", "", ""]
                                      for i in range(30)], 0)
        meta = {"timing_source": "native",
                "other": {"tlb_geometry": {"why": "x " * 200}}}
        lines = footer(many, meta)
        self.assertLessEqual(len(lines), FOOTER_LINES)
        self.assertTrue(all(len(l) <= FOOTER_WIDTH for l in lines), lines)
        self.assertTrue(lines[0].startswith("knees: backing0 4 KiB: L1 91..108"))
        self.assertIn("no geometry", lines[-2])
        tcg = footer(many, dict(meta, timing_source="tcg"))
        self.assertEqual(tcg[0], "knees: none claimed (TCG: emulated timing, not hardware)")

    def test_no_model_named_in_words(self):
        why = ("auto: no preset fits AuthenticAMD-15-6B-1 (perf model none, PMU cpu), and its "
               "CPUID TLB leaves are not used on their own (under hypervisor TCGTCGTCGTCG, "
               "which may rewrite or hide them)")
        run = self.make_run("tcg", other={"tlb_geometry": {"name": None, "why": why}})
        out = self.render(run)
        self.assertIn("no preset fits AMD CPU (family 15 model 107, stepping 1)", out)
        self.assertIn("(under TCG emulation (QEMU), which", out)
        self.assertNotIn("AuthenticAMD", out)
        self.assertNotIn("TCGTCG", out)

    def test_by_hand_is_silent(self):
        run = self.make_run("kvm")
        out = os.path.join(self.tmp, "byhand")
        p = subprocess.run(["gnuplot", "-c", os.path.join(PLOTS, "tlbreach.gp"),
                            os.path.join(run, "tlbreach.csv"), out],
                           capture_output=True, text=True)
        self.assertEqual((p.returncode, p.stdout + p.stderr), (0, ""))
        self.assertIn("unlabelled", svg_text(out + ".svg"))


if __name__ == "__main__":
    unittest.main()
