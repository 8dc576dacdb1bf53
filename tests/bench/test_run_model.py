# SPDX-License-Identifier: GPL-2.0
"""The run's TLB model (bench/benchrun/model.py, issue 29 point 1): decided
on the host, where the CPU is real, or named with MODEL=/--model; passed to
every benchmark that models, recorded in meta.json tlb_model with where it
came from and its label; a host no preset fits said once, naming MODEL=
and the presets; a bad name refused before anything is built.  The host's
CPU comes from recorded CPUID leaves (BENCH_CPUID_FILE, tests/bench/
fixtures) and fake /proc/cpuinfo flags, never from this machine."""
import contextlib
import io
import json
import os
import subprocess
import tempfile
import unittest
from unittest import mock

from tests.bench.common import BENCHTOOL, BINDIR, ROOT, benchtool, contract

from bench import benchrun as run
from bench.benchrun import model

FIX = os.path.join(ROOT, "tests", "bench", "fixtures")
# this project's Intel VM: 6-A7 (perf's rocketlake) under KVM, SPR flags
XEON_VM = os.path.join(FIX, "cpuid-xeon-6-a7-kvm.txt")
ZEN5_VM = os.path.join(FIX, "cpuid-epyc-zen5-kvm.txt")
SKYLAKE_METAL = os.path.join(FIX, "cpuid-skylake-handmade.txt")
UNKNOWN_VM = os.path.join(FIX, "cpuid-unknown-vm.txt")
UNKNOWN_METAL = os.path.join(FIX, "cpuid-unknown-metal.txt")
SPR_FLAGS = {"fpu", "hypervisor", "avx512f", "avx512_fp16", "amx_tile"}


def decided(cpuid_file, flags):
    with mock.patch.dict(os.environ, {"BENCH_CPUID_FILE": cpuid_file}):
        return model.decide(None, "x86_64", BENCHTOOL, flags, "neoverse-n1")


class Presets(unittest.TestCase):
    def test_names_read_from_the_source_are_benchtools(self):
        p = benchtool("presets")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(model.preset_names(),
                         [line.split("\t")[0] for line in p.stdout.splitlines()])

    def test_bad_name_refused_naming_every_preset(self):
        err = model.check_model("zen9")
        self.assertIn("'zen9' is not a TLB model", err)
        for name in model.preset_names():
            self.assertIn(name, err)
        for good in ["auto", "zen4", "goldencove", "l1=4K:64:4"]:
            self.assertIsNone(model.check_model(good), good)

    def test_make_refuses_a_bad_model_before_any_build(self):
        # -n: nothing would run anyway; the refusal comes while make reads
        # the makefiles, before deps, the kernel or any benchmark
        p = subprocess.run(["make", "--no-print-directory", "-n", "bench",
                            "MODEL=nosuch"], cwd=ROOT,
                           capture_output=True, text=True)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("MODEL/--model 'nosuch' is not a TLB model", p.stderr)
        self.assertIn("zen5", p.stderr)
        self.assertEqual(p.stdout, "")
        p = subprocess.run(["make", "-n", "bench-native", "MODEL=zen4"],
                           cwd=ROOT, capture_output=True, text=True)
        self.assertIn("--model zen4", p.stdout.replace("\\\n", " "))


