# SPDX-License-Identifier: GPL-2.0
"""End to end on the host: the tiny profile for the two backings that need
no hugetlb pool (so the host's pools are untouched), through run.py."""
import csv
import json
import os
import subprocess
import sys
import tempfile
import unittest

from tests.bench.common import (REQUIRED_MACHINE, REQUIRED_META, REQUIRED_METHOD, ROOT,
                    columns, contract, promised_kb, thp_shortfall)


class TestNativeSmoke(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        # thp needs huge pages the kernel may not have at this moment: one
        # retry, reported, then a skip that says why (common.thp_shortfall)
        for attempt in (1, 2):
            results = os.path.join(cls.tmp.name, "try%d" % attempt)
            cls.proc = subprocess.run(
                [sys.executable, "-m", "bench.run",
                 "--mode", "native", "--profile", "tiny", "--backings",
                 "devzero,thp", "--results-dir", results],
                capture_output=True, text=True, timeout=300)
            cls.run_dir = os.path.join(results, "latest")
            why = cls.proc.returncode and thp_shortfall(cls.run_dir)
            if not why:
                return
            print("test_native_smoke: try %d: %s" % (attempt, why),
                  file=sys.stderr)
        cls.tmp.cleanup()
        raise unittest.SkipTest("no THP pages on two tries (%s): the host's "
                                "memory is fragmented or taken; rerun on a "
                                "quieter host" % why)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_exit_status(self):
        self.assertEqual(self.proc.returncode, 0,
                         self.proc.stdout[-2000:] + self.proc.stderr[-2000:])

    def test_meta(self):
        with open(os.path.join(self.run_dir, "meta.json")) as f:
            meta = json.load(f)
        for k in REQUIRED_META:
            self.assertIn(k, meta)
        for k in REQUIRED_METHOD:
            self.assertIn(k, meta["method"])
        for k in REQUIRED_MACHINE:
            self.assertIn(k, meta["machine"])
        self.assertEqual(len(meta["machine"]["loadavg_end"]), 3)
        self.assertEqual(meta["machine"]["hypervisor"],
                         contract.HYPERVISOR_NOTE in meta.get("notes", []))
        self.assertEqual(meta["mode"], "native")
        self.assertEqual(meta["timing_source"], "native")
        self.assertEqual(meta["series_id"], "host")
        self.assertIsNone(meta["qemu"])
        self.assertIn("page-faults", meta["counters"])
        for c in meta["counters"].values():
            self.assertIn("available", c)
            self.assertIn("reason", c)
        self.assertEqual(meta["status"], "complete")
        # the rounds of repetitions, as the binaries ran them: both
        # backings in every round, the first one alternating (a Williams
        # design of two backings)
        for bench in ("chase", "stream", "mlp"):
            for o in meta["repetition_order"][bench]:
                self.assertTrue(o["interleaved"], o)
                self.assertEqual(sorted(o["backings"]), ["devzero", "thp"])
                self.assertEqual(o["design"], "williams")
                self.assertEqual(len(o["rounds"]), 2)
                self.assertNotEqual(*o["rounds"])
        # the walk cost after the chase (bench/benchrun/walk.py): each
        # backing's, or why none, said once (no PMU on this project's VMs)
        w = meta["walk_cost"]
        if "reason" in w:
            self.assertTrue(w["reason"].startswith("not measured: "), w)
            self.assertNotIn("backings", w)
        else:
            self.assertEqual(sorted(w["backings"]), ["devzero", "thp"])
        for name in ("devzero", "thp"):
            b = meta["backings"][name]
            self.assertEqual(b["status"], "measured", b)
            self.assertEqual(b["page_kb"], promised_kb(name))

    def test_csvs(self):
        for bench in contract.load().bench_names():
            cols = columns(bench)
            with open(os.path.join(self.run_dir, bench + ".csv")) as f:
                rows = list(csv.DictReader(f))
                self.assertTrue(rows, bench)
                f.seek(0)
                header = f.readline().strip().split(",")
            self.assertEqual(header, cols)
            for r in rows:
                self.assertEqual(int(r["page_kb"]), promised_kb(r["backing"]))
                self.assertNotIn(None, r.values())
        with open(os.path.join(self.run_dir, "chase.csv")) as f:
            rows = list(csv.DictReader(f))
        # tiny: 3 sizes x 2 hops x 2 backings
        self.assertEqual(len(rows), 12)
        for r in rows:
            self.assertGreater(float(r["ns_per_access"]), 0)
            self.assertLessEqual(float(r["ns_min"]),
                                 float(r["ns_per_access"]))
            # the host's own TLB model (--model auto): numbers where a
            # preset fits the CPU, empty where none does (this project's
            # Intel VM reports Rocket Lake's model number: no preset)
            if r["model_preset"] == "none":
                self.assertEqual(r["model_walks_per_1k"], "", r)
            else:
                self.assertGreaterEqual(float(r["model_walks_per_1k"]), 0)


if __name__ == "__main__":
    unittest.main()
