# SPDX-License-Identifier: GPL-2.0
"""tests/run.py counts the points of hugetlb_dev and of its 32-bit build
apart, from the sections kernel/initramfs/run-selftests prints."""
import unittest

from tests.run import nested_points

OUTPUT = """TAP version 13
1..3
# ---- hugetlb_dev ----
# ok 1 hugetlb: zero fill
# ok 2 hugetlb-1048576kB: zero fill
# exit status 0
ok 1 hugetlb_dev
# ---- hugetlb_dev_32 ----
# not ok 1 hugetlb: zero fill
# ok 2 hugetlb-1048576kB: zero fill
# ok 3 something else entirely
# exit status 1
not ok 2 hugetlb_dev_32
# ---- map_hugetlb ----
# ok 1 hugetlb: not ours
ok 3 map_hugetlb
""".splitlines()


class Sections(unittest.TestCase):
    def test_each_binary_gets_its_own_points(self):
        self.assertEqual(nested_points(OUTPUT, "hugetlb_dev"),
                         ["ok 1 hugetlb: zero fill", "ok 2 hugetlb-1048576kB: zero fill"])
        self.assertEqual(nested_points(OUTPUT, "hugetlb_dev_32"),
                         ["not ok 1 hugetlb: zero fill", "ok 2 hugetlb-1048576kB: zero fill"])

    def test_absent_binary_has_no_points(self):
        self.assertEqual(nested_points(OUTPUT, "hugetlb_dev_64"), [])


if __name__ == "__main__":
    unittest.main()