class HostModel(unittest.TestCase):
    def test_intel_vm_whose_model_number_names_an_older_core(self):
        m = decided(XEON_VM, SPR_FLAGS)
        self.assertEqual((m["arg"], m["preset"], m["source"]),
                         ("goldencove", "goldencove", "host-flags"))
        self.assertIn("perf model rocketlake", m["why"])
        self.assertIn("amx_tile", m["why"])
        self.assertEqual(m["label"], "MODEL: goldencove geometry of the host's "
                         "CPU (from its flags), not measured")

    def test_no_preset_fits_said_naming_make_model_and_presets(self):
        for cpuid, flags in ((XEON_VM, {"hypervisor", "avx2"}),
                             (UNKNOWN_VM, {"hypervisor"})):
            m = decided(cpuid, flags)
            self.assertEqual((m["arg"], m["preset"], m["source"]),
                             ("none", None, "none"), cpuid)
            self.assertIn("MODEL=<preset>", m["why"])
            self.assertIn(", ".join(model.preset_names()), m["why"])
            self.assertEqual(m["label"], "no TLB model")

    def test_model_number_the_flags_do_not_contradict_stands(self):
        for flags in (set(), {"avx512f", "avx512_vp2intersect"}, {"avx512f"}):
            m = decided(ZEN5_VM, flags)
            self.assertEqual((m["arg"], m["source"]), ("zen5", "host"), flags)
            self.assertEqual(m["label"], "MODEL: zen5 geometry of the host's "
                             "CPU, not measured")

    def test_bare_metal_model_number_is_trusted(self):
        m = decided(SKYLAKE_METAL, SPR_FLAGS)
        self.assertEqual((m["arg"], m["source"]), ("skylake", "host"))

    def test_bare_metal_without_preset_passes_its_cpuid_spec(self):
        m = decided(UNKNOWN_METAL, set())
        self.assertEqual(m["source"], "host-cpuid")
        self.assertTrue(m["arg"].startswith("l1="), m)
        self.assertIsNone(model.check_model(m["arg"]))

    def test_flags_proving_a_newer_core_win(self):
        rep = {"model": "zen4", "why": "auto: preset zen4 fits AuthenticAMD-"
               "25-11-1 (perf model amdzen4, PMU cpu)",
               "cpu": {"vendor": "AuthenticAMD", "family": 25, "model": 0x11,
                       "hypervisor": "KVMKVMKVM"}}
        m = model.host_model(rep, {"avx512f", "avx512_vp2intersect"})
        self.assertEqual((m["arg"], m["source"]), ("zen5", "host-flags"))
        m = model.host_model(rep, {"avx512f"})
        self.assertEqual((m["arg"], m["source"]), ("zen4", "host"))
        rep["cpu"]["hypervisor"] = None
        m = model.host_model(rep, {"avx512f", "avx512_vp2intersect"})
        self.assertEqual((m["arg"], m["source"]), ("zen4", "host"))


class Plan(unittest.TestCase):
    def setUp(self):
        self.c = contract.load()
        self.root = tempfile.mkdtemp()
        self.addCleanup(subprocess.run, ["rm", "-rf", self.root])
        os.makedirs(os.path.join(self.root, "proc"))

    def plan(self, argv, cpuid, flags):
        with open(os.path.join(self.root, "proc", "cpuinfo"), "w") as f:
            f.write("processor\t: 0\nflags\t\t: %s\n" % " ".join(sorted(flags)))
        err = io.StringIO()
        with mock.patch.dict(os.environ, {"BENCH_CPUID_FILE": cpuid}), \
                mock.patch.object(run.cli, "HOST_ROOT", self.root), \
                contextlib.redirect_stderr(err):
            p = run.plan_run(["--mode", "guest", "--dry-run"] + argv, self.c)
        return p, err.getvalue()

    def models(self, p):
        """The --model of each invocation that takes one."""
        return {b: a[a.index("--model") + 1] for b, a in p.runs
                if "--model" in a}

    def test_host_model_passed_to_the_guest_and_recorded(self):
        p, err = self.plan([], XEON_VM, SPR_FLAGS)
        got = self.models(p)
        # every benchmark that models (chase, mlp) or sets the model's
        # geometry beside what it measures (tlbreach): in the TCG guest
        # one left to auto finds none, and its @meta tlb_geometry, the
        # last written, would say the run had no model
        self.assertEqual(set(got), {"chase", "mlp", "tlbreach"}, got)
        self.assertEqual(set(got.values()), {"goldencove"}, got)
        self.assertNotIn("no TLB model", err)
        meta = run.first_meta(p.args, "x", p.cmds, p.runs)
        self.assertEqual(meta["tlb_model"]["preset"], "goldencove")
        self.assertEqual(meta["tlb_model"]["source"], "host-flags")
        json.dumps(meta)

    def test_sweep_notes_said_unless_sizes_given(self):
        p, err = self.plan([], XEON_VM, SPR_FLAGS)
        self.assertIn("stops at 256 MB", err)
        self.assertEqual(len(p.profile["notes"]), 1)
        p, err = self.plan(["--sizes", "1M,4M"], XEON_VM, SPR_FLAGS)
        self.assertNotIn("stops at", err)
        self.assertEqual(p.profile["notes"], [])

    def test_named_model_wins(self):
        p, _ = self.plan(["--model", "zen4"], XEON_VM, SPR_FLAGS)
        self.assertEqual(set(self.models(p).values()), {"zen4"})
        self.assertEqual(p.args.tlb_model["label"],
                         "MODEL: zen4 geometry named by MODEL=/--model, not measured")

    def test_no_preset_said_once_and_binaries_get_none(self):
        p, err = self.plan([], UNKNOWN_VM, {"hypervisor"})
        self.assertEqual(set(self.models(p).values()), {"none"})
        self.assertEqual(err.count("no TLB model"), 1, err)
        self.assertIn("MODEL=<preset>", err)

    def test_arm64_guest_and_explicit_auto(self):
        p, _ = self.plan(["--arch", "arm64"], XEON_VM, SPR_FLAGS)
        self.assertEqual(set(self.models(p).values()), {"neoverse-n1"})
        p, _ = self.plan(["--model", "auto"], XEON_VM, SPR_FLAGS)
        self.assertEqual(set(self.models(p).values()), {"auto"})
        self.assertEqual(p.args.tlb_model["source"], "binary")

    def test_bad_model_refused(self):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), self.assertRaises(SystemExit):
            run.parse_args(["--mode", "guest", "--model", "zen9"], self.c)
        self.assertIn("zen9", err.getvalue())
        self.assertIn("goldencove", err.getvalue())


