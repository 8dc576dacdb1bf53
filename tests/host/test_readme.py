# SPDX-License-Identifier: GPL-2.0
"""The README says what the tree does: its package lists are
scripts/deps.sh's, its table of targets holds every target `make help`
names, and every figure a run can draw is named under "Read"."""
import os
import re
import subprocess
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def readme():
    with open(os.path.join(ROOT, "README.md")) as f:
        return f.read()


def deps_list(which, arch="x86_64"):
    r = subprocess.run(["sh", os.path.join(ROOT, "scripts", "deps.sh"), "--list", "--for",
                        which, arch], capture_output=True, text=True, check=True)
    return r.stdout.split()


def readme_packages(text):
    """{set: [package, ...]} from the README's "deps SET: ..." lines; the
    words "bench's, and" / "each set's, and" name the set they add to."""
    out = {}
    for m in re.finditer(r"^ +deps (\w+): (.*)$", text, re.M):
        words = re.sub(r"^(bench's|each set's), and ", "", m.group(2))
        words = re.sub(r"\(.*?\)", "", words)
        out[m.group(1)] = words.split()
    return out


def section(text, title):
    start = text.index("\n## " + title)
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else None]


def help_targets(help_text):
    """The targets `make help` names: the word after each line's "make "."""
    return sorted({m.group(1) for m in re.finditer(r"^make ([a-z][\w-]*)", help_text, re.M)})


class ReadmePackages(unittest.TestCase):
    def test_the_lists_are_deps_sh_s(self):
        listed = readme_packages(readme())
        self.assertEqual(sorted(listed), ["arm64", "bench", "lava", "test"])
        bench = deps_list("bench")
        self.assertEqual(listed["bench"], bench)
        for which in ("test", "lava"):
            with self.subTest(set=which):
                self.assertEqual(sorted(listed[which]),
                                 sorted(set(deps_list(which)) - set(bench)))
        self.assertEqual(sorted(listed["arm64"]),
                         sorted(set(deps_list("all", "arm64")) - set(deps_list("all"))))

    def test_a_stale_list_is_seen(self):
        text = readme().replace(" fio ", " ", 1)
        self.assertNotIn("fio", readme_packages(text)["test"])


class ReadmeTargets(unittest.TestCase):
    def test_every_make_help_target_is_in_the_table(self):
        env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "ARCH")}
        r = subprocess.run(["make", "--no-print-directory", "help"], cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=60, check=True)
        targets = help_targets(r.stdout)
        for t in ("bench", "help", "clean", "mutants-suite", "deps-bench", "compare"):
            self.assertIn(t, targets)
        table = section(readme(), "Every target")
        named = set(re.findall(r"`make ([a-z][\w-]*)", table))
        self.assertEqual([t for t in targets if t not in named], [])

    def test_help_targets_reads_make_help(self):
        self.assertEqual(help_targets("make a-b   x\nmake c [X=1]  y\nARCH=arm64 z\n"),
                         ["a-b", "c"])


class ReadmeFigures(unittest.TestCase):
    def test_every_figure_is_named_and_explained(self):
        from plots import benches
        read = section(readme(), "Run, read, compare")
        for name in benches.figure_texts():
            with self.subTest(figure=name):
                self.assertRegex(read, r"\n\| `%s`|`%s`, |, `%s` \|" % ((re.escape(name),) * 3))


if __name__ == "__main__":
    unittest.main()
