# SPDX-License-Identifier: GPL-2.0
"""bench/walkcost.py: the walk-cost events chosen from perf's own tables
(build/pmu-events) for one Intel, one AMD and one Arm part, and its report
from `perf stat -x,` output.

No machine of this project has a PMU, so the perf stat outputs
(fixtures/perfstat-*-constructed.csv) are CONSTRUCTED, not recorded:
written by hand in perf's documented CSV format with invented counts,
chosen so that every ratio below is exact by hand."""
import json
import os
import subprocess
import sys
import unittest

from tests.bench.common import ROOT

from bench import walkcost

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "fixtures")
X86 = os.path.join(ROOT, "build", "pmu-events", "tools", "perf",
                   "pmu-events", "arch", "x86")
SKYLAKE, ZEN5, ZEN3 = "GenuineIntel-6-5E-3", "AuthenticAMD-26-2-1", \
    "AuthenticAMD-25-1-1"
N1 = "0x00000000413fd0c1"      # Neoverse N1 r3p1
ACC = 10000000


def fixture(name):
    with open(os.path.join(FIXTURES, name)) as f:
        return f.read()


def events(cpuid):
    """{perf event: (roles, event name)} of walkcost.py events"""
    out = subprocess.run([sys.executable,
                          os.path.join(ROOT, "bench", "walkcost.py"),
                          "events", cpuid], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    got = {}
    for ln in out.stdout.splitlines():
        f = ln.split(" ", 2)
        if f[1] != "none" and not ln.startswith("perf stat"):
            got[f[1]] = (f[0], f[2])
    return got, out.stdout.splitlines()[-1]


def json_config(model, name):
    """perf_event_attr.config of an x86 event, read straight from perf's
    JSON (not through gen_table.py): event, umask, cmask"""
    for fn in sorted(os.listdir(os.path.join(X86, model))):
        if fn.endswith(".json"):
            with open(os.path.join(X86, model, fn)) as f:
                data = json.load(f)
                for e in data if isinstance(data, list) else []:
                    if e.get("EventName") == name:
                        code = int(e["EventCode"], 16)
                        return ((code & 0xff) | (code >> 8) << 32 |
                                int(e.get("UMask", "0"), 16) << 8 |
                                int(e.get("CounterMask", "0")) << 24)
    raise KeyError(name)


def report(cpuid, text, ns=None):
    """({quantity: (value, source)}, [notes]) of ACC accesses"""
    arch, roles = walkcost.roles_of(cpuid)
    rows = walkcost.report(arch, roles, walkcost.parse_perf_stat(text), ACC,
                           ns)
    return ({name: (value, src) for name, value, src in rows
             if name != "note"},
            [src for name, _, src in rows if name == "note"])


class TestEvents(unittest.TestCase):
    def test_intel_skylake(self):
        got, cmd = events(SKYLAKE)
        for name, roles in (("DTLB_LOAD_MISSES.WALK_ACTIVE", "walk_active"),
                            ("DTLB_LOAD_MISSES.WALK_PENDING",
                             "walk_pending"),
                            ("DTLB_LOAD_MISSES.WALK_COMPLETED",
                             "l1_miss+walk+walk_completed"),
                            ("DTLB_LOAD_MISSES.STLB_HIT",
                             "l1_miss+stlb_hit")):
            ev = "r%x" % json_config("skylake", name)
            self.assertEqual(got[ev], (roles, name))
            self.assertIn(ev, cmd)
        # active: cycles with a walk (cmask 1); pending: walks per cycle
        self.assertEqual(json_config("skylake",
                                     "DTLB_LOAD_MISSES.WALK_ACTIVE"),
                         0x1001008)
        self.assertTrue(cmd.startswith("perf stat -x, -e cycles,"
                                       "instructions,"))

    def test_amd_zen5(self):
        got, _ = events(ZEN5)
        self.assertEqual(got["rf045"], ("walk", "ls_l1_d_tlb_miss."
                                        "all_l2_miss"))
        self.assertEqual(got["rff45"][0], "l1_miss")
        # Zen 5's coalesced-entry umasks of event 0x45
        self.assertEqual(got["r245"], (
            "coalesced", "ls_l1_d_tlb_miss.tlb_reload_coalesced_page_hit"))
        self.assertEqual(got["r2045"][1],
                         "ls_l1_d_tlb_miss.tlb_reload_coalesced_page_miss")
        self.assertEqual(json_config("amdzen5", "ls_l1_d_tlb_miss."
                                     "tlb_reload_coalesced_page_miss"),
                         0x2045)
        # no completed-walk count on Zen 5; Zen 3 has one
        roles = walkcost.roles_of(ZEN5)[1]
        self.assertIn("walks requested", roles["walk_completed"])
        self.assertIn("r346", events(ZEN3)[0])

    def test_arm_neoverse_n1(self):
        got, cmd = events(N1)
        self.assertEqual(got["r5"], ("l1_miss", "L1D_TLB_REFILL"))
        self.assertEqual(got["r34"], ("walk", "DTLB_WALK"))
        self.assertEqual(got["r8128"][0], "walk_pending")
        self.assertIn("not in this tree's perf tables", got["r8128"][1])
        self.assertEqual(cmd, "perf stat -x, -e cycles,instructions,r5,r34,"
                              "r8128")

    def test_unknown_midr(self):
        out = subprocess.run([sys.executable,
                              os.path.join(ROOT, "bench", "walkcost.py"),
                              "events", "0x00000000deadbee0"],
                             capture_output=True, text=True)
        self.assertEqual(out.returncode, 1)
        self.assertIn("mapfile.csv", out.stderr)


# walkcost's report of perfstat-skylake-constructed.csv over 1e7 accesses
# at 100 ns per access, by hand (also what bench-native's walk cost must
# record from it, tests/bench/test_walk_native.py)
SKYLAKE_WANT = {
    "ns_per_access": 100.0,
    "cycles_per_access": 400.0,             # 4e9 / 1e7
    "instructions_per_cycle": 0.045,        # 1.8e8 / 4e9
    "l1_misses_per_1k": 997.0,              # (2e4 + 9.95e6) / 1e4
    "walks_per_1k": 995.0,
    "completed_walks_per_1k": 995.0,
    "stlb_hits_per_1k": 2.0,
    "cycles_per_walk": 360.0,               # 3.582e9 / 9.95e6
    "walk_cycles_per_access": 358.2,        # 3.582e9 / 1e7
    "walks_in_flight": 1.194,               # 3.582e9 / 3e9
    "walk_active_share_of_cycles": 0.75,    # 3e9 / 4e9
}


class TestReport(unittest.TestCase):
    def test_skylake(self):
        got, notes = report(SKYLAKE, fixture(
            "perfstat-skylake-constructed.csv"), ns=100)
        want = SKYLAKE_WANT
        self.assertEqual(set(got), set(want))
        for k, v in want.items():
            self.assertAlmostEqual(got[k][0], v, places=9, msg=k)
        self.assertEqual(got["ns_per_access"][1],
                         "wall time (the benchmark's)")
        self.assertEqual(got["cycles_per_walk"][1],
                         "hardware counter (perf stat)")
        self.assertEqual(notes, [])

    def test_zen5(self):
        got, _ = report(ZEN5, fixture("perfstat-zen5-constructed.csv"))
        self.assertAlmostEqual(got["cycles_per_access"][0], 350.0)
        self.assertAlmostEqual(got["walks_per_1k"][0], 980.0)
        self.assertIn("walks requested", got["walks_per_1k"][1])
        # an L1 miss either hits the L2 DTLB or requests a walk:
        # (9.99e6 - 9.8e6) / 1e4
        self.assertAlmostEqual(got["stlb_hits_per_1k"][0], 19.0)
        self.assertAlmostEqual(got["coalesced_reloads_per_1k"][0], 4.0)
        for k in ("cycles_per_walk", "completed_walks_per_1k",
                  "walks_in_flight"):
            self.assertIsNone(got[k][0], k)
            self.assertIn("amdzen5's JSON has no", got[k][1], k)
        self.assertIsNone(got["ns_per_access"][0])

    def test_neoverse_n1(self):
        text = fixture("perfstat-neoverse-n1-constructed.csv")
        got, _ = report(N1, text)
        self.assertAlmostEqual(got["cycles_per_access"][0], 300.0)
        self.assertAlmostEqual(got["l1_misses_per_1k"][0], 999.0)
        self.assertAlmostEqual(got["walks_per_1k"][0], 950.0)
        self.assertIsNone(got["cycles_per_walk"][0])
        self.assertIn("<not supported>", got["cycles_per_walk"][1])
        self.assertNotIn("walks_in_flight", got)
        # a core that implements DTLB_WALK_PERCYC: walks in progress
        # summed over cycles, per walk: 3.325e9 / 9.5e6 = 350
        text = text.replace("<not supported>,,r8128,0,",
                            "3325000000,,r8128,1000456789,")
        got, _ = report(N1, text)
        self.assertAlmostEqual(got["cycles_per_walk"][0], 350.0)
        self.assertAlmostEqual(got["walk_cycles_per_access"][0], 332.5)

    def test_multiplexed_count_is_flagged(self):
        text = fixture("perfstat-skylake-constructed.csv").replace(
            "3582000000,,r1008,1000234567,100.00",
            "3582000000,,r1008,500117283,50.00")
        _, notes = report(SKYLAKE, text)
        self.assertEqual(notes, ["DTLB_LOAD_MISSES.WALK_PENDING ran 50.0 % "
                                 "of the time (perf scaled it)"])

    def test_hybrid_event_names(self):
        # perf prints a generic event of a hybrid part with its PMU
        got = walkcost.parse_perf_stat("5,,cpu_core/cycles/,1,100.00,,\n")
        self.assertEqual(got, {"cycles": (5.0, 100.0, None)})
        # once per core PMU: the core type the process never ran on
        # (<not counted>) does not hide the other's count, in either
        # order; counts on both are the process's sum
        for text in ("5,,cpu_core/cycles/,1,100.00,,\n"
                     "<not counted>,,cpu_atom/cycles/,0,0.00,,\n",
                     "<not counted>,,cpu_atom/cycles/,0,0.00,,\n"
                     "5,,cpu_core/cycles/,1,100.00,,\n"):
            self.assertEqual(walkcost.parse_perf_stat(text),
                             {"cycles": (5.0, 100.0, None)}, text)
        got = walkcost.parse_perf_stat("3,,cpu_atom/cycles/,1,50.00,,\n"
                                       "4,,cpu_core/cycles/,1,100.00,,\n")
        self.assertEqual(got, {"cycles": (7.0, 50.0, None)})

    def test_garbage_is_an_error(self):
        with self.assertRaises(walkcost.Error):
            walkcost.parse_perf_stat("lots,,cycles,1,100.00,,\n")


if __name__ == "__main__":
    unittest.main()
