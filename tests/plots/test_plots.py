#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Tests for plots/: render the fixture runs and check what comes out.

    python3 -m tests.plots.test_plots        (or: make test-plots)

The fixtures under tests/plots/fixture/ are copied to a temporary folder and
rendered there; the committed fixtures are never written.  fixture/tcg is a
TCG guest without hardware counters and with every backing; fixture/kvm is a
KVM guest with dTLB counters, guest RAM on host huge pages and both hops.
Both are pinned to the contract in tests/fixture/contract.json (columns,
backing order and colours), so bench/'s tables can change without them.
The last line printed is "N passed, N failed".
"""
import csv
import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PLOTS = os.path.join(REPO, "plots")
FIXTURE = os.path.join(HERE, "fixture")
# plots/render.py as a module; the tests run from the repository root
RENDER = [sys.executable, "-m", "plots.render"]
CONTRACT = os.path.join(REPO, "tests", "fixture", "contract.json")
os.environ["BENCH_CONTRACT"] = CONTRACT
from bench import contract  # noqa: E402
from tests import harness  # noqa: E402

FIGURES = ["latency", "tlb", "tlb-model", "bandwidth", "faults", "streamk"]
TIMED = ["latency", "bandwidth", "faults", "streamk"]  # drawn from timings
TCG_NOTE = "TCG: emulated timing, not hardware"
ICOUNT_NOTE = "instruction-count time (QEMU -icount), not hardware"
NO_COUNTERS = "no hardware counters on this host"
SVG_NS = "{http://www.w3.org/2000/svg}"


def edit_meta(run, **kv):
    """Sets keys of run's meta.json."""
    path = os.path.join(run, "meta.json")
    with open(path) as f:
        m = json.load(f)
    m.update(kv)
    with open(path, "w") as f:
        json.dump(m, f)


def write_csv(path, columns, rows):
    """Writes a CSV as the runner does: the header, then rows."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(columns)
        w.writerows(rows)


def contract_with(path, bench):
    """Writes CONTRACT plus bench's entry to path; returns path."""
    with open(CONTRACT) as f:
        data = json.load(f)
    data["benches"].append(bench)
    with open(path, "w") as f:
        json.dump(data, f)
    return path


