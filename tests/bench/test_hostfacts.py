# SPDX-License-Identifier: GPL-2.0
"""One parser of each input, one reader of each host fact (issue 33, 2):
bench/size.c's size parser and bench/hostfacts.c's readers, tested at
the inputs where the copies they replaced disagreed, through benchtool
(size, meminfo, poolfree) and through each program that takes a size:
every benchmark's size options, realprog's --corpus and hugepreload's
HUGEPRELOAD_MIN.

The copies that disagreed: runner.c read sizes with strtod (fractions,
either case, refused at 18e18), realprog.c with strtod and upper case
only, hugepreload.c as integers with an unchecked shift (2^64 wrapped to
0); runner.c read a missing pool file as 0 free, faultscale.c as unknown;
runner.c matched a meminfo line by sscanf, faultscale.c by its exact key."""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

from tests.bench.common import BENCHTOOL, BINDIR, benchtool

REALPROG = os.path.join(BINDIR, "realprog")
SO = os.path.join(BINDIR, "hugepreload.so")

G = 1 << 30
# 2^64 bytes: one past what 64 bits hold
PAST_64_BITS = "17179869184G"
NOT_SIZES = ["", ".", "K", "1T", "-1M", "+1M", " 1", "1 ", "1e3", "nan",
             "inf", "0x10", "1KB", "1.5.5", "M1", PAST_64_BITS,
             str(1 << 64)]


def size(*texts):
    """[bytes or None] for each text, by benchtool size"""
    p = benchtool("size", *texts)
    out = [None if w == "refused" else int(w) for w in p.stdout.split()]
    assert len(out) == len(texts), (texts, p.stdout, p.stderr)
    assert p.returncode == (1 if None in out else 0), p.returncode
    return out


class OneSizeParser(unittest.TestCase):
    def test_suffixes_either_case(self):
        # realprog.c's copy took upper case only
        for text, want in (("4096", 4096), ("64K", 64 << 10),
                           ("64k", 64 << 10), ("3M", 3 << 20),
                           ("3m", 3 << 20), ("2G", 2 * G), ("2g", 2 * G),
                           ("0", 0)):
            with self.subTest(text=text):
                self.assertEqual(size(text), [want])

    def test_fractions_exact_and_rounded_down(self):
        # hugepreload.c's copy refused fractions; runner.c's went through
        # a double, which reads 0.9999999999999999999999 as 1.0
        for text, want in (("1.5M", 3 << 19), ("1.5m", 3 << 19),
                           (".5G", G // 2), ("0.5K", 512), ("1.5", 1),
                           ("1.", 1), ("0.0009765625K", 1),
                           ("0.9999999999999999999999G", G - 1),
                           ("1.0000000001G", G)):
            with self.subTest(text=text):
                self.assertEqual(size(text), [want])

    def test_the_largest_64_bit_value_and_no_further(self):
        # hugepreload.c's copy shifted without a check: 2^64 read as 0
        self.assertEqual(size(str((1 << 64) - 1), "17179869183G",
                              PAST_64_BITS, str(1 << 64)),
                         [(1 << 64) - 1, (1 << 64) - G, None, None])

    def test_what_is_no_size(self):
        for text in NOT_SIZES:
            with self.subTest(text=text):
                self.assertEqual(size(text), [None])


class EveryProgramUsesIt(unittest.TestCase):
    """The programs that take a size read it by the same rule."""

    def size_options(self):
        c = json.loads(benchtool("contract").stdout)
        runner = [o["name"] for o in c["runner_options"]
                  if o["arg"] in ("SIZE", "BYTES")]
        self.assertIn("mem-budget", runner)
        for b in c["benches"]:
            for o in runner + [o["name"] for o in b["options"]
                               if o["arg"] in ("SIZE", "BYTES")]:
                yield b["name"], o

    def check(self, bench, *args):
        p = subprocess.run([BENCHTOOL, "check", bench] + list(args),
                           capture_output=True, text=True)
        return p.returncode, p.stdout, p.stderr

    def test_each_benchmarks_size_options(self):
        n = 0
        for bench, opt in self.size_options():
            n += 1
            with self.subTest(bench=bench, option=opt):
                # the same verdict either way; a refusal (a size under the
                # option's minimum, as multiload's --load-bytes has) quotes
                # the text it was given, so that quote is made the same
                for lower, upper in (("4k", "4K"), ("1.5m", "1.5M")):
                    rc, out, err = self.check(bench, "--" + opt, lower)
                    self.assertEqual(
                        (rc, out, err.replace("'%s'" % lower, "'%s'" % upper)),
                        self.check(bench, "--" + opt, upper))
                rc, _, err = self.check(bench, "--" + opt, PAST_64_BITS)
                self.assertEqual(rc, 64, err)
                self.assertIn("--" + opt, err)
        self.assertGreater(n, 20)

    def test_sizes_list(self):
        rc, out, err = self.check("chase", "--sizes", "1.5m,64k")
        self.assertEqual((rc, out.split()), (0, ["65536", "1572864"]), err)

    def realprog_corpus(self, text):
        """realprog's corpus_bytes for --corpus text, or its refusal"""
        p = subprocess.run([REALPROG, "--corpus", text, "--backings",
                            "nosuch"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 2, p.stderr)
        if "bad size" in p.stderr:
            return None
        meta = [json.loads(line.split(" ", 2)[2])
                for line in p.stdout.splitlines()
                if line.startswith("@meta realprog ")]
        return meta[0]["corpus_bytes"]

    def test_realprog_corpus(self):
        for text, want in (("64k", 64 << 10), ("1.5m", 3 << 19),
                           ("1.5M", 3 << 19), ("4095", None),
                           (PAST_64_BITS, None)):
            with self.subTest(corpus=text):
                self.assertEqual(self.realprog_corpus(text), want)

    def test_hugepreload_min(self):
        for text, rc in (("1.5m", 0), ("64k", 0), (PAST_64_BITS, 2),
                         ("1T", 2)):
            with self.subTest(min=text):
                p = subprocess.run(["true"], env=dict(
                    os.environ, LD_PRELOAD=SO, HUGEPRELOAD_BACKING="none",
                    HUGEPRELOAD_MIN=text), capture_output=True, text=True)
                self.assertEqual(p.returncode, rc, p.stderr)
                if rc:
                    self.assertIn("HUGEPRELOAD_MIN is not a size", p.stderr)


class Tree(unittest.TestCase):
    """A made-up /proc and /sys under a temporary root."""

    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="hostfacts-")
        self.addCleanup(shutil.rmtree, self.root)

    def write(self, path, text):
        path = os.path.join(self.root, path)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)

    def remove(self, path):
        os.unlink(os.path.join(self.root, path))


