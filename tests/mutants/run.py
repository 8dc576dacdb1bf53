#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""make mutants-suite: can the host tests catch a wrong number?

    python3 tests/mutants/run.py [--list authors|independent|FILE ...]
                                 [--only N,N-M|WORD] [--no-control] [--keep]

Applies each mutant of the lists (one small semantic change to one file:
a flipped comparison, a dropped scale factor, a skipped restore) to a
scratch copy of the tree under $TMPDIR, never to this one, rebuilds what the file's entry names, runs only the tests that
cover that file (failing fast) and prints one line per mutant:

    killed      the tests failed (or ran past the time limit)
    SURVIVED    the tests passed: they cannot see this change
    equivalent  survived, and the list says why no test can see it
    stale       the text to find is not in the file (or not once): the
                mutant needs re-anchoring after the code moved
    UNBUILT     the mutant does not compile: fix the mutant

then the kill rate per area and overall: killed / (applied - equivalent),
for each list apart.  Two lists, both run by default: "authors"
(mutants.txt, written by the tests' own authors) and "independent"
(independent.txt, written from the code by someone who had not read
tests/); a rate measured against the bugs the tests' authors thought of
says less than one measured against bugs nobody listed.  The independent
list takes its [files] entries (which tests cover a file) from
mutants.txt, adding its own for files mutants.txt does not name.
Before the mutants, each test command runs once on the unmutated copy
(the control); a mutant whose control fails is reported as such, not as
killed.  MUTANTS_LOCK=FILE runs the bench tests (which raise the host's
huge page pool) under flock FILE.  Exit status 0, or 1 when a mutant
survived without a reason, a control failed or a mutant did not build.
Not part of make test: it takes minutes (see tests/mutants/README.md).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
LISTS = {"authors": os.path.join(ROOT, "tests", "mutants", "mutants.txt"),
         "independent": os.path.join(ROOT, "tests", "mutants",
                                     "independent.txt")}
TEST_TIMEOUT = 600
BUILD_DIRS = ("build/bench",)


class Mutant:
    def __init__(self, n, path, what):
        self.n, self.path, self.what = n, path, what
        self.find = self.repl = self.equivalent = None

    def check(self):
        for key in ("find", "repl"):
            if getattr(self, key) is None:
                raise SystemExit("mutants: #%d (%s) has no '%s:' line"
                                 % (self.n, self.what, key))


def unescape(s):
    """{NL} and {TAB} in a find or repl value: a newline, a tab."""
    return s.replace("{NL}", "\n").replace("{TAB}", "\t")


def parse(path, files=None):
    """({file: (area, [test module], [make target])}, [Mutant]); files: the
    [files] entries to start from (the authors' list's, for another)."""
    files, mutants, section, cur = dict(files or {}), [], None, None
    with open(path) as f:
        for no, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            if line in ("[files]", "[mutants]"):
                section = line
                continue
            if section == "[files]":
                parts = [p.strip() for p in line.split("|")]
                if len(parts) != 4:
                    raise SystemExit("mutants: %s:%d: want 'file | area | "
                                     "test modules | make targets'" % (path, no))
                files[parts[0]] = (parts[1], parts[2].split(), parts[3].split())
            elif section == "[mutants]" and not line[0].isspace():
                file_, _, what = line.partition(": ")
                if file_ not in files:
                    raise SystemExit("mutants: %s:%d: %s is not in [files]"
                                     % (path, no, file_))
                cur = Mutant(len(mutants) + 1, file_, what)
                mutants.append(cur)
            elif section == "[mutants]" and cur is not None:
                key, sep, val = line.strip().partition(": ")
                if not sep and line.strip() in ("repl:", "find:"):
                    key, sep, val = line.strip()[:-1], ":", ""
                if not sep or key not in ("find", "repl", "equivalent"):
                    raise SystemExit("mutants: %s:%d: want find:, repl: or "
                                     "equivalent:" % (path, no))
                setattr(cur, key, unescape(val) if key != "equivalent" else val)
            else:
                raise SystemExit("mutants: %s:%d: outside [files]/[mutants]"
                                 % (path, no))
    for m in mutants:
        m.check()
    return files, mutants


def test_commands(modules):
    """The commands that run modules (dotted names), one per suite."""
    by = {}
    for mod in modules:
        parts = mod.split(".")
        if len(parts) != 3 or parts[0] != "tests":
            raise SystemExit("mutants: test module %r: want tests.<suite>.<module>"
                             % mod)
        by.setdefault(parts[1], []).append(parts[2])
    cmds = []
    for suite, mods in sorted(by.items()):
        if suite == "bench":
            cmd = ["python3", "-m", "tests.bench.run_tests", "--failfast"] + mods
            if os.environ.get("MUTANTS_LOCK"):
                cmd = ["flock", os.environ["MUTANTS_LOCK"]] + cmd
        else:
            cmd = ["python3", "-m", "tests.harness", "run", "tests/" + suite,
                   "--failfast"] + mods
        cmds.append(cmd)
    return cmds


def sh(cmd, cwd, timeout):
    """(returncode or 'timeout', output tail)"""
    try:
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True,
                           timeout=timeout, errors="replace")
    except subprocess.TimeoutExpired:
        return "timeout", ""
    return p.returncode, p.stdout[-3000:]


