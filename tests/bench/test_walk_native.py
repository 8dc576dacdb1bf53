# SPDX-License-Identifier: GPL-2.0
"""The native run's walk cost (bench/benchrun/walk.py, meta.json
walk_cost; issue 29 section 6): after the chase, each backing's chase
again at its largest page-hop size under `perf stat` with
bench/walkcost.py's events, and its summary section
(plots/benches/chase.py).

No machine of this project has a PMU, so `perf` here is a fake put first
on PATH: it runs the command it is given (the real build/bench/chase, or
a fake one) and writes, for each event it is asked for, that event's line
of a perf stat output of fixtures/: the constructed Skylake, Zen 5 and
Neoverse N1 outputs of tests/bench/test_walkcost.py (counts for
10,000,000 accesses), and the recorded output of this project's Intel VM,
which has no PMU.  The shorter of the two runs per backing (1 timed
repetition) reads SETUP for every count, the longer SETUP plus the
fixture's count, so only a walk cost that subtracts the one from the
other, over (1 + 10 - 1) x 1,000,000 accesses, gets test_walkcost's
numbers.  An event the fixture lacks fails the fake perf: the event list
must be walkcost's."""
import csv
import io
import json
import os
import re
import shutil
import stat
import sys
import tempfile
import unittest
from contextlib import redirect_stdout
from unittest import mock

from tests.bench.common import BINDIR
from tests.bench.test_walkcost import SKYLAKE_WANT
from bench import contract
from bench.benchrun import native, rows, walk
from plots import render
from plots.summary import text_summary

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "fixtures")
SKYLAKE, ZEN5 = "GenuineIntel-6-5E-3", "AuthenticAMD-26-2-1"
N1 = "0x00000000413fd0c1"
# a count every event reads in the one-repetition run: the setup
SETUP = 1234567
HOPS, REPS = 1000000, 10          # 1e7 accesses, as the fixtures have
WSS = 1 << 20

FAKE_PERF = r'''#!%(python)s
import json, os, subprocess, sys
a = sys.argv[1:]
with open(os.environ["FAKE_PERF_LOG"], "a") as f:
    f.write(json.dumps([os.environ.get("BENCH_PMU_OFF")] + a) + "\n")
assert a[:2] == ["stat", "-x,"], a
if os.environ.get("FAKE_PERF_REFUSE"):
    # as perf does where perf_event_paranoid forbids (the words invented)
    sys.stderr.write("Error:\nNo permission to enable cycles event.\n")
    sys.exit(255)
out, events = a[a.index("-o") + 1], a[a.index("-e") + 1].split(",")
cmd = a[a.index("--") + 1:]
fix = {}
with open(os.environ["FAKE_PERF_FIXTURE"]) as f:
    for ln in f:
        if ln.strip() and not ln.startswith("#"):
            fix[ln.split(",")[2]] = ln.strip().split(",")
reps = [cmd[i + 1] for i, x in enumerate(cmd[:-1]) if x == "--reps"]
rc = subprocess.run(cmd).returncode
lines = []
for e in events:
    if e not in fix:
        sys.stderr.write("fake perf: no %%s in %%s\n" %% (
            e, os.environ["FAKE_PERF_FIXTURE"]))
        sys.exit(3)
    f = list(fix[e])
    if reps and not f[0].startswith("<"):
        f[0] = str(%(setup)d + (int(f[0]) if reps[-1] != "1" else 0))
    lines.append(",".join(f))
with open(out, "w") as f:
    f.write("# started on Sun Dec  6 20:00:00 2026\n\n" +
            "\n".join(lines) + "\n")
sys.exit(rc)
'''

# the chase's protocol for what it is asked, 100 ns per access; backing
# "broken" fails as a binary would
FAKE_CHASE = r'''#!%(python)s
import sys
a = sys.argv[1:]
o = {a[i][2:]: a[i + 1] for i in range(len(a) - 1) if a[i].startswith("--")}
cols = %(cols)r
if o["backings"] == "broken":
    print("@error chase broken: cannot map")
    sys.exit(2)
print("@header chase " + ",".join(cols))
print('@meta method {"bench": "chase", "warm_pass": %%s, "reps": %%s}'
      %% (o.get("warm-pass", "1"), o["reps"]))
row = dict(backing=o["backings"], page_kb="4", wss_bytes=o["sizes"],
           ns_per_access="100.000", hop=o["hop"], reps=o["reps"],
           hops=str(int(o["hops"]) // 16 * 16), model_preset=o["model"])
print("@row chase " + ",".join(row.get(c, "") for c in cols))
'''