MEMINFO = """MemTotal:       16384000 kB
Active(anon):       1000 kB
Active:             2000 kB
MemAvailable:      12345 kB
Hugepagesize:       2048 kB
"""


class MemInfo(Tree):
    def meminfo(self, key):
        p = benchtool("meminfo", self.root, key)
        self.assertEqual(p.returncode, 0, p.stderr)
        return int(p.stdout)

    def test_fields(self):
        self.write("proc/meminfo", MEMINFO)
        self.assertEqual(self.meminfo("MemAvailable"), 12345)
        self.assertEqual(self.meminfo("Hugepagesize"), 2048)

    def test_the_exact_key_not_a_prefix(self):
        self.write("proc/meminfo", MEMINFO)
        self.assertEqual(self.meminfo("Active"), 2000)
        self.assertEqual(self.meminfo("Mem"), -1)

    def test_missing_is_unknown_not_zero(self):
        self.assertEqual(self.meminfo("MemAvailable"), -1)
        self.write("proc/meminfo", "MemTotal: 16384000 kB\n")
        self.assertEqual(self.meminfo("MemAvailable"), -1)


POOL = "sys/kernel/mm/hugepages/hugepages-2048kB/"
NODE = "sys/devices/system/node/node%d/hugepages/hugepages-2048kB/"


class PoolFree(Tree):
    def setUp(self):
        super().setUp()
        self.write(POOL + "nr_hugepages", "12\n")
        self.write(POOL + "free_hugepages", "10\n")
        self.write(POOL + "resv_hugepages", "3\n")
        self.write(NODE % 0 + "free_hugepages", "4\n")
        self.write(NODE % 1 + "free_hugepages", "9\n")

    def free(self, *args):
        p = benchtool("poolfree", self.root, *args)
        self.assertEqual(p.returncode, 0, p.stderr)
        return int(p.stdout)

    def test_free_less_reserved(self):
        self.assertEqual(self.free("2048"), 7)

    def test_a_node_with_fewer_free(self):
        self.assertEqual(self.free("2048", "0"), 4)

    def test_a_node_with_more_free_than_unreserved(self):
        # the node has no reserved count: the pool's caps it
        self.assertEqual(self.free("2048", "1"), 7)

    def test_missing_files_are_unknown_not_zero(self):
        # runner.c's copy read a missing file as 0: a missing resv as
        # nothing reserved, a missing node as nothing free there
        self.assertEqual(self.free("1048576"), -1)
        self.assertEqual(self.free("2048", "2"), -1)
        for f, n in (("resv_hugepages", "3\n"), ("free_hugepages", "10\n")):
            with self.subTest(missing=f):
                self.remove(POOL + f)
                self.assertEqual(self.free("2048"), -1)
                self.assertEqual(self.free("2048", "0"), -1)
                self.write(POOL + f, n)


if __name__ == "__main__":
    unittest.main()
