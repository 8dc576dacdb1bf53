# SPDX-License-Identifier: GPL-2.0
"""The arm64 side of the suite: the 64 KB and 32 MB backings, their skip
reason where the kernel lacks the size, bench/run.py's arm64 guest run
(pools, model preset, default backings, no real-program step) and the
cross-built binaries (bench/bench.mk's build/bench-arm64)."""
import contextlib
import io
import json
import os
import platform
import shutil
import subprocess
import tempfile
import unittest

from tests.bench import test_mlp
from tests.bench.benchbin import BenchRun
from tests.bench.common import BENCHTOOL, ROOT, contract

from bench import benchrun as run
from bench.benchrun.model import decide
# the page sizes only the arm64 guest has (the contract's pool table)
ARM64_ONLY = [p for p in contract.POOLS if "x86_64" not in p.arches]
BASES = ("hugetlbfs", "shm", "devhugetlb", "maphugetlb", "memfd")


def refused(argv):
    """The message parse_args stops argv with."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), \
            unittest.TestCase().assertRaises(SystemExit):
        run.parse_args(argv, contract.load())
    return err.getvalue()


def host_has(kb):
    return os.path.isdir("/sys/kernel/mm/hugepages/hugepages-%dkB" % kb)


class Backings(unittest.TestCase):
    def test_a_64k_and_32m_row_of_every_hugetlb_backing(self):
        c = contract.load()
        for base in BASES:
            for kb, suffix in ((p.kb, "-" + p.name) for p in ARM64_ONLY):
                b = c.backing(base + suffix)
                self.assertEqual((b["page_kb"], b["pool_kb"]), (kb, kb))
                self.assertEqual(b["colour"], c.colour(base))

    @unittest.skipIf(any(host_has(p.kb) for p in ARM64_ONLY),
                     "this kernel has a 64 KB or 32 MB pool")
    def test_sizes_the_kernel_lacks_skip_saying_why(self):
        names = ["devhugetlb-64K", "memfd-32M", "shm-64K"]
        r = BenchRun("fault", ["--backings", "devzero," + ",".join(names),
                               "--sizes", "64K", "--reps", "1",
                               "--warmup", "0"])
        self.assertEqual(r.returncode, 0, r.describe())
        got = {m["name"]: m for m in r.meta["backing"]}
        for name in names:
            kb = contract.load().backing(name)["pool_kb"]
            self.assertEqual(got[name]["status"], "skipped", got[name])
            self.assertIn("kernel has no %d kB huge pages (no "
                          "/sys/kernel/mm/hugepages/hugepages-%dkB"
                          % (kb, kb), got[name]["reason"])
        self.assertEqual(got["devzero"]["status"], "measured")
        self.assertEqual({row["backing"] for row in r.rows}, {"devzero"})


class GuestRun(unittest.TestCase):
    def args(self, *extra):
        a = run.parse_args(["--mode", "guest", "--profile", "tiny"] +
                           list(extra), contract.load())
        # as plan_run decides it (x86_64: from this host's CPU)
        a.tlb_model = decide(a.model, a.arch, BENCHTOOL, set(),
                             run.ARM64_PRESET)
        return a

    def command(self, args):
        c = contract.load()
        p = run.profile("tiny", "guest", c=c, arch=args.arch)
        benches = args.benches.split(",")
        if run.REALPROG not in benches:     # as run.main does
            p.pop(run.REALPROG, None)
        runs = run.invocations(p, args, args.tlb_model["arg"], benches, c)
        run.size_pools(p, together=run.together(runs, c), arch=args.arch)
        return run.guest_command(p, args, runs, c), runs

    def test_arch_from_the_option_or_the_kernel_name(self):
        self.assertEqual(self.args("--arch", "arm64").arch, "arm64")
        self.assertEqual(self.args("--kernel", "build/kernel/Image-arm64")
                         .arch, "arm64")
        self.assertEqual(self.args("--kernel", "build/kernel/bzImage").arch,
                         "x86_64")
        self.assertEqual(self.args().arch, "x86_64")

    def test_arm64_models_a_neoverse_n1_unless_told(self):
        def arg(*extra):
            return self.args(*extra).tlb_model["arg"]
        self.assertEqual(arg("--arch", "arm64"), "neoverse-n1")
        self.assertEqual(arg("--arch", "arm64", "--model", "skylake"),
                         "skylake")
        # asked for (lava/job.py on a board, a real core), auto stays auto
        self.assertEqual(arg("--arch", "arm64", "--model", "auto"), "auto")
        _, runs = self.command(self.args("--arch", "arm64"))
        chase = dict(runs)["chase"]
        self.assertEqual(chase[chase.index("--model") + 1], "neoverse-n1")

    def test_arm64_boots_with_a_pool_of_each_size(self):
        cmd, runs = self.command(self.args("--arch", "arm64"))
        i = cmd.index("--")
        opts = dict(zip(cmd[1:i:2], cmd[2:i:2]))
        self.assertEqual(opts["--arch"], "arm64")
        # tiny: 8 MB working sets, the five backings of a size at once
        self.assertEqual(opts["--hugepages-64k"], str(5 * 128))
        self.assertEqual(opts["--hugepages-32m"], str(5 * 1))
        self.assertEqual(opts["--hugepages"], str(5 * 4 + 8))
        self.assertEqual(opts["--hugepages-1g"], "5")
        chase = dict(runs)["chase"]
        listed = chase[chase.index("--backings") + 1].split(",")
        for base in BASES:
            for suffix in ("", "-64K", "-32M", "-1G"):
                self.assertIn(base + suffix, listed)

    def test_x86_lists_no_size_it_lacks(self):
        cmd, runs = self.command(self.args())
        self.assertNotIn("--arch", cmd)
        self.assertNotIn("--hugepages-64k", cmd)
        self.assertNotIn("--hugepages-32m", cmd)
        for bench, argv in runs:
            if "--backings" in argv:
                listed = argv[argv.index("--backings") + 1]
                self.assertNotIn("-64K", listed, bench)
                self.assertNotIn("-32M", listed, bench)

    def test_a_named_64k_backing_still_runs_on_x86(self):
        args = self.args("--backings", "devzero,memfd-64K")
        _, runs = self.command(args)
        chase = dict(runs)["chase"]
        self.assertIn("memfd-64K", chase[chase.index("--backings") + 1])

    def test_arm64_leaves_out_the_real_program_and_says_why(self):
        args = self.args("--arch", "arm64")
        self.assertNotIn(run.REALPROG, args.benches.split(","))
        meta = run.first_meta(args, "id", [["x"]], [])
        self.assertIn(run.ARM64_NO_REALPROG, meta["notes"])
        self.assertEqual(meta["arch"], "arm64")
        self.assertIn(run.ARM64_NO_REALPROG, refused(
            ["--mode", "guest", "--arch", "arm64", "--benches",
             "chase,realprog"]))

    def test_native_arm64_on_another_host_is_refused(self):
        if platform.machine() == "aarch64":
            self.skipTest("this host is arm64")
        self.assertIn("native runs measure this host; use --mode guest",
                      refused(["--mode", "native", "--arch", "arm64"]))

    def test_arm64_guest_memory_holds_every_pool(self):
        p = run.size_pools({"max_bytes": 256 << 20},
                           together={64: 5, 2048: 5, 32768: 5, 1048576: 5},
                           arch="arm64")
        small = (p["hugepages_64k"] * 64 + p["hugepages"] * 2048 +
                 p["hugepages_32m"] * 32768) << 10
        mem = int(p["mem"].rstrip("M")) << 20
        self.assertGreaterEqual(mem, small + (p["hugepages_1g"] << 30) +
                                (512 << 20))


class EmulatedCounters(unittest.TestCase):
    """An arm64 TCG guest with a PMU driver opens QEMU's emulated cycle
    counter: meta.json must not leave those counts looking like hardware."""

    def finish(self, source):
        with tempfile.TemporaryDirectory() as d:
            res = run.Results(d, "r", {"timing_source": source})
            res.meta["counters"] = {
                "cycles": {"available": True, "reason": ""},
                "instructions": {"available": False, "reason": "none"}}
            res.finish("complete")
            with open(os.path.join(d, "r", "meta.json")) as f:
                return json.load(f).get("notes", [])

    def test_tcg_counts_are_said_to_be_emulated(self):
        self.assertIn("cycles counted by the PMU QEMU emulates (timing "
                      "source tcg): emulated, not hardware counts",
                      self.finish("tcg"))

    def test_hardware_counts_get_no_note(self):
        self.assertEqual(self.finish("native"), [])
        self.assertEqual(self.finish("kvm"), [])


@unittest.skipUnless(shutil.which("clang") and shutil.which("ld.lld") and
                     shutil.which("llvm-objdump") and
                     os.path.exists("/usr/aarch64-linux-gnu/lib/libc.a"),
                     "no arm64 cross toolchain (clang, ld.lld, llvm-objdump, the arm64 libc): "
                     "make deps ARCH=arm64")
class CrossBuild(unittest.TestCase):
    def test_the_arm64_benchmarks_are_static_arm64_programs(self):
        path = os.path.join(ROOT, "build", "bench-arm64", "chase")
        p = subprocess.run(["make", "-s", "-C", ROOT,
                            "build/bench-arm64/chase"],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertNotIn("warning", p.stderr)
        head = subprocess.run(["readelf", "-h", "-l", path],
                              capture_output=True, text=True).stdout
        self.assertRegex(head, r"Machine:\s+AArch64")
        self.assertNotIn("INTERP", head)
        # the x86_64 binary of the same name is still there and x86_64
        x86 = subprocess.run(["readelf", "-h", os.path.join(
            ROOT, "build", "bench", "chase")], capture_output=True,
            text=True).stdout
        self.assertRegex(x86, r"Machine:\s+Advanced Micro Devices X86-64")

    def test_mlp_keeps_every_chain_in_its_own_register(self):
        # the x86_64 check of tests/bench/test_mlp.py, on the arm64 loop
        p = subprocess.run(["make", "-s", "-C", ROOT,
                            "build/bench-arm64/mlp"],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        text = subprocess.run(["llvm-objdump", "-d", "--no-show-raw-insn",
                               os.path.join(ROOT, "build", "bench-arm64",
                                            "mlp")],
                              capture_output=True, text=True,
                              check=True).stdout
        test_mlp.check_chain_loops(self, text, test_mlp.A64_STEP,
                                   test_mlp.A64_STACK, test_mlp.A64_VECTOR)

    def test_arm64_streamk_says_it_runs_one_thread(self):
        """No OpenMP runtime for the arm64 cross build: streamk is built
        without it and its @meta streamk_build says so, with why."""
        path = os.path.join(ROOT, "build", "bench-arm64", "streamk")
        p = subprocess.run(["make", "-s", "-C", ROOT,
                            "build/bench-arm64/streamk"],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(path, "rb") as f:
            data = f.read()
        self.assertIn(b"one thread, not STREAM's OpenMP threads: clang "
                      b"cross build", data)
        self.assertNotIn(b"GOMP_parallel", data)


if __name__ == "__main__":
    unittest.main()
