#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""What every test suite of the project shares: the tally of results (TAP
lines through compare/tap.py), and the summary line every suite ends with,

    N passed, N failed[, N skipped]

(optionally after a "name: " prefix).  Host tests are stdlib unittest
cases, run through run_unittest().

    python3 -m tests.harness total LOG...   add up the last summary line of
                                            each log (.ci/run); a log
                                            without one counts as a failure
    python3 -m tests.harness failures LOG...
                                            what failed in each log, each
                                            failure's name and message
                                            (.ci/run: CI shows only the
                                            tail of its output)
    python3 -m tests.harness run FOLDER [--failfast] [NAME...]
                                            run FOLDER's tests (or those
                                            NAMEs choose: select()), e.g.
                                            tests/host

from the repository root, the root of every import (bench, plots,
compare, lava, tests).
"""
import os
import re
import sys
import unittest

from compare.tap import parse_tap

SUMMARY = re.compile(r"^(?:\w+: )?(\d+) passed, (\d+) failed(?:, (\d+) skipped)?$")


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


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# How to run one test alone; make test and each unit suite print it.
ONE_TEST = ("run one test: python3 -m unittest tests.<suite>.<module>.<Class>.<test> "
            "(as a failure names it); a unit suite: make test-host|test-bench|test-plots|"
            "test-compare [ONLY=module,Class.test,word]; a guest suite: make "
            "test-reliability [ONLY=case], test-bench-guest, test-lava-run")


def unittest_counts(suite, verbosity=2, stream=None, failfast=False):
    """Runs a unittest suite; returns (passed, failed, skipped).  failfast
    stops at the first failure (the mutant runner only needs one).  Each
    failure is named as it runs alone from the repository root."""
    res = unittest.TextTestRunner(stream=stream or sys.stdout,
                                  verbosity=verbosity,
                                  failfast=failfast).run(suite)
    for name in filter(None, (dotted_id(t) for t, _ in res.failures + res.errors)):
        print("rerun: python3 -m unittest " + name, flush=True)
    failed = len(res.failures) + len(res.errors) + \
        len(res.unexpectedSuccesses)
    skipped = len(res.skipped)
    return res.testsRun - failed - skipped, failed, skipped


def dotted_id(test):
    """tests.<suite>.<module>.<Class>.<test> of a test however its module
    was imported (by file, as __main__, or by dotted name); None for one
    that is not the project's (a module that failed to import)."""
    mod = sys.modules.get(type(test).__module__)
    path = getattr(mod, "__file__", None)
    if not path or not os.path.abspath(path).startswith(ROOT + os.sep):
        return None
    name = os.path.relpath(os.path.splitext(os.path.abspath(path))[0], ROOT)
    return ".".join(name.split(os.sep) + test.id().split(".")[-2:])


def run_unittest(suite, prefix="", failfast=False):
    """Runs suite and prints the summary line; returns the exit status."""
    print(ONE_TEST, flush=True)
    passed, failed, skipped = unittest_counts(suite, failfast=failfast)
    print(prefix + summary_line(passed, failed, skipped), flush=True)
    return 1 if failed else 0


def discover(folder):
    """Every test of a suite folder, tests/<suite>: its test_*.py modules,
    and run_tests.py where the runner holds the suite's tests
    (tests/compare), each imported by its dotted name from the repository
    root, so that a test's id is the name that runs it alone."""
    return load(folder, modules(folder))


def modules(folder):
    return sorted(f[:-3] for f in os.listdir(folder)
                  if re.match(r"(test_.*|run_tests)\.py$", f))


def load(folder, names):
    """The tests of folder's modules, classes or tests named (test_fault,
    test_fault.Faults.test_x), as tests.<suite>.<name>."""
    loader = unittest.defaultTestLoader
    return unittest.TestSuite(loader.loadTestsFromName(package(folder) + "." + n)
                              for n in names)


def package(folder):
    """tests.bench for tests/bench."""
    return os.path.relpath(os.path.abspath(folder), ROOT).replace(os.sep, ".")