def chase_sizes(p):
    a = p["chase"]
    return [int(x) for x in a[a.index("--sizes") + 1].split(",")]


class KneePoints(unittest.TestCase):
    """Issue 29 point 4: the chase's sweep has points on both sides of
    every reach of the run's model (L1 and L2, 4 KB and 2 MB entries)
    that the profile's top allows, and says where it stops short."""

    def bracketed(self, sizes, r):
        below = [s for s in sizes if 0.7 * r <= s < r]
        above = [s for s in sizes if r < s <= 1.3 * r]
        return bool(below and above)

    def check(self, preset, name, mode, mem=None):
        reaches = run.model_reaches(preset)
        self.assertEqual(set(reaches) - {"l1 4K", "l2 4K", "l1 2M", "l2 2M"},
                         set(), preset)
        self.assertIn("l1 4K", reaches, preset)
        p = run.profile(name, mode, mem, contract.load(), reaches=reaches)
        sizes = chase_sizes(p)
        self.assertLessEqual(max(sizes), p["max_bytes"])
        for key, r in reaches.items():
            if self.bracketed(sizes, r):
                continue
            # a reach left without points is one the notes name, past top
            self.assertGreater(r * 5 // 4, max(sizes), (preset, name, key))
            self.assertTrue([n for n in p["notes"] if key in n],
                            (preset, name, mode, key, p["notes"]))
        return p, reaches

    def test_every_preset_every_profile(self):
        for preset in model.preset_names():
            for name, mode in (("quick", "guest"), ("quick", "native"),
                               ("full", "guest"), ("full", "native")):
                with self.subTest(preset=preset, profile=name, mode=mode):
                    self.check(preset, name, mode, 64 << 30)

    def test_full_native_brackets_all_where_memory_allows(self):
        for preset in model.preset_names():
            p, reaches = self.check(preset, "full", "native", 64 << 30)
            self.assertEqual(p["notes"], [], preset)
            for key, r in reaches.items():
                self.assertTrue(self.bracketed(chase_sizes(p), r), (preset, key))

    def test_full_native_says_where_memory_stops_it(self):
        p, _ = self.check("zen5", "full", "native", 12 << 30)
        self.assertLess(max(chase_sizes(p)), 4096 * (2 << 20))
        self.assertEqual(len(p["notes"]), 1, p["notes"])
        self.assertIn("a third of MemAvailable", p["notes"][0])
        self.assertIn("l2 2M reach (8192 MB)", p["notes"][0])

    def test_zen5_quick_native_has_points_around_its_reaches(self):
        # the sweep that had none between 320 KB and 1 MB nor between
        # 10 and 32 MB (Zen 5: 384 KB and 16 MB on 4 KB pages)
        sizes = chase_sizes(run.profile("quick", "native", 64 << 30,
                                        contract.load(),
                                        reaches=run.model_reaches("zen5")))
        for r in (384 << 10, 16 << 20, 192 << 20):
            self.assertIn(r * 3 // 4, sizes)
            self.assertIn(r * 5 // 4, sizes)

    def test_no_model_brackets_the_generic_reaches(self):
        sizes = chase_sizes(run.profile("full", "native", 64 << 30,
                                        contract.load(), reaches={}))
        for r in run.GENERIC_REACHES:
            self.assertTrue(self.bracketed(sizes, r), r)


class ChaseDefault(unittest.TestCase):
    def test_chase_without_model_resolves_auto(self):
        # its default was skylake whatever the CPU
        with mock.patch.dict(os.environ, {"BENCH_CPUID_FILE": ZEN5_VM}):
            p = subprocess.run([os.path.join(BINDIR, "chase"), "--sizes",
                                "64K", "--reps", "1", "--warmup", "0",
                                "--hops", "1K", "--backings", "devzero"],
                               capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        rows = [line for line in p.stdout.splitlines()
                if line.startswith("@row chase")]
        self.assertTrue(rows, p.stdout)
        self.assertEqual(rows[0].split(",")[-2], "zen5", rows[0])


if __name__ == "__main__":
    unittest.main()
