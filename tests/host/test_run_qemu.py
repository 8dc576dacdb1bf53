# SPDX-License-Identifier: GPL-2.0
"""Host-side tests of run-qemu.sh: option checking, accelerator choice, the
host pages under guest RAM, and the arm64 guest's command line.

These never boot a guest: --dry-run prints the QEMU command line and the job
files instead, and the host-pages check runs against a fake QEMU that only
maps memory.  The guest-side behaviour is tested by guest_harness() in
tests/run.py.
"""
import json
import os
import shlex
import signal
import subprocess
import tempfile
import time
import unittest

from bench.contract import POOLS, QEMU_EXIT

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUN_QEMU = os.path.join(ROOT, "run-qemu.sh")

# A QEMU that maps its -m bytes of RAM (MADV_HUGEPAGE with FAKE_THP=1, as
# QEMU does, FAKE_THP_DELAY seconds after mapping it), creates an empty
# console file and ends after two seconds.
FAKE_QEMU = """#!/usr/bin/env python3
import mmap, os, sys, time
open([a[5:] for a in sys.argv if a.startswith("file:")][0], "w").close()
mb = int(sys.argv[sys.argv.index("-m") + 1].rstrip("M"))
ram = mmap.mmap(-1, mb << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
if os.environ.get("FAKE_THP") == "1":
    time.sleep(float(os.environ.get("FAKE_THP_DELAY", "0")))
    ram.madvise(mmap.MADV_HUGEPAGE)
time.sleep(2)
"""

