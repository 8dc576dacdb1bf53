#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""What every test suite of the project shares: the tally of results, TAP
parsing, and the summary line every suite ends with,

    N passed, N failed[, N skipped]

(optionally after a "name: " prefix).  Host tests are stdlib unittest
cases, run through run_unittest().

    python3 tests/harness.py total LOG...   add up the last summary line of
                                            each log (.ci/run); a log
                                            without one counts as a failure
    python3 tests/harness.py run FOLDER [--failfast] [MODULE...]
                                            run FOLDER's test_*.py (or the
                                            MODULEs named), e.g. tests/host
"""
import os
import re
import sys
import unittest

SUMMARY = re.compile(r"^(?:\w+: )?(\d+) passed, (\d+) failed(?:, (\d+) skipped)?$")
# kselftest.h writes "ok 3 # SKIP name: why", the project's runners
# "ok 3 name # SKIP why" or "ok - name".
_TAP_SKIP_FIRST = re.compile(r"^(ok|not ok) \d+ # SKIP (.*)$")
_TAP = re.compile(r"^(ok|not ok)(?: \d+)?(?: -)? (.*?)(?: # (.*))?$")


def summary_line(passed, failed, skipped=None):
    line = "%d passed, %d failed" % (passed, failed)
    return line if skipped is None else line + ", %d skipped" % skipped


def parse_summary(text):
    """(passed, failed, skipped) of the last summary line in text, or None."""
    found = None
    for line in text.splitlines():
        m = SUMMARY.match(line.strip())
        if m:
            found = (int(m.group(1)), int(m.group(2)), int(m.group(3) or 0))
    return found


def parse_tap(lines):
    """[(name, ok, note, skipped)] for each TAP result line."""
    out = []
    for line in lines:
        m = _TAP_SKIP_FIRST.match(line)
        if m:
            out.append((m.group(2), True, "skipped", True))
            continue
        m = _TAP.match(line)
        if m:
            note = m.group(3) or ""
            out.append((m.group(2), m.group(1) == "ok", note,
                        note.startswith("SKIP")))
    return out


class Tally:
    """Counts results and prints one PASS/FAIL/SKIP line for each."""

    def __init__(self):
        self.passed = self.failed = self.skipped = 0
        self.failures = []

    def record(self, name, ok, detail="", skip=False):
        if skip:
            self.skipped += 1
            word = "SKIP"
        elif ok:
            self.passed += 1
            word = "PASS"
        else:
            self.failed += 1
            self.failures.append(name)
            word = "FAIL"
        print("%s %s%s" % (word, name, ": " + detail if detail else ""),
              flush=True)
        return bool(ok)

    def add_counts(self, name, passed, failed, skipped=0):
        """A whole suite's counts, as one line."""
        self.passed += passed
        self.failed += failed
        self.skipped += skipped
        if failed:
            self.failures.append(name)
        print("%s %s: %s" % ("FAIL" if failed else "PASS", name,
                             summary_line(passed, failed, skipped)),
              flush=True)

    def record_tap(self, prefix, lines):
        """Records each TAP result line; returns how many there were."""
        results = parse_tap(lines)
        for name, ok, note, skipped in results:
            self.record(prefix + name, ok, note, skip=skipped)
        return len(results)

    def summary(self, prefix=""):
        if self.failures:
            print("failed: " + "; ".join(self.failures))
        print(prefix + summary_line(self.passed, self.failed, self.skipped),
              flush=True)
        return 1 if self.failed else 0


def unittest_counts(suite, verbosity=2, stream=None, failfast=False):
    """Runs a unittest suite; returns (passed, failed, skipped).  failfast
    stops at the first failure (the mutant runner only needs one)."""
    res = unittest.TextTestRunner(stream=stream or sys.stdout,
                                  verbosity=verbosity,
                                  failfast=failfast).run(suite)
    failed = len(res.failures) + len(res.errors) + \
        len(res.unexpectedSuccesses)
    skipped = len(res.skipped)
    return res.testsRun - failed - skipped, failed, skipped


def run_unittest(suite, prefix="", failfast=False):
    """Runs suite and prints the summary line; returns the exit status."""
    passed, failed, skipped = unittest_counts(suite, failfast=failfast)
    print(prefix + summary_line(passed, failed, skipped), flush=True)
    return 1 if failed else 0


def discover(folder):
    """Every test_*.py under folder (which goes first on sys.path)."""
    sys.path.insert(0, folder)
    return unittest.defaultTestLoader.discover(folder, pattern="test_*.py",
                                               top_level_dir=folder)


def select(folder, names):
    """The test modules of folder named in names (test_fault, test_fault.py
    or tests.bench.test_fault), or every test_*.py when names is empty
    (make test-bench ONLY=test_fault,test_layout).  An unknown name is an
    error that lists the modules there are."""
    if not names:
        return discover(folder)
    have = sorted(f[:-3] for f in os.listdir(folder)
                  if f.startswith("test_") and f.endswith(".py"))
    sys.path.insert(0, folder)
    suite = unittest.TestSuite()
    for name in names:
        mod = name[:-3] if name.endswith(".py") else name
        mod = os.path.basename(mod).rsplit(".", 1)[-1]
        if mod not in have:
            raise SystemExit("no test module %r in %s: there are %s" % (
                name, os.path.relpath(folder), ", ".join(have)))
        suite.addTests(unittest.defaultTestLoader.loadTestsFromName(mod))
    return suite


def only_args(argv):
    """(failfast, module names) from a runner's arguments: --failfast and
    names, each name possibly a comma list (make ... ONLY=a,b)."""
    names = [n for a in argv if a != "--failfast" for n in a.split(",") if n]
    return "--failfast" in argv, names


def total(paths):
    """Adds up the last summary line of each log; prints and returns it."""
    t = [0, 0, 0]
    for path in paths:
        try:
            with open(path, errors="replace") as f:
                counts = parse_summary(f.read())
        except OSError as e:
            counts, why = None, str(e)
        else:
            why = "no summary line"
        if counts is None:
            print("harness: %s: %s" % (path, why))
            t[1] += 1
            continue
        t = [a + b for a, b in zip(t, counts)]
    print(summary_line(*t))
    return 1 if t[1] else 0


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "total":
        sys.exit(total(sys.argv[2:]))
    if len(sys.argv) >= 3 and sys.argv[1] == "run":
        ff, mods = only_args(sys.argv[3:])
        sys.exit(run_unittest(select(os.path.abspath(sys.argv[2]), mods),
                              failfast=ff))
    print("usage: harness.py total LOG... | run FOLDER [--failfast] "
          "[MODULE...]", file=sys.stderr)
    sys.exit(2)