def scratch_copy(dest):
    """The tree as it is (tracked and untracked, not ignored files) plus the
    benchmarks' build outputs, mtimes kept so make rebuilds nothing."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard",
                            "-z"], cwd=ROOT, capture_output=True,
                           check=True).stdout
    pack = subprocess.Popen(["tar", "-C", ROOT, "--null", "-T", "-", "-cf",
                             "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    unpack = subprocess.Popen(["tar", "-C", dest, "-xf", "-"],
                              stdin=pack.stdout)
    pack.stdout.close()
    pack.communicate(files)
    if pack.returncode or unpack.wait():
        raise SystemExit("mutants: copying the tree to %s failed" % dest)
    # A git repository of its own that shares this one's objects (no copy),
    # at the same commit: tests that read revisions (compare's) need one.
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT,
                          capture_output=True, text=True,
                          check=True).stdout.strip()
    clone = dest + ".git"
    subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", ROOT,
                    clone], check=True)
    os.rename(os.path.join(clone, ".git"), os.path.join(dest, ".git"))
    os.rmdir(clone)
    subprocess.run(["git", "reset", "-q", head], cwd=dest, check=True)
    # perf's event tables too: a mutant of a header rebuilds from them
    for d in BUILD_DIRS + ("build/pmu-events",):
        if os.path.isdir(os.path.join(ROOT, d)):
            shutil.copytree(os.path.join(ROOT, d), os.path.join(dest, d),
                            symlinks=True)


def snapshot(tree, keep):
    """Copies tree's build outputs to keep (to undo a mutant's rebuild)."""
    for d in BUILD_DIRS:
        if os.path.isdir(os.path.join(tree, d)):
            shutil.rmtree(os.path.join(keep, d), ignore_errors=True)
            shutil.copytree(os.path.join(tree, d), os.path.join(keep, d),
                            symlinks=True)


def restore_build(tree, keep, targets):
    for t in targets:
        if os.path.exists(os.path.join(keep, t)):
            shutil.copy2(os.path.join(keep, t), os.path.join(tree, t))


def select(mutants, only):
    """only: a comma list of numbers (3), ranges (5-9) and words of a
    mutant's file or description (compare/, run-qemu)."""
    if not only:
        return mutants
    nums, words = set(), []
    for part in only.split(","):
        if re.fullmatch(r"[0-9]+(-[0-9]+)?", part):
            a, _, b = part.partition("-")
            nums.update(range(int(a), int(b or a) + 1))
        elif part:
            words.append(part)
    return [m for m in mutants if m.n in nums or
            any(w in m.path or w in m.what for w in words)]


def apply(tree, m):
    """The file's original text and times, after writing the mutant; None
    (stale) when the text to find is not there exactly once."""
    path = os.path.join(tree, m.path)
    if not os.path.exists(path):
        return None, "no such file"
    with open(path) as f:
        text = f.read()
    n = text.count(m.find)
    if n != 1:
        return None, "the text to find occurs %d times" % n
    st = os.stat(path)
    with open(path, "w") as f:
        f.write(text.replace(m.find, m.repl))
    return (text, st), None


def unapply(tree, m, saved):
    text, st = saved
    path = os.path.join(tree, m.path)
    with open(path, "w") as f:
        f.write(text)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def controls(tree, files, mutants, done=None):
    """{command: ok} for every test command the mutants use, unmutated;
    done: commands already run (by another list's mutants)."""
    out = {}
    for m in mutants:
        for cmd in test_commands(files[m.path][1]):
            key = tuple(cmd)
            if key in out or key in (done or {}):
                continue
            t0 = time.time()
            rc, tail = sh(cmd, tree, TEST_TIMEOUT)
            out[key] = rc == 0
            print("control %-6s %5.1fs %s" % ("ok" if rc == 0 else "FAILS",
                                                time.time() - t0,
                                                " ".join(cmd)), flush=True)
            if rc != 0:
                print(tail, flush=True)
    return out