# A QEMU whose guest writes, on its Nth boot (counted in FAKE_BOOTS), the
# console lines of FAKE_CONSOLE_<N> (or FAKE_CONSOLE), then ends; with
# FAKE_ARGV set it writes its arguments there, one a line.
FAKE_QEMU_CONSOLE = """#!/usr/bin/env python3
import os, sys
n = int(open(os.environ["FAKE_BOOTS"]).read() or 0) + 1
open(os.environ["FAKE_BOOTS"], "w").write(str(n))
text = os.environ.get("FAKE_CONSOLE_%d" % n, os.environ["FAKE_CONSOLE"])
if "FAKE_ARGV" in os.environ:
    open(os.environ["FAKE_ARGV"], "w").write("\\n".join(sys.argv))
with open([a[5:] for a in sys.argv if a.startswith("file:")][0], "w") as f:
    f.write(text.replace("|", "\\r\\n"))
"""


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

    def run_qemu(self, *args, files=True, env=None):
        env = dict(os.environ, RUN_QEMU_CPUINFO=self.cpuinfo, RUN_QEMU_KVM_DEV=self.kvm,
                   **(env or {}))
        argv = [RUN_QEMU]
        if files:
            argv += ["--kernel", self.kernel, "--initrd", self.initrd,
                     "--console-log", os.path.join(self.tmp.name, "console.log")]
        argv += list(args)
        return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)

    def assert_usage_error(self, want, *args, **kw):
        """run-qemu.sh args exits with the usage status and says want."""
        r = self.run_qemu(*args, **kw)
        self.assertEqual(r.returncode, QEMU_EXIT["USAGE"][0], r.stderr)
        self.assertIn(want, r.stderr)

    def test_help_lists_every_option(self):
        r = self.run_qemu("--help", files=False)
        self.assertEqual(r.returncode, 0)
        for opt in ("--hugepages", "--hugepages-1g", "--mem", "--smp", "--kernel",
                    "--accel", "--icount", "--host-pages", "--add", "--shell", "--timeout", "-- CMD"):
            self.assertIn(opt, r.stdout)

    def test_usage_errors_name_the_cause(self):
        for args, files, want in (
                (["--hugepage", "4"], True, "unknown option '--hugepage'"),
                (["--hugepages", "many", "--dry-run"], True, "whole number"),
                (["--kernel", "/nonexistent/bzImage", "--dry-run"], False, "make kernel"),
                (["--add", "/nonexistent/file", "--dry-run"], True, "no such file"),
                (["--accel", "hvf", "--dry-run"], True, "kvm or tcg"),
                (["--accel", "kvm", "--icount", "--dry-run"], True, "--icount needs TCG"),
                (["--shell", "--", "true"], True, "exclude each other")):
            with self.subTest(args=args):
                self.assert_usage_error(want, *args, files=files)

    def test_missing_value_is_a_usage_error(self):
        for args in (["--mem"], ["--mem", "--dry-run"], ["--host-pages", "--dry-run"]):
            with self.subTest(args=args):
                self.assert_usage_error("%s needs a value" % args[0], *args)

    def test_accelerator_choice(self):
        # (cpu flags, /dev/kvm present, accel, -cpu): KVM needs both.
        for flags, dev, accel, cpu in (("fpu vme de pse", True, "tcg", "max"),
                                       ("fpu vme vmx pse", True, "kvm", "host"),
                                       ("fpu svm", False, "tcg", "max")):
            with self.subTest(flags=flags, dev=dev):
                self.write_cpuinfo(flags)
                if not dev:
                    os.unlink(self.kvm)
                r = self.run_qemu("--dry-run")
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertIn("accel: " + accel, r.stdout)
                self.assertIn("-cpu " + cpu, r.stdout)

    def test_icount(self):
        r = self.run_qemu("--icount", "--dry-run")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("-icount shift=0", r.stdout)

    def test_pools_reach_the_kernel_command_line(self):
        r = self.run_qemu("--hugepages", "12", "--hugepages-1g", "2", "--dry-run")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("hugepagesz=2M\\ hugepages=12\\ hugepagesz=1G\\ hugepages=2", r.stdout)
        # 1 GB pages need RAM above 4 GB: 4 GB plus one per page.
        self.assertIn("-m 6G", r.stdout)

    def test_pools_larger_than_the_guest_are_refused_before_booting(self):
        r = self.run_qemu("--hugepages", "1000", "--mem", "1G", "--dry-run")
        self.assertEqual(r.returncode, QEMU_EXIT["NOPOOL"][0])
        self.assertIn("need 2000 MB", r.stderr)
        self.assertIn("raise --mem", r.stderr)
        r = self.run_qemu("--hugepages", "300", "--mem", "1024", "--dry-run")
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_command_words_are_quoted_for_the_guest(self):
        r = self.run_qemu("--dry-run", "--", "echo", "it's", "a b")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("/job/cmd:\n'echo' 'it'\\''s' 'a b'", r.stdout)


    # -- guest RAM on host huge pages under KVM

    @staticmethod
    def windows(dry_run_out, n):
        """Every n consecutive words of the QEMU command line --dry-run printed."""
        words = shlex.split(next(l for l in dry_run_out.splitlines()
                                 if l.startswith("qemu-system")))
        return [words[i:i + n] for i in range(len(words) - n + 1)]

    def test_kvm_backs_guest_ram_with_preallocated_2m_pages(self):
        r = self.run_qemu("--accel", "kvm", "--mem", "1G", "--hugepages", "8", "--dry-run")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("host pages: hugetlb", r.stdout)
        self.assertIn(["-object", "memory-backend-memfd,id=ram0,size=1024M,hugetlb=on,"
                       "hugetlbsize=2M,prealloc=on", "-machine", "memory-backend=ram0"],
                      self.windows(r.stdout, 4))

    def test_kvm_thp_and_none(self):
        r = self.run_qemu("--accel", "kvm", "--host-pages", "thp", "--dry-run")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(["-object", "memory-backend-ram,id=ram0,size=2048M", "-machine",
                       "memory-backend=ram0"], self.windows(r.stdout, 4))
        r = self.run_qemu("--accel", "kvm", "--host-pages", "none", "--dry-run")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("memory-backend", r.stdout)

    def test_host_pages_refused_under_tcg_and_when_unknown(self):
        self.assert_usage_error("--host-pages is for --accel kvm",
                                "--host-pages", "hugetlb", "--dry-run")
        self.assert_usage_error("hugetlb, thp or none",
                                "--accel", "kvm", "--host-pages", "1G", "--dry-run")
        r = self.run_qemu("--dry-run")
        self.assertIn("host pages: n/a", r.stdout)
        self.assertNotIn("memory-backend", r.stdout)

    def fake_host(self, free_2m=0, thp="always [madvise] never", qemu=FAKE_QEMU,
                  name="qemu-system-x86_64"):
        """A fake QEMU on PATH and fake sysfs pool and THP files."""
        bindir = os.path.join(self.tmp.name, "bin")
        os.makedirs(bindir, exist_ok=True)
        path = os.path.join(bindir, name)
        with open(path, "w") as f:
            f.write(qemu)
        os.chmod(path, 0o755)
        hp = os.path.join(self.tmp.name, "hugepages")
        os.makedirs(os.path.join(hp, "hugepages-2048kB"), exist_ok=True)
        with open(os.path.join(hp, "hugepages-2048kB", "free_hugepages"), "w") as f:
            f.write("%d\n" % free_2m)
        thp_dir = os.path.join(self.tmp.name, "thp")
        os.makedirs(thp_dir, exist_ok=True)
        for name, text in (("enabled", thp), ("defrag", "always defer [madvise] never")):
            with open(os.path.join(thp_dir, name), "w") as f:
                f.write(text + "\n")
        return {"PATH": bindir + os.pathsep + os.environ["PATH"],
                "RUN_QEMU_HUGEPAGES_SYS": hp, "RUN_QEMU_THP_SYS": thp_dir}

    def test_short_host_pool_is_refused_before_starting(self):
        env = self.fake_host(free_2m=100)
        r = self.run_qemu("--accel", "kvm", "--mem", "512M", "--hugepages", "0",
                          "--", "true", env=env)
        self.assertEqual(r.returncode, QEMU_EXIT["HOSTPAGES"][0], r.stderr)
        self.assertIn("need 256 free 2 MB pages on the host, it has 100", r.stderr)
        self.assertIn("nr_hugepages", r.stderr)
        # one page short of 512 MB / 2 MB is short too
        r = self.run_qemu("--accel", "kvm", "--mem", "512M", "--hugepages", "0",
                          "--", "true", env=self.fake_host(free_2m=255))
        self.assertEqual(r.returncode, QEMU_EXIT["HOSTPAGES"][0], r.stderr)
        self.assertIn("need 256 free 2 MB pages on the host, it has 255", r.stderr)

    def test_guest_ram_on_4k_pages_fails_the_smaps_check(self):
        # The pool looks big enough, but the fake QEMU maps plain 4 KB pages:
        # the check in its smaps must catch what the command line promised.
        env = self.fake_host(free_2m=1000)
        r = self.run_qemu("--accel", "kvm", "--mem", "512M", "--hugepages", "0",
                          "--", "true", env=env)
        self.assertEqual(r.returncode, QEMU_EXIT["HOSTPAGES"][0], r.stderr)
        self.assertRegex(r.stderr, r"guest RAM in /proc/\d+/smaps has KernelPageSize 4 kB, "
                         r"not 2048 kB")

    def test_thp_is_checked_and_recorded(self):
        env = self.fake_host(thp="always [madvise] never")
        env["FAKE_THP"] = "1"
        r = self.run_qemu("--accel", "kvm", "--host-pages", "thp", "--mem", "512M",
                          "--hugepages", "0", "--", "true", env=env)
        # The fake reports no guest status, but its RAM passed the check.
        self.assertEqual(r.returncode, QEMU_EXIT["NOSTATUS"][0], r.stderr)
        self.assertIn('@meta host_memory {"host_pages": "thp", "kernel_page_kb": 4, ',
                      r.stdout)
        self.assertIn('"thp_enabled": "always [madvise] never"', r.stdout)
        # QEMU maps guest RAM, then advises it: a look in between, which
        # the delay makes certain, must not fail a boot that advises it
        env["FAKE_THP_DELAY"] = "0.6"
        r = self.run_qemu("--accel", "kvm", "--host-pages", "thp", "--mem", "512M",
                          "--hugepages", "0", "--", "true", env=env)
        self.assertEqual(r.returncode, QEMU_EXIT["NOSTATUS"][0], r.stderr)
        env["FAKE_THP"] = "0"
        r = self.run_qemu("--accel", "kvm", "--host-pages", "thp", "--mem", "512M",
                          "--hugepages", "0", "--", "true", env=env)
        self.assertEqual(r.returncode, QEMU_EXIT["HOSTPAGES"][0], r.stderr)
        self.assertIn("is not THPeligible", r.stderr)
        env = self.fake_host(thp="always madvise [never]")
        r = self.run_qemu("--accel", "kvm", "--host-pages", "thp", "--mem", "512M",
                          "--hugepages", "0", "--", "true", env=env)
        self.assertEqual(r.returncode, QEMU_EXIT["HOSTPAGES"][0], r.stderr)
        self.assertIn("set always or madvise", r.stderr)

    def clock_boots(self, **console):
        """run-qemu.sh on a fake QEMU whose boots print the given consoles;
        returns (result, how many boots it took)."""
        env = self.fake_host(qemu=FAKE_QEMU_CONSOLE)
        env["FAKE_BOOTS"] = os.path.join(self.tmp.name, "boots")
        open(env["FAKE_BOOTS"], "w").close()
        env.update(console)
        r = self.run_qemu("--", "true", env=env)
        with open(env["FAKE_BOOTS"]) as f:
            return r, int(f.read())

    BAD_CLOCK = ("@@hugetlb-guest-clock tsc: PIT calibration deviates from HPET: "
                 "30046 2094830|@@hugetlb-guest-exit 122|")

    def test_a_miscalibrated_guest_clock_boots_again(self):
        r, boots = self.clock_boots(FAKE_CONSOLE_1=self.BAD_CLOCK,
                                    FAKE_CONSOLE="@@hugetlb-guest-exit 0|")
        self.assertEqual((r.returncode, boots), (0, 2), r.stderr)
        self.assertIn("boot 1 of 3: guest TSC calibration failed (tsc: PIT calibration "
                      "deviates from HPET: 30046 2094830)", r.stderr)

    def test_a_clock_bad_on_every_boot_is_refused(self):
        r, boots = self.clock_boots(FAKE_CONSOLE=self.BAD_CLOCK)
        self.assertEqual((r.returncode, boots), (QEMU_EXIT["CLOCK"][0], 3), r.stderr)
        self.assertIn("no boot calibrated the guest clock", r.stderr)

    # -- option values that are not what they look like

    def test_bad_sizes_and_numbers_are_usage_errors(self):
        for args, want in ((["--mem", "2X"], "--mem wants a size"),
                           (["--mem", "1.5G"], "--mem wants a size"),
                           (["--mem", "G"], "--mem wants a size"),
                           (["--mem", "-2G"], "--mem wants a size"),
                           (["--mem", "08G"], "--mem wants a size"),
                           (["--timeout", "5x"], "--timeout wants a whole number"),
                           (["--timeout", "-1"], "--timeout wants a whole number"),
                           (["--hugepages", "4x"], "--hugepages wants a whole number"),
                           (["--smp", "0"], "--smp must be at least 1")):
            with self.subTest(args=args):
                self.assert_usage_error(want, *args, "--dry-run")

    def test_pool_room_keeps_the_guest_reserve(self):
        # 900 x 2 MB = 1800 MB fit in 2 GB, but not with the 384 MB the
        # guest keeps for itself; 3 x 1 GB do not fit in 3 GB either.
        for args, need in ((["--hugepages", "900", "--mem", "2G"], "1800 MB"),
                           (["--hugepages", "0", "--hugepages-1g", "3", "--mem",
                             "3G"], "3072 MB")):
            with self.subTest(args=args):
                r = self.run_qemu(*args, "--dry-run")
                self.assertEqual(r.returncode, QEMU_EXIT["NOPOOL"][0], r.stderr)
                self.assertIn("need %s, but a %d MB guest" % (
                    need, 1024 * int(args[-1][:-1])), r.stderr)

    def test_kvm_needs_a_dev_kvm_that_opens(self):
        # vmx and a /dev/kvm that exists but cannot be opened read-write (a
        # folder: root opens any file): TCG, as without /dev/kvm.
        self.write_cpuinfo("fpu vme vmx pse")
        os.unlink(self.kvm)
        os.mkdir(self.kvm)
        r = self.run_qemu("--dry-run")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("accel: tcg", r.stdout)

    # -- the guest's end: what run-qemu.sh's exit status says

    def console_run(self, console, *args, qemu=FAKE_QEMU_CONSOLE):
        env = self.fake_host(qemu=qemu)
        env["FAKE_BOOTS"] = os.path.join(self.tmp.name, "boots")
        open(env["FAKE_BOOTS"], "w").close()
        env["FAKE_CONSOLE"] = console
        env["FAKE_STARTED"] = os.path.join(self.tmp.name, "started")
        return self.run_qemu(*args, "--", "true", env=env)

    def test_exit_status_from_the_console(self):
        for console, want in (
                ("@@hugetlb-guest-exit 0|", 0),
                ("@@hugetlb-guest-exit 5|", 5),
                # the job's status is the last one the guest wrote
                ("@@hugetlb-guest-exit 5|@@hugetlb-guest-exit 0|", 0),
                ("@@hugetlb-guest-exit 0|@@hugetlb-guest-exit 3|", 3),
                ("booted|", QEMU_EXIT["NOSTATUS"][0]),
                ("[   1.2] WARNING: CPU: 0 PID: 1 at mm/hugetlb.c:42|"
                 "@@hugetlb-guest-exit 0|", QEMU_EXIT["SPLAT"][0]),
                ("Kernel panic - not syncing: VFS|", QEMU_EXIT["SPLAT"][0]),
                ("@@hugetlb-guest-hugepages 2048 kB: 3 of 64 pages|"
                 "@@hugetlb-guest-exit 0|", QEMU_EXIT["NOPOOL"][0])):
            with self.subTest(console=console):
                r = self.console_run(console)
                self.assertEqual(r.returncode, want, r.stderr)
                if want == QEMU_EXIT["NOPOOL"][0]:
                    self.assertIn("huge pages could not be preallocated, so "
                                  "nothing was run", r.stderr)

    # A QEMU whose guest never ends; it says when it has started.
    SLOW_QEMU = "#!/bin/sh\ntouch \"$FAKE_STARTED\"\nexec sleep 600\n"

    def test_a_guest_past_its_timeout_is_killed(self):
        r = self.console_run("", "--timeout", "1", qemu=self.SLOW_QEMU)
        self.assertEqual(r.returncode, QEMU_EXIT["TIMEOUT"][0], r.stderr)
        self.assertIn("still running after 1s: killed", r.stderr)

    def test_an_interrupted_run_says_so(self):
        env = self.fake_host(qemu=self.SLOW_QEMU)
        argv = [RUN_QEMU, "--kernel", self.kernel, "--initrd", self.initrd,
                "--console-log", os.path.join(self.tmp.name, "console.log"),
                "--", "true"]
        started = os.path.join(self.tmp.name, "started")
        env = dict(os.environ, RUN_QEMU_CPUINFO=self.cpuinfo,
                   RUN_QEMU_KVM_DEV=self.kvm, FAKE_STARTED=started, **env)
        for sig in (signal.SIGTERM, signal.SIGINT):
            with self.subTest(sig=sig):
                if os.path.exists(started):
                    os.unlink(started)
                # as from a terminal: a shell cannot trap a signal that
                # was ignored when it started (as in a background job)
                p = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True,
                                     preexec_fn=lambda: signal.signal(
                                         signal.SIGINT, signal.SIG_DFL))
                # signal once QEMU runs (its traps are set by then), however
                # slowly this host gets there
                while not os.path.exists(started) and p.poll() is None:
                    time.sleep(0.05)
                p.send_signal(sig)
                _, err = p.communicate(timeout=30)
                self.assertEqual(p.returncode, QEMU_EXIT["INTERRUPTED"][0], err)


    # -- the arm64 guest (--arch arm64)

    def qemu_words(self, dry_run_out):
        return shlex.split(next(l for l in dry_run_out.splitlines()
                                if l.startswith("qemu-system")))

    def test_arm64_command_line_and_pools(self):
        r = self.run_qemu("--arch", "arm64", "--hugepages-64k", "16", "--hugepages", "12",
                          "--hugepages-32m", "3", "--hugepages-1g", "2", "--dry-run")
        self.assertEqual(r.returncode, 0, r.stderr)
        words = self.qemu_words(r.stdout)
        self.assertEqual(words[0], "qemu-system-aarch64")
        self.assertIn(["-machine", "virt,gic-version=3"], self.windows(r.stdout, 2))
        self.assertIn(["-accel", "tcg", "-cpu", "max"], self.windows(r.stdout, 4))
        append = words[words.index("-append") + 1].split()
        self.assertEqual(append[:3], ["console=ttyAMA0", "panic=-1", "rdinit=/init"])
        # Every size named with its pool, smallest first; nothing x86's.
        self.assertEqual(append[3:], ["hugepagesz=64K", "hugepages=16", "hugepagesz=2M",
                                      "hugepages=12", "hugepagesz=32M", "hugepages=3",
                                      "hugepagesz=1G", "hugepages=2"])
        # The first gigabyte of RAM holds the kernel: 2 GB plus one per page.
        self.assertEqual(words[words.index("-m") + 1], "4G")

    def test_arm64_numa_nodes(self):
        r = self.run_qemu("--arch", "arm64", "--numa", "2", "--smp", "3",
                          "--mem", "3001M", "--dry-run")
        self.assertEqual(r.returncode, 0, r.stderr)
        words = self.qemu_words(r.stdout)
        objs = [words[i + 1] for i, w in enumerate(words) if w == "-object"]
        nodes = [words[i + 1] for i, w in enumerate(words) if w == "-numa"]
        # the memory adds up to -m; CPU i on node i mod 2
        self.assertEqual(objs, ["memory-backend-ram,id=node0,size=1500M",
                                "memory-backend-ram,id=node1,size=1501M"])
        self.assertEqual(nodes, ["node,nodeid=0,memdev=node0,cpus=0,cpus=2",
                                 "node,nodeid=1,memdev=node1,cpus=1"])
        self.assertNotIn("-numa", self.qemu_words(
            self.run_qemu("--arch", "arm64", "--dry-run").stdout))

    def test_numa_refusals_name_the_fix(self):
        for args, why in ((["--numa", "2", "--smp", "2"], "--arch arm64"),
                          (["--arch", "arm64", "--numa", "2"], "--smp 2"),
                          (["--arch", "arm64", "--numa", "1"], "2 or more")):
            r = self.run_qemu(*args, "--dry-run")
            self.assertEqual(r.returncode, 2, args)
            self.assertIn(why, r.stderr, args)

    def test_arm64_defaults(self):
        r = self.run_qemu("--arch", "arm64", "--dry-run")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("accel: tcg", r.stdout)
        self.assertIn("hugepagesz=64K\\ hugepages=64\\ hugepagesz=2M\\ hugepages=64\\ "
                      "hugepagesz=32M\\ hugepages=4\\ hugepagesz=1G\\ hugepages=0", r.stdout)
        self.assertIn(["-m", "2G"], self.windows(r.stdout, 2))
        # What it boots by default: the arm64 kernel and initramfs, built or
        # not (then it says how to build them).
        kernel = os.path.join(ROOT, "build", "kernel", "Image-arm64")
        r = self.run_qemu("--arch", "arm64", "--initrd", self.initrd, "--dry-run", files=False)
        if os.path.exists(kernel):
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn(["-kernel", kernel], self.windows(r.stdout, 2))
        else:
            self.assertEqual(r.returncode, QEMU_EXIT["USAGE"][0])
            self.assertIn("build/kernel/Image-arm64: run 'make kernel ARCH=arm64'", r.stderr)
        if not os.path.exists(os.path.join(ROOT, "build", "initramfs-arm64.cpio")):
            r = self.run_qemu("--arch", "arm64", "--kernel", self.kernel, "--dry-run",
                              files=False)
            self.assertIn("build/initramfs-arm64.cpio: run 'make initramfs ARCH=arm64'",
                          r.stderr)

    def test_arm64_is_tcg_only(self):
        # Even where KVM works, it cannot run an arm64 guest on this host.
        self.write_cpuinfo("fpu vme vmx pse")
        r = self.run_qemu("--arch", "arm64", "--dry-run")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("accel: tcg", r.stdout)
        self.assert_usage_error("the arm64 guest runs under TCG only",
                                "--arch", "arm64", "--accel", "kvm", "--dry-run")

    def test_missing_qemu_names_the_package_and_make_deps(self):
        # PATH as it is, less every QEMU.
        bindir = os.path.join(self.tmp.name, "no-qemu")
        os.makedirs(bindir)
        for d in os.environ["PATH"].split(os.pathsep):
            for tool in os.listdir(d) if os.path.isdir(d) else ():
                link = os.path.join(bindir, tool)
                if not tool.startswith("qemu-system") and not os.path.lexists(link):
                    os.symlink(os.path.join(d, tool), link)
        for arch, binary, package, deps in (
                ("x86_64", "qemu-system-x86_64", "qemu-system-x86", "make deps'"),
                ("arm64", "qemu-system-aarch64", "qemu-system-arm", "make deps ARCH=arm64'")):
            # A dry run needs no QEMU (make lava-job runs one for the arm64
            # guest on an x86_64-only machine); a boot is refused.
            r = self.run_qemu("--arch", arch, "--dry-run", env={"PATH": bindir})
            self.assertEqual(r.returncode, 0, r.stderr)
            r = self.run_qemu("--arch", arch, "--", "true", env={"PATH": bindir})
            self.assertEqual(r.returncode, QEMU_EXIT["USAGE"][0], r.stderr)
            self.assertIn("%s not found: run '%s (Debian package %s)" % (binary, deps, package),
                          r.stderr)

    def test_architecture_errors(self):
        for args, want in ((["--arch", "riscv64"], "--arch wants x86_64 or arm64, got 'riscv64'"),
                           (["--hugepages-64k", "8"], "--hugepages-64k: x86_64 has no such huge "
                                                      "page size"),
                           (["--hugepages-32m", "0"], "it is for --arch arm64")):
            with self.subTest(args=args):
                self.assert_usage_error(want, *args, "--dry-run")

    def test_arm64_pools_count_against_guest_memory(self):
        # 64 x 32 MB fill a 2 GB guest: refused before booting.
        r = self.run_qemu("--arch", "arm64", "--hugepages-32m", "64", "--dry-run")
        self.assertEqual(r.returncode, QEMU_EXIT["NOPOOL"][0])
        self.assertIn("64 x 64 KB + 64 x 2 MB + 64 x 32 MB + 0 x 1 GB huge pages need 2180 MB",
                      r.stderr)

    def test_arm64_job_channel_and_exit_status(self):
        # A fake qemu-system-aarch64 whose guest reports exit status 7: the
        # job's output goes over a virtio console, the kernel's over the UART.
        env = self.fake_host(qemu=FAKE_QEMU_CONSOLE, name="qemu-system-aarch64")
        env["FAKE_BOOTS"] = os.path.join(self.tmp.name, "boots")
        open(env["FAKE_BOOTS"], "w").close()
        env["FAKE_CONSOLE"] = "@@hugetlb-guest-exit 7|"
        env["FAKE_ARGV"] = os.path.join(self.tmp.name, "argv")
        r = self.run_qemu("--arch", "arm64", "--", "true", env=env)
        self.assertEqual(r.returncode, 7, r.stderr)
        with open(env["FAKE_ARGV"]) as f:
            argv = f.read().split("\n")
        self.assertIn("virtconsole,chardev=job", argv)
        self.assertIn("stdio,id=job,signal=off", argv)
        self.assertNotIn("chardev:job", argv)


