"""Host-side tests of run-qemu.sh: option checking and accelerator choice.

These never boot a guest: --dry-run prints the QEMU command line and the job
files instead.  The guest-side behaviour is tested by tests/guest_harness.py.
"""
import os
import subprocess
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUN_QEMU = os.path.join(ROOT, "run-qemu.sh")


class RunQemuOptions(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.kernel = os.path.join(self.tmp.name, "bzImage")
        self.initrd = os.path.join(self.tmp.name, "initrd.cpio")
        for path in (self.kernel, self.initrd):
            with open(path, "w") as f:
                f.write("fake")
        # A CPU without vmx/svm and a /dev/kvm that opens: TCG by default.
        self.cpuinfo = os.path.join(self.tmp.name, "cpuinfo")
        self.kvm = os.path.join(self.tmp.name, "kvm")
        self.write_cpuinfo("fpu vme de pse tsc msr pae")
        with open(self.kvm, "w") as f:
            f.write("")

    def tearDown(self):
        self.tmp.cleanup()

    def write_cpuinfo(self, flags):
        with open(self.cpuinfo, "w") as f:
            f.write("processor\t: 0\nflags\t\t: %s\n" % flags)

    def run_qemu(self, *args, files=True):
        env = dict(os.environ, RUN_QEMU_CPUINFO=self.cpuinfo, RUN_QEMU_KVM_DEV=self.kvm)
        argv = [RUN_QEMU]
        if files:
            argv += ["--kernel", self.kernel, "--initrd", self.initrd]
        argv += list(args)
        return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)

    def test_help_lists_every_option(self):
        r = self.run_qemu("--help", files=False)
        self.assertEqual(r.returncode, 0)
        for opt in ("--hugepages", "--hugepages-1g", "--mem", "--smp", "--kernel",
                    "--accel", "--icount", "--add", "--shell", "--timeout", "-- CMD"):
            self.assertIn(opt, r.stdout)

    def test_unknown_option_is_a_usage_error(self):
        r = self.run_qemu("--hugepage", "4")
        self.assertEqual(r.returncode, 2)
        self.assertIn("unknown option '--hugepage'", r.stderr)

    def test_non_numeric_count_is_refused(self):
        r = self.run_qemu("--hugepages", "many", "--dry-run")
        self.assertEqual(r.returncode, 2)
        self.assertIn("whole number", r.stderr)

    def test_missing_kernel_names_the_fix(self):
        r = self.run_qemu("--kernel", os.path.join(self.tmp.name, "nope"), "--dry-run",
                          files=False)
        self.assertEqual(r.returncode, 2)
        self.assertIn("make kernel", r.stderr)

    def test_missing_add_file_is_refused(self):
        r = self.run_qemu("--add", "/nonexistent/file", "--dry-run")
        self.assertEqual(r.returncode, 2)
        self.assertIn("no such file", r.stderr)

    def test_tcg_without_vmx_even_if_dev_kvm_opens(self):
        r = self.run_qemu("--dry-run")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("accel: tcg", r.stdout)
        self.assertIn("-cpu max", r.stdout)

    def test_kvm_with_vmx_and_dev_kvm(self):
        self.write_cpuinfo("fpu vme vmx pse")
        r = self.run_qemu("--dry-run")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("accel: kvm", r.stdout)
        self.assertIn("-cpu host", r.stdout)

    def test_tcg_with_svm_but_no_dev_kvm(self):
        self.write_cpuinfo("fpu svm")
        os.unlink(self.kvm)
        r = self.run_qemu("--dry-run")
        self.assertIn("accel: tcg", r.stdout)

    def test_icount_needs_tcg(self):
        r = self.run_qemu("--accel", "kvm", "--icount", "--dry-run")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--icount needs TCG", r.stderr)
        r = self.run_qemu("--icount", "--dry-run")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("-icount shift=0", r.stdout)

    def test_bad_accel_is_refused(self):
        r = self.run_qemu("--accel", "hvf", "--dry-run")
        self.assertEqual(r.returncode, 2)
        self.assertIn("kvm or tcg", r.stderr)

    def test_shell_and_command_exclude_each_other(self):
        r = self.run_qemu("--shell", "--", "true")
        self.assertEqual(r.returncode, 2)

    def test_pools_reach_the_kernel_command_line(self):
        r = self.run_qemu("--hugepages", "12", "--hugepages-1g", "2", "--dry-run")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("hugepagesz=2M\\ hugepages=12\\ hugepagesz=1G\\ hugepages=2", r.stdout)
        # 1 GB pages need RAM above 4 GB: 4 GB plus one per page.
        self.assertIn("-m 6G", r.stdout)

    def test_pools_larger_than_the_guest_are_refused_before_booting(self):
        r = self.run_qemu("--hugepages", "1000", "--mem", "1G", "--dry-run")
        self.assertEqual(r.returncode, 120)
        self.assertIn("need 2000 MB", r.stderr)
        self.assertIn("raise --mem", r.stderr)
        r = self.run_qemu("--hugepages", "300", "--mem", "1024", "--dry-run")
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_command_words_are_quoted_for_the_guest(self):
        r = self.run_qemu("--dry-run", "--", "echo", "it's", "a b")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("/job/cmd:\n'echo' 'it'\\''s' 'a b'", r.stdout)


if __name__ == "__main__":
    unittest.main()
