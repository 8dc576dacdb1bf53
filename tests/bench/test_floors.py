# SPDX-License-Identifier: GPL-2.0
"""The C of bench/ is a house of floors (docs/style.md, Layering): a module
(bench/x.c with bench/x.h) includes and calls only modules on floors below
its own, so the graph has no circle.  The floors are the one table below;
the graph is read from the sources: every #include "..." and every call
of a function another module defines (its non-static functions, and a
header's static inline ones).  A call through a pointer (a struct bench
hook, a backing's ops) is not seen: those run downward by construction
(the runner calls its benchmarks through the registry).

The test fails naming each edge that runs up or across a floor, each
circle, and each module the table lacks."""
import glob
import os
import re
import tempfile
import unittest

from tests.bench.common import ROOT

BENCH = os.path.join(ROOT, "bench")

# The floors, lowest first.  A module may include and call only modules on
# a lower floor.
FLOORS = [
    # 0: leaves that need only libc: the line protocol, statistics, NUMA
    # placement, the raw CPUID leaves, the measurement primitives (layout),
    # the size parser and the readers of host facts (size, hostfacts: issue
    # 33's section 2), realprog's list of backings
    ("rows", "stats", "numa", "rawcpuid", "layout", "size", "hostfacts",
     "realprog/backings"),
    # 1: the pure TLB simulator (handed its geometry as a spec: it reads
    # no CPU), host facts (the backing table, the caches' sizes, the PMU's
    # events for this CPU), realprog's table of rows
    ("tlbmodel", "backing", "llc", "pmu", "realprog/table"),
    # 2: what this CPU's CPUID says of its TLBs, checked against the model;
    # the counters a benchmark reads (perf events on the picked PMU); the
    # scaffolding of the benchmarks that run a task per CPU (tasks: the
    # CPUs allowed, pinning, task counts, a backing's free memory)
    ("tlbcpuid", "counters", "tasks"),
    # 3: the TLB model as the benchmarks use it (--model and its auto
    # choice, the replay)
    ("tlbuse",),
    # 4: the runner: options, the loop, metadata
    ("runner",),
    # 5: the benchmarks, and the helpers of one benchmark that benchtool
    # also shows (mlp.h, tlbreach.h)
    ("chase", "fault", "faultlat", "faultscale", "gups", "mlp", "stream", "streamk",
     "tlbreach", "tlbflush", "multiload"),
    # 6: the programs: a benchmark's main(), benchtool, the real-program
    # driver, and hugepreload.so (loaded into xz, linked with nothing here)
    ("main", "benchtool", "realprog/realprog", "realprog/hugepreload"),
]
FLOOR = {m: i for i, mods in enumerate(FLOORS) for m in mods}
# Defined in several programs, each linked alone: never a call between them
# (hugepreload.so's are libc's own, which it stands in for).
NOT_CALLS = {"main"}
SEPARATE = {"realprog/hugepreload"}


def module(path):
    """bench/x.c and bench/x.h are module x; bench/realprog/y.c realprog/y."""
    return os.path.splitext(os.path.relpath(path, BENCH))[0]


def sources():
    return sorted(glob.glob(os.path.join(BENCH, "*.[ch]")) +
                  glob.glob(os.path.join(BENCH, "realprog", "*.[ch]")))


def code_of(text):
    """C text without comments, string and character literals (emptied)
    or preprocessor lines."""
    text = re.sub(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|'
                  r"'(?:\\.|[^'\\\n])*'",
                  lambda m: "" if m.group(0)[0] == "/" else '""', text,
                  flags=re.S)
    return re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", "", text, flags=re.M)


# a function definition's head: NAME (PARAMS) [attributes] before its {
DEF_HEAD = re.compile(r"(\w+)\s*\((?:[^()]|\([^()]*\))*\)\s*"
                      r"(?:__attribute__\s*\(\(.*?\)\)\s*)?$", re.S)
CALL = re.compile(r"(?<![\w.>])(\w+)\s*\(")


def definitions(path, code):
    """(exported, local): the functions path defines that other modules
    may call, and every function it defines."""
    exported, local = set(), set()
    depth, start = 0, 0
    for m in re.finditer(r"[{}]", code):
        if m.group(0) == "}":
            depth -= 1
            start = m.end() if depth == 0 else start
            continue
        if depth == 0:
            head = code[start:m.start()]
            head = head[max(head.rfind(";"), head.rfind("}")) + 1:]
            d = DEF_HEAD.search(head)
            if d and "=" not in head:
                local.add(d.group(1))
                static = re.search(r"\bstatic\b", head)
                if not static or (path.endswith(".h") and
                                  re.search(r"\binline\b", head)):
                    exported.add(d.group(1))
        depth += 1
    return exported, local


