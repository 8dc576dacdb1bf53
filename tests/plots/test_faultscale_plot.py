# SPDX-License-Identifier: GPL-2.0
"""The faultscale figures and summary sections (plots/faultscale.gp,
plots/faultscale-mapped.gp, plots/render.py), on a copy of the TCG fixture with a faultscale.csv
written here.  The contract is tests/fixture/contract.json plus the
faultscale benchmark's entry, pinned below like the fixture's.  Run by
tests/plots/test_plots.py (make test-plots)."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
from tests.plots.test_plots import (CONTRACT, FIXTURE, PLOTS, RENDER, contract_with,  # noqa
                        edit_meta, series_titles, svg_text, write_csv)

COLUMNS = ["backing", "page_kb", "mode", "tasks", "faults_per_s",
           "faults_per_s_per_task", "us_per_fault", "region_bytes",
           "iterations", "faults", "wall_ms", "overlap", "faults_per_s_min",
           "faults_per_s_max", "cv", "reps", "oversubscribed", "cpus",
           "kind", "faults_per_task", "short_window", "start_skew_us",
           "barrier_sleeps", "low_overlap", "thp_fallbacks"]
BENCH = {"name": "faultscale", "binary": "faultscale", "columns": COLUMNS,
         "key": ["backing", "kind", "mode", "tasks", "region_bytes"],
         "metric": "faults_per_s", "lower_is_better": False, "options": []}
BACKINGS = {"devzero": 4, "thp": 2048, "devhugetlb": 2048, "shm": 2048, "memfd": 2048}
KINDS = {"devzero": ["anon"], "thp": ["anon"], "devhugetlb": ["anon"],
         "shm": ["fresh", "shared"], "memfd": ["cow", "shared", "read"]}
# the backings each figure draws: faultscale the kinds that take new
# pages (anon, fresh), faultscale-mapped shared and read
NEW = {"devzero", "thp", "devhugetlb", "shm"}
MAPPED = {"shm", "memfd"}
TCG_SMP = "multi-threaded TCG: one host thread per vCPU (2 vCPUs) on 2 host cores"


def rows():
    out = []
    for b, kb in BACKINGS.items():
        region = 16 << 20
        for kind in KINDS[b]:
            for mode in ("process", "thread"):
                for n in (1, 2, 4):
                    fps = (20000.0 if kb == 4 else 80.0) * min(n, 2) * 0.8
                    faults = n * 2 * region // (kb * 1024)
                    # thp's threads at N=2 ran one after the other
                    low = b == "thp" and mode == "thread" and n == 2
                    overlap = 0.3 if low else 0.9 if n > 1 else 1.0
                    out.append([b, kb, mode, n, fps, fps / n, 1e6 * n / fps, region, 2,
                                faults, 1000.0 * faults / fps, overlap,
                                fps * 0.9, fps * 1.1, 0.05, 3, int(n > 2),
                                ";".join(str(i % 2) for i in range(n)), kind,
                                faults // n, int(kb > 4), 3.5, 0, int(low), 0])
    return out


class FaultscaleFigure(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="plots-faultscale-")
        self.run = os.path.join(self.tmp, "run")
        shutil.copytree(os.path.join(FIXTURE, "tcg"), self.run)
        write_csv(os.path.join(self.run, "faultscale.csv"), COLUMNS, rows())
        self.contract = contract_with(os.path.join(self.tmp, "contract.json"), BENCH)
        self.edit_meta(host_cpus=2, other={"faultscale": {"allowed_cpus": "0;1"}},
                       skipped_points=[{"bench": "faultscale", "backing": "shm",
                                        "point": "mode=thread tasks=4",
                                        "reason": "4 tasks x 16384 kB need 32 pages"}])

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def edit_meta(self, **kv):
        edit_meta(self.run, **kv)

    def render(self, contract=None):
        p = subprocess.run(RENDER + [self.run, "--no-link"],
                           capture_output=True, text=True,
                           env=dict(os.environ, BENCH_CONTRACT=contract or self.contract))
        return p.returncode, p.stdout, p.stderr

    def test_figure_with_a_series_per_backing_and_the_tcg_note(self):
        rc, out, err = self.render()
        self.assertEqual((rc, err), (0, ""))
        svg = os.path.join(self.run, "faultscale.svg")
        self.assertEqual(NEW, series_titles(svg) & set(BACKINGS))
        text = svg_text(svg)
        self.assertIn(TCG_SMP, text)
        self.assertIn("TCG: emulated timing, not hardware", text)
        self.assertIn("open point = oversubscribed", text)
        with open(os.path.join(self.run, "faultscale.png"), "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        with open(os.path.join(self.run, "index.html")) as f:
            self.assertIn('src="faultscale.svg"', f.read())

    def test_mapped_figure_draws_shared_and_read(self):
        """faultscale-mapped: a series per backing with shared or read
        rows (memfd's cow is in neither figure), the TCG note, index.html"""
        rc, out, err = self.render()
        self.assertEqual((rc, err), (0, ""))
        svg = os.path.join(self.run, "faultscale-mapped.svg")
        self.assertEqual(MAPPED, series_titles(svg) & set(BACKINGS))
        text = svg_text(svg)
        self.assertIn(TCG_SMP, text)
        self.assertIn("shared (page_fault3) and read (page_fault4)", text)
        self.assertIn("kinds shared (top) and read (bottom)", text)
        with open(os.path.join(self.run, "index.html")) as f:
            self.assertIn('src="faultscale-mapped.svg"', f.read())

    def test_summary_section(self):
        rc, out, err = self.render()
        self.assertEqual(rc, 0, err)
        self.assertIn("Fault scalability: faults per second against tasks", out)
        self.assertIn(TCG_SMP, out)
        self.assertIn("N=4 (oversubscribed)", out)
        self.assertIn("skipped for lack of pages: shm mode=thread tasks=4", out)
        # devzero process: 16000 faults/s at N=1, 32000 at N=2 and N=4
        line = next(l for l in out.splitlines()
                    if l.split()[:3] == ["devzero", "anon", "process"])
        self.assertEqual(line.split()[3:11],
                         ["16", "MiB", "16000/s", "32000/s", "32000/s", "2.00x", "62.5", "us"])
        # shm's kinds each have a line; its 2 MB rows are short windows
        line = next(l for l in out.splitlines()
                    if l.split()[:3] == ["shm", "shared", "thread"])
        self.assertEqual(line.split()[5], "64.0/s~", line)
        self.assertIn("page_fault1, 2, 3, 4", out)
        # memfd's three kinds each have a line in the table, cow among them
        lines = out.splitlines()
        i = next(n for n, l in enumerate(lines)
                 if l.startswith("Fault scalability: faults per second against tasks"))
        self.assertEqual([l.split()[1:3] for l in lines[i:] if l.split()[:1] == ["memfd"]][:6],
                         [["cow", "process"], ["cow", "thread"], ["shared", "process"],
                          ["shared", "thread"], ["read", "process"], ["read", "thread"]])

    def test_the_mapped_kinds_have_a_section_of_their_own(self):
        """page_fault3 and 4, the lock-sensitive kinds, are shown on their
        own as faultscale-mapped draws them: only shared and read rows
        under its heading."""
        rc, out, err = self.render()
        self.assertEqual(rc, 0, err)
        lines = out.splitlines()
        i = next(n for n, l in enumerate(lines)
                 if l.startswith("Faults on pages already there against tasks"))
        self.assertIn("figure faultscale-mapped", lines[i])
        body = []
        for l in lines[i + 2:]:
            if not l.strip():
                break
            body.append(l.split())
        self.assertEqual([w[:3] for w in body if w and w[0] in BACKINGS],
                         [["shm", "shared", "process"], ["shm", "shared", "thread"],
                          ["memfd", "shared", "process"], ["memfd", "shared", "thread"],
                          ["memfd", "read", "process"], ["memfd", "read", "thread"]])

    def test_low_overlap_is_marked_and_left_out_of_the_lines(self):
        rc, out, err = self.render()
        self.assertEqual((rc, err), (0, ""))
        line = next(l for l in out.splitlines()
                    if l.split()[:3] == ["thp", "anon", "thread"])
        self.assertEqual(line.split()[6], "128/s*~", line)
        self.assertIn("* overlap below 0.9 (1 rows): the tasks did not run together", out)
        self.assertIn("left out of the figure's lines", out)
        self.assertIn("x = overlap below 0.9, not in the line",
                      svg_text(os.path.join(self.run, "faultscale.svg")))

    def test_icount_says_no_scaling(self):
        self.edit_meta(timing_source="icount")
        rc, out, err = self.render()
        self.assertEqual((rc, err), (0, ""))
        self.assertIn("tasks never run at once", out)
        self.assertIn("tasks never run at once",
                      svg_text(os.path.join(self.run, "faultscale.svg")))

    def test_contract_without_faultscale(self):
        rc, out, err = self.render(CONTRACT)
        self.assertEqual((rc, err), (0, ""))
        self.assertIn("faultscale skipped: the contract lists no faultscale benchmark", out)
        self.assertFalse(os.path.exists(os.path.join(self.run, "faultscale.svg")))

    def test_by_hand_is_silent(self):
        for script, drawn in (("faultscale", NEW), ("faultscale-mapped", MAPPED)):
            out = os.path.join(self.tmp, "byhand-" + script)
            p = subprocess.run(["gnuplot", "-c", os.path.join(PLOTS, script + ".gp"),
                                os.path.join(self.run, "faultscale.csv"), out],
                               capture_output=True, text=True)
            self.assertEqual((p.returncode, p.stdout + p.stderr), (0, ""), script)
            self.assertIn("unlabelled", svg_text(out + ".svg"))
            self.assertEqual(drawn, series_titles(out + ".svg") & set(BACKINGS), script)

    def test_mapped_figure_without_its_kinds_says_so(self):
        """a run with no shared or read rows (no file backing) still draws
        faultscale-mapped, each panel saying it has no rows, silently"""
        rows_ = [r for r in rows() if r[18] not in ("shared", "read")]
        write_csv(os.path.join(self.run, "faultscale.csv"), COLUMNS, rows_)
        rc, out, err = self.render()
        self.assertEqual((rc, err), (0, ""))
        text = svg_text(os.path.join(self.run, "faultscale-mapped.svg"))
        for note in ("no shared process rows", "no shared thread rows",
                     "no read process rows", "no read thread rows"):
            self.assertIn(note, text)
        self.assertNotIn("Faults on pages already there", out)


if __name__ == "__main__":
    unittest.main()
