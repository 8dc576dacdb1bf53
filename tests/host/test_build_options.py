# SPDX-License-Identifier: GPL-2.0
"""kernel/build.sh refuses an option without its value, and an architecture
it does not build, before it builds anything, and says which option it was."""
import os
import subprocess
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, "kernel", "build.sh")


class MissingValue(unittest.TestCase):
    def refused(self, *args):
        r = subprocess.run([BUILD] + list(args), capture_output=True, text=True,
                           timeout=30)
        self.assertEqual(r.returncode, 2, r.stderr)
        return r.stderr

    def test_last_option_without_value(self):
        for opt in ("--arch", "--patches", "--variant", "--config", "--out", "--slot"):
            self.assertIn("%s needs a value" % opt, self.refused(opt))

    def test_option_followed_by_option(self):
        self.assertIn("--variant needs a value",
                      self.refused("--variant", "--config", "kernel/config/base.config"))

    def test_empty_value(self):
        self.assertIn("--patches needs a value", self.refused("--patches", ""))

    def test_unknown_architecture(self):
        self.assertIn("--arch wants x86_64 or arm64, got 'riscv64'",
                      self.refused("--arch", "riscv64"))


if __name__ == "__main__":
    unittest.main()
