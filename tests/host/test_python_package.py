# SPDX-License-Identifier: GPL-2.0
"""The Python is one package with the repository root as its import root
(issue 33): no file edits the module search path, no production module
imports the tests, and each script the READMEs show runs both as a file
and as python3 -m."""
import ast
import glob
import os
import re
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PRODUCTION = ("bench", "plots", "compare", "lava", "kernel")
# an edit of sys.path's list: its insert, append, extend, an item or slice,
# += or =
EDITS_PATH = re.compile(r"\bsys\.path\s*(\.\s*(insert|append|extend)\b|\[|\+=|=[^=])")
# the READMEs a user reads commands from, a kept run's among them
READMES = ["README.md", "compare/README.md", "results/README.md"] + sorted(
    os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "results", "*", "README.md")))
# python3 bench/run.py or python3 -m bench.run
SHOWN = re.compile(r"python3 (?:((?:\w+/)+\w+\.py)\b|-m ((?:\w+\.)+\w+))")
GUARD = "if not __package__:"


def python_files():
    """The repository's .py files, tracked or new, build/ left out."""
    out = subprocess.run(["git", "-C", ROOT, "ls-files", "-co", "--exclude-standard", "-z",
                          "*.py"], capture_output=True, text=True, check=True).stdout
    return sorted(f for f in out.split("\0") if f and not f.startswith("build/")
                  and os.path.isfile(os.path.join(ROOT, f)))


def imported(path):
    """Every module name path's imports name (the dotted name of an import,
    the package of a from-import)."""
    with open(os.path.join(ROOT, path)) as f:
        tree = ast.parse(f.read(), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level:
            yield node.module


def shown_scripts():
    """(paths shown run as a file, paths shown run as a module) in the
    READMEs; of modules, the production packages' (the tests' runners
    answer usage errors, not --help)."""
    files, modules = set(), set()
    for readme in READMES:
        with open(os.path.join(ROOT, readme)) as f:
            for path, module in SHOWN.findall(f.read()):
                if path:
                    files.add(path)
                elif module.split(".")[0] in PRODUCTION:
                    modules.add(module.replace(".", "/") + ".py")
    return files, modules


def module_of(path):
    return path[:-3].replace("/", ".")


class OnePackage(unittest.TestCase):
    def test_no_file_edits_the_module_search_path(self):
        bad = []
        for path in python_files():
            with open(os.path.join(ROOT, path)) as f:
                bad += ["%s:%d: %s" % (path, n, line.strip())
                        for n, line in enumerate(f, 1) if EDITS_PATH.search(line)]
        self.assertEqual(bad, [], "the repository root is the import root: import "
                         "absolutely (from bench import contract) and run as python3 -m")

    def test_the_pattern_sees_each_way_to_edit_it(self):
        # written in two halves, so that this file has none of them
        path = "sys." + "path"
        for edit in (".insert(0, d)", ".append(d)", "[:0] = [d]", " += [d]", " = [d]",
                     " . extend([d])"):
            self.assertRegex(path + edit, EDITS_PATH)
        for line in ("if d in %s:", "print(%s)", "x == %s"):
            self.assertNotRegex(line % path, EDITS_PATH)

    def test_no_production_module_imports_the_tests(self):
        bad = ["%s imports %s" % (path, name)
               for path in python_files() if path.split("/")[0] in PRODUCTION
               for name in imported(path) if name == "tests" or name.startswith("tests.")]
        self.assertEqual(bad, [])


class ShownScripts(unittest.TestCase):
    """Each script a README shows (python3 -m bench.run ..., and as a file,
    python3 plots/render.py ..., as a kept run's README has it) answers
    --help: a module from the repository root, a file from anywhere (the
    scripts that re-execute themselves as their module promise that
    too)."""

    def test_the_readmes_show_them(self):
        files, modules = shown_scripts()
        self.assertLessEqual({"bench/run.py", "compare/compare.py"}, modules)
        self.assertIn("plots/render.py", files)

    def test_as_a_file_and_as_a_module(self):
        files, modules = shown_scripts()
        for path in python_files():
            with open(os.path.join(ROOT, path)) as f:
                if GUARD in f.read():
                    files.add(path)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        with tempfile.TemporaryDirectory() as elsewhere:
            runs = [("file", path, [sys.executable, os.path.join(ROOT, path)], elsewhere)
                    for path in sorted(files)]
            runs += [("module", path, [sys.executable, "-m", module_of(path)], ROOT)
                     for path in sorted(files | modules)]
            for how, path, argv, cwd in runs:
                with self.subTest(script=path, run_as=how):
                    r = subprocess.run(argv + ["--help"], cwd=cwd, env=env,
                                       capture_output=True, text=True, timeout=60)
                    self.assertEqual(r.returncode, 0, r.stderr[-2000:])
                    self.assertIn("usage:", r.stdout)


if __name__ == "__main__":
    unittest.main()
