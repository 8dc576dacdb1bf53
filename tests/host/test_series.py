# SPDX-License-Identifier: GPL-2.0
"""kernel/series.py (make series-tree, make series-export): the round trip
tree -> export -> tree is byte for byte, a delta revision that no longer
applies stops the export naming revision, patch and hunk, and a tree with
work not yet exported is never discarded silently.

Runs on a small tarball of the files the patches touch (plus the
.gitattributes that picks the hunk headers' function lines), taken from
the pristine extract of make kernel when there is one, else from
/usr/src/linux-source-6.12.tar.xz (about 40 s)."""
import glob
import importlib.util
import os
import shutil
import subprocess
import tarfile
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TARBALL = os.environ.get("KERNEL_TARBALL", "/usr/src/linux-source-6.12.tar.xz")
# Every file of the series and its delta revisions, relative to kernel/.
KEPT = ["patches/*.patch", "rfc/*.patch", "rfc/series", "test-only/*.patch",
        "test-only/mutants/*.patch"]
SLOW = "test-only/0001-TEST-ONLY-hugetlb_dev-slow-down-the-mmap-path-on-purpose.patch"


def touched_paths():
    spec = importlib.util.spec_from_file_location(
        "reconcile", os.path.join(ROOT, "kernel", "reconcile.py"))
    rec = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rec)
    # make series-export runs the tree's get_maintainer.pl for the Cc list
    paths = {".gitattributes", "scripts/get_maintainer.pl"}
    for pattern in KEPT:
        for p in glob.glob(os.path.join(ROOT, "kernel", pattern)):
            with open(p) as f:
                paths |= rec.touched_paths(f.read())
    return sorted(paths)


def small_tarball(dest):
    """dest/linux.tar: the pristine files the patches touch."""
    tree = os.path.join(dest, "linux")
    extracts = glob.glob(os.path.join(ROOT, "build", "src", "linux-*", ".extracted"))
    for p in touched_paths():
        if extracts:
            src = os.path.join(os.path.dirname(extracts[0]), p)
            if os.path.exists(src):
                os.makedirs(os.path.dirname(os.path.join(tree, p)), exist_ok=True)
                shutil.copy2(src, os.path.join(tree, p))
    if not extracts:
        members = ["linux-source-6.12/" + p for p in touched_paths()]
        # Files the series adds are not in the tarball: tar names them and
        # fails, having extracted the others.
        subprocess.run(["tar", "-xf", TARBALL, "-C", dest, "--ignore-failed-read"] + members,
                       capture_output=True)
        os.rename(os.path.join(dest, "linux-source-6.12"), tree)
    with tarfile.open(os.path.join(dest, "linux.tar"), "w") as t:
        t.add(tree, arcname="linux-source-6.12")
    return os.path.join(dest, "linux.tar")


def snapshot(kernel):
    """{kernel-relative path: bytes} of the series' and deltas' files."""
    out = {}
    for pattern in KEPT:
        for p in glob.glob(os.path.join(kernel, pattern)):
            with open(p, "rb") as f:
                out[os.path.relpath(p, kernel)] = f.read()
    return out


@unittest.skipUnless(os.path.exists(TARBALL) or glob.glob(
    os.path.join(ROOT, "build", "src", "linux-*", ".extracted")),
    "no kernel source at %s: make deps (Debian linux-source-6.12)" % TARBALL)
