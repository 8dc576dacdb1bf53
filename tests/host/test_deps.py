# SPDX-License-Identifier: GPL-2.0
"""Every program a test runs is installed by `make deps` for the pass that
runs it, or the test skips and names the command that installs it.

The x86_64 make test runs the host, bench, plots and compare suites, so a
program they start must come from `scripts/deps.sh --list x86_64`, with
its dependencies, or from the base system every Debian root has (packages
that are Essential or of Priority required, which debootstrap always
installs).  A program of the arm64 pass only (the cross toolchain) may be
used by an x86_64 test only behind a skip that says `make deps ARCH=arm64`.
The programs are read from the code: the first word of every argv literal
handed to subprocess, and every name handed to shutil.which.  Programs run
by the guests come from run-qemu.sh's own table.  `make test-fresh` checks
the same promise by running the suites in a new Debian root."""
import ast
import functools
import os
import re
import shutil
import subprocess
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The Python code the x86_64 make test runs, or that its tests drive.
SCANNED = ("tests", "bench", "plots", "compare", "kernel", "scripts")
SUBPROCESS_CALLS = {"run", "Popen", "check_output", "check_call", "call"}


def deps_packages(arch):
    r = subprocess.run(["sh", os.path.join(ROOT, "scripts", "deps.sh"), "--list", arch],
                       capture_output=True, text=True, check=True)
    return r.stdout.split()


@functools.lru_cache(maxsize=None)
def installed_closure(arch):
    """The packages `make deps` for arch leaves installed: its list and
    everything they depend on (as apt resolves it on this machine)."""
    pkgs = deps_packages(arch)
    r = subprocess.run(["apt-cache", "depends", "--recurse", "--no-recommends",
                        "--no-suggests", "--no-conflicts", "--no-breaks", "--no-replaces",
                        "--no-enhances", "--installed"] + pkgs,
                       capture_output=True, text=True)
    names = set(pkgs)
    for line in r.stdout.splitlines():
        # "gcc" heads a package's block, "  Depends: cpp-12" is one of its
        # dependencies, "    cpp-12:arm64" an alternative of the line above;
        # "<awk>" a virtual package, ":amd64" an architecture.
        word = line.split(": ", 1)[-1]
        names.add(word.strip().strip("<>").split(":")[0])
    return names


def base_system(package):
    """Essential or Priority required: in every Debian root, minbase too."""
    r = subprocess.run(["dpkg-query", "-W", "-f=${Essential} ${Priority}", package],
                       capture_output=True, text=True)
    return r.returncode == 0 and ("yes" in r.stdout.split() or "required" in r.stdout)


def owner(program):
    """The Debian package whose file is the program on PATH, or None."""
    path = shutil.which(program)
    if path is None:
        return None
    for candidate in (path, os.path.realpath(path)):
        # usrmerge: dpkg may know the file under /bin rather than /usr/bin.
        for name in (candidate, candidate[4:]) if candidate.startswith("/usr/") else (candidate,):
            r = subprocess.run(["dpkg-query", "-S", name], capture_output=True, text=True)
            # "diversion by dash from: /bin/sh" is about the file, not its owner.
            owners = [l for l in r.stdout.splitlines() if not l.startswith("diversion ")]
            if r.returncode == 0 and owners:
                return owners[0].split(":")[0].split(",")[0].strip()
    return None


def first_word(node):
    """The program of a subprocess call's first argument, if it is literal."""
    if isinstance(node, ast.BinOp):          # ["prog", ...] + rest
        node = node.left
    if isinstance(node, (ast.List, ast.Tuple)) and node.elts:
        node = node.elts[0]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        word = node.value.split()[0] if node.value.split() else ""
        # A path of the project's own (./run-qemu.sh, kernel/x.sh) is not a
        # package's program.
        return None if "/" in word or not word else word
    return None


def starts_a_program(func):
    """subprocess.run(...) and its kin, or shutil.which(...), named by
    module: a test's own run() helper takes other arguments."""
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
        return False
    return ((func.value.id == "subprocess" and func.attr in SUBPROCESS_CALLS)
            or (func.value.id, func.attr) == ("shutil", "which"))


def skip_messages(tree):
    """Every string constant in a skip decorator or a SkipTest raise."""
    texts = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = getattr(node.func, "attr", getattr(node.func, "id", ""))
            if name in ("skipUnless", "skipIf", "skip", "SkipTest", "skipTest"):
                texts += [c.value for c in ast.walk(node)
                          if isinstance(c, ast.Constant) and isinstance(c.value, str)]
    return texts


def programs_run():
    """{program: [(file, line, skip messages of that file)]} from the code."""
    found = {}
    for top in SCANNED:
        for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
            for name in sorted(files):
                if not name.endswith(".py"):
                    continue
                path = os.path.join(dirpath, name)
                with open(path) as f:
                    tree = ast.parse(f.read(), path)
                skips = skip_messages(tree)
                for node in ast.walk(tree):
                    if not isinstance(node, ast.Call) or not node.args:
                        continue
                    if not starts_a_program(node.func):
                        continue
                    prog = first_word(node.args[0])
                    if prog:
                        found.setdefault(prog, []).append(
                            (os.path.relpath(path, ROOT), node.lineno, skips))
    return found