def render(run, *extra):
    p = subprocess.run(RENDER + [run, "--no-link", *extra],
                       capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def backings(csv_path):
    with open(csv_path, newline="") as f:
        return sorted({r["backing"] for r in csv.DictReader(f)})


def svg_text(path):
    """All text of an SVG: <text> content and <title> of each plot group."""
    root = ET.parse(path).getroot()
    return "\n".join("".join(e.itertext()) for e in root.iter()
                     if e.tag in (SVG_NS + "text", SVG_NS + "title"))


def heading_lines(path):
    """(y, text) of each line centred on the figure: its heading (title,
    caption, timing note and what a figure adds under them), top first."""
    root = ET.parse(path).getroot()
    mid = float(root.get("viewBox").split()[2]) / 2
    out = []
    for g in root.iter(SVG_NS + "g"):
        m = re.match(r"translate\(([-\d.]+),([-\d.]+)\)", g.get("transform") or "")
        t = g.find(SVG_NS + "text")
        if m and t is not None and g.get("text-anchor") == "middle" \
                and abs(float(m.group(1)) - mid) < 1:
            out.append((float(m.group(2)), "".join(t.itertext())))
    return sorted(out)


def series_titles(path):
    """Titles of the plotted series (gnuplot's <g id="gnuplot_plot_N"><title>)."""
    root = ET.parse(path).getroot()
    out = set()
    for g in root.iter(SVG_NS + "g"):
        if g.get("id", "").startswith("gnuplot_plot_"):
            t = g.find(SVG_NS + "title")
            # untitled series are called gnuplot_plot_N: not a backing
            if t is not None and t.text and not t.text.startswith("gnuplot_plot_"):
                out.add(t.text)
    return out


class Rendered(unittest.TestCase):
    """Both fixtures rendered once into a temporary copy."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="plots-test-")
        cls.runs, cls.results = {}, {}
        for name in ("tcg", "kvm"):
            run = os.path.join(cls.tmp, name)
            shutil.copytree(os.path.join(FIXTURE, name), run)
            cls.runs[name] = run
            cls.results[name] = render(run)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def fig(self, run, name, ext="svg"):
        return os.path.join(self.runs[run], f"{name}.{ext}")

    def meta(self, run):
        with open(os.path.join(self.runs[run], "meta.json")) as f:
            return json.load(f)

    # -- every figure, no gnuplot output

    def test_render_succeeds_silently(self):
        for run, (rc, out, err) in self.results.items():
            with self.subTest(run=run):
                self.assertEqual(rc, 0, out + err)
                self.assertEqual(err, "", "gnuplot or render wrote to stderr")

    def test_every_figure_in_svg_and_png(self):
        for run in self.runs:
            for name in FIGURES:
                with self.subTest(run=run, figure=name):
                    ET.parse(self.fig(run, name))  # well-formed SVG
                    with open(self.fig(run, name, "png"), "rb") as f:
                        self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")

    def test_each_script_by_hand_is_silent(self):
        # gnuplot -c plots/X.gp DATA OUT, no labels: nothing on stdout/stderr,
        # and the backings are found in the data.
        run = self.runs["tcg"]
        data = {"latency": "chase.csv", "tlb": "chase.csv", "tlb-model": "chase.csv",
                "bandwidth": "stream.csv", "faults": "fault.csv",
                "streamk": "streamk.csv"}
        for name, csvname in data.items():
            with self.subTest(figure=name):
                out = os.path.join(self.tmp, "byhand-" + name)
                p = subprocess.run(["gnuplot", "-c", os.path.join(PLOTS, name + ".gp"),
                                    os.path.join(run, csvname), out],
                                   capture_output=True, text=True)
                self.assertEqual((p.returncode, p.stdout + p.stderr), (0, ""))
                self.assertTrue(os.path.getsize(out + ".png") > 0)
                self.assertIn("unlabelled", svg_text(out + ".svg"))
                if name == "tlb-model":
                    self.assertIn("model geometry not recorded", svg_text(out + ".svg"))
                if name in ("latency", "tlb-model", "bandwidth", "faults", "streamk"):
                    self.assertLessEqual(set(backings(os.path.join(run, csvname))),
                                         series_titles(out + ".svg"))

    # -- a series for every backing present in the data

    def check_series(self, run, name, csvname):
        want = set(backings(os.path.join(self.runs[run], csvname)))
        self.assertTrue(want)
        got = series_titles(self.fig(run, name))
        self.assertLessEqual(want, got, f"{name}: backings without a series")

    def test_series_per_backing(self):
        for run in self.runs:
            for name, csvname in (("latency", "chase.csv"), ("tlb-model", "chase.csv"),
                                  ("bandwidth", "stream.csv"), ("faults", "fault.csv"),
                                  ("streamk", "streamk.csv")):
                with self.subTest(run=run, figure=name):
                    self.check_series(run, name, csvname)
        self.check_series("kvm", "tlb", "chase.csv")  # measured counters

    # -- labels

    def test_tcg_label_on_timed_figures(self):
        for name in TIMED:
            with self.subTest(figure=name):
                self.assertIn(TCG_NOTE, svg_text(self.fig("tcg", name)))
                self.assertNotIn(TCG_NOTE, svg_text(self.fig("kvm", name)))

    def test_caption_names_host_accel_kernel_series_profile(self):
        for run in self.runs:
            m = self.meta(run)
            for name in FIGURES:
                with self.subTest(run=run, figure=name):
                    text = svg_text(self.fig(run, name))
                    for want in (m["host_cpu"], "accelerator: " + m["qemu"]["accel"],
                                 m["kernel"], m["series_id"], "profile: " + m["profile"]):
                        self.assertIn(want, text)
                    self.assertIn("source: ", text)

    def test_no_counters_message_and_reason(self):
        text = svg_text(self.fig("tcg", "tlb"))
        self.assertIn(NO_COUNTERS, text)
        reason = self.meta("tcg")["counters"]["page-walks"]["reason"]
        self.assertIn(reason, text)
        self.assertEqual(series_titles(self.fig("tcg", "tlb")), set())
        self.assertNotIn(NO_COUNTERS, svg_text(self.fig("kvm", "tlb")))

    def test_model_is_titled_as_model_with_geometry(self):
        tcg = svg_text(self.fig("tcg", "tlb-model"))
        self.assertIn("MODEL, not measured", tcg)
        self.assertIn("MODEL: skylake geometry named by MODEL=/--model, not measured", tcg)
        # kvm's meta.json has bench/'s tlb_model key instead of model
        kvm = svg_text(self.fig("kvm", "tlb-model"))
        self.assertIn("model geometry: zen3 (meta.json tlb_model", kvm)

    def test_one_set_of_chase_figures_per_hop(self):
        for name in ("latency", "tlb", "tlb-model"):
            with self.subTest(figure=name):
                line = svg_text(self.fig("kvm", name))
                page = svg_text(self.fig("kvm", name + "-page"))
                self.assertIn("hop = line: one access per 64 B line", line)
                self.assertIn("hop = page: one access per 4 KB page", page)
                self.assertIn("rows with hop = page", page)
                self.assertFalse(os.path.exists(self.fig("tcg", name + "-page")))
        self.check_series("kvm", "latency-page", "chase.csv")

    # -- summary

    def test_index_html(self):
        for run in self.runs:
            with self.subTest(run=run):
                with open(os.path.join(self.runs[run], "index.html")) as f:
                    page = f.read()
                html.parser.HTMLParser().feed(page)
                for name in FIGURES:
                    self.assertIn(f'src="{name}.svg"', page)
                for want in ("Run metadata", "Latency at the largest working set",
                             "Page walks saved against devzero",
                             "Fault cost relative to devzero",
                             "Setup cost of the hugetlb backings against devhugetlb",
                             self.meta(run)["run_id"]):
                    self.assertIn(want, page)
        with open(os.path.join(self.runs["tcg"], "index.html")) as f:
            page = f.read()
        self.assertIn(TCG_NOTE, page)
        # the first headline is TLB evidence, the model named by its label
        first = page.index("<h3>")
        self.assertEqual(page[first:page.index("</h3>", first)],
                         "<h3>Page walks saved against devzero, hop line (MODEL: skylake "
                         "geometry named by MODEL=/--model, not measured)")
        self.assertIn("memfd-1G skipped", page)
        with open(os.path.join(self.runs["kvm"], "index.html")) as f:
            page = f.read()
        for hop in ("line", "page"):  # kvm has both hop kinds
            self.assertIn(f"Page walks saved against devzero, hop {hop} (measured)", page)

    def test_terminal_summary(self):
        out = self.results["tcg"][1]
        for want in ("Latency at the largest working set", "devzero", "MODEL",
                     "demand vs devzero", "vs devhugetlb", TCG_NOTE):
            self.assertIn(want, out)
        self.assertIn("measured", self.results["kvm"][1])

    def test_summary_txt_is_the_printed_summary(self):
        for run in self.runs:
            with self.subTest(run=run):
                with open(os.path.join(self.runs[run], "summary.txt")) as f:
                    text = f.read()
                self.assertIn("Latency at the largest working set", text)
                # The file is the summary the terminal showed, word for word.
                self.assertIn(text, self.results[run][1])
                self.assertIn("summary: " + os.path.join(os.path.realpath(self.runs[run]),
                                                        "summary.txt"), self.results[run][1])

    def test_committed_fixture_untouched(self):
        for name in ("tcg", "kvm"):
            self.assertEqual(sorted(os.listdir(os.path.join(FIXTURE, name))),
                             ["chase.csv", "fault.csv", "meta.json", "stream.csv",
                              "streamk.csv"])


class Variants(unittest.TestCase):
    """Edge cases, each on its own copy of the TCG fixture."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="plots-test-")
        self.run = os.path.join(self.tmp, "run")
        shutil.copytree(os.path.join(FIXTURE, "tcg"), self.run)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def edit_meta(self, **kv):
        edit_meta(self.run, **kv)

    def test_missing_csvs_are_skipped_with_a_note(self):
        os.remove(os.path.join(self.run, "stream.csv"))
        os.remove(os.path.join(self.run, "fault.csv"))
        rc, out, err = render(self.run)
        self.assertEqual((rc, err), (0, ""))
        self.assertTrue(os.path.exists(os.path.join(self.run, "latency.svg")))
        self.assertFalse(os.path.exists(os.path.join(self.run, "bandwidth.svg")))
        self.assertIn("bandwidth skipped: stream.csv missing", out)
        with open(os.path.join(self.run, "index.html")) as f:
            self.assertIn("faults skipped: fault.csv missing", f.read())

    def test_icount_label(self):
        self.edit_meta(timing_source="icount")
        rc, out, err = render(self.run)
        self.assertEqual((rc, err), (0, ""))
        text = svg_text(os.path.join(self.run, "latency.svg"))
        self.assertIn(ICOUNT_NOTE, text)
        self.assertNotIn(TCG_NOTE, text)

    def test_native_run_without_meta_extras(self):
        path = os.path.join(self.run, "meta.json")
        with open(path) as f:
            m = json.load(f)
        for k in ("tlb_model", "counters", "backings"):
            m.pop(k)
        m.update(qemu=None, mode="native", timing_source="native")
        with open(path, "w") as f:
            json.dump(m, f)
        rc, out, err = render(self.run)
        self.assertEqual((rc, err), (0, ""))
        self.assertIn("accelerator: none (native)", svg_text(os.path.join(self.run, "latency.svg")))
        self.assertIn("model geometry: skylake (from chase.csv model_preset)",
                      svg_text(os.path.join(self.run, "tlb-model.svg")))

    def test_backing_missing_some_rows(self):
        # devzero lost its setup rows and its stride rows: still no warnings.
        for name, drop in (("fault.csv", "setup"), ("stream.csv", "stride")):
            path = os.path.join(self.run, name)
            with open(path) as f:
                lines = f.readlines()
            with open(path, "w") as f:
                f.writelines(l for l in lines
                             if not (l.startswith("devzero,") and f",{drop}," in l))
        rc, out, err = render(self.run)
        self.assertEqual((rc, err), (0, ""))

    def test_zero_counts_and_empty_panels(self):
        # As bench/ writes them: populate takes 0 counted faults, small sweeps
        # model no walks at all, and no backing has stride rows.
        def rewrite(name, fix):
            path = os.path.join(self.run, name)
            with open(path, newline="") as f:
                rows = list(csv.DictReader(f))
                hdr = list(rows[0].keys())
            with open(path, "w", newline="") as f:
                w = csv.DictWriter(f, hdr, lineterminator="\n")
                w.writeheader()
                w.writerows(r for r in map(fix, rows) if r)
        rewrite("fault.csv", lambda r: dict(r, faults_per_mb="0.000")
                if r["mode"] == "populate" else r)
        rewrite("chase.csv", lambda r: dict(r, model_walks_per_1k="0.000"))
        rewrite("stream.csv", lambda r: None if r["kernel"] == "stride" else r)
        rc, out, err = render(self.run)
        self.assertEqual((rc, err), (0, ""))
        self.assertIn("no stride rows", svg_text(os.path.join(self.run, "bandwidth.svg")))

    def test_summary_under_tcg_leads_with_what_holds_there(self):
        # TCG latency is emulated: walks and faults first, latency last and
        # titled as emulated; with hardware timing latency follows the walks.
        rc, out, err = render(self.run)
        self.assertEqual((rc, err), (0, ""))
        walks = out.index("Page walks saved against devzero")
        counts = out.index("Faults per MB (getrusage count)")
        lat = out.index("Latency at the largest working set")
        self.assertLess(walks, lat)
        self.assertLess(counts, lat)
        self.assertIn("TCG: emulated timing, not hardware: not what a CPU does", out)
        self.assertIn("latency here is emulated, so this summary leads with page walks", out)
        self.edit_meta(timing_source="icount")
        rc, out, err = render(self.run)
        self.assertIn("Fault cost relative to devzero (instruction-count time of the "
                      "kernel's fault path)", out)
        self.edit_meta(timing_source="native", qemu=None, mode="native")
        rc, out, err = render(self.run)
        self.assertLess(out.index("Page walks saved against devzero"),
                        out.index("Latency at the largest working set"))
        self.assertLess(out.index("Latency at the largest working set"),
                        out.index("Fault cost relative to devzero"))
        self.assertNotIn("not what a CPU does", out)

    def test_heading_lines_never_overlap(self):
        # KVM on a VM: a three-line caption and a timing note below it.
        with open(os.path.join(self.run, "meta.json")) as f:
            machine = json.load(f)["machine"]
        self.edit_meta(timing_source="kvm", machine=dict(machine, hypervisor=True),
                       qemu={"version": "7.2", "accel": "kvm", "icount": False})
        rc, out, err = render(self.run)
        self.assertEqual((rc, err), (0, ""))
        for name in FIGURES:
            with self.subTest(figure=name):
                lines = [l for l in heading_lines(os.path.join(self.run, name + ".svg"))
                         if l[0] < 160]
                self.assertGreaterEqual(len(lines), 5, lines)
                for (y0, t0), (y1, t1) in zip(lines, lines[1:]):
                    self.assertGreaterEqual(y1 - y0, 12, (t0, t1))

    def test_native_run_on_a_vm_says_so_in_every_figure(self):
        with open(os.path.join(self.run, "meta.json")) as f:
            machine = json.load(f)["machine"]
        self.edit_meta(timing_source="native", qemu=None, mode="native",
                       machine=dict(machine, hypervisor=True))
        rc, out, err = render(self.run)
        self.assertEqual((rc, err), (0, ""))
        for name in FIGURES:
            with self.subTest(figure=name):
                self.assertIn(contract.HYPERVISOR_NOTE,
                              svg_text(os.path.join(self.run, name + ".svg")))
        self.assertIn(contract.HYPERVISOR_NOTE, out)
        # a TCG guest's timings do not walk the host's tables: no note
        self.edit_meta(timing_source="tcg", mode="guest",
                       qemu={"version": "7.2", "accel": "tcg", "icount": False})
        render(self.run)
        self.assertNotIn(contract.HYPERVISOR_NOTE,
                         svg_text(os.path.join(self.run, "latency.svg")))

    def test_colours_come_from_the_contract(self):
        with open(CONTRACT) as f:
            data = json.load(f)
        for b in data["backings"]:
            if b["name"] == "devhugetlb":
                b["colour"] = "#123456"
        path = os.path.join(self.tmp, "contract.json")
        with open(path, "w") as f:
            json.dump(data, f)
        p = subprocess.run(RENDER + [self.run, "--no-link"],
                           capture_output=True, text=True,
                           env=dict(os.environ, BENCH_CONTRACT=path))
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(self.run, "latency.svg")) as f:
            self.assertRegex(f.read(), r"rgb\(\s*18,\s*52,\s*86\)")

    def test_model_geometry_as_bench_wrote_it(self):
        self.edit_meta(other={"tlb_geometry": {
            "name": "skylake;policy=plru", "spec": "l1:4k:64:4:plru;l2:4k+2m:1536:12:plru",
            "source": "Intel SDM", "l1": [], "l2": [], "default_policy": "lru",
            "counts": "model, not measured", "leaves_out": "page-walk caches"}})
        rc, out, err = render(self.run)
        self.assertEqual((rc, err), (0, ""))
        text = svg_text(os.path.join(self.run, "tlb-model.svg"))
        # after the run's label (meta.json tlb_model)
        self.assertIn("model geometry: MODEL: skylake geometry named by MODEL=/--model, "
                      "not measured; skylake;policy=plru = l1:4k:64:4:plru;"
                      "l2:4k+2m:1536:12:plru (source: Intel SDM); the model leaves out "
                      "page-walk caches", text.replace("\n", " "))

    def test_no_model_names_why(self):
        # --model auto on a CPU no geometry fits: empty model columns and
        # the reason, in the summary and the notes, never another CPU's
        why = "auto: no preset fits Zhaoxin-7-1B (perf model none, PMU cpu)"
        self.edit_meta(other={"tlb_geometry": {"name": None, "why": why}})
        path = os.path.join(self.run, "chase.csv")
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, list(rows[0].keys()), lineterminator="\n")
            w.writeheader()
            w.writerows(dict(r, model_walks_per_1k="", model_l1_misses_per_1k="",
                             model_preset="none") for r in rows)
        rc, out, err = render(self.run)
        self.assertEqual((rc, err), (0, ""))
        self.assertIn("no TLB model: " + why, out)
        self.assertIn("tlb-model skipped: chase.csv has no model values (no TLB model: "
                      + why, out)

    def drop_column(self, name, column):
        """name's CSV without column."""
        path = os.path.join(self.run, name)
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, [c for c in rows[0] if c != column], lineterminator="\n",
                               extrasaction="ignore")
            w.writeheader()
            w.writerows(rows)

    def test_csv_from_another_contract_is_refused_with_its_columns(self):
        self.drop_column("chase.csv", "ns_min")
        rc, out, err = render(self.run)
        self.assertEqual(rc, 0)
        self.assertIn("latency, tlb and tlb-model skipped: chase.csv header is not the "
                      "contract's columns", out)

    def test_chase_recorded_before_its_faults_column_is_drawn(self):
        # results/kept-* runs predate chase.csv's faults column: the chase
        # module gives it a default, and its figures and sections are there
        self.drop_column("chase.csv", "faults")
        rc, out, err = render(self.run)
        self.assertEqual((rc, err), (0, ""))
        self.assertIn("figures: latency, tlb, tlb-model,", out)
        self.assertIn("Latency at the largest working set", out)

    def test_one_page_size_only_is_drawn_silently(self):
        # A run of 4 KB backings only: every fault count is 256 per MB, an
        # empty range on the log axis unless the figure widens it.
        path = os.path.join(self.run, "fault.csv")
        with open(path) as f:
            lines = f.readlines()
        with open(path, "w") as f:
            f.writelines([lines[0]] + [l for l in lines[1:] if l.startswith("devzero,")])
        rc, out, err = render(self.run)
        self.assertEqual((rc, err), (0, ""))
        text = svg_text(os.path.join(self.run, "faults.svg"))
        self.assertNotIn("no setup rows", text)
        self.assertIn("us_per_call", text)

    def test_latest_link(self):
        link = os.path.join(self.tmp, "latest")
        p = subprocess.run(RENDER + [self.run, "--link", link],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(os.path.realpath(link), os.path.realpath(self.run))
        self.assertTrue(os.path.exists(os.path.join(link, "index.html")))


class StreamK(unittest.TestCase):
    """streamk: STREAM's kernels, a figure and a summary section that say
    what the numbers are (the fixtures rendered as Rendered does)."""

    setUpClass = classmethod(Rendered.setUpClass.__func__)
    tearDownClass = classmethod(Rendered.tearDownClass.__func__)
    fig = Rendered.fig

    def test_summary_section_per_backing_with_the_llc_rule(self):
        tcg, kvm = self.results["tcg"][1], self.results["kvm"][1]
        self.assertIn("STREAM kernels, best MB/s (" + TCG_NOTE +
                      ": MB/s here is not the bandwidth of real memory)", tcg)
        self.assertIn("not STREAM-valid (0.12x LLC)", tcg)
        self.assertIn("not STREAM's rule", tcg)
        self.assertIn("STREAM kernels, best MB/s (wall time in a KVM guest (hardware, "
                      "through a virtual machine))  [", kvm)
        for b in backings(os.path.join(self.runs["kvm"], "streamk.csv")):
            self.assertRegex(kvm, r"\n  %s +256 MiB +\d+ MB/s +\d+ MB/s +\d+ MB/s "
                             r"+\d+ MB/s +met\n" % re.escape(b))

    def test_figure_says_not_real_memory_under_tcg_and_the_rule(self):
        text = svg_text(self.fig("tcg", "streamk"))
        self.assertIn("MB/s here is not the bandwidth of real memory", text)
        self.assertIn("below 4x the last-level cache", text)
        self.assertIn("not STREAM-valid", text)
        self.assertNotIn("not STREAM-valid", svg_text(self.fig("kvm", "streamk")))
        for k in ("copy", "scale", "add", "triad"):
            self.assertIn(k, text)
        self.assertNotIn("not the bandwidth of real memory",
                         svg_text(self.fig("kvm", "streamk")))

    def test_stride_is_described_as_what_it_is(self):
        for run in self.runs:
            self.assertIn("best-case page-walk throughput with independent loads",
                          self.results[run][1])
            self.assertIn("not latency", svg_text(self.fig(run, "bandwidth")))

    def test_missing_streamk_csv_is_a_note(self):
        run = os.path.join(self.tmp, "no-streamk")
        shutil.copytree(os.path.join(FIXTURE, "tcg"), run)
        os.remove(os.path.join(run, "streamk.csv"))
        rc, out, err = render(run)
        self.assertEqual((rc, err), (0, ""))
        self.assertIn("streamk skipped: streamk.csv missing", out)
        self.assertFalse(os.path.exists(os.path.join(run, "streamk.svg")))


class RealProg(unittest.TestCase):
    """realprog.csv (the real-program step) beside the tcg fixture's CSVs:
    its figure and summary section; fixture-realprog/realprog.csv has three
    runs each of off, none, thp and maphugetlb, a fourth maphugetlb run
    that fell back to normal pages, and a fourth none run (user_s 99) whose
    output differed: both valid = 0.  Then memcached's rows (the second
    program): one off run (THP by its own -L), three of none and thp, one
    maphugetlb run and a second one marked invalid (smaps disagreed,
    user_s 9.99)."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="plots-realprog-")
        cls.rundir = os.path.join(cls.tmp, "tcg")
        shutil.copytree(os.path.join(FIXTURE, "tcg"), cls.rundir)
        shutil.copy(os.path.join(HERE, "fixture-realprog", "realprog.csv"), cls.rundir)
        cls.rc, cls.out, cls.err = render(cls.rundir, "--strict")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_drawn_silently(self):
        self.assertEqual((self.rc, self.err), (0, ""), self.out)
        self.assertIn("realprog", self.out.split("figures: ")[1].splitlines()[0])
        ET.parse(os.path.join(self.rundir, "realprog.svg"))
        text = svg_text(os.path.join(self.rundir, "realprog.svg"))
        self.assertIn("2048 kB, 100% huge", text)
        self.assertIn("4 kB, 0% huge", text)
        self.assertIn(TCG_NOTE, text)

    def test_summary_medians(self):
        lines = self.out.splitlines()
        i = next(n for n, l in enumerate(lines) if l.startswith("Real program: xz -9 -T1"))
        self.assertIn("16 MiB corpus", lines[i])
        self.assertIn(TCG_NOTE, lines[i])
        rows = {l.split()[0]: l for l in lines[i + 2:i + 6]}
        self.assertEqual(list(rows), ["off", "none", "thp", "maphugetlb"])
        # the headline is user + sys: none's user_s runs 16.404, 16.8,
        # 16.2 with sys_s 0.5, so 16.904, 17.3, 16.7: median 16.9; thp's
        # user 14.0 and user + sys 14.9 (the fixture's sys_s); its fourth
        # run wrote other output: counted, not in the medians.  The
        # working set (resident_kb): none's runs 172900 kB, 168.8 MiB; thp's
        # and maphugetlb's 260096 kB, 254 MiB
        self.assertRegex(rows["none"],
                         r" 3 +168\.8 MiB +16\.9 s \(median; 16\.7\.\.17\.3\) +1\.000x +"
                         r"\S+ s \(median; [^)]*\) +1\.000x +"
                         r"16\.4 s \(median; 16\.2\.\.16\.8\) .* 1$")
        self.assertRegex(rows["thp"], r"2048 kB, 100% huge +3 +254 MiB +14\.9 s .* 0\.880x")
        # its fourth run fell back to 4 kB pages: counted, not in the medians
        self.assertRegex(rows["maphugetlb"],
                         r"2048 kB, 100% huge +3 +254 MiB +14\.5 s \(median; 14\.4\.\.14\.6\) .* 1$")

    def test_wall_column_is_wall_time(self):
        # none's wall_s runs 50.876, 48.1, 49.0 (the invalid fourth left
        # out): median 49.0, which no user_s value comes near
        lines = self.out.splitlines()
        i = next(n for n, l in enumerate(lines) if l.startswith("Real program: xz -9 -T1"))
        none = next(l for l in lines[i + 2:i + 6] if l.split()[0] == "none")
        self.assertIn("49.0 s (median; 48.1..50.9)", none)

    def test_second_program_beside_xz(self):
        """memcached's rows get their own figure and section; xz's keep
        theirs, neither taking the other's rows."""
        text = svg_text(os.path.join(self.rundir, "realprog-memcached.svg"))
        self.assertIn("program = memcached -L -m 308 -t 1", text)
        self.assertIn("2048 kB, 97% huge", text)     # off: memcached's own THP
        self.assertIn("figures: ", self.out)
        self.assertIn("realprog-memcached", self.out.split("figures: ")[1].splitlines()[0])
        self.assertIn("program = xz -9 -T1",
                      svg_text(os.path.join(self.rundir, "realprog.svg")))
        lines = self.out.splitlines()
        i = next(n for n, l in enumerate(lines) if l.startswith("Real program: memcached"))
        self.assertIn("95.4 MiB of values", lines[i])
        rows = {l.split()[0]: l for l in lines[i + 2:i + 6]}
        self.assertEqual(list(rows), ["off", "none", "thp", "maphugetlb"])
        # none's user + sys: 4.702+1.598, 4.8+1.5, 4.6+1.7 = 6.3 each;
        # thp's 4.107+1.965, 4.05+1.85, 4.12+1.88 = 6.072, 5.9, 6.0: median
        # 6.0, 6.0 / 6.3 = 0.952x; wall 8.132, 8.01, 8.05 against none's
        # 8.077, 8.3, 8.1: 8.05 / 8.1 = 0.994x.  maphugetlb's invalid
        # second run (user_s 9.99) is counted, not in its medians.
        self.assertRegex(rows["none"], r"4 kB, 0% huge +3 .* 6\.30 s \(median; 6\.30\.\.6\.30\) +1\.000x")
        self.assertRegex(rows["thp"], r" 3 .* 6\.00 s \(median; 5\.90\.\.6\.07\) +0\.952x +"
                                      r"8\.05 s \(median; 8\.01\.\.8\.13\) +0\.994x")
        self.assertRegex(rows["maphugetlb"], r" 1 .* 3\.99 s \(one run\) .* 1$")
        # xz's section has none of memcached's runs
        j = next(n for n, l in enumerate(lines) if l.startswith("Real program: xz -9 -T1"))
        self.assertNotIn("memcached", "\n".join(lines[j:j + 6]))

    def test_skipped_program_said(self):
        """A program the driver could not run (memcached in a guest kernel
        without unix sockets: its "@meta realprog_skipped") is a note."""
        import types
        from plots.benches import realprog
        why = "memcached not run: this kernel has no unix sockets"
        run = types.SimpleNamespace(path=self.tmp, timing="", notes=[],
                                    meta={"other": {"realprog_skipped": {"memcached": why}}})
        self.assertEqual(realprog.parts(run).sections, [])      # no realprog.csv there
        self.assertEqual(run.notes, ["realprog: " + why])

    def test_one_run_is_not_called_a_median(self):
        from plots.benches.realprog import spread
        self.assertEqual(spread((0.15, 0.15, 0.15), 1), "0.15 s (one run)")
        self.assertEqual(spread((16.4, 16.2, 16.8), 3), "16.4 s (median; 16.2..16.8)")
        self.assertEqual(spread((None, None, None), 0), "n/a")

    def test_absent_without_csv(self):
        run = os.path.join(self.tmp, "kvm")
        shutil.copytree(os.path.join(FIXTURE, "kvm"), run)
        rc, out, err = render(run)
        self.assertEqual(rc, 0, out + err)
        self.assertNotIn("Real program", out)
        self.assertFalse(os.path.exists(os.path.join(run, "realprog.svg")))


class InWords(unittest.TestCase):
    """CPU ids and hypervisor signatures said in words (plots/labels.py)."""

    def test_ids_and_signatures(self):
        from plots.labels import in_words
        self.assertEqual(in_words("fits AuthenticAMD-15-6B-1 (x)"),
                         "fits AMD CPU (family 15 model 107, stepping 1) (x)")
        self.assertEqual(in_words("GenuineIntel-6-8F"), "Intel CPU (family 6 model 143)")
        self.assertEqual(in_words("under hypervisor TCGTCGTCGTCG, which"),
                         "under TCG emulation (QEMU), which")
        self.assertEqual(in_words("under hypervisor KVMKVMKVM"), "under KVM")
        # Words that only look like one are left alone.
        for text in ("GenuineIntel", "Intel-6-8F", "hypervisor unknownsig", "kernel 6.12-1"):
            self.assertEqual(in_words(text), text)


def main(argv):
    """[--failfast] [MODULE...]: make test-plots [ONLY=test_plots,...]"""
    failfast, names = harness.only_args(argv)
    if names:
        return harness.run_unittest(harness.select(HERE, names),
                                    failfast=failfast)
    loader = unittest.defaultTestLoader
    suite = loader.loadTestsFromModule(sys.modules[__name__])
    # a further figure's tests: tests/plots/test_<figure>_plot.py
    suite.addTests(loader.discover(HERE, pattern="test_*_plot.py", top_level_dir=REPO))
    return harness.run_unittest(suite, failfast=failfast)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
