# SPDX-License-Identifier: GPL-2.0
"""tests/pathcase/run.py's checks, on two real guest outputs kept in
tests/pathcase/fixtures: the device's (every check passes, and the table
is the cover letter's) and the same job with /dev/zero in the device's
place (run.py --device /dev/zero), where the device rows must fail.
The cover letter's table must be the one the device's output gives."""
import io
import os
import re
import unittest
from contextlib import redirect_stdout

from tests.pathcase import run

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(ROOT, "tests", "pathcase", "fixtures")


def results(name):
    """{check name: passed} for one fixture."""
    with open(os.path.join(FIXTURES, name)) as f:
        rows, facts = run.parse(f.read())
    t = run.Tally()
    with redirect_stdout(io.StringIO()) as out:
        run.check(t, rows, facts)
    got = {}
    for line in out.getvalue().splitlines():
        m = re.match(r"^(PASS|FAIL) (.*?)(: .*)?$", line)
        if m:
            got[m.group(2)] = m.group(1) == "PASS"
    return got, run.table(rows)


class PathCase(unittest.TestCase):
    def test_device_passes_every_check(self):
        got, _ = results("device.out")
        self.assertTrue(got)
        self.assertEqual([k for k, ok in got.items() if not ok], [])

    def test_table_shows_hugetlb_for_the_device_only_without_setup(self):
        _, table = results("device.out")
        dev = [l for l in table.splitlines() if l.startswith("/dev/hugetlb")]
        self.assertEqual(len(dev), 1)
        self.assertEqual(dev[0].split()[1:5], ["no", "no", "no", "no"])
        self.assertEqual(dev[0].count("hugetlb"), 3, dev[0])

    def test_cover_letter_has_the_table(self):
        _, table = results("device.out")
        with open(os.path.join(ROOT, "kernel", "patches", "0000-cover-letter.patch")) as f:
            self.assertIn(table + "\n", f.read())

    def test_dev_zero_in_its_place_fails_the_device_rows(self):
        got, table = results("devzero.out")
        failed = sorted(k.split(":")[0] for k, ok in got.items() if not ok)
        self.assertEqual(failed, ["dev-fio", "dev-qemu"])
        dev = [l for l in table.splitlines() if l.startswith("/dev/hugetlb")][0]
        self.assertNotIn("hugetlb ", dev[len("/dev/hugetlb"):])


if __name__ == "__main__":
    unittest.main()