def guest_qemu():
    """{arch: (program, package)} from run-qemu.sh's table."""
    with open(os.path.join(ROOT, "run-qemu.sh")) as f:
        text = f.read()
    pairs = re.findall(r"qemu_bin=(\S+) qemu_pkg=(\S+)", text)
    return {("arm64" if "aarch64" in b else "x86_64"): (b, p) for b, p in pairs}


def uncovered(found, x86, arm64, owner_of=owner, in_base=base_system):
    """The programs of found that neither the x86_64 make deps nor the base
    system installs, and that some site runs without a skip naming the
    command that installs them (make deps ARCH=arm64 where the arm64 list
    has them)."""
    problems = []
    for prog, sites in sorted(found.items()):
        pkg = owner_of(prog)
        if pkg is not None and (pkg in x86 or in_base(pkg)):
            continue
        def installs(message):
            if prog not in message:
                return False
            if "apt-get install" in message:
                return True
            # Where the program is missing, its package is unknown: the
            # skip's command is all there is to go by.
            return "make deps ARCH=arm64" in message and (pkg is None or pkg in arm64)
        if all(any(installs(m) for m in s[2]) for s in sites):
            continue
        problems.append("%s (%s:%d, package %s): add the package to scripts/deps.sh, or "
                        "skip saying which command installs it"
                        % (prog, sites[0][0], sites[0][1], pkg or "not installed here"))
    return problems


class DepsInstallWhatTestsRun(unittest.TestCase):
    def test_the_scan_finds_the_programs_it_must(self):
        # The scanner itself: programs the suites are known to start.
        found = programs_run()
        for prog in ("gnuplot", "gcc", "make", "objdump", "patch"):
            self.assertIn(prog, found)

    def test_every_program_a_host_suite_runs_is_installed_by_make_deps(self):
        self.assertEqual(uncovered(programs_run(), installed_closure("x86_64"),
                                   installed_closure("arm64")), [])

    def test_each_guest_qemu_is_installed_by_the_make_deps_of_its_arch(self):
        table = guest_qemu()
        self.assertEqual(sorted(table), ["arm64", "x86_64"])
        for arch, (_, package) in table.items():
            self.assertIn(package, deps_packages(arch))
        # The x86_64 pass must not rely on the arm64 guest's QEMU.
        self.assertNotIn(table["arm64"][1], deps_packages("x86_64"))

    def test_the_check_reports_a_missing_install_step(self):
        owners = {"strace": "strace", "clang": "clang-14", "ghost": None}.get
        site = [("tests/t.py", 7, [])]
        named = [("tests/t.py", 7, ["strace is missing: apt-get install strace"])]
        arm = [("tests/t.py", 9, ["no arm64 cross toolchain (clang): make deps ARCH=arm64"])]
        check = functools.partial(uncovered, owner_of=owners, in_base=lambda p: False)
        # Installed by the x86_64 list: fine, skip or not.
        self.assertEqual(check({"strace": site}, {"strace"}, set()), [])
        # Not in the list, run without a skip: reported with its file and line.
        self.assertEqual(len(check({"strace": site}, set(), set())), 1)
        self.assertIn("tests/t.py:7", check({"strace": site}, set(), set())[0])
        # A skip that says how to install it covers it.
        self.assertEqual(check({"strace": named}, set(), set()), [])
        # An arm64-only program behind make deps ARCH=arm64, which has it.
        self.assertEqual(check({"clang": arm}, set(), {"clang-14"}), [])
        # ... but not if the arm64 list lacks it too.
        self.assertEqual(len(check({"clang": arm}, set(), set())), 1)
        # A program nothing installs, without a skip.
        self.assertEqual(len(check({"ghost": site}, set(), set())), 1)
        # Missing here (its package unknown), behind a skip naming make deps.
        self.assertEqual(check({"ghost": [("t.py", 1, ["ghost: make deps ARCH=arm64"])]},
                               set(), set()), [])


FAKE_DPKG_QUERY = """#!/bin/sh
# -W -f=FORMAT PACKAGE: installed when PACKAGE is a word of $FAKE_INSTALLED.
for p in $FAKE_INSTALLED; do
	[ "$p" = "$3" ] && { echo "install ok installed"; exit 0; }
done
exit 1
"""
FAKE_APT_GET = """#!/bin/sh
echo "apt-get $*" >> "$FAKE_LOG"
"""
FAKE_ID = """#!/bin/sh
echo "$FAKE_UID"
"""