def tests_of(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from tests_of(t)
        else:
            yield t


def select(folder, names):
    """The tests of folder that names choose (make test-bench ONLY=a,b), or
    all of them.  A name is a module (test_fault, test_fault.py,
    tests.bench.test_fault), a class or test in one
    (test_fault.Faults.test_x, with or without tests.bench.), or else a
    word the chosen tests' names contain (make test-compare ONLY=mwu).  A
    name that chooses nothing is an error that lists the modules there
    are."""
    if not names:
        return discover(folder)
    pkg = package(folder)
    have = modules(folder)
    suite = unittest.TestSuite()
    everything = None
    for name in names:
        name = name[:-3] if name.endswith(".py") else name
        name = os.path.basename(name)
        if name.startswith(pkg + "."):
            name = name[len(pkg) + 1:]
        if name.split(".")[0] in have:
            suite.addTests(load(folder, [name]))
            continue
        # imported only now: a module may look at the pool when loaded
        everything = everything or list(tests_of(discover(folder)))
        chosen = [t for t in everything if name in t.id()]
        if not chosen:
            raise SystemExit("no test module or test named %r in %s: the modules are %s" % (
                name, os.path.relpath(folder), ", ".join(have)))
        suite.addTests(chosen)
    return suite


def defer(suite, pkg, names, why):
    """suite with the tests that names choose skipped, saying why: a name
    is a module, class or test of package pkg (test_mlp.TestRows.test_x,
    as select() takes them).  A whole class named is skipped as a class,
    so its setUpClass does not run either.  Returns how many were."""
    count = 0
    for t in tests_of(suite):
        tid = t.id()
        for name in names:
            full = pkg + "." + name
            if tid == full:
                method = getattr(t, t._testMethodName)
                setattr(t, t._testMethodName, unittest.skip(why)(method))
            elif tid.startswith(full + "."):
                type(t).__unittest_skip__ = True
                type(t).__unittest_skip_why__ = why
            else:
                continue
            count += 1
            break
    return count


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


# unittest's report of one failure: a "FAIL: name (id)" or "ERROR: ..."
# line between rules of = and -, the traceback, and last the exception's
# own lines (unindented, then its message's indented ones) up to the next
# rule or the blank line before "Ran N tests"; a Tally's "FAIL name: why".
FAILURE = re.compile(r"^(FAIL|ERROR): \S")
TALLY_FAIL = re.compile(r"^FAIL \S")
RULE = re.compile(r"^(=+|-+)$")
EXCEPTION = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt)\b")
LINES_EACH = 8


def failures_in(lines):
    """[[lines of one failure]] of a log's lines: unittest's blocks (the
    header and the exception's first LINES_EACH lines) and Tally's FAIL
    lines, in the order they appear."""
    found, block, message = [], None, None
    for line in lines:
        line = line.rstrip("\n")
        if FAILURE.match(line):
            block, message = [line], None
            found.append(block)
        elif block is None:
            if TALLY_FAIL.match(line):
                found.append([line[:300]])
        elif RULE.match(line) and (message is not None or line[0] == "="):
            block = None       # the rule under the header is not the end
        elif message is not None and not line.strip():
            block = None
        else:
            if message is None and EXCEPTION.match(line):
                message = []
            if message is not None and len(message) < LINES_EACH:
                message.append(line)
                block.append("  " + line[:300])
    return found


def failures(paths, room=70):
    """Prints what failed in each log under the log's name, in at most
    room lines (the rest counted, to be read in the log); returns how many
    failures there were."""
    count = 0
    for path in paths:
        try:
            with open(path, errors="replace") as f:
                found = failures_in(f)
        except OSError:
            continue
        count += len(found)
        if found and room > 1:
            print("harness: what failed in %s:" % path)
            room -= 1
        for n, block in enumerate(found):
            if len(block) > room:
                print("harness: %d more in %s" % (len(found) - n, path))
                room = 0
                break
            print("\n".join(block))
            room -= len(block)
    return count


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "total":
        sys.exit(total(sys.argv[2:]))
    if len(sys.argv) >= 3 and sys.argv[1] == "failures":
        failures(sys.argv[2:])
        sys.exit(0)
    if len(sys.argv) >= 3 and sys.argv[1] == "run":
        ff, mods = only_args(sys.argv[3:])
        sys.exit(run_unittest(select(os.path.abspath(sys.argv[2]), mods),
                              failfast=ff))
    print("usage: python3 -m tests.harness total LOG... | failures LOG... | "
          "run FOLDER [--failfast] [NAME...]", file=sys.stderr)
    sys.exit(2)
