# SPDX-License-Identifier: GPL-2.0
"""`benchtool events`: the counter events chosen from perf's pmu-events
tables (bench/events/gen_table.py, bench/pmu.c)."""
import csv
import os
import re
import subprocess
import unittest

from tests.bench.common import BENCHTOOL, ROOT, benchtool

MAPFILE = os.path.join(ROOT, "build", "pmu-events", "tools", "perf",
                       "pmu-events", "arch", "x86", "mapfile.csv")


def py_re(ere):
    return re.compile(ere.replace("[[:xdigit:]]", "[0-9A-Fa-f]"))


def rows():
    with open(MAPFILE) as f:
        return list(csv.DictReader(f))


def first_row(table, cpuid):
    """perf's lookup: the first row that matches the whole id (less the
    stepping if the row names none)."""
    for i, r in enumerate(table):
        full = r["Family-model"].count("-") == 3
        key = cpuid if full else cpuid.rsplit("-", 1)[0]
        if py_re(r["Family-model"]).fullmatch(key):
            return i
    return None


def example_cpuid(table, i):
    """A full cpuid that perf maps to row i."""
    vendor = table[i]["Family-model"].split("-")[0]
    for fam in (6, 23, 25, 26):
        for model in range(256):
            for step in range(16):
                cid = "%s-%d-%X-%X" % (vendor, fam, model, step)
                if first_row(table, cid) == i:
                    return cid
    return None


def events(cpuid):
    out = benchtool("events", "--cpuid", cpuid)
    assert out.returncode == 0, out.stderr
    lines = [l.split(" ", 3) for l in out.stdout.splitlines()]
    return lines[0], lines[1:]


class TestEvents(unittest.TestCase):
    def test_every_mapfile_row_has_both_roles_or_a_reason(self):
        table = rows()
        self.assertGreater(len(table), 40)
        for i, r in enumerate(table):
            cid = example_cpuid(table, i)
            self.assertIsNotNone(cid, r["Family-model"])
            head, body = events(cid)
            self.assertEqual(head[:2], ["model", r["Filename"]], cid)
            pmus = {}
            for f in body:
                pmus.setdefault(f[-1] if f[1] != "none" else f[2],
                                {})[f[0]] = f
            self.assertTrue(pmus, cid)
            for pmu, got in pmus.items():
                for role in ("l1_miss", "walk"):
                    f = got.get(role)
                    self.assertIsNotNone(f, "%s %s %s" % (cid, pmu, role))
                    if f[1] == "none":
                        self.assertIn("JSON has no", f[3], cid)
                    else:
                        self.assertRegex(f[2],
                                         r"^0x[0-9a-f]+(\+0x[0-9a-f]+)*$")
                        self.assertEqual(f[1].count("+"), f[2].count("+"))
                self.assertIn("preset", got)

    def test_kernel_generic_dtlb_miss_is_the_walk_event(self):
        # arch/x86/events/intel/core.c and amd/core.c map the generic
        # dTLB-load-misses event to these walk events; the walk role must
        # be exactly that event, and the L1 role something else.
        for cid, walk, l1 in (
                ("GenuineIntel-6-5E", "0xe08", "0x2008+0xe08"),
                ("GenuineIntel-6-8F", "0xe12", "0x2012+0xe12"),
                ("AuthenticAMD-25-1", "0xf045", "0xff45")):
            _, body = events(cid)
            got = {f[0]: f for f in body}
            self.assertEqual(got["walk"][2], walk, cid)
            self.assertEqual(got["l1_miss"][2], l1, cid)

    def test_hybrid_alder_lake_has_both_core_types(self):
        _, body = events("GenuineIntel-6-97")
        by = {(f[0], f[-1] if f[1] != "none" else f[2]): f for f in body}
        self.assertEqual(by[("walk", "cpu_core")][2], "0xe12")
        self.assertEqual(by[("walk", "cpu_atom")][2], "0xe08")
        self.assertEqual(by[("l1_miss", "cpu_atom")][1], "none")
        self.assertEqual(by[("preset", "cpu_core")][1], "goldencove")
        self.assertEqual(by[("preset", "cpu_atom")][1], "gracemont")

    def test_sums_and_distrusted_encodings(self):
        # Goldmont Plus has walk events per page size only: their sum
        _, body = events("GenuineIntel-6-7A")
        walk = [f for f in body if f[0] == "walk"][0]
        self.assertEqual(walk[2], "0x208+0x408+0x808")
        # Bonnell's JSON gives D_SIDE_WALKS the encoding of D_SIDE_CYCLES
        _, body = events("GenuineIntel-6-1C")
        walk = [f for f in body if f[0] == "walk"][0]
        self.assertEqual(walk[1], "none")
        self.assertIn("encoding of PAGE_WALKS.D_SIDE_CYCLES", walk[3])

    def test_presets(self):
        for cid, preset in (("GenuineIntel-6-5E", "skylake"),
                            ("GenuineIntel-6-8F", "goldencove"),
                            ("AuthenticAMD-23-1", "zen1"),
                            ("AuthenticAMD-25-1", "zen3"),
                            ("AuthenticAMD-25-61", "zen4"),
                            ("AuthenticAMD-26-2", "zen5"),
                            ("GenuineIntel-6-3C", "haswell"),
                            ("GenuineIntel-6-4F", "broadwell"),
                            ("GenuineIntel-6-7E", "icelake"),
                            ("GenuineIntel-6-3A", "none")):
            _, body = events(cid)
            self.assertEqual([f[1] for f in body if f[0] == "preset"],
                             [preset], cid)

    def test_stepping_rows_need_the_stepping(self):
        out = benchtool("events", "--cpuid", "GenuineIntel-6-55")
        self.assertEqual(out.returncode, 1)
        self.assertIn("by stepping", out.stderr)
        self.assertEqual(events("GenuineIntel-6-55-7")[0][1], "cascadelakex")
        self.assertEqual(events("GenuineIntel-6-55-4")[0][1], "skylakex")

    def test_lower_case_hex_is_accepted(self):
        self.assertEqual(events("GenuineIntel-6-8f")[0][1], "sapphirerapids")
        self.assertEqual(events("GenuineIntel-6-55-a")[0][1], "cascadelakex")

    def test_this_cpus_id_as_perf_writes_it(self):
        # a recorded Skylake (CPUID 1: EAX 000506e3, model 0x5E): the id
        # is GenuineIntel-6-5E-3, model in hex, which perf's row matches
        fixture = os.path.join(ROOT, "tests", "bench", "fixtures",
                               "cpuid-skylake-handmade.txt")
        out = subprocess.run([BENCHTOOL, "events"], capture_output=True,
                             text=True,
                             env=dict(os.environ, BENCH_CPUID_FILE=fixture))
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout.split()[:2], ["model", "skylake"])

    def test_unknown_cpu_is_a_clear_error(self):
        out = benchtool("events", "--cpuid", "GenuineIntel-99-1")
        self.assertEqual(out.returncode, 1)
        self.assertIn("no row of perf's mapfile.csv matches", out.stderr)


if __name__ == "__main__":
    unittest.main()
