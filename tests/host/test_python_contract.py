# SPDX-License-Identifier: GPL-2.0
"""bench/contract.py: reading the contract, and what run-qemu.sh takes from it."""
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest

from bench import contract
from compare.tap import parse_tap
from tests import harness

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SPLATS = ["[    1.2] BUG: KFENCE: out-of-bounds read", "kernel BUG at mm/hugetlb.c:12!",
          "WARNING: CPU: 0 PID: 1 at mm/hugetlb.c:5", "INFO: task hung",
          "UBSAN: shift-out-of-bounds", "Kernel panic - not syncing: Fatal",
          "BUG: KASAN: use-after-free", "WARNING: possible circular locking dependency detected",
          "BUG: Bad page state in process x", "general protection fault, probably",
          "WARNING: suspicious RCU usage", "WARNING: possible recursive locking detected",
          "Oops: 0000 [#1] SMP"]
CLEAN = ["[    0.1] Linux version 6.12", "hugetlb: registered 2.00 MiB page size",
         "@@hugetlb-guest-exit 0"]


class Shell(unittest.TestCase):
    def shell_vars(self):
        out = subprocess.run(["bash", "-c", 'eval "$(python3 %s shell)"; '
                              'declare -p SPLAT_RE ${!QEMU_EXIT_*}'
                              % os.path.join(ROOT, "bench", "contract.py")],
                             capture_output=True, text=True, check=True).stdout
        return out

    def test_exit_statuses_reach_the_shell(self):
        out = self.shell_vars()
        for name, (code, _) in contract.QEMU_EXIT.items():
            self.assertIn('QEMU_EXIT_%s="%d"' % (name, code), out)

    def test_each_exit_status_names_one_cause(self):
        # a caller tells a timeout from a splat by the status alone; a
        # timeout is 124 as timeout(1) and the README say
        codes = [code for code, _ in contract.QEMU_EXIT.values()]
        self.assertEqual(len(codes), len(set(codes)), contract.QEMU_EXIT)
        self.assertEqual(contract.QEMU_EXIT["TIMEOUT"][0], 124)

    def test_splat_pattern_same_in_grep_and_python(self):
        for line in SPLATS + CLEAN:
            with self.subTest(line=line):
                g = subprocess.run(["bash", "-c", 'eval "$(python3 %s shell)"; '
                                    'grep -qE "$SPLAT_RE"' % os.path.join(
                                        ROOT, "bench", "contract.py")],
                                   input=line + "\n", text=True).returncode == 0
                self.assertEqual(g, line in SPLATS)
                self.assertEqual(bool(contract.SPLAT.search(line)), line in SPLATS)

    def test_run_qemu_has_no_literal_statuses(self):
        with open(os.path.join(ROOT, "run-qemu.sh")) as f:
            text = f.read()
        for code in (120, 121, 124, 125, 126, 130):
            self.assertNotRegex(text, r"exit %d\b" % code)


class Load(unittest.TestCase):
    FIXTURE = os.path.join(ROOT, "tests", "fixture", "contract.json")

    def write(self, data):
        f = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
        self.addCleanup(os.unlink, f.name)
        json.dump(data, f)
        f.close()
        return f.name

    def test_fixture_reads(self):
        c = contract.load(self.FIXTURE)
        self.assertEqual(c.backing_names()[0], "devzero")
        self.assertLess(c.order_key("devzero"), c.order_key("memfd-1G"))
        self.assertGreater(c.order_key("nosuch"), c.order_key("memfd-1G"))
        self.assertEqual(c.bench("chase")["metric"], "ns_per_access")
        self.assertEqual(c.needs_pool("devzero"), 0)

    def test_missing_fields_are_named(self):
        with open(self.FIXTURE) as f:
            data = json.load(f)
        del data["backings"][1]["colour"]
        with self.assertRaisesRegex(contract.ContractError, "backing 'thp' lacks colour"):
            contract.load(self.write(data))
        with self.assertRaisesRegex(contract.ContractError, "no \"benches\""):
            contract.load(self.write({"backings": []}))

    def test_realprog_table(self):
        """realprog's columns are the contract's, as a benchmark's are."""
        c = contract.load(self.FIXTURE)
        self.assertEqual(c.realprog["columns"][:2], ["backing", "rep"])
        with open(self.FIXTURE) as f:
            data = json.load(f)
        del data["realprog"]["columns"]
        with self.assertRaisesRegex(contract.ContractError,
                                    'no "realprog" table with name, binary, '
                                    'columns .*table.h: rebuild it'):
            contract.load(self.write(data))

    def test_unknown_names_are_errors_that_list_the_known(self):
        c = contract.load(self.FIXTURE)
        with self.assertRaisesRegex(contract.ContractError, "no backing 'nosuch'.*devzero"):
            c.backing("nosuch")

    def test_a_tree_that_cannot_build_benchtool_is_named(self):
        with tempfile.TemporaryDirectory() as d:
            with self.assertRaisesRegex(contract.ContractError,
                                        "make build/bench/benchtool` in %s failed" % d):
                contract.load(root=d)

    def test_timing_labels(self):
        self.assertTrue(contract.timing_is_hardware("native"))
        self.assertFalse(contract.timing_is_hardware("tcg"))
        self.assertFalse(contract.timing_is_hardware("icount"))
        self.assertIn("not recorded", contract.timing_label(None))


