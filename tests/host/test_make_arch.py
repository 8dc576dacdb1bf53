# SPDX-License-Identifier: GPL-2.0
"""The Makefile's ARCH: x86_64 by default with the commands it always had,
arm64 through kernel/build.sh --arch arm64, anything else refused before
anything runs (make -n prints the commands, runs none)."""
import os
import subprocess
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def make_n(*args):
    env = {k: v for k, v in os.environ.items() if k not in ("ARCH", "MAKEFLAGS", "DEBUG")}
    return subprocess.run(["make", "-n", "--no-print-directory"] + list(args), cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=60)


class MakeArch(unittest.TestCase):
    def test_x86_64_is_the_default(self):
        r = make_n("kernel")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("scripts/deps.sh --for bench x86_64", r.stdout)
        self.assertIn("kernel/build.sh --variant bzImage --config kernel/config/base.config",
                      " ".join(r.stdout.split()))

    def test_arm64(self):
        r = make_n("kernel", "ARCH=arm64")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("scripts/deps.sh --for bench arm64", r.stdout)
        self.assertIn("kernel/build.sh --arch arm64 --variant Image-arm64 "
                      "--config kernel/config/arm64.config", r.stdout)
        r = make_n("bench", "ARCH=arm64")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("python3 -m bench.run --mode guest", r.stdout)
        self.assertIn("--kernel build/kernel/Image-arm64", r.stdout)
        r = make_n("test", "ARCH=arm64")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("--initrd build/initramfs-arm64.cpio", r.stdout)
        self.assertIn("--arch arm64", r.stdout)

    def test_refused(self):
        for args, want in ((["kernel", "ARCH=riscv64"], "ARCH=riscv64 is not a guest this "
                                                        "project builds"),
                           (["compare", "ARCH=arm64"], "make compare is for x86_64 only so far"),
                           (["test", "ARCH=arm64", "DEBUG=1"], "DEBUG=1 is for x86_64 only")):
            with self.subTest(args=args):
                r = make_n(*args)
                self.assertNotEqual(r.returncode, 0)
                self.assertIn(want, r.stderr)
                self.assertEqual(r.stdout, "")


if __name__ == "__main__":
    unittest.main()
