# SPDX-License-Identifier: GPL-2.0
"""kernel/build.sh's rebuild decision: its cache key (the result folder
build/kernel/<key>) changes with every input that changes the kernel (the
config fragments' and patches' content, the recipe, the architecture)
and with nothing else (a 0000- cover letter), and only a result holding
its image counts as built.  No kernel is built: build.sh runs from a copy
of the recipe in a scratch root with a tarball that is not one, so a
build that was not skipped stops at the extraction, after the key (whose
lock file build/kernel/<key>.lock shows it) is known."""
import os
import shutil
import subprocess
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, "kernel", "build.sh")


class CacheKey(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="build-cache-")
        for d in ("kernel/patches", "kernel/config"):
            os.makedirs(os.path.join(self.tmp, d))
        self.script = os.path.join(self.tmp, "kernel", "build.sh")
        shutil.copy2(BUILD, self.script)
        shutil.copy2(os.path.join(os.path.dirname(BUILD), "progress.sh"),
                     os.path.join(self.tmp, "kernel"))
        self.write("kernel/patches/0001-one.patch", "patch one\n")
        self.write("kernel/config/base.config", "CONFIG_HUGETLBFS=y\n")
        self.tarball = self.write("linux-source-6.12.tar.xz", "not a tarball\n")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def write(self, rel, text, mode="w"):
        path = os.path.join(self.tmp, rel)
        with open(path, mode) as f:
            f.write(text)
        return path

    def build(self, *args, tarball=None):
        env = dict(os.environ, KERNEL_TARBALL=tarball or self.tarball)
        return subprocess.run(
            [self.script, "--patches", os.path.join(self.tmp, "kernel/patches"),
             "--config", os.path.join(self.tmp, "kernel/config/base.config")]
            + list(args), env=env, capture_output=True, text=True, timeout=60)

    def key(self, *args):
        """The key build.sh computed: the lock file it created (the old
        ones are removed first)."""
        d = os.path.join(self.tmp, "build", "kernel")
        for f in os.listdir(d) if os.path.isdir(d) else []:
            if f.endswith(".lock"):
                os.unlink(os.path.join(d, f))
        r = self.build(*args)
        self.assertNotEqual(r.returncode, 0, "built from a fake tarball?")
        new = {f for f in os.listdir(d) if f.endswith(".lock")}
        self.assertEqual(len(new), 1, (new, r.stdout, r.stderr))
        return new.pop()[:-len(".lock")]

    def test_the_key_follows_every_input(self):
        k0 = self.key()
        self.write("kernel/config/base.config", "CONFIG_HUGETLBFS=y\nCONFIG_X=y\n")
        k1 = self.key()
        self.write("kernel/patches/0001-one.patch", "patch one, changed\n")
        k2 = self.key()
        self.write("kernel/build.sh", "# a changed recipe\n", mode="a")
        k3 = self.key()
        self.assertEqual(len({k0, k1, k2, k3}), 4, (k0, k1, k2, k3))

    def test_the_key_follows_the_architecture(self):
        if not all(shutil.which(t) for t in ("clang", "ld.lld", "llvm-objcopy")):
            self.skipTest("no clang/lld for --arch arm64: make deps ARCH=arm64")
        self.assertNotEqual(self.key(), self.key("--arch", "arm64"))

    def test_a_cover_letter_is_not_an_input(self):
        k0 = self.key()
        self.write("kernel/patches/0000-cover-letter.patch", "Subject: cover\n")
        self.assertEqual(self.key(), k0)

    def test_only_a_result_with_its_image_is_up_to_date(self):
        k = self.key()
        result = os.path.join(self.tmp, "build", "kernel", k)
        os.makedirs(result)
        r = self.build()
        self.assertNotEqual(r.returncode, 0, "an empty result folder counted as built")
        self.write(os.path.join(result, "bzImage"), "image")
        r = self.build("--variant", "bzImage-test")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("kernel: bzImage-test is up to date (build/kernel/%s" % k, r.stdout)
        self.assertEqual(os.readlink(os.path.join(self.tmp, "build", "kernel",
                                                  "bzImage-test")),
                         os.path.join(k, "bzImage"))

    def test_a_missing_tarball_is_refused_naming_the_package(self):
        r = self.build(tarball=os.path.join(self.tmp, "nothing.tar.xz"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("no kernel source at %s" % os.path.join(self.tmp, "nothing.tar.xz"),
                      r.stderr)
        self.assertIn("make deps", r.stderr)


if __name__ == "__main__":
    unittest.main()