class Harness(unittest.TestCase):
    def test_summary_parsing(self):
        self.assertEqual(harness.parse_summary("x\n3 passed, 1 failed\nmore\n"), (3, 1, 0))
        self.assertEqual(harness.parse_summary("reliability: 3 passed, 0 failed, 2 skipped"),
                         (3, 0, 2))
        self.assertIsNone(harness.parse_summary("3 passed"))
        self.assertEqual(harness.summary_line(1, 2, 3), "1 passed, 2 failed, 3 skipped")

    def test_tap(self):
        got = parse_tap(["ok 1 a", "not ok 2 b # why", "ok 3 # SKIP c: no pool",
                         "ok - d", "ok 5 e # SKIP no dev", "# comment"])
        self.assertEqual(got, [("a", True, "", False), ("b", False, "why", False),
                               ("c: no pool", True, "skipped", True), ("d", True, "", False),
                               ("e", True, "SKIP no dev", True)])

    def test_total_of_logs(self):
        with tempfile.TemporaryDirectory() as d:
            a, b = os.path.join(d, "a"), os.path.join(d, "b")
            with open(a, "w") as f:
                f.write("1 passed, 0 failed\n5 passed, 1 failed, 2 skipped\n")
            with open(b, "w") as f:
                f.write("no summary here\n")
            r = subprocess.run([sys.executable, "-m", "tests.harness",
                                "total", a, b], capture_output=True, text=True)
        self.assertEqual(r.stdout.splitlines()[-1], "5 passed, 2 failed, 2 skipped")
        self.assertEqual(r.returncode, 1)

    def test_defer(self):
        """make test-bench TIMING_LATER=1: the tests named skip, saying
        why, a class named without its setUpClass; the rest run."""
        ran = []
        mod = type(self).__module__
        whole = type("Whole", (unittest.TestCase,), {
            "__module__": mod,
            "setUpClass": classmethod(lambda cls: ran.append("setUpClass")),
            "test_x": lambda self: ran.append("x")})
        part = type("Part", (unittest.TestCase,), {
            "__module__": mod,
            "test_y": lambda self: ran.append("y"),
            "test_z": lambda self: ran.append("z")})
        load = unittest.defaultTestLoader.loadTestsFromTestCase
        suite = unittest.TestSuite([load(whole), load(part)])
        self.assertEqual(harness.defer(suite, mod, ["Part.test_y", "Whole"],
                                       "judged later"), 2)
        res = unittest.TextTestRunner(stream=io.StringIO()).run(suite)
        self.assertEqual(ran, ["z"])
        self.assertEqual(sorted((t.id().split(".")[-1], why)
                                for t, why in res.skipped),
                         [("test_x", "judged later"),
                          ("test_y", "judged later")])
        self.assertTrue(res.wasSuccessful())

    def test_failures_of_logs(self):
        """.ci/run's list of what failed: every unittest failure and error
        with its exception's message, every Tally FAIL line, nothing that
        passed, and no more lines than it has room for."""
        log = ["test_a (t.A.test_a) ... ok", "PASS guest: fine",
               "FAIL guest: the job exits 0: rc 3",
               "=" * 70, "FAIL: test_b (t.A.test_b)", "-" * 70,
               "Traceback (most recent call last):",
               '  File "x.py", line 3, in test_b',
               "AssertionError: gups agrees, on a quiet machine:",
               "  try 1: 3.0 ns", "", "=" * 70,
               "ERROR: test_c (t.A.test_c)", "-" * 70,
               "Traceback (most recent call last):",
               "OSError: [Errno 5] boom", "", "-" * 70,
               "Ran 3 tests in 0.1s", "", "FAILED (failures=1, errors=1)",
               "1 passed, 2 failed, 0 skipped"]
        self.assertEqual(harness.failures_in(log), [
            ["FAIL guest: the job exits 0: rc 3"],
            ["FAIL: test_b (t.A.test_b)",
             "  AssertionError: gups agrees, on a quiet machine:",
             "    try 1: 3.0 ns"],
            ["ERROR: test_c (t.A.test_c)", "  OSError: [Errno 5] boom"]])
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "log")
            with open(path, "w") as f:
                f.write("\n".join(log) + "\n")
            for room, lines in ((70, 7), (4, 3)):
                out = io.StringIO()
                with contextlib.redirect_stdout(out):
                    self.assertEqual(harness.failures([path, d + "/none"],
                                                      room), 3)
                got = out.getvalue().splitlines()
                self.assertEqual(len(got), lines, got)
            self.assertEqual(got[-1], "harness: 2 more in " + path)


if __name__ == "__main__":
    unittest.main()
