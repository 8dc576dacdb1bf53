# SPDX-License-Identifier: GPL-2.0
"""The summary's numbers (the plot modules' sections, plots/benches/), worked out by hand
from small CSVs written here: which working set each table reads, medians,
the sign of the walks saved, the fault and setup ratios, the 4x-LLC rule
and the section order.  No gnuplot: the sections are computed directly, so
this runs in well under a second.  Run by tests/plots/test_plots.py (make
test-plots) or alone: python3 -m unittest tests.plots.test_summary_plot"""
import csv
import os
import shutil
import tempfile
import unittest

from tests.plots.test_plots import CONTRACT  # sets BENCH_CONTRACT first
from bench import contract
from plots import render

MIB = 1 << 20
CHASE = contract.load(CONTRACT).bench("chase")["columns"]
FAULT = contract.load(CONTRACT).bench("fault")["columns"]
STREAMK = contract.load(CONTRACT).bench("streamk")["columns"]


def write(path, columns, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, columns, restval="")
        w.writeheader()
        w.writerows(rows)


def chase(backing, kb, wss, ns, walks, model, lo=None, hi=None):
    return {"backing": backing, "page_kb": kb, "wss_bytes": wss,
            "ns_per_access": ns, "ns_min": lo if lo is not None else ns,
            "ns_max": hi if hi is not None else ns, "walks_per_1k": walks,
            "model_walks_per_1k": model, "hop": "line"}


# devzero (the 4 KB baseline) reaches 4 MiB, three repetitions there;
# devhugetlb goes on to 8 MiB alone; thp's 16 MiB row is NaN; anon4k is a
# second 4 KB backing.  walks_per_1k is measured, model_walks_per_1k set
# apart from it so a table reading the wrong column shows.
CHASE_ROWS = [
    chase("devzero", 4, MIB, 10, 4, 40),
    chase("devzero", 4, 4 * MIB, 20, 10, 100, 18, 40),
    chase("devzero", 4, 4 * MIB, 30, 10, 100, 28, 50),
    chase("devzero", 4, 4 * MIB, 25, 10, 100, 22, 45),
    chase("thp", 2048, MIB, 8, 1, 30),
    chase("thp", 2048, 4 * MIB, 12, 2, 60),
    chase("thp", 2048, 16 * MIB, "nan", "nan", "nan"),
    chase("devhugetlb", 2048, MIB, 7, 0.5, 20),
    chase("devhugetlb", 2048, 4 * MIB, 11, 1, 50),
    chase("devhugetlb", 2048, 8 * MIB, 13, 1.5, 70),
    chase("anon4k", 4, MIB, 9, 3, 35),
]


def fault(backing, kb, mode, us_per_mb="", faults_per_mb="", us_per_call="",
          prepare=""):
    return {"backing": backing, "page_kb": kb, "mode": mode,
            "us_per_mb": us_per_mb, "faults_per_mb": faults_per_mb,
            "size_bytes": 4 * MIB, "us_per_call": us_per_call,
            "prepare_us_per_call": prepare}


FAULT_ROWS = [
    fault("devzero", 4, "demand", 200, 256), fault("devzero", 4, "populate", 100, 256),
    fault("thp", 2048, "demand", 50, 0.5), fault("thp", 2048, "populate", 40, 0.25),
    fault("devhugetlb", 2048, "demand", 40, 0.5),
    fault("devhugetlb", 2048, "populate", 30, 0.5),
    # setup: prepare and mmap + munmap per call; the demand row's prepare
    # (99) is another mode's and must not enter the setup section
    fault("devhugetlb", 2048, "setup", us_per_call=10, prepare=2),
    fault("devhugetlb", 2048, "demand", 40, 0.5, prepare=99),
    fault("maphugetlb", 2048, "setup", us_per_call=20, prepare=0.5),
    # a run from before prepare was timed: no total, no ratio
    fault("hugetlbfs", 2048, "setup", us_per_call=30),
]


def streamk(backing, x):
    return [{"backing": backing, "page_kb": 4, "wss_bytes": 96 * MIB,
             "kernel": k, "mb_per_s": 1000, "array_bytes": 32 * MIB,
             "llc_x": x} for k in ("copy", "scale", "add", "triad")]


