# SPDX-License-Identifier: GPL-2.0
"""`benchtool contract`: the JSON that bench/run.py, the plots and compare
read is what the binaries really do (columns, options, backings)."""
import json
import os
import subprocess
import tempfile
import unittest

from tests.bench.benchbin import BenchRun
from tests.bench.common import BINDIR, benchtool
from tests.bench.common import contract as contract_py


# A stand-in for xz (realprog --xz), whatever its options: 8 MB of 4 kB
# pages touched and held long enough for realprog's smaps samples (its
# first after 5 ms), then stdin to stdout.
FAKE_XZ = """#!/usr/bin/python3
import mmap, sys, time
m = mmap.mmap(-1, 8 << 20)
m.madvise(mmap.MADV_NOHUGEPAGE)
for i in range(0, len(m), 4096):
    m[i] = 1
time.sleep(0.2)
sys.stdout.buffer.write(sys.stdin.buffer.read())
"""


def fake_xz(folder):
    """FAKE_XZ written to folder; also a readable file for realprog's
    --preload, which its backing "off" does not load."""
    path = os.path.join(folder, "fake-xz")
    with open(path, "w") as f:
        f.write(FAKE_XZ)
    os.chmod(path, 0o755)
    return path


def contract():
    p = benchtool("contract")
    if p.returncode:
        raise AssertionError("benchtool contract: rc %d %s" % (
            p.returncode, p.stderr))
    return json.loads(p.stdout)


