# SPDX-License-Identifier: GPL-2.0
"""streamk: STREAM's kernels by STREAM's rules (bench/streamk.c): bytes
counted as STREAM counts them, the best of the iterations after the
first, STREAM's check failing a corrupted array, our own loops (no call
to memcpy/memset in the binary), option errors, and the last-level cache
read from sysfs (bench/llc.c)."""
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from benchbin import BenchRun
from common import BINDIR, benchtool, load_run_module

run = load_run_module()

SIZE = 3 << 20                   # three arrays of 1 MB
ARGS = ["--sizes", "3M", "--backings", "devzero", "--warmup", "1"]
ARRAYS = {"copy": 2, "scale": 2, "add": 3, "triad": 3}
KERNEL_FUNCS = ["streamk_copy", "streamk_scale", "streamk_add",
                "streamk_triad", "streamk_init"]


class TestRows(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.res = BenchRun("streamk", ARGS + ["--reps", "4"])

    def test_exit_and_one_row_per_kernel(self):
        self.assertEqual(self.res.returncode, 0, self.res.describe())
        self.assertEqual([r["kernel"] for r in self.res.rows],
                         ["copy", "scale", "add", "triad"])

    def test_bytes_counted_as_stream(self):
        for r in self.res.rows:
            arr = int(r["array_bytes"])
            # a third of the working set, in whole 64-byte lines
            self.assertEqual(arr, SIZE // 3 // 64 * 64, r)
            self.assertEqual(int(r["bytes_per_iter"]),
                             ARRAYS[r["kernel"]] * arr, r)
            # MB/s in 10^6 bytes per second, from the best time
            want = 1e-6 * int(r["bytes_per_iter"]) / float(r["best_s"])
            self.assertAlmostEqual(float(r["mb_per_s"]), want,
                                   delta=want * 1e-3 + 0.1, msg=r)

    def test_best_of_the_iterations_after_the_first(self):
        for r in self.res.rows:
            # --reps counted; the --warmup first iteration is not
            self.assertEqual(int(r["reps"]), 4, r)
            self.assertLessEqual(float(r["best_s"]), float(r["avg_s"]), r)
            self.assertLessEqual(float(r["avg_s"]), float(r["max_s"]), r)
            self.assertGreater(float(r["best_s"]), 0, r)

    def test_one_counted_iteration_is_best_avg_and_max(self):
        res = BenchRun("streamk", ARGS + ["--reps", "1"])
        self.assertEqual(res.returncode, 0, res.describe())
        for r in res.rows:
            self.assertEqual(int(r["reps"]), 1, r)
            self.assertEqual(r["best_s"], r["avg_s"], r)
            self.assertEqual(r["best_s"], r["max_s"], r)

    def test_llc_rule_said(self):
        (llc,) = self.res.meta["streamk_llc"]
        self.assertEqual(llc["array_bytes"], SIZE // 3 // 64 * 64)
        if llc["llc_bytes"]:
            # STREAM's rule: each array at least 4x the last-level cache
            self.assertEqual(llc["need_bytes"], 4 * llc["llc_bytes"])
            self.assertIs(llc["rule_met"],
                          llc["array_bytes"] >= 4 * llc["llc_bytes"])
            x = llc["array_bytes"] / llc["llc_bytes"]
            for r in self.res.rows:
                self.assertAlmostEqual(float(r["llc_x"]), x, delta=1e-3)
        if not llc["rule_met"]:
            self.assertIn("not STREAM's rule", llc["note"])


class TestValidation(unittest.TestCase):
    def test_a_corrupted_array_fails_the_backing_without_rows(self):
        for arr in ("a", "b", "c"):
            res = BenchRun("streamk", ARGS + ["--reps", "2", "--corrupt",
                                              arr])
            self.assertEqual(res.returncode, 2, res.describe())
            self.assertEqual(res.rows, [], arr)
            self.assertTrue(any("%s[" % arr in e and "STREAM's check" in e
                                for e in res.errors), res.errors)
            (bk,) = res.meta["backing"]
            self.assertEqual(bk["status"], "failed")

    def test_values_grow_15x_per_iteration_and_pass(self):
        # 13 iterations: a = 15^13, beyond 2^53, checked within 1e-13
        res = BenchRun("streamk", ARGS + ["--reps", "12"])
        self.assertEqual(res.returncode, 0, res.describe())


class TestOwnLoops(unittest.TestCase):
    def disassemble(self, func):
        p = subprocess.run(["objdump", "-d", "--no-show-raw-insn",
                            "--disassemble=" + func,
                            os.path.join(BINDIR, "streamk")],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        body = p.stdout.partition("<%s>:" % func)[2]
        return [line for line in body.splitlines()
                if re.match(r"\s+[0-9a-f]+:\s", line)]

    @unittest.skipUnless(shutil.which("objdump"), "objdump (binutils) missing")
    def test_kernels_call_nothing(self):
        for func in KERNEL_FUNCS:
            insns = self.disassemble(func)
            self.assertTrue(insns, "%s not found in the binary" % func)
            calls = [i for i in insns if re.search(
                r"\bcall|\bjmp\s+[0-9a-f]+ <(?!%s)" % func, i)]
            self.assertEqual(calls, [], "%s calls out (memcpy/memset?)"
                             % func)


class TestOptions(unittest.TestCase):
    def test_bad_corrupt_choice_is_a_usage_error(self):
        res = BenchRun("streamk", ARGS + ["--corrupt", "d"])
        self.assertEqual(res.returncode, 64, res.describe())
        self.assertIn("--corrupt: 'd' is not a valid ARRAY", res.stderr)

    def test_too_many_iterations_named_with_the_fix(self):
        res = BenchRun("streamk", ARGS + ["--reps", "250"])
        self.assertEqual(res.returncode, 2, res.describe())
        self.assertTrue(any("above 200" in e and "--reps 9" in e
                            for e in res.errors), res.errors)
        self.assertEqual(res.rows, [])

    def test_help_describes_the_rule(self):
        res = BenchRun("streamk", ["--help"])
        self.assertEqual(res.returncode, 0)
        self.assertIn("STREAM", res.stdout)
        self.assertIn("--corrupt", res.stdout)


class TestProfile(unittest.TestCase):
    """bench/run.py's streamk arguments: STREAM's best of 10 excluding the
    first, three arrays of 4x the LLC where the profile allows."""

    def sizes(self, name, mode, **kw):
        p = run.profile(name, mode, **kw)
        a = p["streamk"]
        self.assertEqual(a[a.index("--warmup") + 1], "1")
        self.assertEqual(a[a.index("--reps") + 1],
                         "2" if name == "tiny" else "9")
        return run.size_bytes(a[a.index("--sizes") + 1]), p

    def test_full_native_is_four_llcs_per_array(self):
        for llc in (32 << 20, 532676608):
            got, p = self.sizes("full", "native", mem_available=24 << 30,
                                llc=llc)
            self.assertEqual(got, 12 * llc)
            # the pools hold the whole working set
            self.assertGreaterEqual(p["max_bytes"], got)
            self.assertGreaterEqual(p["hugepages"] * (2 << 20), got)

    def test_what_fits_when_memory_or_profile_is_short(self):
        got, p = self.sizes("full", "native", mem_available=6 << 30,
                            llc=532676608)
        self.assertLess(got, 12 * 532676608)
        self.assertLessEqual(got, 2 << 30)
        got, _ = self.sizes("quick", "native", llc=532676608)
        self.assertLessEqual(got, 1 << 30)
        got, p = self.sizes("full", "native", mem_available=24 << 30)
        self.assertLessEqual(got, p["max_bytes"])     # LLC unknown

    def test_guest_and_tiny(self):
        self.assertEqual(self.sizes("quick", "guest")[0], 24 << 20)
        self.assertEqual(self.sizes("tiny", "guest")[0], 384 << 10)
        self.assertEqual(self.sizes("full", "guest")[0] // 12288 * 12288,
                         self.sizes("full", "guest")[0])


class TestFitPool(unittest.TestCase):
    """A native run whose 2 MB pool could not be raised far enough runs
    streamk at what the pool holds, and says so."""

    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.res = run.Results(tmp.name, "r", {"mode": "native"})

    def test_cut_to_the_free_pages_with_a_note(self):
        cmd = ["/x/streamk", "--sizes", str(6 << 30), "--reps", "9"]
        got = run.streamk_fit_pool(self.res, cmd, 1000)
        size = int(got[2])
        self.assertLessEqual(size, 1000 * (2 << 20))
        self.assertGreater(size, 1000 * (2 << 20) - 3 * 4096)
        self.assertEqual(size % (3 * 4096), 0)
        self.assertEqual(got[3:], ["--reps", "9"])
        self.assertIn("1000 free pages", self.res.meta["notes"][0])

    def test_left_alone_when_it_fits_or_is_not_streamk(self):
        cmd = ["/x/streamk", "--sizes", "384K"]
        self.assertEqual(run.streamk_fit_pool(self.res, cmd, 10), cmd)
        cmd = ["/x/chase", "--sizes", "1G"]
        self.assertEqual(run.streamk_fit_pool(self.res, cmd, 10), cmd)
        self.assertNotIn("notes", self.res.meta)


class TestLlc(unittest.TestCase):
    def sysfs(self, caches):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        for i, (level, typ, size) in enumerate(caches):
            idx = os.path.join(d, "sys/devices/system/cpu/cpu1/cache",
                               "index%d" % i)
            os.makedirs(idx)
            for name, val in (("level", level), ("type", typ),
                              ("size", size)):
                with open(os.path.join(idx, name), "w") as f:
                    f.write("%s\n" % val)
        return d

    def test_highest_data_or_unified_level(self):
        root = self.sysfs([(1, "Data", "48K"), (1, "Instruction", "32K"),
                           (2, "Unified", "1024K"), (3, "Unified", "32768K"),
                           (4, "Instruction", "65536K")])
        p = benchtool("llc", "--sysfs", root, "--cpu", "1", "--no-cpuid")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(json.loads(p.stdout), {
            "llc_bytes": 32 << 20, "level": 3, "source": "sysfs"})

    def test_no_cache_directory_says_so(self):
        root = self.sysfs([])
        p = benchtool("llc", "--sysfs", root, "--no-cpuid")
        self.assertEqual(p.returncode, 1)
        self.assertIn("has no data or unified cache", p.stderr)
        p = benchtool("llc", "--sysfs", root)
        if p.returncode == 0:   # CPUID knows, and it is labelled so
            self.assertEqual(json.loads(p.stdout)["source"], "cpuid")


if __name__ == "__main__":
    unittest.main()
