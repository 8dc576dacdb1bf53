# SPDX-License-Identifier: GPL-2.0
"""tests/bench/quiet.py: the load a timing test sees, and its policy.

The measure: a busy process that is not ours shows as about a CPU of
other load; our own waited-for child's CPU time does not (counted as
others, every timing test would skip forever on a machine it busies
itself).  The policy, on scripted tries and loads: one passing try
passes; a failure is a verdict only after FAILS_TO_JUDGE quiet, clean
tries; busy or noisy tries never fail a test, and never pass one."""
import subprocess
import time
import unittest
from unittest import mock

from tests.bench import quiet

SPIN = ["sh", "-c", "while :; do :; done"]


def burn(seconds):
    """A child of ours that spins for seconds of CPU, waited for."""
    subprocess.run(["timeout", str(seconds)] + SPIN)


class TestOthers(unittest.TestCase):
    def stranger(self, argv):
        """Others() over a second of a process that is not our child."""
        p = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
        try:
            time.sleep(0.2)
            with quiet.Others() as o:
                time.sleep(1)
        finally:
            p.kill()
            p.wait()
        return o

    def test_a_busy_stranger_is_about_a_cpu(self):
        o = self.stranger(SPIN)
        self.assertGreater(o.cpus, 0.8, o)
        self.assertFalse(o.quiet)

    def test_a_stranger_busy_in_the_kernel_counts_too(self):
        # dd copies /dev/zero to /dev/null: nearly all system time
        o = self.stranger(["dd", "if=/dev/zero", "of=/dev/null", "bs=64k"])
        self.assertGreater(o.cpus, 0.8, o)

    def test_our_own_children_are_not_others(self):
        # against the load a sleep beside it sees, three times (the
        # machine's other load may change from one second to the next)
        seen = []
        for _ in range(3):
            with quiet.Others() as idle:
                time.sleep(1)
            with quiet.Others() as own:
                burn(1)
            seen.append((idle.cpus, own.cpus))
            if own.cpus < idle.cpus + 0.5:
                return
        self.fail("our child's CPU counted as others' (idle, own): %s"
                  % seen)


class FakeLoad:
    """Others() with scripted loads, one per try."""
    loads = []

    def __enter__(self):
        self.cpus = FakeLoad.loads.pop(0)
        return self

    def __exit__(self, *exc):
        return False

    __str__ = quiet.Others.__str__
    quiet = quiet.Others.quiet


class TestPaired(unittest.TestCase):
    def test_pairs_back_to_back_on_the_instruments_cpu(self):
        """Each ratio is of one pair (drift between pairs cancels), the
        oracle runs on the CPU the instrument pinned itself to, and which
        goes first alternates."""
        order, ours_ns = [], iter([10, 20, 30, 40, 50])
        theirs_ns = iter([10, 20, 30, 40, 25])

        def ours():
            order.append("ours")
            return next(ours_ns), 3

        def oracle(cpu):
            order.append("oracle@%d" % cpu)
            return next(theirs_ns)

        r, a, o, cpu = quiet.paired(ours, oracle, 5)
        # ratios 1, 1, 1, 1, 2: the median pair agrees; medians 30, 25
        self.assertEqual((r, a, o, cpu), (1.0, 30, 25, 3))
        self.assertEqual(order, ["ours", "oracle@3", "oracle@3", "ours",
                                 "ours", "oracle@3", "oracle@3", "ours",
                                 "ours", "oracle@3"])


class TestJudge(unittest.TestCase):
    def judge(self, loads, results, strict=False, looks=None):
        """judge() with scripted loads (one a try run) and the looks
        before strict tries (quiet unless given)."""
        FakeLoad.loads = list(loads)
        tries = iter(results)
        before = iter(looks or [0.0] * len(results))

        def look():
            FakeLoad.loads.insert(0, next(before))
            with FakeLoad() as o:
                return o
        with mock.patch.object(quiet, "Others", FakeLoad), \
                mock.patch.object(quiet, "look", look):
            return quiet.judge(lambda: next(tries), len(results), strict)

    def test_strict_runs_no_try_on_a_machine_busy_before_it(self):
        """A strict try is not run when the look before it is busy: it
        could not be judged; the next try, after a quiet look, is."""
        got, notes = self.judge([0.0], [(True, "b")] * 3, strict=True,
                                looks=[1.5, 2.0, 0.0])
        self.assertEqual((got, len(notes)), ("pass", 3))
        self.assertIn("others used 1.50", notes[0])
        self.assertIn("busy: not run", notes[1])
        self.assertIn("try 3 (others used 0.00", notes[2])
        got, notes = self.judge([], [(True, "b")] * 2, strict=True,
                                looks=[1.5, 1.5])
        self.assertEqual(got, "cannot tell")

    def test_no_look_before_a_try_that_is_not_strict(self):
        """Not strict, a busy try may still pass: no look skips it."""
        got, notes = self.judge([1.5], [(True, "a")], looks=[9.0])
        self.assertEqual((got, len(notes)), ("pass", 1))

    def test_strict_busy_agreement_does_not_pass(self):
        """An oracle's agreement on a busy machine is no pass (strict):
        the busy try is not judged, a later quiet one is."""
        got, notes = self.judge([1.5, 1.5], [(True, "a")] * 2, strict=True)
        self.assertEqual(got, "cannot tell")
        self.assertIn("busy: not judged", notes[0])
        got, notes = self.judge([1.5, 0.0], [(True, "a")] * 2, strict=True)
        self.assertEqual((got, len(notes)), ("pass", 2))

    def test_a_passing_try_passes_at_once(self):
        got, notes = self.judge([0.0, 0.0], [(False, "a"), (True, "b")])
        self.assertEqual((got, len(notes)), ("pass", 2))

    def test_two_quiet_clean_failures_fail(self):
        got, notes = self.judge([0.0, 0.0, 0.0], [(False, "a")] * 3)
        self.assertEqual((got, len(notes)), ("fail", 2))

    def test_one_quiet_failure_is_not_a_verdict(self):
        got, notes = self.judge([0.0, 2.0], [(False, "a")] * 2)
        self.assertEqual(got, "cannot tell")
        self.assertIn("busy: not judged", notes[1])

    def test_busy_failures_never_fail(self):
        got, notes = self.judge([1.5] * 4, [(False, "a")] * 4)
        self.assertEqual(got, "cannot tell")
        self.assertTrue(all("others used 1.50" in n for n in notes), notes)

    def test_noisy_failures_never_fail(self):
        got, notes = self.judge([0.0] * 3, [(False, "a", False)] * 3)
        self.assertEqual(got, "cannot tell")
        self.assertIn("too noisy: not judged", notes[0])

    def test_the_verdict_in_a_test(self):
        case = unittest.TestCase()
        with self.assertRaises(unittest.SkipTest) as skip:
            quiet.verdict(case, ("cannot tell", ["try 1 (x)"]), "it holds")
        self.assertIn("cannot tell whether it holds", str(skip.exception))
        self.assertIn("make test-timing", str(skip.exception))
        with self.assertRaises(AssertionError):
            quiet.verdict(case, ("fail", ["try 1"]), "it holds")
        quiet.verdict(case, ("pass", ["try 1"]), "it holds")


if __name__ == "__main__":
    unittest.main()
