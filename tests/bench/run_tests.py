#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Runs tests/bench/test_*.py; the last line is "N passed, N failed".

    python3 -m tests.bench.run_tests [--failfast] [NAME...]
    make test-bench [ONLY=test_fault,test_layout]

NAME runs only those tests: a module (test_fault, tests.bench.test_fault),
a class or test in one (test_fault.TestFaultCounts), or a word their names
contain (tests/harness.py select()).

As root it first gives the host's 2 MB pool SUITE_PAGES free pages (and
puts the pool back afterwards), so that the tests of hugetlb backings run
instead of skipping; tests that need more raise it themselves.  Without
root, or where the kernel cannot find the pages, those tests skip and say
why."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
from bench import benchrun
from tests import harness

SUITE_PAGES = 16


def main(argv):
    failfast, names = harness.only_args(argv)
    pools = benchrun.HugePools()
    # The whole suite changes the host's pools and THP (bench/hostlock.py):
    # another run waits until they are back, and the suite's own native runs
    # find it holding the lock.
    pools.hold()
    busy = pools.read(2048) - pools.read(2048, "free_hugepages")
    if os.geteuid() == 0:
        got = pools.raise_to(2048, busy + SUITE_PAGES)
        print("bench tests: host 2 MB pool %d pages (%d in use by others)"
              % (got, busy))
    try:
        # imported only now: a module may look at the pool when loaded
        return harness.run_unittest(harness.select(HERE, names),
                                    failfast=failfast)
    finally:
        pools.restore()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