def graph(files):
    """{module: {module it uses: [what: "#include" or a function]}}"""
    texts = {}
    for p in files:
        with open(p) as f:
            texts[p] = f.read()
    owner, local, calls, uses = {}, {}, {}, {}
    for p, text in texts.items():
        m = module(p)
        code = code_of(text)
        exported, mine = definitions(p, code)
        local.setdefault(m, set()).update(mine)
        if m not in SEPARATE:
            for f in exported - NOT_CALLS:
                owner.setdefault(f, set()).add(m)
        calls.setdefault(m, set()).update(CALL.findall(code))
        for inc in re.findall(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', text,
                              re.M):
            target = module(os.path.join(BENCH, inc))
            if target != m:
                uses.setdefault(m, {}).setdefault(target, []).append(
                    "#include \"%s\"" % inc)
    for m, names in calls.items():
        for f in sorted(names - local[m]):
            for target in owner.get(f, ()):
                if target != m:
                    uses.setdefault(m, {}).setdefault(target, []).append(
                        f + "()")
    return uses


def circles(uses):
    """The strongly connected parts of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in uses.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                out.append(sorted(part))

    for v in sorted(uses):
        if v not in index:
            visit(v)
    return out


def problems(uses, modules):
    """What breaks the floors, one line each."""
    out = ["bench/%s: in no floor of tests/bench/test_floors.py's FLOORS: "
           "add it there" % m for m in sorted(modules) if m not in FLOOR]
    for m in sorted(uses):
        for t, what in sorted(uses[m].items()):
            if m in FLOOR and t in FLOOR and FLOOR[t] >= FLOOR[m]:
                out.append("%s (floor %d) uses %s (floor %d): %s" % (
                    m, FLOOR[m], t, FLOOR[t], ", ".join(sorted(set(what)))))
    out += ["a circle: %s use each other" % ", ".join(c)
            for c in circles(uses)]
    return out


class TestFloors(unittest.TestCase):
    def test_nothing_runs_up_a_floor(self):
        files = sources()
        self.assertIn(os.path.join(BENCH, "runner.c"), files)
        found = problems(graph(files), {module(p) for p in files})
        self.assertEqual(found, [], "\n" + "\n".join(found))

    def test_the_graph_sees_includes_and_calls(self):
        """The reader itself: the edges it must find in today's code."""
        uses = graph(sources())
        self.assertIn('#include "rows.h"', uses["runner"]["rows"])
        self.assertIn("emit_row()", uses["chase"]["rows"])
        # the cycle chase.c and multiload.c share (layout.c)
        self.assertIn("chase_build_cycle()", uses["chase"]["layout"])
        self.assertIn("chase_build_cycle()", uses["multiload"]["layout"])
        self.assertIn("tlb_access()", uses["tlbuse"]["tlbmodel"])
        self.assertIn("cpuid_load()", uses["pmu"]["rawcpuid"])
        self.assertIn("mix64()", uses["realprog/realprog"]["layout"])

    def test_a_static_function_of_ones_own_is_no_edge(self):
        """A call goes to the caller's own function of that name first."""
        with tempfile.TemporaryDirectory() as d:
            for name, text in (
                    ("a.c", "int f(int x)\n{\n\treturn x;\n}\n"),
                    ("b.c", "static int f(int x)\n{\n\treturn x;\n}\n"
                            "int g(void)\n{\n\treturn f(1);\n}\n"),
                    ("c.c", "int h(void)\n{\n\treturn f(2);\n}\n")):
                with open(os.path.join(d, name), "w") as f:
                    f.write(text)
            uses = graph(sorted(glob.glob(os.path.join(d, "*.c"))))
            a, c = (module(os.path.join(d, n)) for n in ("a.c", "c.c"))
        # b's f() is its own; c's is a's
        self.assertEqual({(m, t) for m, ts in uses.items() for t in ts},
                         {(c, a)})

    def test_an_upward_edge_and_a_circle_are_named(self):
        """A deliberate upward include and call, as a drifted source would
        have them: rows.c calling into the runner."""
        uses = graph(sources())
        uses.setdefault("rows", {})["runner"] = ["#include \"runner.h\"",
                                                 "now_ns()"]
        found = problems(uses, set(FLOOR) | {"newfile"})
        self.assertIn("bench/newfile: in no floor of tests/bench/"
                      "test_floors.py's FLOORS: add it there", found)
        self.assertIn("rows (floor 0) uses runner (floor 4): "
                      "#include \"runner.h\", now_ns()", found)
        self.assertTrue(any(l.startswith("a circle: ") and "rows" in l and
                            "runner" in l for l in found), found)


if __name__ == "__main__":
    unittest.main()