class TestContract(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.c = contract()

    def test_every_binary_is_listed(self):
        names = [b["name"] for b in self.c["benches"]]
        self.assertEqual(len(names), len(set(names)))
        # benchtool, realprog (the real-program step's driver) and
        # streamk-native (streamk built for this host's CPU, bench.mk) and
        # minichase and minigups (the chase's and gups's oracles)
        built = sorted(f for f in os.listdir(BINDIR)
                       if f not in ("benchtool", "realprog", "streamk-native",
                                    "minichase", "minigups") and
                       "." not in f and
                       os.access(os.path.join(BINDIR, f), os.X_OK))
        self.assertEqual(sorted(names), built)
        for b in self.c["benches"]:
            self.assertTrue(os.access(os.path.join(BINDIR, b["binary"]),
                                      os.X_OK), b["binary"])

    def test_columns_are_the_binary_header(self):
        # a size no benchmark measures still prints the header
        for b in self.c["benches"]:
            run = BenchRun(b["binary"], ["--backings", "devzero",
                                         "--sizes", "4K", "--reps", "1",
                                         "--warmup", "0"])
            self.assertEqual(run.returncode, 0, run.describe())
            self.assertEqual(run.header, b["columns"], b["name"])

    def test_key_and_metric_are_columns(self):
        for b in self.c["benches"]:
            for k in b["key"] + [b["metric"]]:
                self.assertIn(k, b["columns"], b["name"])
            self.assertIsInstance(b["lower_is_better"], bool)
            self.assertTrue(b["desc"])

    def test_options_are_the_binary_options(self):
        for b in self.c["benches"]:
            p = subprocess.run([os.path.join(BINDIR, b["binary"]), "--help"],
                               capture_output=True, text=True)
            self.assertEqual(p.returncode, 0)
            listed = {l.split()[0] for l in p.stdout.splitlines()
                      if l.startswith("  --")}
            own = {"--" + o["name"] for o in b["options"]}
            runner = {"--" + o["name"] for o in self.c["runner_options"]}
            self.assertEqual(listed, own | runner, b["name"])
            for o in b["options"] + self.c["runner_options"]:
                self.assertTrue(o["help"], o)

    def test_backings(self):
        bk = self.c["backings"]
        names = [b["name"] for b in bk]
        self.assertEqual(names[0], "devzero")
        self.assertEqual(len(names), len(set(names)))
        for b in bk:
            self.assertRegex(b["colour"], r"^#[0-9A-Fa-f]{6}$")
            pools = tuple(p.kb for p in contract_py.POOLS)
            self.assertIn(b["page_kb"], (4,) + pools)
            self.assertIn(b["pool_kb"], (0,) + pools)
            self.assertTrue(b["desc"])
            if b["pool_kb"]:
                self.assertEqual(b["pool_kb"], b["page_kb"], b)
            # the flag run.py sets THP for is the advice the row describes
            self.assertEqual(b["thp"], "MADV_HUGEPAGE" in b["desc"], b)
        p = subprocess.run([os.path.join(BINDIR, "chase"), "--help"],
                           capture_output=True, text=True)
        line = [l for l in p.stdout.splitlines()
                if l.startswith("backings:")][0]
        self.assertEqual(line.split()[1:], names)

    def test_a_pool_outside_the_pool_table_is_refused(self):
        """A backing row drawing on a page size bench/contract.py's POOLS
        lacks (run-qemu.sh could not give the guest that pool) is named."""
        row = {"name": "devhugetlb-16M", "page_kb": 16384, "pool_kb": 16384,
               "colour": "#000000"}
        with self.assertRaisesRegex(contract_py.ContractError,
                                    "devhugetlb-16M.*16384 kB pool.*POOLS"):
            contract_py.Contract({"benches": [], "backings": [row]}, "test")
        table = dict(self.c, backings=self.c["backings"] + [dict(
            row, page_kb=2048, pool_kb=2048)])
        contract_py.Contract(table, "test")     # a known size is fine


class TestBadOptions(unittest.TestCase):
    """Each bad value is refused with the option's name, exit status 64."""
    CASES = [
        ("chase", ["--reps"], "--reps needs a value"),
        ("chase", ["--reps", "x"], "--reps: 'x' is not a valid N"),
        ("chase", ["--reps", "0"], "at least 1"),
        ("chase", ["--hop", "pages"], "--hop: 'pages'"),
        ("chase", ["--model", "nope"], "--model: 'nope' is not auto"),
        # one message for every benchmark that models (bench/tlbuse.c)
        ("chase", ["--model", "nope"], "is not auto, none, a preset (haswell, "),
        ("mlp", ["--model", "nope"], "--model: 'nope' is not auto, none, a "
         "preset (haswell, broadwell, skylake, "),
        ("stream", ["--min-bytes", "1Q"], "--min-bytes: '1Q'"),
        ("fault", ["--backings", "devzero,nope"], "no backing 'nope'"),
        ("fault", ["--sizes", "4M,abc"], "--sizes: 'abc'"),
        ("fault", ["--hops", "1M"], "unknown option '--hops'"),
        ("stream", ["--min", "1G", "--max", "1M"], "is above --max"),
    ]

    def test_cases(self):
        for bench, args, msg in self.CASES:
            p = subprocess.run([os.path.join(BINDIR, bench)] + args,
                               capture_output=True, text=True)
            self.assertEqual(p.returncode, 64, (bench, args, p.stderr))
            self.assertIn(msg, p.stderr, (bench, args))
            self.assertNotIn("@header", p.stdout, (bench, args))


class TestRealprogTable(unittest.TestCase):
    """realprog's columns are exported as a benchmark's are, and they are
    the header and the fields of what the binary writes."""

    def test_columns_are_the_binary_header(self):
        t = contract()["realprog"]
        self.assertEqual(t["binary"], "realprog")
        self.assertEqual(contract_py.load().realprog["columns"], t["columns"])
        with tempfile.TemporaryDirectory() as d:
            xz = fake_xz(d)
            run = BenchRun(t["binary"], ["--backings", "off", "--reps", "1",
                                         "--corpus", "4K", "--xz", xz,
                                         "--preload", xz, "--dir", d])
        self.assertEqual(run.returncode, 0, run.describe())
        self.assertEqual(run.header, t["columns"])
        self.assertEqual(len(run.rows), 1, run.describe())
        self.assertEqual(run.rows[0]["backing"], "off")
        self.assertEqual(set(t["text"]), {"backing", "out_fnv", "program"})


if __name__ == "__main__":
    unittest.main()
