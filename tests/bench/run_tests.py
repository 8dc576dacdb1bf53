#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Runs tests/bench/test_*.py; the last line is "N passed, N failed".

    python3 -m tests.bench.run_tests [--failfast] [--later=NAME,...] [NAME...]
    make test-bench [ONLY=test_fault,test_layout] [TIMING_LATER=1]

NAME runs only those tests: a module (test_fault, tests.bench.test_fault),
a class or test in one (test_fault.TestFaultCounts), or a word their names
contain (tests/harness.py select()).

As root it first gives the host's 2 MB pool SUITE_PAGES free pages (and
puts the pool back afterwards), so that the tests of hugetlb backings run
instead of skipping; tests that need more raise it themselves.  Without
root, or where the kernel cannot find the pages, those tests skip and say
why.

--later=NAME,... skips those tests, saying that make test-timing judges
them: make test-bench TIMING_LATER=1 passes bench.mk's TIMING_TESTS, as
.ci/run's test-fresh does, beside kernel builds that leave only lulls in
which a wall-time test could judge (its test-timing pass runs them once the
builds are done)."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
from bench import benchrun
from tests import harness

SUITE_PAGES = 16


LATER = ("judged by make test-timing, alone, once the builds beside this "
         "run are done (TIMING_LATER=1, as .ci/run's test-fresh)")


def main(argv):
    later = [n for a in argv if a.startswith("--later=")
             for n in a[len("--later="):].split(",") if n]
    failfast, names = harness.only_args([a for a in argv
                                         if not a.startswith("--later=")])
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
        suite = harness.select(HERE, names)
        if later:
            print("bench tests: %d left to make test-timing"
                  % harness.defer(suite, harness.package(HERE), later,
                                  LATER))
        return harness.run_unittest(suite, failfast=failfast)
    finally:
        pools.restore()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
