# SPDX-License-Identifier: GPL-2.0
"""kernel/reconcile.py: a persistent tree brought to "pristine + series"
rewrites exactly the files whose content differs, and ends up equal to a
fresh copy with the series applied."""
import filecmp
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "kernel", "reconcile.py")
spec = importlib.util.spec_from_file_location("reconcile", SCRIPT)
reconcile = importlib.util.module_from_spec(spec)
spec.loader.exec_module(reconcile)

OLD = 1000000000  # mtime of every pristine file: anything rewritten is newer

PRISTINE = {
    "mm/a.c": "int a;\nint b;\nint c;\n",
    "include/h.h": "#define H 1\n",
    "Makefile": "obj-y += a.o\n",
    "docs/x.txt": "-- a line that starts with two dashes\nmore\n",
}


def diff(path, old, new):
    """A git-style patch of one file (old or new may be None)."""
    a = "--- a/%s" % path if old is not None else "--- /dev/null"
    b = "+++ b/%s" % path if new is not None else "+++ /dev/null"
    ol = old.splitlines() if old else []
    nl = new.splitlines() if new else []
    hunk = "@@ -%d,%d +%d,%d @@\n" % (1 if ol else 0, len(ol), 1 if nl else 0, len(nl))
    body = "".join("-%s\n" % l for l in ol) + "".join("+%s\n" % l for l in nl)
    head = "diff --git a/%s b/%s\n" % (path, path)
    if old is None:
        head += "new file mode 100644\n"
    return head + a + "\n" + b + "\n" + hunk + body


class ReconcileTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.pristine = os.path.join(self.dir, "pristine")
        for p, text in PRISTINE.items():
            self.write(self.pristine, p, text)
        for d, _, files in os.walk(self.pristine):
            for f in files:
                os.utime(os.path.join(d, f), (OLD, OLD))
        self.tree = os.path.join(self.dir, "tree")
        shutil.copytree(self.pristine, self.tree, symlinks=True)
        self.n = 0

    def tearDown(self):
        shutil.rmtree(self.dir)

    def write(self, top, path, text):
        os.makedirs(os.path.dirname(os.path.join(top, path)), exist_ok=True)
        with open(os.path.join(top, path), "w") as f:
            f.write(text)

    def patch(self, *diffs):
        self.n += 1
        p = os.path.join(self.dir, "%04d.patch" % self.n)
        with open(p, "w") as f:
            f.write("Subject: [PATCH] test\n\n---\n" + "".join(diffs))
        return p

    def run_script(self, *patches):
        return subprocess.run([sys.executable, SCRIPT, "--pristine", self.pristine,
                               "--tree", self.tree] + list(patches),
                              capture_output=True, text=True)

    def reconcile(self, *patches):
        r = self.run_script(*patches)
        self.assertEqual(r.returncode, 0, r.stderr)
        return sorted(l.split(": ", 1)[1] for l in r.stdout.splitlines())

    def mtimes(self):
        out = {}
        for d, dirs, files in os.walk(self.tree):
            dirs[:] = [x for x in dirs if x != ".reconcile"]
            for f in files:
                full = os.path.join(d, f)
                out[os.path.relpath(full, self.tree)] = os.lstat(full).st_mtime_ns
        return out

    def assert_equals_fresh_apply(self, *patches):
        """The tree is the same as a fresh copy of pristine with the series
        applied by patch(1) itself."""
        fresh = os.path.join(self.dir, "fresh")
        shutil.rmtree(fresh, ignore_errors=True)
        shutil.copytree(self.pristine, fresh, symlinks=True)
        for p in patches:
            subprocess.run(["patch", "-d", fresh, "-p1", "--quiet", "-i", p], check=True)
        cmp = filecmp.dircmp(self.tree, fresh, ignore=[".reconcile"])
        self.assertEqual(self.all_diffs(cmp), [])

    def all_diffs(self, cmp):
        out = cmp.left_only + cmp.right_only + cmp.diff_files + cmp.funny_files
        for sub in cmp.subdirs.values():
            out += self.all_diffs(sub)
        return out

    def test_only_changed_files_are_rewritten(self):
        p1 = self.patch(diff("mm/a.c", PRISTINE["mm/a.c"], "int a;\nint B;\nint c;\n"),
                        diff("mm/new.c", None, "int n;\n"))
        self.assertEqual(self.reconcile(p1), ["mm/a.c", "mm/new.c"])
        self.assert_equals_fresh_apply(p1)
        mt = self.mtimes()
        self.assertEqual(mt["include/h.h"], OLD * 10**9)
        self.assertGreater(mt["mm/a.c"], OLD * 10**9)
        # The same series again: nothing is touched.
        self.assertEqual(self.reconcile(p1), [])
        self.assertEqual(self.mtimes(), mt)

    def test_switching_series_restores_and_removes(self):
        p1 = self.patch(diff("mm/a.c", PRISTINE["mm/a.c"], "int a;\nint B;\nint c;\n"),
                        diff("mm/new.c", None, "int n;\n"))
        self.reconcile(p1)
        p2 = self.patch(diff("include/h.h", PRISTINE["include/h.h"], "#define H 2\n"))
        # a.c goes back to pristine content with a fresh mtime (older
        # objects must be rebuilt), new.c and its folder go away.
        self.assertEqual(self.reconcile(p2), ["include/h.h", "mm/a.c", "mm/new.c"])
        self.assert_equals_fresh_apply(p2)
        self.assertGreater(self.mtimes()["mm/a.c"], OLD * 10**9)
        self.assertFalse(os.path.exists(os.path.join(self.tree, "mm", "new.c")))

    def test_edit_in_one_patch_leaves_the_others_files_alone(self):
        a1 = diff("mm/a.c", PRISTINE["mm/a.c"], "int a;\nint B;\nint c;\n")
        p1 = self.patch(a1)
        p2 = self.patch(diff("include/h.h", PRISTINE["include/h.h"], "#define H 2\n"))
        self.reconcile(p1, p2)
        mt = self.mtimes()
        p2b = self.patch(diff("include/h.h", PRISTINE["include/h.h"], "#define H 3\n"))
        self.assertEqual(self.reconcile(p1, p2b), ["include/h.h"])
        self.assertEqual(self.mtimes()["mm/a.c"], mt["mm/a.c"])
        self.assert_equals_fresh_apply(p1, p2b)

    def test_hand_edits_and_stray_files_are_reverted(self):
        p1 = self.patch(diff("mm/a.c", PRISTINE["mm/a.c"], "int a;\nint B;\nint c;\n"))
        self.reconcile(p1)
        self.write(self.tree, "Makefile", "obj-y += a.o evil.o\n")
        self.write(self.tree, "mm/evil.c", "int evil;\n")
        self.assertEqual(self.reconcile(p1), ["Makefile (a hand edit, reverted)",
                                              "mm/evil.c (a hand edit, reverted)"])
        self.assert_equals_fresh_apply(p1)

    def test_patch_that_does_not_apply_is_named(self):
        bad = self.patch(diff("mm/a.c", "int x;\nint y;\nint z;\n", "int q;\n"))
        r = self.run_script(bad)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("%04d.patch does not apply" % self.n, r.stderr)

    def test_a_file_written_that_the_headers_do_not_name_is_refused(self):
        # A context diff: patch(1) applies it, touched_paths reads no
        # unified header in it, so the tree would get a file the
        # reconcile does not track (and never removes again).
        ctx = ("*** /dev/null\n--- b/mm/new.c\n***************\n*** 0 ****\n"
               "--- 1 ----\n+ int n;\n")
        self.assertEqual(reconcile.touched_paths(ctx), set())
        r = self.run_script(self.patch(ctx))
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("%04d.patch changed mm/new.c, which its headers do not "
                      "name" % self.n, r.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.tree, "mm", "new.c")))

    def test_a_mode_change_alone_is_applied(self):
        # git's "old mode / new mode" with no hunk: the content is the
        # same, only the permission bits tell the trees apart
        self.write(self.pristine, "scripts/x.sh", "echo x\n")
        self.write(self.tree, "scripts/x.sh", "echo x\n")
        text = ("diff --git a/scripts/x.sh b/scripts/x.sh\nold mode 100644\n"
                "new mode 100755\n--- a/scripts/x.sh\n+++ b/scripts/x.sh\n"
                "@@ -1 +1 @@\n-echo x\n+echo x\n")
        p1 = self.patch(text)
        self.assertEqual(self.reconcile(p1), ["scripts/x.sh"])
        self.assertTrue(os.stat(os.path.join(self.tree, "scripts", "x.sh")).st_mode & 0o100)
        self.assert_equals_fresh_apply(p1)

    def test_dashes_in_a_hunk_are_not_a_file_header(self):
        # Removing "-- a line..." shows as "--- a line...": still hunk body.
        text = diff("docs/x.txt", PRISTINE["docs/x.txt"], "more\n")
        self.assertEqual(reconcile.touched_paths(text), {"docs/x.txt"})
        p1 = self.patch(text)
        self.assertEqual(self.reconcile(p1), ["docs/x.txt"])
        self.assert_equals_fresh_apply(p1)

    def test_renames_name_both_paths(self):
        text = ("diff --git a/mm/a.c b/mm/b.c\nsimilarity index 100%\n"
                "rename from mm/a.c\nrename to mm/b.c\n")
        self.assertEqual(reconcile.touched_paths(text), {"mm/a.c", "mm/b.c"})
        p1 = self.patch(text)
        self.assertEqual(self.reconcile(p1), ["mm/a.c", "mm/b.c"])
        self.assertFalse(os.path.exists(os.path.join(self.tree, "mm", "a.c")))
        self.assertTrue(os.path.exists(os.path.join(self.tree, "mm", "b.c")))


if __name__ == "__main__":
    unittest.main()
