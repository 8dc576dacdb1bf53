# SPDX-License-Identifier: GPL-2.0
"""streamk: STREAM's kernels by STREAM's rules (bench/streamk.c): bytes
counted as STREAM counts them, the best of the iterations after the
first, STREAM's check failing a corrupted array, our own loops (no call
to memcpy/memset in the binary), OpenMP threads, arrays offset from one
another, the 4x LLC rule and its label, the build recorded, option
errors, the last-level cache read from sysfs (bench/llc.c), and natively
likwid-bench's copy and stream triad on the same arrays."""
import json
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import unittest
from unittest import mock

from tests.bench.benchbin import BenchRun
from tests.bench.common import BINDIR, benchtool, contract
from tests.bench import quiet

from bench import benchrun as run
# STREAM's a, b and c: the contract's arrays per working set
WSS_ARRAYS = contract.load().arrays("streamk")

SIZE = 3 << 20                   # three arrays of about 1 MB
ARGS = ["--sizes", "3M", "--backings", "devzero", "--warmup", "1"]
PAGE = 4096
# each array's elements: the working set less the room for the offsets
# between them (two pages at most), in whole 64-byte lines
ARRAY = (SIZE - 2 * PAGE) // 3 // 64 * 64
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
            # a third of the working set less the offsets, whole lines
            self.assertEqual(arr, ARRAY, r)
            self.assertEqual(int(r["bytes_per_iter"]),
                             ARRAYS[r["kernel"]] * arr, r)
            # MB/s in 10^6 bytes per second, from the best time
            want = 1e-6 * int(r["bytes_per_iter"]) / float(r["best_s"])
            self.assertAlmostEqual(float(r["mb_per_s"]), want,
                                   delta=want * 1e-3 + 0.1, msg=r)

    def test_the_contracts_arrays_fill_the_working_set(self):
        """bench/run.py sizes and cuts streamk by the contract's arrays:
        that many arrays of array_bytes fit the working set, and one more
        would not."""
        for r in self.res.rows:
            wss, arr = int(r["wss_bytes"]), int(r["array_bytes"])
            self.assertLessEqual(WSS_ARRAYS * arr, wss, r)
            self.assertGreater((WSS_ARRAYS + 1) * arr, wss, r)

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
        self.assertEqual(llc["array_bytes"], ARRAY)
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
        want = ("met" if llc["rule_met"] else "not STREAM-valid"
                if llc["llc_bytes"] else "LLC unknown")
        self.assertEqual({r["stream_rule"] for r in self.res.rows}, {want})

    def test_arrays_offset_within_a_page(self):
        """a, b and c start a third of a 4 KB page apart (mod 4096), so
        arrays of a power-of-two size on huge pages, whose low address
        bits would otherwise be equal, do not alias in the caches; in
        whole lines, one after another, inside the working set."""
        (lay,) = self.res.meta["streamk_layout"]
        a, b, c = lay["a"], lay["b"], lay["c"]
        self.assertEqual(a, 0)
        self.assertEqual([(b - a) % PAGE, (c - a) % PAGE], [1344, 2688])
        self.assertEqual(lay["offset"], 1344)
        self.assertTrue(all(x % 64 == 0 for x in (a, b, c)), lay)
        self.assertLessEqual(a + ARRAY, b)
        self.assertLessEqual(b + ARRAY, c)
        self.assertLessEqual(c + ARRAY, SIZE)

    def test_power_of_two_arrays_offset_too(self):
        """Each array alone a power of two (3 x 1 MB plus the room for
        the offsets): the same spread."""
        res = BenchRun("streamk", ["--sizes", str(3 * (1 << 20) + 2 * PAGE),
                                   "--backings", "devzero", "--reps", "1"])
        self.assertEqual(res.returncode, 0, res.describe())
        (lay,) = res.meta["streamk_layout"]
        self.assertEqual(lay["array_bytes"], 1 << 20)
        self.assertEqual([(lay["b"] - lay["a"]) % PAGE,
                          (lay["c"] - lay["a"]) % PAGE], [1344, 2688])


