# SPDX-License-Identifier: GPL-2.0
"""Bad input is refused before anything is built, booted or written
(issue 30, point 3): bench/run.py checks a plan by the binaries' own
rules (benchtool check / sizes: bench/runner.c's parser), run-qemu.sh's
and this host's memory, and make bench, make bench-native and make
compare do that first.  Each refusal exits non-zero, names the bad value
(cause) and what to give instead (fix), starts no guest, writes no run
folder and builds no kernel.

The runs here are real bench/run.py runs, not dry runs, with run-qemu.sh
behind a wrapper that passes --print-config (the check) to the real one
and records any other call (a boot) instead of booting: a check that
let bad input through would show up as a recorded boot, not as a
20-minute kernel build or a guest."""
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest

from bench import benchrun, contract
from tests.bench.common import BENCHTOOL, ROOT

RUN_PY = ["-m", "bench.run"]  # from the repository root

# (arguments, words the message must hold: the cause, then the fix)
BAD = [
    (["--sizes", "0"], ["'0'", "above 0"]),
    (["--sizes=-1M"], ["'-1M'", "positive number"]),
    (["--sizes", "abc"], ["'abc'", "K, M or G"]),
    (["--sizes", "1T"], ["'1T'", "K, M or G"]),
    (["--sizes", "16K,,1M"], ["empty item", "16K,1M"]),
    (["--sizes", "64G"], ["GB", "more than this host", "smaller --sizes"]),
    (["--model", "nosuch"], ["'nosuch'", "preset"]),
    # a malformed spec passes run.py's own model check (a spec holds "=",
    # the binaries parse it), so the chase's parser must refuse it; the
    # chase alone: mlp, which takes --model too, cannot refuse for it
    (["--benches", "chase", "--model", "nosuch=1"], ["chase: --model",
                                                     "'nosuch=1'", "spec"]),
    (["--qemu-arg=--bogus"], ["--bogus", "run-qemu.sh: try --help"]),
    (["--benches", "chase,chase"], ["chase listed twice", "name each once"]),
    (["--backings", "thp,thp"], ["thp listed twice", "name each once"]),
    (["--profile", "huge"], ["'huge'", "choose from"]),
    # a board (lava/job.py): its RAM and CPU count, in a guest plan only,
    # and planned, never booted here
    (["--board", "16G"], ["--board 16G", "MEM,CPUS", "e.g. 16G,8"]),
    (["--board", "16G,0"], ["--board 16G,0", "e.g. 16G,8"]),
    (["--board", "0,4"], ["'0'", "above 0"]),
    (["--board", "16G,4"], ["boots nothing here", "--dry-run"]),
]

FAKE_QEMU = """#!/bin/sh
# the check's --print-config goes to the real run-qemu.sh; a boot is
# recorded instead
for a in "$@"; do
	[ "$a" = --print-config ] && exec %(real)s "$@"
done
echo "$@" >> %(marker)s
exit 0
"""


class Refused(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="refusals-")
        self.results = os.path.join(self.tmp, "results")
        os.makedirs(self.results)
        self.marker = os.path.join(self.tmp, "booted")
        self.qemu = os.path.join(self.tmp, "run-qemu.sh")
        with open(self.qemu, "w") as f:
            f.write(FAKE_QEMU % {"real": os.path.join(ROOT, "run-qemu.sh"),
                                 "marker": self.marker})
        os.chmod(self.qemu, stat.S_IRWXU)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def run_py(self, args, mode="guest"):
        return subprocess.run(
            [sys.executable, *RUN_PY, "--mode", mode, "--profile", "tiny",
             "--results-dir", self.results, "--run-qemu", self.qemu,
             "--bindir", os.path.join(self.tmp, "nobin")] + args,
            cwd=ROOT, capture_output=True, text=True, timeout=120)

    def assertRefused(self, p, words, what):
        self.assertNotEqual(p.returncode, 0, "%s accepted:\n%s%s" % (
            what, p.stdout, p.stderr))
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertNotIn("Traceback", p.stderr, p.stderr)
        for w in words:
            self.assertIn(w, p.stderr, "%s: message lacks %r" % (what, w))
        self.assertFalse(os.path.exists(self.marker),
                         "%s booted a guest" % what)
        self.assertEqual(os.listdir(self.results), [],
                         "%s wrote a run folder" % what)

    def test_every_bad_input_is_refused_before_a_boot(self):
        for args, words in BAD:
            with self.subTest(args=args):
                self.assertRefused(self.run_py(args), words, " ".join(args))

    def test_native_too(self):
        """The same checks in native mode: no pool raised, no binary run
        (--bindir names none, so a run would fail differently)."""
        for args, words in BAD[:5] + BAD[6:8]:
            with self.subTest(args=args):
                self.assertRefused(self.run_py(args, "native"), words,
                                   " ".join(args))

    def test_a_good_plan_passes_the_same_checks(self):
        """The control: what the checks accept boots (here: is recorded),
        so the refusals above are the checks', not a broken wrapper's."""
        p = self.run_py(["--sizes", "1.5M,64K", "--benches", "chase"])
        self.assertTrue(os.path.exists(self.marker), p.stderr)
        with open(self.marker) as f:
            boot = f.read()
        # the sizes as the runner parses them, passed on as given
        self.assertIn("--sizes 1.5M,64K", boot)


