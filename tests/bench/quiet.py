# SPDX-License-Identifier: GPL-2.0
"""Whether the machine was quiet while a timing test measured, and the
retry policy every timing test follows.

Quiet is measured, not guessed: the CPU time everything else used during
the measurement (/proc/stat's busy and steal time over all CPUs, less
this process's and its waited-for children's, from os.times()).  The load
average is not this: it is a one-minute moving average, so it still holds
the suite's own previous minute of work when a test starts and has not
yet seen a kernel build that starts during it.

The policy (judge()): a try that shows what the test looks for passes at
once; a try that does not is a verdict only if the machine was quiet
during it and the try's own data were clean enough to show it (the test
says, from the spread it measured), and only when FAILS_TO_JUDGE such
tries agree (noise nobody can see, such as a neighbour of the VM, does
not fail a run alone); otherwise the test tries again, and after its
last try it skips, naming the load each try saw.  Nothing passes because
of noise: a try passes only on the result the instrument must give.  An
oracle's agreement within a band is such a result only on a quiet
machine (noise moves either side into the band as easily as out of it):
judge(..., strict=True) judges busy tries neither way, and so does not
run a try when a look just before it (LOOK_S of this process asleep)
finds the machine busy: beside CI's kernel builds a try of the oracles
past the LLC takes minutes and could only end "busy: not judged".
"""
import os
import statistics
import time

QUIET_CPUS = 0.25     # others' CPUs, averaged over a try, below which it judges
FAILS_TO_JUDGE = 2    # quiet failing tries that make a verdict
LOOK_S = 1.0          # strict: seconds the look before a try lasts


def _busy_s():
    """Busy and steal seconds of all CPUs since boot (/proc/stat)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq = v[:7]
    steal = v[7] if len(v) > 7 else 0
    return (user + nice + system + irq + softirq + steal) / \
        os.sysconf("SC_CLK_TCK")


def _own_s():
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


class Others:
    """with Others() as o: ... then o.cpus is the CPUs other processes
    (and the hypervisor's steal) used on average during the block."""

    def __enter__(self):
        self._t, self._busy, self._own = time.monotonic(), _busy_s(), _own_s()
        self.cpus = None
        return self

    def __exit__(self, *exc):
        wall = max(time.monotonic() - self._t, 1e-3)
        others = (_busy_s() - self._busy) - (_own_s() - self._own)
        # tick sampling makes a short block's share slightly negative
        self.cpus = max(others, 0.0) / wall
        return False

    @property
    def quiet(self):
        return self.cpus < QUIET_CPUS

    def __str__(self):
        return "others used %.2f of %d CPUs" % (self.cpus, os.cpu_count())


def look(seconds=LOOK_S):
    """Others() over seconds of this process asleep: what the machine is
    doing just before a try."""
    with Others() as o:
        time.sleep(seconds)
    return o


def judge(measure, tries, strict=False):
    """Runs measure() up to tries times, each inside Others().  measure
    returns (ok, detail) or (ok, detail, clean): clean False says the
    try's own noise hid what it looks for.  Returns ("pass", notes) at the
    first ok try (strict: the first ok try on a quiet machine; a try is
    not run when look() before it finds the machine busy), ("fail",
    notes) once FAILS_TO_JUDGE quiet, clean tries failed, else ("cannot
    tell", notes): notes are one line per try."""
    notes, judged = [], 0
    for n in range(1, tries + 1):
        if strict:
            before = look()
            if not before.quiet:
                notes.append("try %d (%s in the %g s before it): busy: not "
                             "run" % (n, before, LOOK_S))
                continue
        with Others() as load:
            ok, detail, clean = (tuple(measure()) + (True,))[:3]
        why = [] if load.quiet else ["busy: not judged"]
        why += [] if clean or ok else ["too noisy: not judged"]
        notes.append("try %d (%s): %s%s" % (n, load, detail, "".join(
            "; " + w for w in why)))
        if ok and (load.quiet or not strict):
            return "pass", notes
        if not why:
            judged += 1
            if judged == FAILS_TO_JUDGE:
                return "fail", notes
    return "cannot tell", notes


def verdict(test, judged, what):
    """judge()'s (result, notes) in a unittest.TestCase: returns on a pass,
    fails on a judged failure, skips saying why when no try could judge."""
    result, notes = judged
    if result == "fail":
        test.fail("%s, on a quiet machine:\n  %s" % (what, "\n  ".join(notes)))
    if result == "cannot tell":
        test.skipTest("cannot tell whether %s: %d of %d tries found a busy "
                      "machine (other processes over %.2f CPUs) or were too "
                      "noisy to judge; rerun on a quiet one (make "
                      "test-timing):\n  %s"
                      % (what, sum("not judged" in n or "not run" in n
                                   for n in notes),
                         len(notes), QUIET_CPUS, "\n  ".join(notes)))


def paired(ours, oracle, runs):
    """An instrument against its oracle in runs pairs run back to back,
    in turn which goes first: ours() -> (ns, the CPU it pinned itself
    to), oracle(cpu) -> ns on that CPU (when the oracle goes first, the
    last pair's).  Pairs on one CPU, because a VM's vCPUs differ from each
    other and from minute to minute (tests/bench/test_chase_oracle.py).
    Returns (the median of the pairs' ratios, ours' median, the oracle's
    median, the CPU)."""
    ratios, a, b, cpu = [], [], [], -1
    for n in range(runs):
        if n % 2:
            theirs = oracle(cpu)
        ns, cpu = ours()
        if not n % 2:
            theirs = oracle(cpu)
        a.append(ns)
        b.append(theirs)
        ratios.append(ns / theirs)
    return (statistics.median(ratios), statistics.median(a),
            statistics.median(b), cpu)
