# SPDX-License-Identifier: GPL-2.0
"""multiload's unloaded chase is the suite's chase (issue 34, point 4).

multiload builds its cycle with chase.c's construction (layout.c's
chase_build_cycle) and chases it with the same loop, so its ns_unloaded
must be the chase's ns_per_access on the same backing, size and hop: the
loaded and unloaded rows measure the chase the other figures show.
SameChase (a timing test, bench.mk's TIMING_TESTS, make test-timing):
natively on devzero at 64 MB, line hop, multiload's ns_unloaded (median
of its repetitions, the load threads blocked between loaded chases)
against chase's ns_per_access, in pairs run back to back on the CPU
multiload pinned itself to (quiet.paired), the median of the pairs'
ratios within a fixed 15 % under tests/bench/quiet.py's policy (strict:
a busy machine skips, saying so); the negative control: multiload at
1 MB (inside the caches) against chase at 64 MB must fall outside.
What it misses: a distortion of both (they share the cycle, the loop,
the clock and the runner), and one under 15 %.  The load's own checks
(coverage, its counted work, the floor, below_unloaded) need no timing:
tests/bench/test_multiload.py sees each flag a distorted load."""
import unittest

from tests.bench import quiet
from tests.bench.benchbin import BenchRun

MB = 1 << 20


def multiload_unloaded(wss):
    r = BenchRun("multiload", ["--backings", "devzero", "--sizes", str(wss), "--reps", "3",
                               "--warmup", "0", "--load", "read", "--load-bytes", "16M"])
    if r.returncode or len(r.rows) != 1:
        raise AssertionError(r.describe())
    return float(r.rows[0]["ns_unloaded"]), r.meta["method"][0]["cpu_pinned"]


def chase(wss, cpu):
    r = BenchRun("chase", ["--backings", "devzero", "--sizes", str(wss), "--reps", "3",
                           "--warmup", "0", "--hop", "line", "--model", "none"]
                 + (["--cpu", str(cpu)] if cpu >= 0 else []))
    if r.returncode or len(r.rows) != 1:
        raise AssertionError(r.describe())
    return float(r.rows[0]["ns_per_access"])


class SameChase(unittest.TestCase):
    WSS = 64 * MB
    TRIES = 4
    RUNS = 5
    TOLERANCE = 0.15

    def judge(self, ml_wss, want_agree):
        def measure():
            r, ours, theirs, cpu = quiet.paired(lambda: multiload_unloaded(ml_wss),
                                                lambda cpu: chase(self.WSS, cpu), self.RUNS)
            ok = (abs(r - 1) <= self.TOLERANCE) is want_agree
            return ok, ("multiload unloaded %.1f ns/hop at %d MB vs chase %.1f at %d MB on "
                        "CPU %d (pairs' median ratio %+.0f %%)"
                        % (ours, ml_wss // MB, theirs, self.WSS // MB, cpu, 100 * (r - 1)))
        quiet.verdict(self, quiet.judge(measure, self.TRIES, strict=True),
                      "multiload's unloaded chase at %d MB %s the chase at %d MB within 15 %%"
                      % (ml_wss // MB, "agrees with" if want_agree else "is caught out of",
                         self.WSS // MB))

    def test_unloaded_is_the_chase(self):
        self.judge(self.WSS, True)

    def test_a_working_set_64_times_smaller_is_caught(self):
        self.judge(self.WSS // 64, False)


if __name__ == "__main__":
    unittest.main()