class BoardPlan(unittest.TestCase):
    """--board MEM,CPUS (lava/job.py's hardware jobs): the guest's job,
    sized as a native run for the board, not for TCG."""

    def plan(self, *args, profile="quick"):
        p = subprocess.run([sys.executable, *RUN_PY, "--mode", "guest",
                            "--profile", profile, "--model", "auto",
                            "--dry-run"] + list(args),
                           cwd=ROOT, capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout.split()

    @staticmethod
    def after(words, bench, opt):
        i = words.index("/usr/local/bin/" + bench)
        return words[words.index(opt, i) + 1]

    def test_sized_as_native_for_the_board(self):
        tcg, board = self.plan(), self.plan("--board", "16G,6")
        # the quick guest's STREAM arrays are 8 MB each (24 MB), its chase
        # stops at 256 MB and its faultscale at the guest's 2 CPUs; the
        # board's are the native quick profile's: 1 GB of arrays (no LLC
        # known here), a chase to 1 GB, 1 to 6 tasks, which the check on
        # this smaller host passes with --oversubscribe (rows say whether
        # a count shared CPUs)
        self.assertEqual(self.after(tcg, "streamk", "--sizes"), str(24 << 20))
        self.assertEqual(self.after(board, "streamk", "--sizes"),
                         str((1 << 30) // (3 * 4096) * 3 * 4096))
        self.assertEqual(self.after(tcg, "chase", "--sizes").split(",")[-1],
                         str(256 << 20))
        self.assertEqual(self.after(board, "chase", "--sizes").split(",")[-1],
                         str(1 << 30))
        self.assertEqual(self.after(board, "chase", "--hop"), "both")
        self.assertEqual(self.after(tcg, "faultscale", "--tasks"), "1,2")
        self.assertEqual(self.after(board, "faultscale", "--tasks"),
                         "1,2,3,4,5,6")
        i = board.index("/usr/local/bin/faultscale")
        self.assertIn("--oversubscribe", board[i:board.index("faultscale", i + 1)])
        # one boot, its CPUs the board's, its timeout four times the guest's
        self.assertEqual(board[board.index("--smp") + 1], "6")
        self.assertEqual(int(board[board.index("--timeout") + 1]),
                         4 * int(tcg[tcg.index("--timeout") + 1]))


    def test_full_is_planned_to_fit_the_board(self):
        """full's chase takes a third of the memory it is given, and every
        pool is reserved at boot beside the 4 KB and THP working sets: for
        16 GB the first plan needs 19 GB, so it is planned smaller until
        the boot fits the board."""
        words = self.plan("--board", "16G,4", profile="full")
        mem = words[words.index("--mem") + 1]
        self.assertTrue(mem.endswith("M"), mem)
        self.assertLessEqual(int(mem[:-1]), 16 << 10, mem)
        # a board bigger than this host is planned too: the plan is for
        # the board, which this host's memory checks do not judge
        words = self.plan("--board", "256G,64", profile="full")
        self.assertIn("--mem", words)

    def test_faultscale_fits_the_pool_on_many_cpus(self):
        """tiny's 8 MB pool holds two tasks of one 2 MB page, twice over
        (a cow task holds its file and its copies): on 16 CPUs the counts
        stop at 2, saying so, where the region once became 0 (8 MB / 32
        rounded down to whole 2 MB pages) and every faultscale refused."""
        p = benchrun.profile("tiny", "native", c=contract.load(), cpus=16)
        a = p["faultscale"]
        region = int(a[a.index("--sizes") + 1])
        tasks = [int(t) for t in a[a.index("--tasks") + 1].split(",")]
        self.assertEqual(tasks, [1, 2])
        self.assertEqual(region, 2 << 20)
        self.assertLessEqual(2 * max(tasks) * region, p["max_bytes"])
        self.assertTrue(any("faultscale stops at 2 tasks of 16 CPUs" in n
                            for n in p["notes"]), p["notes"])


class DefaultSweep(unittest.TestCase):
    """The runner's sweep without --sizes (bench/runner.c make_sweep):
    powers of two and the points halfway between them, plus 3/4, 1 and 5/4
    of each TLB reach it knows, so that every knee is approached from both
    sides; benchtool check prints the sizes a binary would measure."""

    # the reaches the runner's table names: 64 x 4K, 1536 x 4K, 2048 x 4K,
    # 32 x 2M, 64 x 2M, 1536 x 2M
    REACHES = [256 << 10, 6 << 20, 8 << 20, 64 << 20, 128 << 20, 3 << 30]

    def sweep(self, lo, hi):
        s, want = 4096, set()
        while s <= hi:
            want |= {v for v in (s, s + s // 2) if lo <= v <= hi}
            s *= 2
        want |= {r * k // 4 for r in self.REACHES for k in (3, 4, 5)
                 if lo <= r * k // 4 <= hi}
        return sorted(want)

    def test_each_reach_has_points_on_both_sides(self):
        for lo, hi in ((128 << 10, 8 << 20), (16 << 10, 256 << 20)):
            with self.subTest(lo=lo, hi=hi):
                p = subprocess.run([BENCHTOOL, "check", "chase", "--min", str(lo),
                                    "--max", str(hi)], capture_output=True, text=True)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertEqual([int(x) for x in p.stdout.split()], self.sweep(lo, hi))


class SizesAreTheRunnersRule(unittest.TestCase):
    """bench/run.py's --sizes is the runner's parser (benchtool sizes): the
    bytes it plans with are the bytes a binary would measure."""

    def test_bytes(self):
        p = subprocess.run([BENCHTOOL, "sizes", "1.5M,16K,1G"],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.split(),
                         [str(16 << 10), str(3 << 19), str(1 << 30)])

    def test_the_binary_refuses_what_the_check_refuses(self):
        for bad in ("0", "-1M", "abc", "1T", "16K,,1M", ",1M", "1M,"):
            with self.subTest(sizes=bad):
                p = subprocess.run([BENCHTOOL, "check", "chase", "--sizes",
                                    bad], capture_output=True, text=True)
                self.assertEqual(p.returncode, 64, p.stdout)
                self.assertIn("--sizes", p.stderr)


class HelpSaysEveryOption(unittest.TestCase):
    def test_each_option_has_a_line_of_help(self):
        p = subprocess.run([sys.executable, *RUN_PY, "--help"],
                           capture_output=True, text=True, cwd=ROOT)
        self.assertEqual(p.returncode, 0, p.stderr)
        opts = p.stdout.split("options:", 1)[1].splitlines()
        entries = []
        for line in opts:
            if line.startswith("  -"):
                entries.append([line])
            elif entries and line.startswith("    "):
                entries[-1].append(line)
        self.assertGreater(len(entries), 10, p.stdout)
        for e in entries:
            # "  --opt ARG   help" or the help on the lines below
            text = " ".join(e).split(None, 1)[1] if len(e) > 1 else \
                e[0].strip().split("  ", 1)[-1]
            self.assertTrue(len(e) > 1 or "  " in e[0].strip(),
                            "no help for %s" % e[0].strip())
            self.assertTrue(text.strip(), e)
        self.assertIn("realprog", p.stdout.split("--benches", 2)[2])


class MakeChecksFirst(unittest.TestCase):
    """make bench and make bench-native refuse before deps, the kernel and
    the initramfs.  make -n: the check's recipe holds $(MAKE), so a dry
    run runs it for real and nothing after it (a kernel build least of
    all) can start."""

    def make_n(self, *args):
        return subprocess.run(["make", "-n", "--no-print-directory", "-C",
                               ROOT] + list(args), capture_output=True,
                              text=True, timeout=120)

    def test_bad_profile_stops_before_any_build(self):
        for target in ("bench", "bench-native"):
            with self.subTest(target=target):
                p = self.make_n(target, "PROFILE=huge")
                self.assertNotEqual(p.returncode, 0, p.stdout)
                self.assertIn("'huge'", p.stderr)
                self.assertIn("choose from", p.stderr)
                # deps, the kernel, the initramfs, a benchmark's compile
                for step in ("deps.sh", "kernel/build.sh",
                             "initramfs/build.sh", "-Ibench"):
                    self.assertNotIn(step, p.stdout, target)

    def test_the_check_comes_first(self):
        p = self.make_n("bench", "PROFILE=tiny")
        self.assertEqual(p.returncode, 0, p.stderr)
        out = p.stdout
        check = out.find("--dry-run")
        self.assertGreaterEqual(check, 0, out)
        for step in ("deps.sh", "kernel/build.sh"):
            self.assertGreater(out.find(step), check, step)


FAKE_MAKE = """#!/bin/sh
echo "$@" >> %s
exit 1
"""


class CompareResolvesFirst(unittest.TestCase):
    """compare.py run resolves both revisions and checks the matrix before
    building anything, and leaves no empty results/compare-* folder
    (issue 30, point 2).  make is a stand-in on PATH that records being
    called: no kernel is ever built here."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="cmp-refusal-")
        self.made = os.path.join(self.tmp, "made")
        with open(os.path.join(self.tmp, "make"), "w") as f:
            f.write(FAKE_MAKE % self.made)
        os.chmod(os.path.join(self.tmp, "make"), stat.S_IRWXU)
        self.contract = os.path.join(self.tmp, "contract.json")
        with open(self.contract, "w") as f:
            subprocess.run([BENCHTOOL, "contract"], stdout=f, check=True)
        self.before = self.compare_dirs()

    def tearDown(self):
        for d in self.compare_dirs() - self.before:
            shutil.rmtree(os.path.join(ROOT, "results", d))
        shutil.rmtree(self.tmp)

    def compare_dirs(self):
        return {d for d in os.listdir(os.path.join(ROOT, "results"))
                if d.startswith("compare-")}

    def compare(self, *args):
        env = dict(os.environ, PATH=self.tmp + os.pathsep +
                   os.environ["PATH"])
        # the real benchtool's contract, read from a file: the stand-in
        # make would otherwise be asked to bring benchtool up to date
        env["BENCH_CONTRACT"] = self.contract
        return subprocess.run([sys.executable, "-m", "compare.compare", "run"] + list(args), env=env,
            cwd=ROOT, capture_output=True, text=True, timeout=120)

    def test_a_typo_is_refused_before_a_build(self):
        for a, b in (("current", "typo"), ("typo", "current"),
                     ("current", "image:no/such/bzImage")):
            with self.subTest(a=a, b=b):
                p = self.compare(a, b)
                self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                bad = b if a == "current" else a
                self.assertIn(bad, p.stderr)
                for form in ("current", "slow", "git revision", "image:"):
                    self.assertIn(form, p.stderr)
                self.assertFalse(os.path.exists(self.made),
                                 "make was called before the refusal")
                self.assertEqual(self.compare_dirs(), self.before)

    def test_a_bad_matrix_is_refused_before_a_build(self):
        p = self.compare("current", "current", "--benches", "fault,fault")
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("listed twice", p.stderr)
        self.assertFalse(os.path.exists(self.made))

    def test_a_failed_build_leaves_no_folder(self):
        p = self.compare("current", "current")
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertTrue(os.path.exists(self.made), "the stand-in make was "
                        "not called: the control did not reach a build")
        self.assertEqual(self.compare_dirs(), self.before)

    def test_make_compare_checks_before_deps(self):
        p = subprocess.run(["make", "-n", "--no-print-directory", "-C", ROOT,
                            "compare", "A=current", "B=typo"],
                           capture_output=True, text=True, timeout=60)
        check = p.stdout.find("--check")
        self.assertGreaterEqual(check, 0, p.stdout)
        self.assertGreater(p.stdout.find("deps"), check, p.stdout)


if __name__ == "__main__":
    unittest.main()
