# SPDX-License-Identifier: GPL-2.0
"""kernel/initramfs/build.sh refuses bad usage before it fetches or packs
anything, and says what was wrong."""
import os
import subprocess
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, "kernel", "initramfs", "build.sh")


class Usage(unittest.TestCase):
    def refused(self, *args):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out.cpio")
            r = subprocess.run([BUILD] + [a.replace("OUT", out) for a in args],
                               capture_output=True, text=True, timeout=30)
            self.assertFalse(os.path.exists(out))
        self.assertEqual(r.returncode, 2, r.stderr)
        return r.stderr

    def test_missing_arguments(self):
        self.assertIn("usage: kernel/initramfs/build.sh", self.refused())
        self.assertIn("usage: kernel/initramfs/build.sh", self.refused("--arch", "arm64", "OUT"))

    def test_unknown_architecture(self):
        self.assertIn("--arch wants arm64 (or nothing for x86_64), got 'riscv64'",
                      self.refused("--arch", "riscv64", "OUT", "/nonexistent"))

    def test_x86_program_refused_for_arm64(self):
        # /bin/true is this host's, an x86-64 program: it cannot run in the
        # arm64 guest, and the error names the build that makes arm64 ones.
        self.assertIn("/bin/true is not an arm64 program: build the arm64 benchmarks",
                      self.refused("--arch", "arm64", "OUT", "/nonexistent", "/bin/true"))


if __name__ == "__main__":
    unittest.main()
