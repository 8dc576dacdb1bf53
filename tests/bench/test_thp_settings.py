# SPDX-License-Identifier: GPL-2.0
"""bench/run.py's THP settings (ThpSettings): recorded in meta.json for
every run; for a run with the `thp` backing set to what MADV_HUGEPAGE
needs and restored on every exit path; and the thp rows still carry the
page size the runner verified.  The host's THP is never touched: run.py's
HOST_ROOT points at a fake sysfs tree."""
import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

from tests.bench.common import contract, promised_kb, thp_shortfall

from bench import benchrun as run
from bench.hostlock import HOST_LOCK
THP = "sys/kernel/mm/transparent_hugepage"
OFF = {"enabled": "always madvise [never]",
       "defrag": "always [defer] defer+madvise madvise never",
       "khugepaged/defrag": "1",
       "khugepaged/pages_to_scan": "4096",
       "khugepaged/scan_sleep_millisecs": "10000"}


def fake_root(test, knobs):
    d = tempfile.mkdtemp()
    test.addCleanup(shutil.rmtree, d)
    for knob, text in knobs.items():
        path = os.path.join(d, THP, knob)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text + "\n")
    return d


def knob(root, name):
    with open(os.path.join(root, THP, name)) as f:
        return f.read().strip()


class TestThpSettings(unittest.TestCase):
    def test_recorded_with_khugepaged(self):
        st = run.machine_state(fake_root(self, OFF))
        self.assertEqual(st["thp_enabled"], "never")
        self.assertEqual(st["thp_defrag"], "defer")
        self.assertEqual(st["thp_khugepaged"], {
            "defrag": "1", "pages_to_scan": "4096",
            "scan_sleep_millisecs": "10000"})

    def test_set_and_restored_on_normal_exit(self):
        root = fake_root(self, OFF)
        thp = run.ThpSettings(root)
        self.assertEqual(thp.apply(), {"enabled": "madvise",
                                       "defrag": "madvise"})
        self.assertEqual(knob(root, "enabled"), "madvise")
        self.assertEqual(knob(root, "khugepaged/pages_to_scan"), "4096")
        thp.restore()
        thp.restore()           # idempotent
        self.assertEqual(knob(root, "enabled"), "never")
        self.assertEqual(knob(root, "defrag"), "defer")

    def test_restored_after_an_exception(self):
        root = fake_root(self, OFF)
        thp = run.ThpSettings(root)
        with self.assertRaises(RuntimeError):
            try:
                thp.apply()
                raise RuntimeError("a failing run")
            finally:
                thp.restore()
        self.assertEqual(knob(root, "enabled"), "never")
        self.assertEqual(knob(root, "defrag"), "defer")

    def test_settings_that_serve_madvise_are_left_alone(self):
        for enabled, defrag in (("[always] madvise never",
                                 "[always] defer defer+madvise madvise never"),
                                ("always [madvise] never",
                                 "always defer [defer+madvise] madvise never")):
            root = fake_root(self, {"enabled": enabled, "defrag": defrag})
            thp = run.ThpSettings(root)
            got = thp.apply()
            self.assertEqual(thp.saved, {})
            self.assertEqual(knob(root, "enabled"), enabled)
            self.assertEqual(got["enabled"], run.bracketed(enabled))

    def test_no_thp_in_the_kernel(self):
        root = fake_root(self, {})
        thp = run.ThpSettings(root)
        self.assertEqual(thp.apply(), {"enabled": None, "defrag": None})
        self.assertIsNone(run.machine_state(root)["thp_khugepaged"])


class TestRestore(unittest.TestCase):
    """restore() (bench/benchrun/base.py, shared with the pools): what it
    put back it forgets, and it gives the host-state lock back only when
    everything is back."""

    def test_a_failed_restore_keeps_the_lock_until_it_succeeds(self):
        root = fake_root(self, OFF)
        depth = HOST_LOCK.depth
        thp = run.ThpSettings(root)
        thp.apply()
        self.assertEqual(HOST_LOCK.depth, depth + 1)
        # enabled cannot be written back (here: a directory in its place)
        path = os.path.join(root, THP, "enabled")
        os.rename(path, path + ".away")
        os.mkdir(path)
        with mock.patch("sys.stderr") as err:
            thp.restore()
        said = "".join(a[0][0] for a in err.write.call_args_list)
        self.assertIn("RESTORE FAILED for THP enabled (want never)", said)
        self.assertEqual(knob(root, "defrag"), "defer")
        self.assertEqual(thp.saved, {"enabled": "never"})
        self.assertEqual(HOST_LOCK.depth, depth + 1)
        os.rmdir(path)
        os.rename(path + ".away", path)
        thp.restore()
        self.assertEqual(knob(root, "enabled"), "never")
        self.assertEqual(HOST_LOCK.depth, depth)

    def test_a_second_restore_leaves_what_others_set_since(self):
        root = fake_root(self, OFF)
        depth = HOST_LOCK.depth
        thp = run.ThpSettings(root)
        thp.apply()
        thp.restore()
        self.assertEqual(thp.saved, {})
        self.assertEqual(HOST_LOCK.depth, depth)
        # another run, holding the lock now, sets its own value
        with open(os.path.join(root, THP, "enabled"), "w") as f:
            f.write("always\n")
        thp.restore()
        self.assertEqual(knob(root, "enabled"), "always")
        self.assertEqual(HOST_LOCK.depth, depth)


