# SPDX-License-Identifier: GPL-2.0
"""lava/fleet.py: machines side by side, a difference marked only where
compare's tests support it (synthetic run folders with known values)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

from bench import contract

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

WSS = (1 << 20, 64 << 20)


def write_run(d, ns4k, ns2m, cpu, walks=(30.0, 1.0), fault=(900.0, 80.0), hardware=True):
    os.makedirs(d)
    meta = {"status": "complete", "mode": "native" if hardware else "guest",
            "timing_source": "native" if hardware else "tcg", "kernel": "6.12.0",
            "series_id": "s1", "arch": "x86_64", "host_cpu": cpu[3], "measured_cpu": cpu[3],
            "other": {"cpu_id": dict(zip(("vendor", "family", "model", "name"), cpu))}}
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump(meta, f)
    c = contract.load()
    cols = c.bench("chase")["columns"]
    with open(os.path.join(d, "chase.csv"), "w") as f:
        f.write(",".join(cols) + "\n")
        for wss in WSS:
            big = wss == WSS[-1]
            for backing, ns, w in (("devzero", ns4k, walks[0]), ("devhugetlb", ns2m, walks[1])):
                row = dict.fromkeys(cols, "")
                row.update(backing=backing, page_kb=4 if backing == "devzero" else 2048,
                           wss_bytes=wss, ns_per_access=ns if big else 1.0, hop="line",
                           model_walks_per_1k=w)
                f.write(",".join(str(row[k]) for k in cols) + "\n")
    cols = c.bench("fault")["columns"]
    with open(os.path.join(d, "fault.csv"), "w") as f:
        f.write(",".join(cols) + "\n")
        for backing, us in zip(("devzero", "devhugetlb"), fault):
            row = dict.fromkeys(cols, "")
            row.update(backing=backing, mode="demand", size_bytes=16 << 20, us_per_mb=us)
            f.write(",".join(str(row[k]) for k in cols) + "\n")


class Fleet(unittest.TestCase):
    INTEL = ("GenuineIntel", "6", "85", "Intel Xeon")
    AMD = ("AuthenticAMD", "25", "1", "AMD EPYC")

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def machine(self, name, n, ns4k, ns2m, cpu):
        dirs = []
        for i in range(n):
            d = os.path.join(self.tmp.name, "%s%d" % (name, i))
            # a little spread, as real repetitions have
            write_run(d, ns4k + i * 0.5, ns2m + i * 0.1, cpu)
            dirs.append(d)
        return ",".join(dirs)

    def report(self, *machines):
        out = os.path.join(self.tmp.name, "out")
        r = subprocess.run([sys.executable, "-m", "lava.fleet", *machines, "--out", out], cwd=ROOT,
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(out, "fleet.md")) as f:
            return out, f.read()

    def row(self, md, label):
        return [ln for ln in md.splitlines() if ln.startswith("| %s |" % label)]

    def test_difference_marked_only_where_supported(self):
        a = self.machine("a", 5, 100.0, 20.0, self.INTEL)       # ratio ~5
        b = self.machine("b", 5, 100.0, 40.0, self.AMD)         # ratio ~2.5
        c = self.machine("c", 5, 100.0, 20.0, self.AMD)         # ratio ~5
        out, md = self.report(a, b, c)
        ratio_vs = self.row(md, "  vs M1")[0].split(" | ")
        self.assertTrue(ratio_vs[2].startswith("DIFFERS"), ratio_vs)
        self.assertTrue(ratio_vs[3].startswith("no difference shown"), ratio_vs)
        self.assertIn("GenuineIntel", self.row(md, "CPU vendor")[0])
        self.assertIn("| 85 |", self.row(md, "CPU model")[0])
        self.assertIn("TLB model", self.row(md, "walks from")[0])
        self.assertIn("| 29 (29..29, n=5) |", self.row(md, "walks saved /1k accesses")[0])
        for f in ("index.html", "fleet.dat", "fleet-ratio.svg", "fleet-ratio.png"):
            self.assertTrue(os.path.getsize(os.path.join(out, f)) > 0, f)

    def test_single_runs_are_never_marked(self):
        a = self.machine("a", 1, 100.0, 20.0, self.INTEL)
        b = self.machine("b", 1, 100.0, 40.0, self.AMD)
        _, md = self.report(a, b)
        self.assertNotIn("DIFFERS", md)
        self.assertIn("not tested (n=1, 1", md)

    def test_lava_job_ids(self):
        # lava:N names the run make lava-fetch made of job N
        results = os.path.join(self.tmp.name, "results")
        write_run(os.path.join(results, "20261204-180000-lava5-tiny"), 100.0, 20.0, self.INTEL)
        write_run(os.path.join(results, "20261204-180000-lava6-tiny"), 100.0, 40.0, self.AMD)
        out = os.path.join(self.tmp.name, "out")
        r = subprocess.run([sys.executable, "-m", "lava.fleet", "lava:5", "lava:6", "--out", out,
                            "--results-dir", results], cwd=ROOT, capture_output=True, text=True,
                           timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(out, "fleet.md")) as f:
            md = f.read()
        self.assertIn("| 4K/2M latency ratio | 5x | 2.5x |", md)

    def test_cpu_from_the_pmu_cpuid(self):
        # a run without @meta cpu_id: perf's cpuid the chase recorded, hex
        d = os.path.join(self.tmp.name, "er")
        write_run(d, 100.0, 20.0, self.INTEL)
        with open(os.path.join(d, "meta.json")) as f:
            meta = json.load(f)
        # family decimal, model hex: an AMD Zen 3 is family 25 model 0x21
        meta["other"] = {"pmu": {"cpuid": "AuthenticAMD-25-21-0"}}
        with open(os.path.join(d, "meta.json"), "w") as f:
            json.dump(meta, f)
        _, md = self.report(d)
        self.assertIn("| CPU vendor | AuthenticAMD |", md)
        self.assertIn("| CPU family | 25 |", md)
        self.assertIn("| CPU model | 33 |", md)

    def test_not_a_run(self):
        r = subprocess.run([sys.executable, "-m", "lava.fleet", self.tmp.name], cwd=ROOT,
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 2)
        self.assertIn("no meta.json: not a run folder", r.stderr)


def append(path, rows):
    """Rows (dicts) added to a run's CSV in its header's order."""
    with open(path) as f:
        cols = f.readline().strip().split(",")
    with open(path, "a") as f:
        for r in rows:
            row = dict.fromkeys(cols, "")
            row.update(r)
            f.write(",".join(str(row[k]) for k in cols) + "\n")


class Values(Fleet):
    """Each number from the rows it names, and nothing else: decoy rows
    the report must leave out (another hop, another fault mode, a smaller
    fault size) would change it."""

    def test_line_hop_demand_faults_largest_size(self):
        d = os.path.join(self.tmp.name, "r")
        write_run(d, 100.0, 20.0, self.INTEL)
        append(os.path.join(d, "chase.csv"), [
            dict(backing="devzero", page_kb=4, wss_bytes=WSS[-1], ns_per_access=500,
                 hop="page", model_walks_per_1k=1000),
            dict(backing="devhugetlb", page_kb=2048, wss_bytes=WSS[-1], ns_per_access=10,
                 hop="page", model_walks_per_1k=0)])
        append(os.path.join(d, "fault.csv"), [
            dict(backing="devzero", mode="populate", size_bytes=16 << 20, us_per_mb=1),
            dict(backing="devhugetlb", mode="populate", size_bytes=16 << 20, us_per_mb=1),
            dict(backing="devzero", mode="demand", size_bytes=4 << 20, us_per_mb=5000),
            dict(backing="devhugetlb", mode="demand", size_bytes=4 << 20, us_per_mb=4000)])
        _, md = self.report(d)
        # line hop at 64 MB: 100 / 20 = 5x; walks 30 - 1 = 29; demand at
        # 16 MB: 900 and 80 us/MB
        self.assertIn("| 4K/2M latency ratio | 5x |", md)
        self.assertIn("| walks saved /1k accesses | 29 |", md)
        self.assertIn("| fault 4K us/MB | 900 |", md)
        self.assertIn("| fault 2M us/MB | 80 |", md)

    def test_slower_faults_are_worse(self):
        a, b = [], []
        for i in range(5):
            for runs, name, fault in ((a, "a", 900.0), (b, "b", 1800.0)):
                d = os.path.join(self.tmp.name, "%s%d" % (name, i))
                write_run(d, 100.0 + i, 20.0, self.INTEL, fault=(fault + i, 80.0 + i))
                runs.append(d)
        _, md = self.report(",".join(a), ",".join(b))
        rows = [ln for ln in md.splitlines() if ln.startswith("| ")]
        i = next(n for n, ln in enumerate(rows) if ln.startswith("| fault 4K us/MB |"))
        # medians 902 and 1802 us/MB: (1802 - 902) / 902 = +99.8 %
        self.assertIn("DIFFERS, worse: +99.8%", rows[i + 1])

    def test_a_figure_that_fails_fails_the_report(self):
        d = os.path.join(self.tmp.name, "r")
        write_run(d, 100.0, 20.0, self.INTEL)
        bindir = os.path.join(self.tmp.name, "bin")
        os.makedirs(bindir)
        with open(os.path.join(bindir, "gnuplot"), "w") as f:
            f.write("#!/bin/sh\necho 'fake gnuplot: cannot draw' >&2\nexit 1\n")
        os.chmod(os.path.join(bindir, "gnuplot"), 0o755)
        env = dict(os.environ, PATH=bindir + os.pathsep + os.environ["PATH"])
        r = subprocess.run([sys.executable, "-m", "lava.fleet", d, "--out",
                            os.path.join(self.tmp.name, "out")], cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("fleet-ratio.gp failed", r.stderr)


if __name__ == "__main__":
    unittest.main()