def run_one(tree, keep, files, m, ctl):
    """(verdict, seconds, detail)"""
    area, mods, targets = files[m.path]
    t0 = time.time()
    saved, why = apply(tree, m)
    if saved is None:
        return "stale", 0.0, why
    try:
        if targets:
            rc, tail = sh(["make", "-s", "--no-print-directory"] + targets,
                          tree, 600)
            if rc != 0:
                return "UNBUILT", time.time() - t0, tail[-400:]
        verdict, detail = "SURVIVED", ""
        for cmd in test_commands(mods):
            if not ctl.get(tuple(cmd), True):
                verdict, detail = "control-fails", " ".join(cmd)
                break
            rc, _ = sh(cmd, tree, TEST_TIMEOUT)
            if rc != 0:
                verdict = "killed"
                detail = "by %s%s" % (" ".join(cmd[cmd.index("--failfast") + 1:])
                                      or cmd[1], " (timeout)" if rc == "timeout" else "")
                break
        if verdict == "SURVIVED" and m.equivalent:
            verdict = "equivalent"
        return verdict, time.time() - t0, detail
    finally:
        unapply(tree, m, saved)
        restore_build(tree, keep, targets)


def summary(name, files, results):
    areas = {}
    for m, verdict in results:
        areas.setdefault(files[m.path][0], []).append(verdict)
    print("\n%s list (%s)" % (name, os.path.relpath(LISTS[name], ROOT)
                              if name in LISTS else name))
    print("%-16s %7s %6s %8s %5s %5s  %s" % ("area", "mutants", "killed",
                                               "survived", "equiv", "stale",
                                               "kill rate"))
    allv = []
    for area in sorted(areas) + ["overall"]:
        vs = allv if area == "overall" else areas[area]
        if area != "overall":
            allv += vs
        k = vs.count("killed")
        judged = k + vs.count("SURVIVED")
        rate = "%.0f %%" % (100.0 * k / judged) if judged else "n/a"
        print("%-16s %7d %6d %8d %5d %5d  %s (%d of %d)" % (
            area, len(vs), k, vs.count("SURVIVED"), vs.count("equivalent"),
            vs.count("stale"), rate, k, judged))


def load_lists(names):
    """[(name, files, mutants)] for each list named (authors, independent or
    a path); every list but the authors' starts from the authors' [files]."""
    base, _ = parse(LISTS["authors"])
    out = []
    for name in names:
        path = LISTS.get(name, name)
        if not os.path.exists(path):
            raise SystemExit("mutants: no list %s: give authors, independent "
                             "or the path of a list" % name)
        files, mutants = parse(path, None if path == LISTS["authors"]
                               else base)
        out.append((name, files, mutants))
    return out


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--list", action="append",
                    help="authors, independent or a list's path (again for "
                    "more; default: authors and independent, reported apart)")
    ap.add_argument("--only", help="mutant numbers (3,5-9) or a word of "
                    "their file or description, in every list run")
    ap.add_argument("--no-control", action="store_true",
                    help="skip the unmutated run of each test command")
    ap.add_argument("--keep", action="store_true",
                    help="keep the scratch copy (its path is printed)")
    args = ap.parse_args(argv)
    lists = [(name, files, select(mutants, args.only))
             for name, files, mutants in
             load_lists(args.list or ["authors", "independent"])]
    work = tempfile.mkdtemp(prefix="mutants-")
    tree, keep = os.path.join(work, "tree"), os.path.join(work, "keep")
    os.makedirs(tree)
    os.makedirs(keep)
    start = time.time()
    ctl, results = {}, {}
    try:
        scratch_copy(tree)
        rc, tail = sh(["make", "-s", "--no-print-directory", "bench-bins"],
                      tree, 900)
        if rc != 0:
            raise SystemExit("mutants: make bench-bins fails on the unmutated "
                             "copy:\n" + tail)
        snapshot(tree, keep)
        print("mutants: %s, scratch copy %s" % (", ".join(
            "%d of the %s list" % (len(chosen), name)
            for name, _, chosen in lists), tree), flush=True)
        for name, files, chosen in lists:
            if not args.no_control:
                ctl.update(controls(tree, files, chosen, ctl))
            tag = name[0] if name in LISTS else "?"
            results[name] = []
            for m in chosen:
                verdict, secs, detail = run_one(tree, keep, files, m, ctl)
                results[name].append((m, verdict))
                line = "[%s%3d] %-10s %6.1fs %s: %s" % (tag, m.n, verdict, secs,
                                                        m.path, m.what)
                if verdict == "equivalent":
                    line += "  (equivalent: %s)" % m.equivalent
                elif detail:
                    line += "  (%s)" % detail.strip().replace("\n", " | ")[-300:]
                print(line, flush=True)
        for name, files, _ in lists:
            summary(name, files, results[name])
        print("mutants: %.0f s" % (time.time() - start))
    finally:
        if args.keep:
            print("mutants: scratch copy kept in " + work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    bad = [v for r in results.values() for _, v in r
           if v in ("SURVIVED", "UNBUILT", "control-fails")]
    return 1 if bad or any(not ok for ok in ctl.values()) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