def config_disagreements(config, dry_run_out):
    """Where run-qemu.sh --print-config's JSON and the QEMU command line
    --dry-run printed for the same options differ: memory, CPUs, kernel
    arguments, each pool's pages, and the memory backend under guest RAM."""
    words = shlex.split(next(l for l in dry_run_out.splitlines()
                             if l.startswith("qemu-system")))
    opt = lambda o: words[words.index(o) + 1] if o in words else None  # noqa: E731
    bad = []
    if opt("-m") != "%dM" % config["memory_mb"] and \
            opt("-m") != "%dG" % (config["memory_mb"] // 1024):
        bad.append("memory: -m %s, config %d MB" % (opt("-m"),
                                                    config["memory_mb"]))
    if opt("-smp") != str(config["smp"]):
        bad.append("smp: -smp %s, config %d" % (opt("-smp"), config["smp"]))
    append = opt("-append") or ""
    if append != config["kernel_args"]:
        bad.append("kernel args: %r, config %r" % (append,
                                                   config["kernel_args"]))
    args = append.split()
    booted = {}
    for i, w in enumerate(args[:-1]):
        if w.startswith("hugepagesz=") and args[i + 1].startswith("hugepages="):
            kb = next(p.kb for p in POOLS if p.name == w.partition("=")[2])
            booted[kb] = int(args[i + 1].partition("=")[2])
    said = {p["page_kb"]: p["count"] for p in config["pools"]}
    if booted != said:
        bad.append("pools: kernel %s, config %s" % (booted, said))
    lines = dry_run_out.splitlines()
    job = lines[lines.index("/job/cmd:") + 1] if "/job/cmd:" in lines else None
    if job != config["job"]:
        bad.append("job: /job/cmd %r, config %r" % (job, config["job"]))
    memfd = [w for w in words if w.startswith("memory-backend-memfd,")]
    ram = config["guest_ram"]
    if ram["hugetlb"] != bool(memfd):
        bad.append("guest RAM on hugetlb: QEMU %s, config %s" % (
            bool(memfd), ram["hugetlb"]))
    elif memfd and "size=%dM" % ram["size_mb"] not in memfd[0].split(","):
        bad.append("guest RAM: QEMU %s, config %d MB" % (memfd[0],
                                                        ram["size_mb"]))
    return bad


class PrintConfig(unittest.TestCase):
    """--print-config says what a boot with the same options uses."""

    # the fake CPU and kernel of RunQemuOptions, without its tests
    setUp, tearDown = RunQemuOptions.setUp, RunQemuOptions.tearDown
    write_cpuinfo = RunQemuOptions.write_cpuinfo
    run_qemu = RunQemuOptions.run_qemu

    CASES = ([], ["--hugepages", "12", "--hugepages-1g", "2"],
             ["--mem", "3G", "--smp", "2"],
             ["--accel", "kvm", "--mem", "1G", "--hugepages", "8"],
             ["--accel", "kvm", "--host-pages", "thp"],
             ["--arch", "arm64", "--hugepages-32m", "2", "--hugepages-1g", "1"],
             ["--smp", "2", "--", "sh", "-c", "echo \"it's\"\tdone\\n"])

    @staticmethod
    def with_option(args, opt):
        """args with opt before the guest command (-- CMD), if any."""
        at = args.index("--") if "--" in args else len(args)
        return args[:at] + [opt] + args[at:]

    def config(self, *args):
        r = self.run_qemu(*self.with_option(list(args), "--print-config"),
                          files=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def test_config_is_what_a_boot_uses(self):
        for args in self.CASES:
            with self.subTest(args=args):
                cfg = self.config(*args)
                r = self.run_qemu(*self.with_option(args, "--dry-run"))
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertEqual(config_disagreements(cfg, r.stdout), [])

    def test_timeout(self):
        self.assertEqual(self.config()["timeout_s"], 900)
        self.assertEqual(self.config("--timeout", "77")["timeout_s"], 77)

    def test_pools_and_host_ram(self):
        cfg = self.config("--accel", "kvm", "--mem", "1G", "--hugepages", "8")
        self.assertEqual(cfg["pools"], [{"page_kb": 2048, "count": 8},
                                        {"page_kb": 1048576, "count": 0}])
        self.assertEqual((cfg["guest_ram"]["hugetlb"],
                          cfg["guest_ram"]["page_kb"],
                          cfg["guest_ram"]["size_mb"]), (True, 2048, 1024))
        cfg = self.config()
        self.assertEqual((cfg["accel"], cfg["host_pages"],
                          cfg["guest_ram"]["hugetlb"]), ("tcg", None, False))
        arm = self.config("--arch", "arm64")
        self.assertEqual([p["page_kb"] for p in arm["pools"]],
                         [p.kb for p in POOLS if "arm64" in p.arches])

    def test_a_config_that_drifts_from_the_boot_is_caught(self):
        """A run-qemu.sh whose memfd is sized off the guest's memory (a
        deliberate mismatch in a copy): the check above names it."""
        with open(RUN_QEMU) as f:
            text = f.read()
        bad = text.replace("memory-backend-memfd,id=ram0,size=${mem_mb}M",
                           "memory-backend-memfd,id=ram0,size=$((mem_mb + 2))M")
        self.assertNotEqual(bad, text)
        os.symlink(os.path.join(ROOT, "bench"), os.path.join(self.tmp.name, "bench"))
        script = os.path.join(self.tmp.name, "run-qemu.sh")
        with open(script, "w") as f:
            f.write(bad)
        os.chmod(script, 0o755)
        args = ["--accel", "kvm", "--mem", "1G"]
        env = dict(os.environ, RUN_QEMU_CPUINFO=self.cpuinfo, RUN_QEMU_KVM_DEV=self.kvm)
        cfg = json.loads(subprocess.run([script] + args + ["--print-config"], env=env,
                                        capture_output=True, text=True).stdout)
        r = subprocess.run([script, "--kernel", self.kernel, "--initrd", self.initrd]
                           + args + ["--dry-run"], env=env, capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(config_disagreements(cfg, r.stdout),
                         ["guest RAM: QEMU memory-backend-memfd,id=ram0,size=1026M,"
                          "hugetlb=on,hugetlbsize=2M,prealloc=on, config 1024 MB"])


if __name__ == "__main__":
    unittest.main()