class SummaryNumbers(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.render = render
        cls.tmp = tempfile.mkdtemp(prefix="summary-test-")
        write(os.path.join(cls.tmp, "chase.csv"), CHASE, CHASE_ROWS)
        write(os.path.join(cls.tmp, "fault.csv"), FAULT, FAULT_ROWS)
        write(os.path.join(cls.tmp, "streamk.csv"), STREAMK,
              streamk("devzero", 3.0) + streamk("thp", 4.0))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def sections(self, source="kvm"):
        """Every plot module's sections of the run, in the summary's order."""
        r = self.render
        run = r.Run(self.tmp, {"timing_source": source})
        for name in ("chase", "fault"):
            self.assertIsNone(run.table(name).problem)
        secs = r.collect(run)[1]
        return {s.title.split(" (")[0].split(",")[0]: s.rows
                for s in secs}, [s.title for s in secs]

    def test_tlb_evidence_leads_then_hardware_latency(self):
        # the walks saved lead whatever the timing; hardware latency
        # comes next, before the fault cost
        for source in ("kvm", "native", "tcg"):
            _, titles = self.sections(source)
            self.assertTrue(titles[0].startswith("Page walks saved"), titles)
            lat = [i for i, t in enumerate(titles) if t.startswith("Latency")][0]
            fault = [i for i, t in enumerate(titles) if t.startswith("Fault cost")][0]
            self.assertEqual(lat < fault, source != "tcg", (source, titles))

    def test_latency_at_each_largest_working_set_median(self):
        rows = self.sections()[0]["Latency at the largest working set"]
        # contract order; devzero's median of 20, 30, 25 and of its min
        # and max columns; thp's NaN row at 16 MiB is no value
        self.assertEqual(rows, [
            ["devzero", "4 MiB", "25.0 ns", "22.0..45.0"],
            ["thp", "4 MiB", "12.0 ns", "12.0..12.0"],
            ["devhugetlb", "8 MiB", "13.0 ns", "13.0..13.0"],
            ["anon4k", "1 MiB", "9.00 ns", "9.00..9.00"]])

    def test_walks_saved_against_the_baseline(self):
        rows = self.sections()[0]["Page walks saved against devzero"]
        # at the largest size each shares with devzero (4 MiB), measured
        # walks: devzero 10, thp 2 (8 saved, 80 %), devhugetlb 1 (9, 90 %);
        # anon4k has 4 KB pages, nothing to save
        self.assertEqual(rows, [
            ["thp", "4 MiB", "10.0", "2.00", "8.00", "80%", "measured"],
            ["devhugetlb", "4 MiB", "10.0", "1.00", "9.00", "90%", "measured"]])

    def test_fault_cost_ratio_and_counts(self):
        secs = self.sections()[0]
        # demand us_per_mb over devzero's demand (200)
        self.assertEqual(secs["Fault cost relative to devzero"], [
            ["devzero", "200 us/MB", "100 us/MB", "1.00x"],
            ["thp", "50.0 us/MB", "40.0 us/MB", "0.25x"],
            ["hugetlbfs", "n/a", "n/a", "n/a"],
            ["devhugetlb", "40.0 us/MB", "30.0 us/MB", "0.20x"],
            ["maphugetlb", "n/a", "n/a", "n/a"]])
        self.assertEqual(secs["Faults per MB"], [
            ["devzero", "256", "256"], ["thp", "0.50", "0.25"], ["hugetlbfs", "n/a", "n/a"],
            ["devhugetlb", "0.50", "0.50"], ["maphugetlb", "n/a", "n/a"]])
        # totals: devhugetlb 2 + 10 = 12, maphugetlb 0.5 + 20 = 20.5, and
        # 20.5 / 12 = 1.708
        self.assertEqual(secs["Setup cost of the hugetlb backings against devhugetlb"], [
            ["hugetlbfs", "n/a", "30.0 us/call", "n/a", "n/a"],
            ["devhugetlb", "2.00 us/call", "10.0 us/call", "12.0 us/call", "1.00x"],
            ["maphugetlb", "0.50 us/call", "20.0 us/call", "20.5 us/call", "1.71x"]])

    def test_streamk_llc_rule(self):
        r = self.render
        run = r.Run(self.tmp, {"timing_source": "native"})
        sec = r.benches.module("streamk").section_of(run.table("streamk"), run.meta)
        self.assertEqual(sec.header[-1], "4x LLC rule")
        self.assertEqual([(row[0], row[1], row[-1]) for row in sec.rows], [
            ("devzero", "32 MiB", "not STREAM-valid (3.00x LLC)"),
            ("thp", "32 MiB", "met")])

    def test_mlp_per_chain_latency(self):
        # at each backing's largest working set: ns_per_access and, in
        # brackets, chain_ns (the time one chain takes per step)
        rows = [{"backing": "devzero", "wss_bytes": str(w), "chains": str(n),
                 "ns_per_access": str(v), "chain_ns": str(v * n)}
                for w, n, v in ((MIB, 1, 50.0), (4 * MIB, 1, 80.0),
                                (4 * MIB, 2, 45.0), (4 * MIB, 4, 25.0))]
        table = type("Rows", (), {"rows": rows})()
        sec = self.render.benches.module("mlp").section_of(table, {"timing_source": "kvm"})
        header, out = sec.header, sec.rows
        self.assertEqual(header, ["backing", "working set", "1 chain",
                                  "2 chains", "4 chains"])
        self.assertEqual(out, [["devzero", "4 MiB", "80.0 ns (80.0)",
                                "45.0 ns (90.0)", "25.0 ns (100)"]])
        # emulated time says so in the title, hardware time does not
        tcg = self.render.benches.module("mlp").section_of(table, {"timing_source": "tcg"})
        self.assertIn("not what a CPU does", tcg.title)
        self.assertNotIn("not what a CPU does", sec.title)

    def test_setup_ratio_against_devhugetlb_of_the_same_page_size(self):
        # 1 GB rows against devhugetlb-1G (100 + 10 = 110), 2 MB rows
        # against devhugetlb (10 + 2 = 12): 220 / 110 = 2.00, not 220 / 12
        rows = FAULT_ROWS + [
            fault("devhugetlb-1G", 1048576, "setup", us_per_call=100, prepare=10),
            fault("maphugetlb-1G", 1048576, "setup", us_per_call=220, prepare=0)]
        d = tempfile.mkdtemp(prefix="summary-1g-")
        self.addCleanup(shutil.rmtree, d)
        write(os.path.join(d, "fault.csv"), FAULT, rows)
        run = self.render.Run(d, {"timing_source": "kvm"})
        secs = {s.title.split(" (")[0]: s.rows for s in self.render.collect(run)[1]}
        got = {r[0]: r[-1] for r in
               secs["Setup cost of the hugetlb backings against devhugetlb"]}
        self.assertEqual((got["devhugetlb-1G"], got["maphugetlb-1G"]), ("1.00x", "2.00x"))
        self.assertEqual(got["maphugetlb"], "1.71x")

    def test_a_hop_without_counters_is_modelled(self):
        # the line hop counted walks, the page hop did not: its section is
        # the model's, whatever the other hop had
        rows = [dict(r, hop=h, walks_per_1k=r["walks_per_1k"] if h == "line" else "")
                for r in CHASE_ROWS for h in ("line", "page")]
        d = tempfile.mkdtemp(prefix="summary-hops-")
        self.addCleanup(shutil.rmtree, d)
        write(os.path.join(d, "chase.csv"), CHASE, rows)
        run = self.render.Run(d, {"timing_source": "kvm"})
        titles = [s.title for s in self.render.collect(run)[1]
                  if s.title.startswith("Page walks saved")]
        line = [t for t in titles if "hop line" in t]
        page = [t for t in titles if "hop page" in t]
        self.assertTrue(line and page, titles)
        self.assertIn("(measured", line[0])
        self.assertIn("(MODEL, not measured)", page[0])


class Marks(unittest.TestCase):
    def test_thp_fallbacks_are_summed(self):
        # rows that fell back 3 and 5 times: 8 ranges, not 2 rows
        rows = [{"thp_fallbacks": "3"}, {"thp_fallbacks": "0"}, {"thp_fallbacks": "5"}]
        fs = type("Rows", (), {"rows": rows})()
        self.assertIn("thp: 8 2 MB ranges fell back to 4 KB pages (thp_fallbacks)",
                      render.benches.module("faultscale").marks(fs))


class Header(unittest.TestCase):
    def test_a_column_the_contract_does_not_have_is_refused(self):
        d = tempfile.mkdtemp(prefix="summary-header-")
        self.addCleanup(shutil.rmtree, d)
        write(os.path.join(d, "fault.csv"), FAULT + ["from_another_layout"], FAULT_ROWS)
        t = render.Run(d, {"timing_source": "kvm"}).table("fault")
        self.assertIn("header is not the contract's columns", t.problem or "")


if __name__ == "__main__":
    unittest.main()
