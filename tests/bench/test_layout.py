# SPDX-License-Identifier: GPL-2.0
"""The page-hop layout (chase --hop page, stream's stride kernel): inside
huge pages, where the low address bits are the same physically and
virtually, the elements spread over the cache sets as 4 KB pages'
scattered frames would, instead of aliasing a few sets."""
import os
import subprocess
import unittest

from tests.bench.common import BINDIR, benchtool
from tests.bench.test_mlp import chain_loops

PAGE = 4096


def offsets(pages, seed=1):
    p = benchtool("layout", str(pages), str(seed))
    if p.returncode:
        raise AssertionError(p.stderr)
    return [int(x) for x in p.stdout.split()]


def sets_covered(offs, sets, line=64):
    # the region starts 2 MB (or 1 GB) aligned, so the set index is the
    # offset's bits above the line
    return len({(o // line) % sets for o in offs}) / sets


class TestLayout(unittest.TestCase):
    def test_one_aligned_element_per_page(self):
        offs = offsets(4096)
        self.assertEqual(len(offs), 4096)
        for i, o in enumerate(offs):
            self.assertEqual(o // PAGE, i)
            self.assertEqual(o % 64, 0)

    def test_l2_sets_of_a_2m_aligned_region(self):
        # 64 MB of page hops, a 1024-set L2 with 64 B lines (Skylake
        # client, Zen 3); 4 KB pages on scattered frames would cover
        # ~100 %.  Line i % 64 of page i covers 64 sets (6 %).
        self.assertGreaterEqual(sets_covered(offsets(16384), 1024), 0.90)

    def test_l3_sets_of_a_1g_region(self):
        # Zen 3 L3 slice: 32768 sets; 1 GB of page hops
        self.assertGreaterEqual(sets_covered(offsets(262144), 32768), 0.90)

    def test_same_for_equal_seed_other_for_another(self):
        self.assertEqual(offsets(512, 7), offsets(512, 7))
        self.assertTrue(offsets(512, 7) != offsets(512, 8))



class TestStrideLoop(unittest.TestCase):
    """stream's stride kernel picks each page's line with mix64 inline:
    a call per access would set a compute floor under the loads."""

    def test_no_call_in_the_loop(self):
        text = subprocess.run(["objdump", "-d", "--no-show-raw-insn",
                               os.path.join(BINDIR, "stream")],
                              capture_output=True, text=True,
                              check=True).stdout
        loops = chain_loops(text, "read_stride")
        self.assertTrue(loops, "read_stride has no loop")
        for loop in loops:
            self.assertFalse([i for i in loop if i.startswith("call")],
                             "\n".join(loop))

if __name__ == "__main__":
    unittest.main()
