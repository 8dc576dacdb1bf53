#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Runs tests/bench/test_*.py; the last line is "N passed, N failed"."""
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


class Counting(unittest.TextTestResult):
    passed = 0

    def addSuccess(self, test):
        super().addSuccess(test)
        self.passed += 1


def main():
    sys.path.insert(0, HERE)
    suite = unittest.defaultTestLoader.discover(HERE, pattern="test_*.py",
                                                top_level_dir=HERE)
    runner = unittest.TextTestRunner(resultclass=Counting, verbosity=2,
                                     stream=sys.stdout)
    res = runner.run(suite)
    failed = len(res.failures) + len(res.errors) + \
        len(res.unexpectedSuccesses)
    print("%d passed, %d failed" % (res.passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