class TestOffset(unittest.TestCase):
    def layout(self, offset):
        res = BenchRun("streamk", ARGS + ["--reps", "1", "--offset", offset])
        return res, (res.meta.get("streamk_layout") or [None])[0]

    def test_zero_lays_the_arrays_on_pages(self):
        res, lay = self.layout("0")
        self.assertEqual(res.returncode, 0, res.describe())
        self.assertEqual([lay["b"] % PAGE, lay["c"] % PAGE], [0, 0])
        self.assertLessEqual(lay["c"] + lay["array_bytes"], SIZE)

    def test_other_offsets_spread_as_asked(self):
        res, lay = self.layout("640")
        self.assertEqual([lay["b"] % PAGE, lay["c"] % PAGE], [640, 1280])

    def test_not_whole_lines_or_too_far_is_a_usage_error(self):
        for bad in ("100", "2048"):
            res, _ = self.layout(bad)
            self.assertEqual(res.returncode, 64, bad)
            self.assertIn("give whole lines", res.stderr)


class TestLlcRule(unittest.TestCase):
    """STREAM's rule, each array at least 4x the last-level cache, at its
    boundary (--llc gives the cache size the rule is applied with)."""

    def run_llc(self, llc):
        res = BenchRun("streamk", ARGS + ["--reps", "1", "--llc", str(llc)])
        self.assertEqual(res.returncode, 0, res.describe())
        (meta,) = res.meta["streamk_llc"]
        self.assertEqual((meta["llc_bytes"], meta["source"]),
                         (llc, "option"))
        return meta, {r["stream_rule"] for r in res.rows}

    def test_four_times_is_met(self):
        meta, rule = self.run_llc(ARRAY // 4)
        self.assertIs(meta["rule_met"], True)
        self.assertEqual(rule, {"met"})

    def test_three_times_is_not_stream_valid(self):
        for llc in (ARRAY // 3, ARRAY // 4 + 64):
            meta, rule = self.run_llc(llc)
            self.assertIs(meta["rule_met"], False, llc)
            self.assertEqual(rule, {"not STREAM-valid"}, llc)
            self.assertIn("not STREAM-valid", meta["note"])

    def test_llc_must_be_a_size(self):
        res = BenchRun("streamk", ARGS + ["--llc", "0"])
        self.assertEqual(res.returncode, 64, res.describe())


class TestThreads(unittest.TestCase):
    """OpenMP threads as STREAM runs them: OMP_NUM_THREADS of them, each
    on a slice of every array, the sums still checked; the count in the
    rows and meta, the build's compiler options in meta."""

    def run_threads(self, n, binary="streamk"):
        res = BenchRun(binary, ARGS + ["--reps", "2"],
                       env={"OMP_NUM_THREADS": str(n)})
        self.assertEqual(res.returncode, 0, res.describe())
        (build,) = res.meta["streamk_build"]
        return res, build

    def test_threads_from_omp_num_threads(self):
        for n in (1, 2, 3):
            res, build = self.run_threads(n)
            self.assertEqual(build["threads"], n)
            self.assertIs(build["openmp"], True)
            self.assertEqual({r["threads"] for r in res.rows}, {str(n)})

    def test_threads_not_held_to_the_pinned_cpu(self):
        """The runner pins to one CPU; the threads are pinned one to each
        CPU the run was allowed (every one, with a thread per CPU)."""
        allowed = os.sched_getaffinity(0)
        _, build = self.run_threads(len(allowed))
        self.assertEqual(set(build["seen"]), allowed, build)

    def test_a_corrupted_array_fails_with_threads(self):
        res = BenchRun("streamk", ARGS + ["--reps", "2", "--corrupt", "c"],
                       env={"OMP_NUM_THREADS": "2"})
        self.assertEqual(res.returncode, 2, res.describe())

    def test_build_recorded(self):
        _, build = self.run_threads(1)
        self.assertIn("-fopenmp", build["cflags"])
        self.assertIn("-O2", build["cflags"])
        self.assertNotIn("-march=native", build["cflags"])

    @unittest.skipUnless(os.path.exists(os.path.join(BINDIR, "streamk-native")),
                         "build/bench/streamk-native not built (make "
                         "test-bench builds it)")
    def test_native_build_is_o3_march_native(self):
        res, build = self.run_threads(2, "streamk-native")
        for flag in ("-O3", "-march=native", "-fopenmp"):
            self.assertIn(flag, build["cflags"])
        self.assertEqual(len(res.rows), 4)

    def test_run_py_uses_the_native_build_natively(self):
        c = contract.load()
        self.assertEqual(run.native_binary("streamk", c, BINDIR),
                         "streamk-native"
                         if os.path.exists(os.path.join(BINDIR, "streamk-native"))
                         else "streamk")
        self.assertEqual(run.native_binary("chase", c, BINDIR), "chase")


def cache_bytes(level):
    """The size of CPU 0's data or unified cache of that level, as sysfs
    says it (bytes; 0 where sysfs has none)."""
    base = "/sys/devices/system/cpu/cpu0/cache"
    for d in (os.listdir(base) if os.path.isdir(base) else []):
        try:
            with open(os.path.join(base, d, "level")) as f:
                got = int(f.read())
            with open(os.path.join(base, d, "type")) as f:
                kind = f.read().strip()
            with open(os.path.join(base, d, "size")) as f:
                size = f.read().strip()
        except (OSError, ValueError):
            continue
        m = re.fullmatch(r"(\d+)([KMG]?)", size)
        if m and got == level and kind != "Instruction":
            return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[
                m.group(2)]
    return 0


def vector_isa(binary, func):
    """likwid-bench's kernel suffix for the instructions func's loop uses:
    the widest vector registers (zmm: _avx512, ymm: _avx, xmm: _sse,
    none: scalar) and, for the triad, _fma where it fuses."""
    p = subprocess.run(["objdump", "-d", "--no-show-raw-insn",
                        "--disassemble=" + func, os.path.join(BINDIR, binary)],
                       capture_output=True, text=True)
    text = p.stdout.partition("<%s>:" % func)[2]
    isa = next((sfx for reg, sfx in (("%zmm", "_avx512"), ("%ymm", "_avx"),
                                     ("%xmm", "_sse")) if reg in text), "")
    return isa + ("_fma" if isa and "vfmadd" in text else "")


class TestLikwid(unittest.TestCase):
    """The oracle natively: likwid-bench (Debian's likwid, make deps) runs
    its copy and its stream kernel (STREAM's triad, a = b * s + c) on
    arrays of the same size, with the same threads and the same vector
    instructions as streamk's loops (a core's bandwidth depends on them:
    wider loads keep more lines in flight); its MB/s (10^6 bytes/s, bytes
    counted as STREAM counts them) and streamk's triad must agree within
    TOLERANCE (20 %) in every quiet round.

    Like for like, sample by sample: a round is SAMPLES pairs, each one
    streamk process timing one iteration after its warm-up one (--warmup
    1 --reps 1) and one likwid-bench run of one iteration (-i 1: it
    reports the mean of a run's iterations), in alternating order, so
    that both sample the same seconds of the host; the verdict compares
    the two bests, as STREAM reports (medians shown beside them, not
    judged).  Both pinned,
    both first-touching in parallel: streamk's threads by its plan
    (bench/llc.h; one per CPU here), likwid-bench's by -W (its threads,
    pinned to the S0 domain's CPUs, each allocate and initialise their
    own chunk; -w would put every stream where one thread touched it).

    Why sample by sample: this project's hosts are VMs whose memory
    bandwidth moves with their neighbours, from one second to the next.
    On the 2-vCPU Zen 3 VM (AMD EPYC family 25 model 1; others using
    0.00 to 0.02 CPUs) two threads' triad read 23 to 44 GB/s from one
    streamk process to the next, one process keeping its rate for about
    a second.  The best of one process's 9 iterations (0.1 s of the
    host) against likwid-bench's best of 9 runs (some 5 s) therefore
    read streamk -45 to +7 % off in 12 rounds of two threads, 4 of them
    outside the band.  The first version of this oracle did the opposite, a mean
    against a best (likwid-bench -i 2), which is where the 7 to 11 %
    two-thread excess streamk once showed came from: rerun that way on
    the Zen 3 VM streamk read +5.5 and +8.1 % above it in two rounds of
    three (the third: -15 %, the host moving).  Sampled pair by pair,
    the bests agreed within -15 to +9 % in 11 rounds of two threads and
    -2 to +10 % in 3 of one.  Not the medians: the host's rate is
    bimodal (about 25-30 and 37-44 GB/s on two threads), 11 samples a
    side hold the slow mode in different shares, and the two-thread
    medians read -12 to +32 % apart in the same 11 rounds (in the +32 %
    one the bests were 1 % apart).
    Every round is judged: each round on a quiet machine must agree
    (tests/bench/quiet.py's measure of other processes' CPU time), any
    that does not fails the test; rounds on a busy one are judged
    neither way; with no quiet round in ROUNDS the test skips, listing
    every round.

    Why 20 %: two careful implementations of the same kernel differ by
    the microarchitecture's response to their loops, and the spread
    measured on quiet hosts is up to 13 % (above, and CI's Intel Rocket
    Lake, where streamk's triad read 8 to 13 % above likwid-bench's
    stream_avx512_fma).  At 20 % the oracle still fails every distortion
    of the kind it exists for: bytes miscounted by an array (a triad
    counted as 16 or 32 bytes reads 33 % off), a run that stays in cache
    (the negative control below), a timer base off by a fifth; it misses
    a distortion under 20 %.  The copy is shown beside the triad, not
    judged: on the Zen 5 VM streamk's copy read 9 to 12 % below
    likwid-bench's copy_avx512 on one thread in every round, why not
    known (compiled loops against likwid-bench's hand-written ones is a
    guess, not a measurement).  streamk runs the build native runs use
    (streamk-native where built) on devzero (4 KB pages, as likwid-bench's
    own allocation gets with THP on madvise) with --offset 0: its arrays
    on page boundaries, since likwid-bench offsets its arrays by no
    fraction of a page (the default offsets avoid the 4 KB aliasing that
    page-aligned arrays may pay)."""

    ARRAY = 128 * 10**6         # bytes per array: well beyond any LLC here
    ROUNDS = 3
    SAMPLES = 11
    TOLERANCE = 0.20

    @classmethod
    def setUpClass(cls):
        if not shutil.which("likwid-bench"):
            raise unittest.SkipTest("likwid-bench missing: install Debian's "
                                    "likwid (make deps)")
        if not shutil.which("objdump"):
            raise unittest.SkipTest("objdump (binutils) missing")
        cls.binary = "streamk-native" if os.path.exists(
            os.path.join(BINDIR, "streamk-native")) else "streamk"
        cls.kernels = ("copy" + vector_isa(cls.binary, "streamk_copy")
                       .replace("_fma", ""),
                       "stream" + vector_isa(cls.binary, "streamk_triad"))

    def likwid(self, kernel, arrays, threads):
        """likwid-bench's MB/s for one iteration on arrays of ARRAY
        bytes."""
        p = subprocess.run(["likwid-bench", "-t", kernel, "-i", "1",
                            "-W", "S0:%dkB:%d" % (
                                arrays * self.ARRAY // 1000, threads)],
                           capture_output=True, text=True, timeout=300)
        m = re.search(r"^MByte/s:\s+([\d.]+)", p.stdout, re.M)
        if p.returncode or not m:
            self.skipTest("likwid-bench -t %s cannot run here (rc %d): %s"
                          % (kernel, p.returncode,
                             (p.stderr or p.stdout).strip()[-300:]))
        return float(m.group(1))

    def streamk(self, threads, array):
        """streamk's copy and triad MB/s for one iteration after its
        warm-up one."""
        res = BenchRun(self.binary, [
            "--sizes", str(3 * array + 2 * PAGE), "--backings",
            "devzero", "--warmup", "1", "--reps", "1", "--offset", "0"],
            env={"OMP_NUM_THREADS": str(threads)})
        self.assertEqual(res.returncode, 0, res.describe())
        mb = {r["kernel"]: float(r["mb_per_s"]) for r in res.rows}
        self.assertEqual(int(res.rows[0]["array_bytes"]), array)
        self.assertEqual(res.rows[0]["threads"], str(threads))
        return mb["copy"], mb["triad"]

    def sample(self, threads, array):
        """SAMPLES pairs, in alternating order: {name: [MB/s, ...]} for
        streamk's copy and triad and likwid-bench's."""
        copy_k, triad_k = self.kernels
        got = {"copy": [], "triad": [], copy_k: [], triad_k: []}

        def ours():
            copy, triad = self.streamk(threads, array)
            got["copy"].append(copy)
            got["triad"].append(triad)

        def theirs():
            got[copy_k].append(self.likwid(copy_k, 2, threads))
            got[triad_k].append(self.likwid(triad_k, 3, threads))

        # quiet.paired alternates the same way but keeps medians of one
        # value a side; this keeps every sample of two
        for n in range(self.SAMPLES):
            for side in (ours, theirs) if n % 2 == 0 else (theirs, ours):
                side()
        return got

    def agree(self, threads, array=ARRAY, want=True):
        """Every quiet round agrees (want False: disagrees) within
        TOLERANCE, streamk on arrays of array bytes, likwid-bench on
        ARRAY."""
        copy_k, triad_k = self.kernels
        what = "the best of streamk's triad (%s, %d threads, arrays of " \
            "%d B) is %s %d %% of likwid-bench's (arrays of %d B)" % (
                self.binary, threads, array, "within" if want else "outside",
                self.TOLERANCE * 100, self.ARRAY)
        notes, quiet_rounds, bad = [], 0, False
        for n in range(1, self.ROUNDS + 1):
            with quiet.Others() as load:
                got = self.sample(threads, array)
            best = {k: max(v) for k, v in got.items()}
            ratio = best["triad"] / best[triad_k]
            ok = (abs(ratio - 1) <= self.TOLERANCE) is want
            quiet_rounds += load.quiet
            bad |= load.quiet and not ok
            notes.append(
                "round %d (%s): bests of %d: streamk triad %.0f, "
                "likwid-bench %s %.0f MB/s (%+.0f %%; medians %.0f, %.0f); "
                "copy, not judged: %.0f against %s %.0f%s" % (
                    n, load, self.SAMPLES, best["triad"], triad_k,
                    best[triad_k], 100 * (ratio - 1),
                    statistics.median(got["triad"]),
                    statistics.median(got[triad_k]), best["copy"], copy_k,
                    best[copy_k], "" if load.quiet else "; busy: not judged"))
        if bad:
            self.fail("%s, in every quiet round:\n  %s"
                      % (what, "\n  ".join(notes)))
        if not quiet_rounds:
            self.skipTest("cannot tell whether %s: no round ran on a quiet "
                          "machine; rerun on one (make test-timing):\n  %s"
                          % (what, "\n  ".join(notes)))

    def test_one_thread(self):
        self.agree(1)

    def test_a_cached_run_is_caught(self):
        """The negative control: streamk on arrays a quarter of the
        core's own L2 each (three of them fill 3/4 of it: an instrument
        that streams less than it says) must disagree with likwid-bench
        on ARRAY in every quiet round.  The L2, not the last level: a
        core need not get its share of a shared L3 (this project's Intel
        VM reports a 480 MB L3, and streamk on arrays of an eighth of it,
        60 MB, ran at likwid-bench's DRAM speed, +1 to +15 %), while a
        core's L2 is its own (there streamk's triad read 98 to 118 GB/s
        against likwid-bench's 16).  The cache's size is read here from
        sysfs, not from streamk (whose own reading is one of the things
        under test).  What the comparison misses: a distortion under
        TOLERANCE, and what both share (the vector width, chosen to
        match; the page size; the memory's placement)."""
        l2 = cache_bytes(2)
        if not l2:
            self.skipTest("no L2 size in /sys/devices/system/cpu/cpu0/"
                          "cache: cannot size a run that fits in it")
        self.agree(1, l2 // 4 // 64 * 64, want=False)

    def test_every_cpu(self):
        cpus = len(os.sched_getaffinity(0))
        if cpus < 4:
            # Sampled pair by pair, two threads on this project's 2-vCPU
            # Zen 3 VM agreed within -15 to +9 % in 11 quiet rounds, then
            # read +21 % in one of three in CI's timing pass (the others
            # +1 and -4 %): with every vCPU streaming, the harness and the
            # hypervisor's own threads share them, and the band does not
            # hold every round.
            self.skipTest("%d CPUs: every CPU streaming leaves none for the "
                          "harness and the hypervisor; on 2, pair by pair, "
                          "one quiet round in 14 read 21 %% apart; judged "
                          "on hosts of 4 CPUs or more (test_one_thread is "
                          "the comparison here)" % cpus)
        self.agree(cpus)


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
        got = run.fit_pool(self.res, "streamk", cmd, 1000, WSS_ARRAYS)
        size = int(got[2])
        self.assertLessEqual(size, 1000 * (2 << 20))
        self.assertGreater(size, 1000 * (2 << 20) - 3 * 4096)
        self.assertEqual(size % (3 * 4096), 0)
        self.assertEqual(got[3:], ["--reps", "9"])
        self.assertIn("1000 free pages", self.res.meta["notes"][0])

    def test_only_the_profiles_fit_pool_benchmarks_are_cut(self):
        """run_native cuts the profile's fit_pool benchmarks (streamk's
        native build too), in whole steps of the contract's arrays, and
        leaves the others as they are."""
        class Pools:
            def read(self, kb, name="nr_hugepages"):
                return 1000
        big = str(6 << 30)
        runs = [("fault", []), ("streamk", [])]
        cmds = [["/x/fault", "--sizes", big],
                ["/x/streamk-native", "--sizes", big]]
        ran = []
        p = run.profile("quick", "native", 64 << 30, contract.load())
        with mock.patch.object(run.native, "raise_pools", lambda *a: None), \
                mock.patch.object(run.native, "stream_lines",
                                  lambda cmd, res: ran.append(cmd) or 0), \
                mock.patch("sys.stdout"):
            run.run_native(self.res, runs, cmds, Pools(), p, True,
                           contract.load())
        self.assertEqual(ran[0], cmds[0])
        size = int(ran[1][2])
        self.assertLess(size, 6 << 30)
        self.assertEqual(size % (WSS_ARRAYS * 4096), 0)

    def test_left_alone_when_it_fits(self):
        cmd = ["/x/streamk", "--sizes", "384K"]
        self.assertEqual(run.fit_pool(self.res, "streamk", cmd, 10, WSS_ARRAYS),
                         cmd)
        self.assertNotIn("notes", self.res.meta)


FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "llc")


def cpulist(s):
    """[CPU...] of a sysfs cpulist ("0-7,96-103")."""
    out = []
    for part in s.split(","):
        lo, _, hi = part.partition("-")
        out += range(int(lo), int(hi or lo) + 1)
    return out


def sysfs_tree(name, root):
    """Writes the sysfs tree fixtures/llc/<name>.txt describes under root
    (cpuN/cache/indexK/{level,type,size,shared_cpu_list}, cpuN/nodeM, the
    online list); returns root."""
    cpu = os.path.join(root, "sys/devices/system/cpu")
    index = {}
    with open(os.path.join(FIXTURES, name + ".txt")) as f:
        for line in f:
            w = line.split()
            if not w or w[0].startswith("#"):
                continue
            if w[0] == "online":
                os.makedirs(cpu, exist_ok=True)
                with open(os.path.join(cpu, "online"), "w") as o:
                    o.write(w[1] + "\n")
            elif w[0] == "node":
                for c in cpulist(w[2]):
                    os.makedirs(os.path.join(cpu, "cpu%d" % c, "node" + w[1]))
            else:
                level, typ, size, shared = w[1:]
                for c in cpulist(shared):
                    k = index[c] = index.get(c, -1) + 1
                    d = os.path.join(cpu, "cpu%d/cache/index%d" % (c, k))
                    os.makedirs(d)
                    for key, val in (("level", level), ("type", typ),
                                     ("size", size),
                                     ("shared_cpu_list", shared)):
                        with open(os.path.join(d, key), "w") as o:
                            o.write(val + "\n")
    return root


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
            "llc_bytes": 32 << 20, "level": 3, "source": "sysfs",
            "caches": 1, "plan": [1]})

    def test_no_cache_directory_says_so(self):
        root = self.sysfs([])
        p = benchtool("llc", "--sysfs", root, "--no-cpuid")
        self.assertEqual(p.returncode, 1)
        self.assertIn("has no data or unified cache", p.stderr)
        p = benchtool("llc", "--sysfs", root)
        if p.returncode == 0:   # CPUID knows, and it is labelled so
            self.assertEqual(json.loads(p.stdout)["source"], "cpuid")
            self.assertEqual(json.loads(p.stdout)["caches"], 0)


class TestLlcPlan(unittest.TestCase):
    """STREAM's rule counts every last-level cache the threads use, and
    the threads are placed by it (bench/llc.h llc_plan, through benchtool
    llc): on sysfs trees of a 12-CCD Zen 5 part and a two-socket Xeon
    (written from their published topologies) and of this project's VM
    (recorded)."""

    def plan(self, name, *args, env=None):
        root = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, root)
        sysfs_tree(name, root)
        p = benchtool("llc", "--sysfs", root, "--no-cpuid", *args,
                      env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        return json.loads(p.stdout)

    def test_zen5_every_cpu_is_the_sum_of_twelve_l3s(self):
        got = self.plan("epyc-9655-zen5-12ccd")
        self.assertEqual((got["llc_bytes"], got["caches"], got["level"]),
                         (12 * (32 << 20), 12, 3))
        # one thread per CPU, every CPU once
        self.assertEqual(sorted(got["plan"]), list(range(192)))

    def test_zen5_fewer_threads_spread_over_the_ccds(self):
        got = self.plan("epyc-9655-zen5-12ccd", "--threads", "12")
        self.assertEqual(got["plan"], list(range(0, 96, 8)))
        self.assertEqual((got["llc_bytes"], got["caches"]),
                         (12 * (32 << 20), 12))
        got = self.plan("epyc-9655-zen5-12ccd", "--threads", "5")
        self.assertEqual((got["llc_bytes"], got["caches"]),
                         (5 * (32 << 20), 5))
        got = self.plan("epyc-9655-zen5-12ccd", "--threads", "1")
        self.assertEqual((got["llc_bytes"], got["plan"]), (32 << 20, [0]))
        # the 13th thread goes back to the first CCD, on its next CPU
        got = self.plan("epyc-9655-zen5-12ccd", "--threads", "13")
        self.assertEqual(got["plan"][12], 1)

    def test_two_sockets_alternate_nodes(self):
        got = self.plan("xeon-8480-2s")
        self.assertEqual((got["llc_bytes"], got["caches"]),
                         (2 * 107520 << 10, 2))
        self.assertEqual(sorted(got["plan"]), list(range(224)))
        got = self.plan("xeon-8480-2s", "--threads", "2")
        self.assertEqual(got["plan"], [0, 56])
        self.assertEqual(got["llc_bytes"], 2 * 107520 << 10)
        got = self.plan("xeon-8480-2s", "--threads", "4")
        self.assertEqual(got["plan"], [0, 56, 1, 57])
        got = self.plan("xeon-8480-2s", "--cpus", "0-55")
        self.assertEqual((got["llc_bytes"], got["caches"]),
                         (107520 << 10, 1))

    def test_omp_num_threads_is_the_default(self):
        env = dict(os.environ, OMP_NUM_THREADS="3")
        got = self.plan("xeon-8480-2s", env=env)
        self.assertEqual(got["plan"], [0, 56, 1])

    def test_this_vm_recorded(self):
        got = self.plan("vm-epyc-2vcpu-recorded")
        self.assertEqual(got, {"llc_bytes": 32 << 20, "level": 3,
                               "source": "sysfs", "caches": 1,
                               "plan": [0, 1]})


class TestPlacement(unittest.TestCase):
    """The threads run where the plan puts them, each first-touches its
    own slices (the runner neither memsets nor binds streamk's mapping),
    and the rule is applied with the plan's caches."""

    def run_threads(self, n):
        res = BenchRun("streamk", ARGS + ["--reps", "2"],
                       env={"OMP_NUM_THREADS": str(n)})
        self.assertEqual(res.returncode, 0, res.describe())
        return res

    def test_threads_run_on_the_plan(self):
        for n in (1, 2):
            res = self.run_threads(n)
            (build,) = res.meta["streamk_build"]
            p = benchtool("llc", env=dict(os.environ,
                                          OMP_NUM_THREADS=str(n)))
            want = json.loads(p.stdout)
            self.assertEqual(build["plan"], want["plan"], build)
            self.assertEqual(build["seen"], build["plan"], build)
            (llc,) = res.meta["streamk_llc"]
            self.assertEqual((llc["llc_bytes"], llc["caches"]),
                             (want["llc_bytes"], want["caches"]))

    def test_each_thread_faults_its_own_slices(self):
        """Two threads: each takes the minor faults (getrusage) of its own
        half of the arrays, so the runner touched none of them first."""
        res = self.run_threads(2)
        (touch,) = res.meta["streamk_touch"]
        pages = SIZE // PAGE
        self.assertEqual(len(touch["faults"]), 2, touch)
        for f in touch["faults"]:
            self.assertGreater(f, 0.4 * pages, touch)
        (numa,) = res.meta["numa"]
        self.assertEqual(numa["bound_to"], -1, numa)


if __name__ == "__main__":
    unittest.main()