class SeriesRoundTrip(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.cache = tempfile.mkdtemp()
        cls.tarball = small_tarball(cls.cache)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.cache)

    def setUp(self):
        self.root = tempfile.mkdtemp()
        self.kernel = os.path.join(self.root, "kernel")
        os.makedirs(self.kernel)
        for d in ("patches", "rfc", "test-only"):
            shutil.copytree(os.path.join(ROOT, "kernel", d), os.path.join(self.kernel, d))
        shutil.copy2(os.path.join(ROOT, "kernel", "series.py"), self.kernel)
        self.tree = os.path.join(self.root, "build", "series")

    def tearDown(self):
        shutil.rmtree(self.root)

    def series(self, *args, ok=True):
        r = subprocess.run([os.path.join(self.kernel, "series.py")] + list(args),
                           env=dict(os.environ, KERNEL_TARBALL=self.tarball),
                           capture_output=True, text=True)
        if ok:
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        return r

    def git(self, *args):
        env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t",
                   GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")
        return subprocess.run(["git", "-C", self.tree] + list(args), env=env,
                              capture_output=True, text=True, check=True).stdout

    def edit_and_commit(self, old, new):
        path = os.path.join(self.tree, "mm", "hugetlb_dev.c")
        with open(path) as f:
            text = f.read()
        self.assertIn(old, text)
        with open(path, "w") as f:
            f.write(text.replace(old, new, 1))
        # Into the patch that adds the file, as a developer would.
        added = self.git("log", "--diff-filter=A", "--format=%H", "--", "mm/hugetlb_dev.c")
        self.git("commit", "-qa", "--fixup=" + added.strip())
        self.git("-c", "sequence.editor=true", "rebase", "-q", "-i", "--autosquash", "pristine")

    def test_round_trip_is_byte_stable(self):
        committed = snapshot(self.kernel)
        for attempt in ("first", "second"):
            self.series("tree")
            # pristine, then the cover letter (empty), then a commit a patch
            log = self.git("log", "--reverse", "--format=%s", "pristine..series")
            self.assertEqual(log.split("\n")[0],
                             "/dev/hugetlb: anonymous huge pages opened by path")
            self.assertEqual(len(log.split("\n")) - 2,
                             len(glob.glob(os.path.join(self.kernel, "patches", "0*.patch"))) - 1)
            r = self.series("export")
            self.assertIn("0 files changed", r.stdout)
            now = snapshot(self.kernel)
            self.assertEqual(sorted(now), sorted(committed))
            for name in committed:
                self.assertEqual(now[name], committed[name],
                                 "%s round trip: kernel/%s differs" % (attempt, name))

    def test_commit_is_exported_and_deltas_rebased(self):
        self.series("tree")
        self.edit_and_commit("#include", "/* edited in build/series */\n#include")
        self.series("export")
        now = snapshot(self.kernel)
        # the edit lands in the patch that adds the file, whatever its number
        (adds,) = [n for n in now if n.startswith("patches/0") and
                   b"+++ b/mm/hugetlb_dev.c" in now[n]]
        self.assertTrue(b"+/* edited in build/series */" in now[adds],
                        "%s lacks the edit" % adds)
        self.assertEqual(sorted(now), sorted(snapshot(os.path.join(ROOT, "kernel"))))
        # The slow-down delta now applies to the edited file: its index
        # line's preimage is what the series leaves.
        blob = self.git("rev-parse", "HEAD:mm/hugetlb_dev.c").strip()[:9]
        self.assertTrue(b"index %s.." % blob.encode() in now[SLOW], now[SLOW][:1200])

    def test_unappliable_delta_fails_loudly(self):
        self.series("tree")
        before = snapshot(self.kernel)
        # A committed change that export would write, and a delta whose
        # context the series no longer has.
        self.edit_and_commit("#include", "/* edited */\n#include")
        path = os.path.join(self.kernel, SLOW)
        with open(path) as f:
            text = f.read()
        first_context = next(l for l in text.split("\n@@")[1].split("\n")[1:]
                             if l.startswith(" "))
        with open(path, "w") as f:
            f.write(text.replace(first_context, first_context + " /* gone */", 1))
        r = self.series("export", ok=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("revision test-only", r.stderr)
        self.assertIn(os.path.basename(SLOW), r.stderr)
        self.assertRegex(r.stderr, r"hunk mm/hugetlb_dev.c: @@ -\d+,\d+ \+\d+,\d+ @@")
        after = snapshot(self.kernel)
        del after[SLOW], before[SLOW]
        self.assertEqual(after, before, "a failed export wrote files")

    def test_tree_refuses_unexported_work(self):
        self.series("tree")
        path = os.path.join(self.tree, "mm", "hugetlb_dev.c")
        with open(path, "a") as f:
            f.write("/* uncommitted */\n")
        r = self.series("tree", ok=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("uncommitted work", r.stderr)
        self.assertIn("FORCE=1", r.stderr)
        self.assertEqual(self.series("export", ok=False).returncode, 1)
        self.git("commit", "-qam", "wip")
        r = self.series("tree", ok=False)
        self.assertIn("has commits not written to kernel/patches", r.stderr)
        self.assertIn("make series-export first, or FORCE=1", r.stderr)
        self.series("tree", "--force")
        self.assertNotIn("wip", self.git("log", "--format=%s"))
        with open(path) as f:
            self.assertNotIn("uncommitted", f.read())

    def test_an_untracked_new_file_is_uncommitted_work(self):
        # a new file the developer has not added yet: export would write
        # the series without it, and tree would throw it away
        self.series("tree")
        with open(os.path.join(self.tree, "mm", "new_part.c"), "w") as f:
            f.write("int new_part;\n")
        for cmd in ("export", "tree"):
            r = self.series(cmd, ok=False)
            self.assertEqual(r.returncode, 1, (cmd, r.stdout + r.stderr))
            self.assertIn("uncommitted work (1 paths, e.g. mm/new_part.c)", r.stderr)

    def test_a_series_without_its_cover_letter_is_refused(self):
        for cover in glob.glob(os.path.join(self.kernel, "patches", "0000-*.patch")):
            os.unlink(cover)
        r = self.series("tree", ok=False)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("needs one 0000-*.patch cover letter, has 0", r.stderr)


if __name__ == "__main__":
    unittest.main()