def chase_csv(path, rows):
    """chase.csv with the contract's columns: rows of (backing, page_kb,
    wss, ns_per_access, hop), ns_min and ns_max set apart from
    ns_per_access (the median) so a reader of the wrong column shows"""
    cols = contract.load().bench("chase")["columns"]
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, cols, restval="")
        w.writeheader()
        for b, kb, wss, ns, hop in rows:
            w.writerow(dict(backing=b, page_kb=kb, wss_bytes=wss,
                            ns_per_access=ns, ns_min=ns * 0.8, ns_max=ns * 1.5,
                            hop=hop,
                            reps=REPS, hops=HOPS))


class FakeResults:
    def __init__(self, d, meta):
        self.dir = d
        self.meta = meta

    def csv_path(self, bench):
        return os.path.join(self.dir, bench + ".csv")

    def write_meta(self):
        with open(os.path.join(self.dir, "meta.json"), "w") as f:
            json.dump(self.meta, f)


class Fakes(unittest.TestCase):
    """The fake perf first on PATH, a fake chase, and the walk cost
    after a chase's rows (no tests of its own)"""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="walk-native-")
        self.addCleanup(shutil.rmtree, self.dir)
        self.bin = os.path.join(self.dir, "bin")
        os.mkdir(self.bin)
        self.log = os.path.join(self.dir, "perf-calls")
        self.script("perf", FAKE_PERF % {"python": sys.executable,
                                         "setup": SETUP})
        self.cpu = sorted(os.sched_getaffinity(0))[-1]
        self.chase = os.path.join(BINDIR, "chase")

    def script(self, name, text):
        path = os.path.join(self.bin, name)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, stat.S_IRWXU)
        return path

    def fake_chase(self):
        cols = contract.load().bench("chase")["columns"]
        return self.script("chase", FAKE_CHASE % {"python": sys.executable,
                                                  "cols": cols})

    def run_walk(self, fixture, cpuid="", rows=None, chase=None,
                 sys_root="/", path=None):
        """walk_cost after a chase of rows (default: devzero's 1 MB page
        hop at 100 ns), the chase's command as run.py gives it; (rc,
        meta.json walk_cost, stdout)"""
        d = tempfile.mkdtemp(dir=self.dir)
        chase_csv(os.path.join(d, "chase.csv"), rows or [
            ("devzero", 4, WSS // 2, 90, "page"),
            ("devzero", 4, WSS, 100, "page"),
            ("devzero", 4, 4 * WSS, 200, "line")])
        res = FakeResults(d, {
            "errors": [],
            "method": {"per_bench": {"chase": {"cpu_pinned": self.cpu}}},
            "other": {"pmu": {"cpuid": cpuid}}})
        cmd = [chase or self.chase, "--sizes", "%d,%d" % (WSS // 2, WSS),
               "--reps", str(REPS), "--warmup", "1", "--hops", str(HOPS),
               "--hop", "both", "--seed", "1", "--model", "auto",
               "--backings", "devzero"]
        env = {"PATH": path if path is not None else
               self.bin + os.pathsep + os.environ["PATH"],
               "FAKE_PERF_LOG": self.log,
               "FAKE_PERF_FIXTURE": os.path.join(FIXTURES, fixture)}
        out = io.StringIO()
        with mock.patch.dict(os.environ, env), redirect_stdout(out):
            rc = walk.walk_cost(res, BINDIR, cmd, sys_root=sys_root)
        with open(os.path.join(d, "meta.json")) as f:
            self.assertEqual(json.load(f)["walk_cost"],
                             res.meta["walk_cost"])
        self.meta = res.meta
        return rc, res.meta["walk_cost"], out.getvalue()

    def calls(self):
        """each perf call's arguments; self.pmu_off: BENCH_PMU_OFF as
        each call had it"""
        try:
            with open(self.log) as f:
                got = [json.loads(ln) for ln in f]
        except FileNotFoundError:
            got = []
        self.pmu_off = [c[0] for c in got]
        return [c[1:] for c in got]

    def values(self, w, backing="devzero"):
        return {k: v["value"] for k, v in
                w["backings"][backing]["report"].items()}



class WalkCost(Fakes):
    def test_skylake(self):
        rc, w, out = self.run_walk("perfstat-skylake-constructed.csv",
                                   SKYLAKE)
        self.assertEqual(rc, 0)
        self.assertNotIn("reason", w)
        b = w["backings"]["devzero"]
        # the largest page-hop size, not the line hop's 4 MB
        self.assertEqual((b["wss_bytes"], b["hop"], b["page_kb"]),
                         (WSS, "page", 4))
        # 10 repetitions of 1e6 hops: the runs of 11 and of 1
        self.assertEqual((b["accesses"], b["hops"], b["reps"]),
                         (10000000, HOPS, [1, 11]))
        # chase.csv's row gives ns_per_access; the rest is the fixture's
        want = SKYLAKE_WANT
        got = self.values(w)
        self.assertEqual(set(got), set(want))
        for k, v in want.items():
            self.assertAlmostEqual(got[k], v, places=9, msg=k)
        self.assertEqual(b["report"]["cycles_per_walk"]["source"],
                         "hardware counter (perf stat)")
        self.assertEqual(b["counts"]["r1008"],
                         [SETUP, 3582000000 + SETUP])
        self.assertIn("hardware counters: perf stat -x, -e cycles,"
                      "instructions,r2008,re08,r1001008,r1008", w["source"])
        self.assertEqual(w["cpuid"], SKYLAKE)
        # the probe, then the runs of 1 and 11 repetitions: one backing,
        # its largest page-hop size, the chase's CPU, the same hops, no
        # model, no pass between repetitions
        calls = self.calls()
        self.assertEqual(calls[0][-2:], ["--", "true"])
        self.assertEqual(len(calls), 3)
        # the chase's own counter group off: perf's events alone
        self.assertEqual(self.pmu_off, ["1", "1", "1"])
        for c, reps in zip(calls[1:], ("1", "11")):
            self.assertEqual(c[c.index("-e") + 1],
                             "cycles,instructions,r2008,re08,r1001008,"
                             "r1008")
            cmd = c[c.index("--") + 1:]
            self.assertEqual(cmd[0], self.chase)
            opt = {cmd[i]: cmd[i + 1] for i in range(1, len(cmd) - 1, 2)}
            self.assertEqual(opt, {
                "--sizes": str(WSS), "--reps": reps, "--warmup": "1",
                "--hops": str(HOPS), "--hop": "page", "--seed": "1",
                "--model": "none", "--backings": "devzero",
                "--warm-pass": "0", "--cpu": str(self.cpu)})
        self.assertIn("devzero 360.0 cycles/walk", out)

    def test_zen5(self):
        rc, w, _ = self.run_walk("perfstat-zen5-constructed.csv", ZEN5)
        self.assertEqual(rc, 0)
        got = self.values(w)
        self.assertAlmostEqual(got["cycles_per_access"], 350.0)
        self.assertAlmostEqual(got["walks_per_1k"], 980.0)
        # (9.99e6 - 9.8e6) / 1e4: an L1 miss hits the L2 DTLB or walks
        self.assertAlmostEqual(got["stlb_hits_per_1k"], 19.0)
        self.assertAlmostEqual(got["coalesced_reloads_per_1k"], 4.0)
        rep = w["backings"]["devzero"]["report"]
        self.assertIn("walks requested", rep["walks_per_1k"]["source"])
        # AMD's tables have no walk-duration event
        self.assertIsNone(got["cycles_per_walk"])
        self.assertIn("amdzen5's JSON has no",
                      rep["cycles_per_walk"]["source"])

    def test_neoverse_n1(self):
        """An arm64 chase reports no x86 id: the MIDR of its CPU from
        sysfs names the tables."""
        root = os.path.join(self.dir, "sys-root")
        midr = os.path.join(root, walk.MIDR % self.cpu)
        os.makedirs(os.path.dirname(midr))
        with open(midr, "w") as f:
            f.write(N1 + "\n")
        rc, w, _ = self.run_walk("perfstat-neoverse-n1-constructed.csv",
                                 sys_root=root)
        self.assertEqual((rc, w["cpuid"], w["arch"]), (0, N1, "arm64"))
        got = self.values(w)
        self.assertAlmostEqual(got["cycles_per_access"], 300.0)
        self.assertAlmostEqual(got["l1_misses_per_1k"], 999.0)
        self.assertAlmostEqual(got["walks_per_1k"], 950.0)
        # N1 does not implement DTLB_WALK_PERCYC
        self.assertIsNone(got["cycles_per_walk"])
        self.assertIn("<not supported>", w["backings"]["devzero"]["report"]
                      ["cycles_per_walk"]["source"])
        # a core that does: walks in progress summed over cycles / walks
        with open(os.path.join(FIXTURES,
                               "perfstat-neoverse-n1-constructed.csv")) as f:
            text = f.read().replace("<not supported>,,r8128,0,",
                                    "3325000000,,r8128,1000456789,")
        with open(os.path.join(self.dir, "n1-percyc.csv"), "w") as f:
            f.write(text)
        _, w, _ = self.run_walk(os.path.join(self.dir, "n1-percyc.csv"),
                                sys_root=root)
        got = self.values(w)
        self.assertAlmostEqual(got["cycles_per_walk"], 350.0)
        self.assertAlmostEqual(got["walk_cycles_per_access"], 332.5)

    def test_no_pmu_is_said_once_and_never_fails(self):
        """This project's Intel VM, as recorded: perf exits 0 and reads
        every event <not supported>.  Said once; no chase runs."""
        rc, w, out = self.run_walk(
            "perfstat-xeon-6-a7-kvm-nopmu-recorded.csv",
            "GenuineIntel-6-A7-1")
        self.assertEqual(rc, 0)
        self.assertEqual(w["reason"], "not measured: no PMU: perf stat -e "
                                      "cycles read <not supported>")
        self.assertNotIn("backings", w)
        self.assertEqual([c[-1] for c in self.calls()], ["true"])
        self.assertFalse(self.meta["errors"])
        self.assertIn("walk cost not measured: no PMU", out)

    def test_perf_cannot_open_cycles(self):
        with mock.patch.dict(os.environ, {"FAKE_PERF_REFUSE": "1"}):
            rc, w, _ = self.run_walk("perfstat-skylake-constructed.csv",
                                     SKYLAKE)
        self.assertEqual(rc, 0)
        self.assertEqual(w["reason"], "not measured: perf cannot count "
                         "cycles: perf stat -e cycles -- true exited 255: "
                         "No permission to enable cycles event.")
        self.assertEqual(len(self.calls()), 1)

    def test_no_perf(self):
        rc, w, _ = self.run_walk("perfstat-skylake-constructed.csv", SKYLAKE,
                                 path=os.path.join(self.dir, "empty"))
        self.assertEqual(rc, 0)
        self.assertEqual(w["reason"], "not measured: perf is not installed "
                                      "(no perf on PATH)")
        self.assertEqual(self.calls(), [])

    def test_events_not_resolved(self):
        # a model perf's tables do not have, and an arm64 CPU whose MIDR
        # the chase did not report and sysfs does not give
        rc, w, _ = self.run_walk("perfstat-skylake-constructed.csv",
                                 "GenuineIntel-6-1-1")
        self.assertEqual(rc, 0)
        self.assertIn("the walk events of CPU GenuineIntel-6-1-1 cannot be "
                      "resolved from perf's tables", w["reason"])
        rc, w, _ = self.run_walk("perfstat-skylake-constructed.csv",
                                 sys_root=os.path.join(self.dir, "none"))
        self.assertEqual(rc, 0)
        self.assertIn("the CPU's id is not known", w["reason"])
        self.assertEqual(len(self.calls()), 2)      # the probes alone

    def test_perf_fails(self):
        # perf stat itself fails (here: an event the fixture lacks, as a
        # perf that cannot open one exits): that backing says why
        rc, w, _ = self.run_walk("perfstat-zen5-constructed.csv", SKYLAKE)
        self.assertEqual(rc, 0)
        why = w["backings"]["devzero"]["reason"]
        self.assertIn("exited 3: fake perf: no r2008", why)
        self.assertNotIn("report", w["backings"]["devzero"])

    def test_each_backing_and_a_failing_one(self):
        """Every backing with page-hop rows, each at its own largest size;
        one whose chase fails says why, the others are measured."""
        rc, w, _ = self.run_walk(
            "perfstat-skylake-constructed.csv", SKYLAKE,
            chase=self.fake_chase(),
            rows=[("devzero", 4, WSS, 100, "page"),
                  ("broken", 4, WSS, 100, "page"),
                  ("thp", 2048, 2 * WSS, 50, "page"),
                  ("thp", 2048, 8 * WSS, 50, "line")])
        self.assertEqual(rc, 0)
        self.assertEqual(sorted(w["backings"]), ["broken", "devzero", "thp"])
        self.assertIn("exited 2", w["backings"]["broken"]["reason"])
        self.assertEqual(w["backings"]["thp"]["wss_bytes"], 2 * WSS)
        for b, ns in (("devzero", 100.0), ("thp", 50.0)):
            got = self.values(w, b)
            self.assertAlmostEqual(got["cycles_per_walk"], 360.0)
            self.assertAlmostEqual(got["ns_per_access"], ns)
        sizes = {c[c.index("--backings") + 1]: c[c.index("--sizes") + 1]
                 for c in self.calls() if "--backings" in c}
        self.assertEqual(sizes, {"devzero": str(WSS), "broken": str(WSS),
                                 "thp": str(2 * WSS)})

    def test_no_page_hop(self):
        rc, w, _ = self.run_walk("perfstat-skylake-constructed.csv", SKYLAKE,
                                 rows=[("devzero", 4, WSS, 100, "line")])
        self.assertEqual(rc, 0)
        self.assertIn("chase.csv has no page-hop row", w["reason"])

    def summary(self, meta):
        """The summary's text of a run with this meta.json and a chase"""
        d = tempfile.mkdtemp(dir=self.dir)
        chase_csv(os.path.join(d, "chase.csv"),
                  [("devzero", 4, WSS, 100, "page")])
        run = render.Run(d, dict(meta, timing_source="native"))
        secs = render.collect(run)[1]
        return text_summary(d, "", "", secs, [], [])

    def test_summary(self):
        _, w, _ = self.run_walk("perfstat-skylake-constructed.csv", SKYLAKE)
        text = self.summary(self.meta).splitlines()
        at = [i for i, ln in enumerate(text)
              if ln.startswith("Page-walk cost (hardware counters)  [")][0]
        # right after the latency it explains
        self.assertTrue(text[at - 4].startswith("Latency at the largest "
                                                "working set, hop page"),
                        text[at - 4])
        self.assertIn("meta.json walk_cost: hardware counters: perf stat "
                      "-x, -e cycles,instructions", text[at])
        self.assertEqual(text[at + 1].split(), [
            "backing", "working", "set", "cycles/walk", "walk",
            "cycles/access", "cycles/access", "ns/access", "source"])
        self.assertEqual(re.split(r"\s{2,}", text[at + 2].strip()), [
            "devzero", "1 MiB", "360.0", "358.2", "400.0", "100.0",
            "hardware counter (perf stat); ns: wall time (the "
            "benchmark's)"])

    def test_summary_unknown_values_say_why(self):
        _, w, _ = self.run_walk("perfstat-zen5-constructed.csv", ZEN5)
        text = self.summary(self.meta)
        row = [ln for ln in text.splitlines()
               if ln.startswith("  devzero")][-1]
        self.assertIn("n/a", row)
        self.assertIn("350.0", row)
        self.assertIn("hardware counter (perf stat); ns: wall time (the "
                      "benchmark's); cycles/walk, walk cycles/access not "
                      "known: amdzen5's JSON has no", row)

    def test_summary_not_measured_is_one_line(self):
        _, w, _ = self.run_walk("perfstat-xeon-6-a7-kvm-nopmu-recorded.csv",
                                "GenuineIntel-6-A7-1")
        text = self.summary(self.meta).splitlines()
        at = [i for i, ln in enumerate(text)
              if ln.startswith("Page-walk cost (hardware counters)")][0]
        # one line, no header, after every other section
        self.assertEqual(text[at + 1:at + 3], [
            "  not measured: no PMU: perf stat -e cycles read <not "
            "supported>", ""])
        self.assertTrue(text[at + 3].startswith("figures: "), text[at + 3])
        # a guest run, and a run from before walk_cost
        for meta, why in (({"mode": "guest"}, "a guest run does not "
                           "measure it"), ({"mode": "native"},
                                           "meta.json has no walk_cost")):
            text = self.summary(meta)
            self.assertIn("  not measured: " + why, text)


class RunNative(Fakes):
    """run_native itself: after the chase's own run (the real chase, its
    rows and @meta into a real results folder), the walk cost, with what
    the chase reported: its CPU (@meta method) and the CPU id it read
    (@meta pmu; here Skylake's, BENCH_CPUID_FILE standing in that CPU).
    Neither a walk cost nor its absence changes the run's exit status."""

    def native(self, fixture):
        out = io.StringIO()
        res = rows.Results(os.path.join(self.dir, "results"), fixture,
                           {"mode": "native"})
        cmd = [self.chase, "--sizes", "%d,%d" % (WSS // 2, WSS), "--reps",
               str(REPS), "--warmup", "1", "--hops", str(HOPS), "--hop",
               "both", "--seed", "1", "--model", "none", "--backings",
               "devzero"]
        env = {"PATH": self.bin + os.pathsep + os.environ["PATH"],
               "FAKE_PERF_LOG": self.log,
               "FAKE_PERF_FIXTURE": os.path.join(FIXTURES, fixture),
               "BENCH_CPUID_FILE": os.path.join(
                   FIXTURES, "cpuid-skylake-handmade.txt")}
        with mock.patch.dict(os.environ, env), redirect_stdout(out):
            rc = native.run_native(res, [("chase", [])], [cmd], None, {},
                                   False, None)
        with open(os.path.join(res.dir, "meta.json")) as f:
            return rc, json.load(f)

    def test_after_the_chase(self):
        rc, meta = self.native("perfstat-skylake-constructed.csv")
        self.assertEqual(rc, 0)
        w = meta["walk_cost"]
        self.assertEqual((w["cpuid"], w["cpu"]), (
            SKYLAKE, meta["method"]["per_bench"]["chase"]["cpu_pinned"]))
        b = w["backings"]["devzero"]
        self.assertEqual((b["wss_bytes"], b["accesses"]), (WSS, 10000000))
        self.assertAlmostEqual(b["report"]["cycles_per_walk"]["value"],
                               360.0)
        self.assertAlmostEqual(
            b["report"]["walk_cycles_per_access"]["value"], 358.2)
        # the chase's own median at 1 MB, page hop, as chase.csv has it
        with open(os.path.join(self.dir, "results", "latest",
                               "chase.csv")) as f:
            ns = [float(r["ns_per_access"]) for r in csv.DictReader(f)
                  if r["hop"] == "page" and int(r["wss_bytes"]) == WSS]
        self.assertEqual(b["report"]["ns_per_access"]["value"], ns[0])

    def test_the_chases_counters_off(self):
        """BENCH_PMU_OFF: the real chase opens no hardware event (so
        none shares the PMU with perf stat's) and says why; the software
        page faults still count."""
        from tests.bench.benchbin import BenchRun
        r = BenchRun("chase", ["--sizes", "1M", "--hop", "page", "--reps",
                               "1", "--hops", "1000", "--model", "none",
                               "--backings", "devzero"],
                     env={"BENCH_PMU_OFF": "1"})
        self.assertEqual(r.returncode, 0, r.describe())
        got = r.meta["counters"][0]
        for name in ("cycles", "instructions", "l1-dtlb-load-misses",
                     "page-walks"):
            self.assertFalse(got[name]["available"], name)
            self.assertIn("BENCH_PMU_OFF is set", got[name]["reason"])
        self.assertTrue(got["page-faults"]["available"])
        self.assertEqual(r.rows[0]["faults"], "0")

    def test_no_pmu_run_passes(self):
        rc, meta = self.native("perfstat-xeon-6-a7-kvm-nopmu-recorded.csv")
        self.assertEqual(rc, 0)
        self.assertEqual(meta["walk_cost"]["reason"], "not measured: no "
                         "PMU: perf stat -e cycles read <not supported>")
        self.assertEqual(meta["errors"], [])


if __name__ == "__main__":
    unittest.main()