class DepsPerTarget(unittest.TestCase):
    """scripts/deps.sh --for SET: make bench asks only for its own packages,
    runs no apt-get when none is missing, and without root names what is
    missing and the command that installs it.  dpkg-query, apt-get and id
    are stand-ins on PATH, so nothing is installed."""

    def setUp(self):
        import tempfile
        self.dir = tempfile.mkdtemp(prefix="deps-test-")
        self.addCleanup(shutil.rmtree, self.dir)
        for name, text in (("dpkg-query", FAKE_DPKG_QUERY), ("apt-get", FAKE_APT_GET),
                           ("id", FAKE_ID)):
            path = os.path.join(self.dir, name)
            with open(path, "w") as f:
                f.write(text)
            os.chmod(path, 0o755)
        self.log = os.path.join(self.dir, "apt.log")

    def deps(self, installed, uid, *args):
        env = dict(os.environ, PATH=self.dir + os.pathsep + os.environ["PATH"],
                   FAKE_INSTALLED=" ".join(installed), FAKE_UID=str(uid), FAKE_LOG=self.log)
        return subprocess.run(["sh", os.path.join(ROOT, "scripts", "deps.sh")] + list(args),
                              capture_output=True, text=True, env=env)

    def apt_calls(self):
        if not os.path.exists(self.log):
            return []
        with open(self.log) as f:
            return f.read().splitlines()

    def list_of(self, which):
        r = subprocess.run(["sh", os.path.join(ROOT, "scripts", "deps.sh"), "--list",
                            "--for", which], capture_output=True, text=True, check=True)
        return r.stdout.split()

    def test_the_bench_set_holds_no_lava_lab_or_test_tools(self):
        bench = self.list_of("bench")
        for pkg in ("qemu-system-x86", "linux-source-6.12", "gnuplot-nox", "busybox-static"):
            self.assertIn(pkg, bench)
        for pkg in ("lava-server", "lava-dispatcher", "postgresql-15", "debootstrap",
                    "likwid", "sparse", "fio"):
            self.assertNotIn(pkg, bench)
        # test and lava each hold bench's, all holds every set's.
        every = set(self.list_of("all"))
        for which in ("test", "lava"):
            self.assertLessEqual(set(bench), set(self.list_of(which)))
            self.assertLessEqual(set(self.list_of(which)), every)
        self.assertEqual(every, set(deps_packages("x86_64")))

    def test_nothing_missing_runs_no_apt_get_root_or_not(self):
        for uid in (0, 1000):
            r = self.deps(self.list_of("bench"), uid, "--for", "bench")
            self.assertEqual((r.returncode, r.stdout, r.stderr), (0, "", ""))
        self.assertEqual(self.apt_calls(), [])

    def test_bench_does_not_ask_for_the_lava_lab(self):
        # lava-server and the rest are not installed; make bench is fine.
        r = self.deps(self.list_of("bench"), 1000, "--for", "bench")
        self.assertEqual(r.returncode, 0, r.stderr)
        # make deps (all) is not.
        r = self.deps(self.list_of("bench"), 1000)
        self.assertEqual(r.returncode, 1)
        self.assertIn("lava-server", r.stderr)

    def test_missing_without_root_names_packages_and_the_command(self):
        have = [p for p in self.list_of("bench") if p not in ("gnuplot-nox", "ccache")]
        r = self.deps(have, 1000, "--for", "bench")
        self.assertEqual(r.returncode, 1)
        self.assertIn("missing packages: ccache gnuplot-nox", r.stderr)
        self.assertIn("sudo make deps-bench", r.stderr)
        self.assertIn("sudo apt-get install ccache gnuplot-nox", r.stderr)
        self.assertNotIn("installing", r.stdout + r.stderr)
        self.assertEqual(self.apt_calls(), [])

    def test_missing_as_root_installs_only_what_is_missing(self):
        have = [p for p in self.list_of("bench") if p != "gnuplot-nox"]
        r = self.deps(have, 0, "--for", "bench")
        self.assertEqual(r.returncode, 0, r.stderr)
        calls = self.apt_calls()
        self.assertEqual(calls[0], "apt-get update -q")
        install = calls[1].split()
        self.assertEqual(install[:2], ["apt-get", "install"])
        self.assertIn("gnuplot-nox", install)
        self.assertNotIn("ccache", install)

    def test_each_target_asks_for_its_own_set(self):
        # make -n prints the commands and runs none.
        env = {k: v for k, v in os.environ.items() if k not in ("ARCH", "MAKEFLAGS")}
        for target, want in (("bench", "bench"), ("kernel", "bench"), ("compare", "bench"),
                             ("test", "test"), ("check-builds", "test"), ("deps-lava", "lava")):
            with self.subTest(target=target):
                r = subprocess.run(["make", "-n", "--no-print-directory", target], cwd=ROOT,
                                   env=env, capture_output=True, text=True, timeout=60)
                self.assertIn("scripts/deps.sh --for %s x86_64" % want, r.stdout)
                self.assertNotIn("scripts/deps.sh x86_64", r.stdout)

    def test_an_unknown_set_is_refused(self):
        r = self.deps([], 1000, "--for", "benhc")
        self.assertEqual(r.returncode, 2)
        self.assertIn("unknown set 'benhc'", r.stderr)
        self.assertEqual(self.apt_calls(), [])


if __name__ == "__main__":
    unittest.main()
