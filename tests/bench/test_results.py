# SPDX-License-Identifier: GPL-2.0
"""bench/run.py: the line protocol, CSV writing, meta.json, pools."""
import json
import os
import tempfile
import unittest
from unittest import mock

from common import REQUIRED_COLUMNS, load_run_module

run = load_run_module()
CHASE_HDR = ",".join(REQUIRED_COLUMNS["chase"] + ["hop"])


def chase_row(backing, kb, wss, ns, hop="line"):
    return "%s,%d,%d,%.3f,%.3f,%.3f,,,1.0,0.5,%s" % (
        backing, kb, wss, ns, ns, ns, hop)


class TestResults(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.res = run.Results(self.dir, "r1", {"mode": "native",
                                                "timing_source": "native"})

    def tearDown(self):
        self.tmp.cleanup()

    def read(self, name):
        with open(os.path.join(self.dir, "r1", name)) as f:
            return f.read()

    def test_rows_are_written_as_they_arrive(self):
        self.assertIsNone(self.res.handle("@header chase " + CHASE_HDR))
        self.res.handle("@row chase " + chase_row("devzero", 4, 4096, 1.5))
        # on disk before anything else happens: a crash loses nothing
        self.assertEqual(self.read("chase.csv").splitlines(),
                         [CHASE_HDR, chase_row("devzero", 4, 4096, 1.5)])
        self.res.handle("@row chase " + chase_row("thp", 2048, 4096, 1.4))
        self.assertEqual(len(self.read("chase.csv").splitlines()), 3)
        self.assertEqual(self.res.rows["chase"], 2)

    def test_interrupted_header_leaves_no_empty_csv(self):
        # A signal between creating chase.csv and writing its header once
        # left an empty file that made the summary crash (CI, bench-signal).
        with mock.patch.object(run.os, "replace",
                               side_effect=KeyboardInterrupt("signal 15")):
            with self.assertRaises(KeyboardInterrupt):
                self.res.handle("@header chase " + CHASE_HDR)
        self.assertFalse(os.path.exists(
            os.path.join(self.dir, "r1", "chase.csv")))
        self.assertIsNone(self.res.headline())
        # Not recorded either, so a later header line still writes the file.
        self.res.handle("@header chase " + CHASE_HDR)
        self.assertEqual(self.read("chase.csv").splitlines(), [CHASE_HDR])

    def test_headline_without_rows(self):
        for text in ("", CHASE_HDR + "\n"):
            with open(os.path.join(self.dir, "r1", "chase.csv"), "w") as f:
                f.write(text)
            self.assertIsNone(self.res.headline(), repr(text))

    def test_header_starts_with_required_columns(self):
        self.res.handle("@header chase " + CHASE_HDR)
        cols = self.read("chase.csv").splitlines()[0].split(",")
        self.assertEqual(cols[:len(REQUIRED_COLUMNS["chase"])],
                         REQUIRED_COLUMNS["chase"])

    def test_malformed_row_is_refused_and_recorded(self):
        self.res.handle("@header chase " + CHASE_HDR)
        out = self.res.handle("@row chase devzero,4")
        self.assertIn("malformed", out)
        self.assertEqual(len(self.read("chase.csv").splitlines()), 1)
        self.assertTrue(self.res.meta["errors"])

    def test_progress_is_echoed_and_cr_stripped(self):
        self.assertEqual(self.res.handle("# chase: backing thp\r\n"),
                         "# chase: backing thp")
        self.assertEqual(self.res.handle("[    1.0] kernel line\n"),
                         "[    1.0] kernel line")

    def test_backing_status_merge(self):
        h = self.res.handle
        h('@meta backing {"name": "shm", "bench": "chase", "status": '
          '"measured", "reason": "", "page_kb": 2048, "promised_kb": 2048}')
        h('@meta backing {"name": "shm", "bench": "fault", "status": '
          '"failed", "reason": "boom", "page_kb": 0, "promised_kb": 2048}')
        h('@meta backing {"name": "devhugetlb", "bench": "chase", "status": '
          '"skipped", "reason": "no dev", "page_kb": 0, "promised_kb": 2048}')
        meta = json.loads(self.read("meta.json"))
        self.assertEqual(meta["backings"]["shm"]["status"], "failed")
        self.assertEqual(meta["backings"]["shm"]["reason"], "boom")
        self.assertEqual(meta["backings"]["shm"]["page_kb"], 2048)
        self.assertEqual(meta["backings"]["shm"]["benches"],
                         {"chase": "measured", "fault": "failed"})
        self.assertEqual(meta["backings"]["devhugetlb"]["status"], "skipped")

    def test_guest_env_sets_timing_source(self):
        res = run.Results(self.dir, "g1", {"mode": "guest", "qemu": {
            "version": "x", "accel": None, "icount": None}})
        res.handle('@meta env {"kernel": "6.12.0", "cpu": "QEMU", '
                   '"series_id": "v3", "accel": "tcg", "icount": "1"}')
        self.assertEqual(res.meta["timing_source"], "icount")
        self.assertEqual(res.meta["series_id"], "v3")
        self.assertEqual(res.meta["kernel"], "6.12.0")
        self.assertTrue(res.meta["qemu"]["icount"])

    def test_method_meta(self):
        self.res.handle('@meta method {"bench": "chase", "warmup": 1, '
                        '"reps": 5, "seed": 1, "aslr_off": true, '
                        '"cpu_pinned": 1, "timer_resolution_ns": 20.0, '
                        '"model": "zen3", "model_cap": 65536}')
        m = self.res.meta["method"]
        self.assertEqual((m["reps"], m["aslr_off"], m["cpu_pinned"]),
                         (5, True, 1))
        self.assertEqual(self.res.meta["tlb_model"]["preset"], "zen3")

    def test_latest_points_at_newest(self):
        run.Results(self.dir, "r2", {})
        self.assertEqual(os.readlink(os.path.join(self.dir, "latest")), "r2")

    def test_exit_status_recorded(self):
        self.res.handle("@exit chase 2")
        self.res.finish("failed")
        meta = json.loads(self.read("meta.json"))
        self.assertEqual(meta["bench_exit"], {"chase": 2})
        self.assertEqual(meta["status"], "failed")

    def test_headline_uses_largest_common_size(self):
        h = self.res.handle
        h("@header chase " + CHASE_HDR)
        h("@row chase " + chase_row("devzero", 4, 1 << 20, 100.0))
        h("@row chase " + chase_row("devzero", 4, 1 << 30, 300.0))
        h("@row chase " + chase_row("maphugetlb", 2048, 1 << 30, 210.0))
        h("@row chase " + chase_row("maphugetlb", 2048, 1 << 30, 5.0,
                                    hop="page"))
        line = self.res.headline()
        self.assertIn("1GB", line)
        self.assertIn("300.0", line)
        self.assertIn("210.0", line)
        self.assertIn("-30.0%", line)


class TestProfilesAndPools(unittest.TestCase):
    def test_profiles(self):
        for mode in ("guest", "native"):
            for name in ("quick", "full"):
                p = run.profile(name, mode)
                for b in ("chase", "stream", "fault"):
                    reps = int(p[b][p[b].index("--reps") + 1])
                    self.assertGreaterEqual(reps, 5, (name, mode, b))
        g = run.profile("quick", "guest")
        self.assertLessEqual(g["max_bytes"], 256 << 20)
        self.assertGreaterEqual(g["hugepages"] * 2, 256)
        self.assertEqual(run.profile("quick", "native")["max_bytes"], 1 << 30)
        self.assertEqual(run.profile("full", "native",
                                     mem_available=24 << 30)["max_bytes"],
                         4 << 30)
        self.assertLess(run.profile("full", "native",
                                    mem_available=4 << 30)["max_bytes"],
                        4 << 30)

    def test_pools_restored(self):
        with tempfile.TemporaryDirectory() as d:
            fmt = os.path.join(d, "pool-%d")
            for kb, n in ((2048, 3), (1048576, 0)):
                with open(fmt % kb, "w") as f:
                    f.write("%d\n" % n)
            pools = run.HugePools(fmt)
            try:
                self.assertEqual(pools.raise_to(2048, 100), 100)
                self.assertEqual(pools.raise_to(2048, 2), 100)
                pools.raise_to(1048576, 2)
                raise RuntimeError("a failing run")
            except RuntimeError:
                pass
            finally:
                pools.restore()
            for kb, n in ((2048, 3), (1048576, 0)):
                with open(fmt % kb) as f:
                    self.assertEqual(int(f.read()), n)

    def test_model_preset(self):
        amd = {"vendor_id": "AuthenticAMD", "cpu family": "25", "model": "1"}
        self.assertEqual(run.model_preset(amd), "zen3")
        amd["model"] = str(0x11)
        self.assertEqual(run.model_preset(amd), "zen4")
        self.assertEqual(run.model_preset({}), "skylake")

    def test_needs_pools(self):
        self.assertFalse(run.needs_pools("devzero,thp"))
        self.assertTrue(run.needs_pools("devzero,shm"))
        self.assertTrue(run.needs_pools(None))


if __name__ == "__main__":
    unittest.main()