class TestRunWithThp(unittest.TestCase):
    """run.py main() natively, tiny profile, streamk on thp (no hugetlb
    pool), with THP 'never' in the fake tree."""

    def setUp(self):
        # main() leaves the stop signals ignored when it returns
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            self.addCleanup(signal.signal, sig, signal.getsignal(sig))

    def main(self, root, results, **patches):
        argv = ["--mode", "native", "--profile", "tiny", "--benches",
                "streamk", "--backings", "thp", "--results-dir", results]
        with mock.patch.multiple(run.cli, HOST_ROOT=root, **patches):
            rc = run.main(argv)
        with open(os.path.join(results, "latest", "meta.json")) as f:
            return rc, json.load(f)

    def main_with_thp(self, root, results):
        """main(), run again once (and said) when the host had no THP pages
        to give at that moment; a skip saying so when it had none twice."""
        rc, meta = self.main(root, results)
        why = rc and thp_shortfall(os.path.join(results, "latest"))
        if why:
            print("test_thp_settings: no THP pages, retrying: " + why,
                  file=sys.stderr)
            rc, meta = self.main(root, results)
            why = rc and thp_shortfall(os.path.join(results, "latest"))
            if why:
                self.skipTest("no THP pages on two tries (%s): the host's "
                              "memory is fragmented or taken" % why)
        return rc, meta

    def test_normal_exit_records_and_restores(self):
        root = fake_root(self, OFF)
        results = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, results)
        rc, meta = self.main_with_thp(root, results)
        self.assertEqual(rc, 0, meta.get("errors"))
        m = meta["machine"]
        self.assertEqual((m["thp_enabled"], m["thp_defrag"]),
                         ("never", "defer"))
        self.assertEqual(m["thp_in_run"], {"enabled": "madvise",
                                           "defrag": "madvise"})
        self.assertEqual(m["thp_khugepaged"]["pages_to_scan"], "4096")
        self.assertEqual(knob(root, "enabled"), "never")
        self.assertEqual(knob(root, "defrag"), "defer")
        # the thp rows keep the page size the runner verified in smaps
        with open(os.path.join(results, "latest", "streamk.csv")) as f:
            rows = list(csv.DictReader(f))
        self.assertTrue(rows)
        for r in rows:
            self.assertEqual(int(r["page_kb"]), promised_kb("thp"), r)
        self.assertEqual(meta["backings"]["thp"]["page_kb"], 2048)

    def test_no_thp_pages_is_told_apart(self):
        """The retry above is taken only for THP pages the kernel did not
        give: a process with THP disabled (prctl PR_SET_THP_DISABLE, which
        its children inherit) gets none, and the run says so."""
        results = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, results)
        code = ("import ctypes, os, sys; "
                "ctypes.CDLL(None).prctl(41, 1, 0, 0, 0); "   # PR_SET_THP_DISABLE
                "os.execv(sys.executable, [sys.executable] + sys.argv[1:])")
        p = subprocess.run([sys.executable, "-c", code,
                            "-m", "bench.run",
                            "--mode", "native", "--profile", "tiny",
                            "--benches", "streamk", "--backings", "thp",
                            "--results-dir", results],
                           capture_output=True, text=True, timeout=300)
        self.assertNotEqual(p.returncode, 0, p.stdout[-1000:])
        why = thp_shortfall(os.path.join(results, "latest"))
        self.assertIsNotNone(why, p.stdout[-2000:])
        self.assertIn("thp", why)

    def test_interrupt_restores(self):
        root = fake_root(self, OFF)
        results = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, results)

        def interrupted(*args):
            self.assertEqual(knob(root, "enabled"), "madvise")
            os.kill(os.getpid(), signal.SIGTERM)   # run.py's handler stops
            self.fail("SIGTERM did not stop the run")

        rc, meta = self.main(root, results, run_native=interrupted)
        self.assertEqual(rc, contract.QEMU_EXIT["INTERRUPTED"][0])
        self.assertEqual(meta["status"], "interrupted")
        self.assertEqual(knob(root, "enabled"), "never")
        self.assertEqual(knob(root, "defrag"), "defer")

    def test_no_thp_backing_no_change(self):
        root = fake_root(self, OFF)
        results = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, results)
        argv = ["--mode", "native", "--profile", "tiny", "--benches",
                "streamk", "--backings", "devzero", "--results-dir", results]
        with mock.patch.object(run.cli, "HOST_ROOT", root), \
                mock.patch.object(run.ThpSettings, "_write") as w:
            self.assertEqual(run.main(argv), 0)
        w.assert_not_called()


class TestGuestThp(unittest.TestCase):
    def test_guest_script_reports_its_thp(self):
        c = contract.load()
        args = run.parse_args(["--mode", "guest", "--profile", "tiny"], c)
        p = run.profile("tiny", "guest", c=c)
        cmd = run.guest_command(p, args, run.invocations(
            p, args, "auto", ["streamk"], c), c)
        self.assertTrue(cmd[-1].startswith(run.GUEST_THP))
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        res = run.Results(tmp.name, "g", {"mode": "guest"})
        res.handle('@meta thp_guest {"enabled": "always [madvise] never", '
                   '"defrag": ""}')
        self.assertEqual(res.meta["thp_guest"],
                         {"enabled": "madvise", "defrag": None})


if __name__ == "__main__":
    unittest.main()
