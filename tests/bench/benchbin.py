# SPDX-License-Identifier: GPL-2.0
"""Runs one benchmark binary of build/bench directly and parses its line
protocol (bench/rows.h): the tests of the C benchmarks use this rather
than bench/run.py, so they see exactly what the binary printed."""
import csv
import io
import json
import os
import subprocess
import unittest

from tests.bench.common import BINDIR

# backing.c's reason when THP pages could not be had at that moment
THP_SHORT = "in huge pages (AnonHugePages)"


class BenchRun:
    def __init__(self, bench, args, timeout=300, bindir=BINDIR, env=None,
                 wrap=()):
        """env: variables added to this process's environment; wrap: a
        command the binary runs under (strace ...)"""
        self.bench = bench
        proc = subprocess.Popen(list(wrap) + [os.path.join(bindir, bench)] +
                                list(args),
                                env=dict(os.environ, **(env or {})),
                                stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        try:
            self.stdout, self.stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
        self.returncode = proc.returncode
        self.header = None
        self.rows = []
        self.meta = {}
        self.errors = []
        lines = []
        for line in self.stdout.splitlines():
            kind, _, rest = line.partition(" ")
            if kind == "@header":
                self.header = rest.split(" ", 1)[1].split(",")
            elif kind == "@row":
                lines.append(rest.split(" ", 1)[1])
            elif kind == "@meta":
                key, _, js = rest.partition(" ")
                self.meta.setdefault(key, []).append(json.loads(js))
            elif kind == "@error":
                self.errors.append(rest)
        if self.header:
            self.rows = list(csv.DictReader(
                io.StringIO("\n".join([",".join(self.header)] + lines))))

    def describe(self):
        return "rc %d\nstdout tail:\n%s\nstderr:\n%s" % (
            self.returncode, self.stdout[-3000:], self.stderr[-2000:])


def thp_short(res):
    """Why res failed when its only errors are THP pages that could not be
    had then (other processes fragment or take the memory), else None."""
    if res.returncode == 0 or not res.errors:
        return None
    return res.errors[0] if all(THP_SHORT in e for e in res.errors) else None


def run_thp_tolerant(bench, args, **kw):
    """BenchRun, run once more when THP pages could not be had, and a
    unittest.SkipTest saying so when they still could not: the verdict
    must not be the host's memory of the moment."""
    res = BenchRun(bench, args, **kw)
    if thp_short(res):
        print("%s: try 1: %s" % (bench, thp_short(res)), flush=True)
        res = BenchRun(bench, args, **kw)
        if thp_short(res):
            raise unittest.SkipTest(
                "no THP pages on two tries (%s): the host's memory is "
                "fragmented or taken; rerun on a quieter host" % thp_short(res))
    return res


def run_with_maxrss(argv, timeout=600):
    """Runs argv; returns (returncode, stdout, peak RSS in kB) of that child
    alone (wait4 reports the child's own ru_maxrss)."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    out = proc.stdout.read()
    _, status, ru = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    proc.stdout.close()
    return proc.returncode, out, ru.ru_maxrss
