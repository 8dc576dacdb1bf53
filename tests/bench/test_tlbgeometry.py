# SPDX-License-Identifier: GPL-2.0
"""Where the TLB model's geometry comes from (bench/tlbcpuid.c,
bench/tlbmodel.c): CPUID decoding from recorded registers, --model auto on
a CPU no preset fits, the presets against their cited sources, and the
replacement policy's gradual degradation past a TLB's reach."""
import json
import os
import subprocess
import unittest

from tests.bench.benchbin import BenchRun
from tests.bench.common import BENCHTOOL, benchtool

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "fixtures")
PAGE = 4096


def fixture(name):
    return os.path.join(FIXTURES, name)


def geometry(*args, cpuid=None):
    """benchtool tlbgeometry's JSON, with CPUID read from a fixture"""
    env = dict(os.environ)
    if cpuid:
        env["BENCH_CPUID_FILE"] = fixture(cpuid)
    out = subprocess.run([BENCHTOOL, "tlbgeometry"] + list(args), env=env,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def table(levels):
    """{(level, size): entries} of a geometry's per-size table"""
    return {(lv, sz): e["entries"] for lv, sizes in levels.items()
            for sz, e in sizes.items()}


class TestCpuidDecoding(unittest.TestCase):
    def test_this_host_zen5_under_kvm(self):
        g = geometry("--model", "zen5", cpuid="cpuid-epyc-zen5-kvm.txt")
        cpu = g["cpu"]
        self.assertEqual((cpu["vendor"], cpu["family"], cpu["model"],
                          cpu["stepping"]), ("AuthenticAMD", 26, 2, 1))
        self.assertEqual(cpu["hypervisor"], "KVMKVMKVM")
        c = g["cpuid"]
        self.assertIn("0x80000005", c["leaves"])
        self.assertEqual(table(c["levels"]),
                         {("l1", "4K"): 96, ("l1", "2M"): 96,
                          ("l2", "4K"): 128, ("l2", "2M"): 128})
        self.assertEqual(c["levels"]["l1"]["4K"]["ways"], 96)  # fully
        self.assertEqual(c["levels"]["l2"]["4K"]["ways"], 8)
        self.assertEqual(c["levels"]["l2"]["2M"]["ways"], 4)
        # the preset says 4096 L2 entries: the rewritten leaf disagrees,
        # and the report says a hypervisor may have rewritten it
        self.assertIn("l2 4K: CPUID 128 entries, model 4096",
                      g["disagreements"])
        self.assertNotIn("l1 4K", " ".join(g["disagreements"]))
        self.assertIn("hypervisor", g["cpuid"]["note"])

    def test_recorded_zen1_on_bare_metal(self):
        g = geometry("--model", "zen1", cpuid="cpuid-ryzen-1800x-zen1.txt")
        cpu = g["cpu"]
        self.assertEqual((cpu["vendor"], cpu["family"], cpu["model"],
                          cpu["hypervisor"]), ("AuthenticAMD", 23, 1, None))
        self.assertEqual(table(g["cpuid"]["levels"]),
                         {("l1", "4K"): 64, ("l1", "2M"): 64, ("l1", "1G"): 64,
                          ("l2", "4K"): 1536, ("l2", "2M"): 1536})
        # 8 ways for 4K, 2 for 2M: the code table, not a 12
        self.assertEqual(g["cpuid"]["levels"]["l2"]["4K"]["ways"], 8)
        self.assertEqual(g["cpuid"]["levels"]["l2"]["2M"]["ways"], 2)
        self.assertEqual(g["disagreements"], [])
        self.assertEqual(geometry(cpuid="cpuid-ryzen-1800x-zen1.txt")["model"],
                         "zen1")

    def test_intel_leaf_0x18(self):
        g = geometry("--model", "skylake", cpuid="cpuid-skylake-handmade.txt")
        c = g["cpuid"]
        self.assertEqual(c["leaves"], "0x18")
        self.assertIsNone(g["cpu"]["hypervisor"])
        self.assertEqual(table(c["levels"]),
                         {("l1", "4K"): 64, ("l1", "2M"): 32, ("l1", "1G"): 4,
                          ("l2", "4K"): 1536, ("l2", "2M"): 1536,
                          ("l2", "1G"): 16})
        self.assertEqual(c["spec"],
                         "l1=4K:64:4,2M:32:4,1G:4:4;l2=4K+2M:1536:12,1G:16:4")
        self.assertEqual(g["disagreements"], [])
        g = geometry("--model", "haswell", cpuid="cpuid-skylake-handmade.txt")
        self.assertIn("l2 4K: CPUID 1536 entries, model 1024",
                      g["disagreements"])

    def test_amd_leaves_with_1g(self):
        g = geometry("--model", "cpuid", cpuid="cpuid-unknown-metal.txt")
        self.assertEqual(table(g["cpuid"]["levels"]),
                         {("l1", "4K"): 64, ("l1", "2M"): 32, ("l1", "1G"): 32,
                          ("l2", "4K"): 1024, ("l2", "2M"): 1024,
                          ("l2", "1G"): 1024})
        self.assertEqual(g["model"], "cpuid")
        self.assertEqual(table(g["levels"]), table(g["cpuid"]["levels"]))
        # CPUID says nothing of replacement: the presets' policies, as its
        # source says: the L1 LRU (the step tlbreach measured), the L2
        # seeded random (true LRU everywhere before issue 29)
        geo = g["geometry"]
        self.assertEqual({a["policy"] for a in geo["l1"]}, {"lru"})
        self.assertEqual({a["policy"] for a in geo["l2"]}, {"random"})
        self.assertTrue(geo["spec"].startswith(
            "l1=4K:64:64:lru,2M:32:32:lru,1G:32:32:lru;l2=4K:1024:8,"), geo["spec"])
        self.assertIn("L2 modelled as seeded random, L1 as LRU", geo["source"])

    def test_no_tlb_leaves(self):
        g = geometry("--model", "skylake", cpuid="cpuid-unknown-vm.txt")
        self.assertIsNone(g["cpuid"]["levels"])
        self.assertTrue(g["cpuid"]["why"])


class TestAuto(unittest.TestCase):
    def test_unknown_cpu_has_no_model(self):
        g = geometry(cpuid="cpuid-unknown-vm.txt")
        self.assertIsNone(g["model"])
        self.assertIsNone(g["levels"])
        self.assertIn("Shanghai", g["why"])
        self.assertIn("no preset", g["why"])
        self.assertIn("hypervisor", g["why"])
        self.assertNotIn("skylake", json.dumps(g))

    def test_unknown_cpu_on_bare_metal_takes_cpuid(self):
        g = geometry(cpuid="cpuid-unknown-metal.txt")
        self.assertEqual(g["model"], "cpuid")
        self.assertIn("CPUID", g["why"])

    def test_zen5_host_takes_zen5(self):
        g = geometry(cpuid="cpuid-epyc-zen5-kvm.txt")
        self.assertEqual(g["model"], "zen5")

    def test_chase_leaves_model_columns_empty(self):
        env = {"BENCH_CPUID_FILE": fixture("cpuid-unknown-vm.txt")}
        r = BenchRun("chase", ["--backings", "devzero", "--sizes", "1M",
                               "--hops", "16", "--reps", "1", "--warmup",
                               "0", "--model", "auto"], env=env)
        self.assertEqual(r.returncode, 0, r.describe())
        self.assertEqual(len(r.rows), 1, r.describe())
        row = r.rows[0]
        self.assertEqual(row["model_walks_per_1k"], "")
        self.assertEqual(row["model_l1_misses_per_1k"], "")
        self.assertEqual(row["model_preset"], "none")
        geo = r.meta["tlb_geometry"][-1]
        self.assertIsNone(geo["name"])
        self.assertIn("no preset", geo["why"])
        self.assertNotIn("skylake", r.stdout)


# Each preset's entries per level and page size as its cited source gives
# them (the source named in bench/tlbmodel.c): the preset, what its source
# line must cite, then L1 4K, 2M, 1G and L2 4K, 2M, 1G (None: the source
# gives no entries held as that size).
SIZES = (("l1", "4K"), ("l1", "2M"), ("l1", "1G"),
         ("l2", "4K"), ("l2", "2M"), ("l2", "1G"))
SOURCES = (
    ("haswell",    "Haswell",     64, 32,    4, 1024, 1024, None),
    ("broadwell",  "Broadwell",   64, 32,    4, 1536, 1536,   16),
    ("skylake",    "Skylake",     64, 32,    4, 1536, 1536,   16),
    ("icelake",    "Ice Lake",    64, 32,    8, 2048, 2048, 1024),
    ("goldencove", "Golden Cove", 96, 32,    8, 2048, 2048, 1024),
    ("gracemont",  "Gracemont",   64, 64, None, 2048, 2048, None),
    ("zen1",       "56305",       64, 64,   64, 1536, 1536, None),
    ("zen3",       "56665",       64, 64,   64, 2048, 2048, None),
    ("zen4",       "57647",       72, 72,   72, 3072, 3072, None),
    ("zen5",       "58455",       96, 96,   96, 4096, 4096, None),
)


class TestPresets(unittest.TestCase):
    def test_numbers_match_the_source(self):
        for name, cite, *entries in SOURCES:
            want = {k: n for k, n in zip(SIZES, entries) if n is not None}
            g = geometry("--model", name, cpuid="cpuid-unknown-vm.txt")
            self.assertEqual(g["model"], name)
            self.assertIn(cite, g["source"], name)
            # entries held as their own size; 1G smashed into 2M L2
            # entries is not a 1G entry
            got = {k: v for k, v in table(g["levels"]).items()
                   if k[1] in ("4K", "2M", "1G")
                   and g["levels"][k[0]][k[1]]["held_as"] == k[1]}
            self.assertEqual(got, want, name)

    def test_reach(self):
        g = geometry("--model", "zen3", cpuid="cpuid-unknown-vm.txt")
        lv = g["levels"]
        self.assertEqual(lv["l1"]["4K"]["reach_bytes"], 64 * 4096)
        self.assertEqual(lv["l2"]["2M"]["reach_bytes"], 2048 << 21)
        # a 1G page smashed into 2M L2 entries reaches 2 MB per entry
        self.assertEqual(lv["l2"]["1G"], {"entries": 2048, "ways": 12,
                                          "held_as": "2M",
                                          "reach_bytes": 2048 << 21})

    def test_source_names_the_policy(self):
        out = benchtool("presets")
        for ln in out.stdout.splitlines():
            name, spec, source = ln.split("\t")
            self.assertTrue("undocumented; modelled as" in source
                            or "documented" in source, name)
            self.assertNotIn("policy=lru", spec, name)

    def test_zen_l2_holds_page_directory_entries(self):
        for name in ("zen1", "zen3", "zen4", "zen5"):
            g = geometry("--model", name, cpuid="cpuid-unknown-vm.txt")
            self.assertIn("PDE", g["source"], name)
            self.assertTrue(g["geometry"]["l2"][0]["pde"], name)


def l1_4k(name):
    g = geometry("--model", name, cpuid="cpuid-unknown-vm.txt")
    return g["levels"]["l1"]["4K"]["entries"], g["levels"]["l2"]["4K"]["entries"]


def walks(spec, pages):
    out = benchtool("tlbwalks", spec, str(pages * PAGE), "4", str(PAGE))
    assert out.returncode == 0, out.stderr
    f = out.stdout.split()
    return float(f[3]), float(f[5])     # walks, L1 misses per 1000


class TestNoCliff(unittest.TestCase):
    """A random cycle of one access per 4K page, 10 % past a level's
    reach, one lap warm and one counted (benchtool tlbwalks: a transient):
    under true LRU every access misses that level (the cliff); under each
    preset's policy the misses grow gradually.  The steady state the
    chase reports is tested in test_tlbmodel_steady.py."""

    def test_past_l1_reach(self):
        # the presets' L1 is LRU (the step tlbreach measured natively):
        # a fully associative one misses every time 10 % past its reach, a
        # set-associative one in its overfull sets, exactly as true LRU
        for name, full in (("zen5", True), ("zen3", True),
                           ("neoverse-n1", True), ("skylake", False),
                           ("goldencove", False)):
            l1, _ = l1_4k(name)
            pages = l1 + l1 // 10
            lru = walks(name + ";policy=lru", pages)[1]
            if full:
                self.assertEqual(lru, 1000.0, name)
            self.assertEqual(walks(name, pages)[1], lru, name)

    def test_past_l2_reach(self):
        for name in ("zen5", "skylake", "icelake"):
            _, l2 = l1_4k(name)
            pages = l2 + l2 // 10
            self.assertGreater(walks(name + ";policy=lru", pages)[0], 900,
                               name)
            w = walks(name, pages)[0]
            self.assertGreater(w, 0, name)
            self.assertLess(w, 600, name)


if __name__ == "__main__":
    unittest.main()
