#!/usr/bin/env python3
"""`make test`: every test of the project, ending with `N passed, N failed`.

Stages, in order; a stage that cannot run counts as failed, never as passed:
  1. host unit tests (tests/host, and the bench, plots and compare suites;
     normal kernel only: they do not depend on the kernel);
  2. build the kernel and initramfs (`make kernel initramfs`);
  3. checkpatch --strict on every patch of the series (normal kernel only);
  4. the guest runner's own behaviour (exit status, --add, pool shortfall,
     timeout), each a short boot (normal kernel only);
  5. the kselftests in the guest: hugetlb_dev (64-bit, and built -m32 as
     hugetlb_dev_32) and the upstream hugetlb tests, with a pool check
     around each;
  6. reliability and security in the guest (tests/reliability.py): stress,
     pool exhaustion, overcommit, permissions, cgroup limits, and the bench
     suite when a guest hangs, panics, is killed or runs out of huge pages;
  6b. the path clients (tests/pathcase/run.py): QEMU and fio, unmodified,
     as an unprivileged user, given huge pages through the device, a
     hugetlbfs mount, a memfd with a wrapper and THP (both kernels);
  7. check-regression: the deterministic (icount) mmap and fault cost of
     the series against the committed baseline;
  8. the benchmark suite's guest test (tests/bench/guest_test.sh);
  9. a LAVA job through lava-run, LAVA's dispatcher without a server
     (tests/lava_run_test.py: the tiny job of lava/job.py on a qemu
     device, fetched back with lava/fetch.py; about 3 minutes).

With --arch arm64 (make test ARCH=arm64) it runs what depends on the
arm64 guest: stages 1 (tests/host only; --no-host-tests leaves them to the
x86_64 run, and the bench suite's arm64 cross-build checks, which need this
pass's toolchain), 2, 4, 5 (hugetlb_dev for each of the four huge page sizes, no
32-bit build, and the upstream tests) and 6 (functional, stress and fuzz,
with ARM64_STRESS_SECONDS); checkpatch reads the same patches for both
architectures and is left to the x86_64 run; 7 and 8 need the benchmarks,
which are x86_64 programs; 9 runs the x86_64 job.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

from bench.contract import GUEST_FILES, QEMU_EXIT
from tests.harness import ONE_TEST, Tally, discover, parse_summary, unittest_counts

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The guest test pool: 256 x 2 MB covers the 256 MB upstream tests; one
# 1 GB page gives /dev/hugetlb-1048576kB something to map.
GUEST_POOL = ["--hugepages", "256", "--hugepages-1g", "1"]
# reliability.py's cases whose outcome depends on the kernel: the only ones
# the debug kernel's make test runs.
KERNEL_RELIABILITY = ("functional", "stress", "fuzz", "qemu-client")
# arm64 has two more sizes: a few pages of each for hugetlb_dev's checks.
GUEST_POOL_ARM64 = GUEST_POOL + ["--hugepages-64k", "64", "--hugepages-32m", "4"]
# The stress and fuzz programs' time in the arm64 make test.  Under TCG on
# this project's 2-core machine (wall time, other jobs running), 20 s of
# hstress did 10,500 to 15,700 operations in the arm64 guest (4 processes,
# 2 CPUs) and 30 s did 4,300 in the x86_64 one, whose make test gives it
# 60 s: 20 s on arm64 does about as much as the x86_64 run.
ARM64_STRESS_SECONDS = 20


def run(argv, timeout=None, **kw):
    return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, **kw)


def host_unit_tests(tally):
    print("== host unit tests (tests/host)", flush=True)
    counts = unittest_counts(discover(os.path.join(ROOT, "tests", "host")),
                             verbosity=1)
    tally.add_counts("host unit tests (tests/host)", *counts)


def suite_with_summary(tally, name, argv, timeout):
    """Run a suite that ends with its own `N passed, N failed` line."""
    print("== %s" % name, flush=True)
    try:
        r = subprocess.run(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        tally.record(name, False, "no result within %ds" % timeout)
        return
    sys.stdout.write(r.stdout)
    counts = parse_summary(r.stdout)
    if counts is None:
        tally.record(name, False, "exit %d and no 'N passed, N failed' line" % r.returncode)
        return
    passed, failed, skipped = counts
    if r.returncode != 0 and failed == 0:
        failed = 1
    tally.add_counts(name, passed, failed, skipped)


def build(tally, make_args):
    print("== building kernel and initramfs", flush=True)
    start = time.time()
    r = subprocess.run(["make", "--no-print-directory", "kernel", "initramfs"] + make_args,
                       cwd=ROOT)
    tally.record("build kernel and initramfs", r.returncode == 0,
                 "%.0fs" % (time.time() - start))
    return r.returncode == 0


def checkpatch(tally):
    r = run(["kernel/checkpatch.sh"])
    for line in r.stdout.splitlines():
        m = re.match(r"checkpatch: (clean|NOT clean): (\S+)", line)
        if m:
            tally.record("checkpatch --strict %s" % m.group(2), m.group(1) == "clean")
    if r.returncode != 0 and "NOT clean" not in r.stdout:
        tally.record("checkpatch", False, (r.stdout + r.stderr).strip()[-500:])
    elif r.returncode != 0:
        print(r.stdout)


def guest(args, cmd, timeout=300, extra=()):
    argv = ["./run-qemu.sh", "--kernel", args.kernel, "--initrd", args.initrd,
            "--timeout", str(timeout)] + list(extra)
    if args.arch != "x86_64":
        argv += ["--arch", args.arch]
    if cmd:
        argv += ["--"] + cmd
    return run(argv, timeout=timeout + 60)


def guest_harness(tally, args):
    """run-qemu.sh's promises, each checked with a real boot."""
    r = guest(args, ["sh", "-c", "echo hello from $HUGETLB_ACCEL; exit 7"], 120)
    tally.record("guest: CMD output and exit status come back",
                 r.returncode == 7 and re.search(r"^hello from (tcg|kvm)$", r.stdout, re.M),
                 "exit %d, stdout %r" % (r.returncode, r.stdout[-200:]))

    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "probe.sh")
        with open(script, "w") as f:
            f.write("#!/bin/sh\necho probe ran; grep -E 'HugePages_(Total|Free)' /proc/meminfo\n")
        os.chmod(script, 0o755)
        r = guest(args, ["probe.sh"], 120, ["--add", script, "--hugepages", "8"])
    tally.record("guest: --add keeps the run bit, /add is on PATH, pool preallocated",
                 r.returncode == 0 and "probe ran" in r.stdout
                 and re.search(r"HugePages_Total:\s+8\b", r.stdout) is not None,
                 "exit %d, stdout %r" % (r.returncode, r.stdout[-300:]))

    # Fits the RAM on paper, but 1 GB pages need 1 GB-aligned RAM above 4 GB
    # (x86_64), or a gigabyte free of the kernel, the initramfs and the
    # early allocations (arm64, whose 2 GB of RAM start at 1 GB).
    r = guest(args, ["echo", "SHOULD-NOT-RUN"], 120, ["--hugepages-1g", "1", "--mem", "2G"])
    tally.record("guest: a pool that cannot be preallocated fails before the job",
                 r.returncode == QEMU_EXIT["NOPOOL"][0] and "SHOULD-NOT-RUN" not in r.stdout
                 and "could not be preallocated" in r.stderr,
                 "exit %d, stderr %r" % (r.returncode, r.stderr[-300:]))

    r = guest(args, ["sleep", "600"], 15)
    tally.record("guest: a hung guest is killed after --timeout with the console tail",
                 r.returncode == QEMU_EXIT["TIMEOUT"][0] and "last 40 console lines" in r.stderr,
                 "exit %d" % r.returncode)


def nested_points(lines, test):
    """The TAP points test printed inside its run-selftests section."""
    section = None
    points = []
    for l in lines:
        m = re.match(r"^# ---- (\S+) ----$", l)
        if m:
            section = m.group(1)
        elif section == test and re.match(r"^# (not )?ok .*\bhugetlb(-\d+kB)?: ", l):
            points.append(l[2:])
    return points


def kselftests(tally, args):
    print("== kselftests in the guest", flush=True)
    r = guest(args, None, 1200, GUEST_POOL_ARM64 if args.arch == "arm64" else GUEST_POOL)
    sys.stdout.write(r.stdout)
    if r.returncode not in (0, 1):
        sys.stdout.write(r.stderr)
    lines = r.stdout.splitlines()
    # The points of hugetlb_dev and of its 32-bit build (x86_64 only), one
    # by one ("# ok 3 hugetlb: ..." nested in the section "# ---- NAME ----").
    for name in ("hugetlb_dev", "hugetlb_dev_32") if args.arch == "x86_64" else ("hugetlb_dev",):
        points = nested_points(lines, name)
        if not points:
            tally.record("%s: its own points" % name, False, "none in the guest's output")
        tally.record_tap(name + ": ", points)
    if tally.record_tap("kselftest ", lines) == 0 or r.returncode not in (0, 1):
        tally.record("kselftests in the guest", False,
                     "guest exit %d; %s" % (r.returncode, r.stderr.strip()[-500:]))

    # With no 1 GB pool, /dev/hugetlb-1048576kB must fail with ENOMEM: the
    # main run has both pools, so this point needs a boot of its own.
    r = guest(args, ["hugetlb_dev"], 600, ["--hugepages", "64"])
    empty = [l for l in r.stdout.splitlines()
             if re.search(r"hugetlb-1048576kB: .*pool has free fails with ENOMEM", l)]
    tally.record("hugetlb_dev without a 1 GB pool: empty pool fails with ENOMEM",
                 r.returncode == 0 and len(empty) == 1 and empty[0].startswith("ok ")
                 and "SKIP" not in empty[0],
                 "exit %d, %r" % (r.returncode, empty))


def check_regression(tally):
    """The series' mmap and fault paths against results/baseline (icount)."""
    print("== check-regression", flush=True)
    r = subprocess.run(["make", "--no-print-directory", "check-regression"], cwd=ROOT,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=1200)
    sys.stdout.write(r.stdout)
    tally.record("check-regression against results/baseline", r.returncode == 0,
                 "exit %d" % r.returncode)


def arm64(tally, args, make_args):
    """make test ARCH=arm64: what depends on the arm64 guest, and the host
    unit tests unless told they ran in the x86_64 make test (CI runs both:
    HOST_TESTS=0).  checkpatch reads the same patches on both, so it is
    left to the x86_64 run always."""
    if args.no_host_tests:
        print("(arm64: the host unit tests run with the x86_64 make test: HOST_TESTS=0)")
    else:
        host_unit_tests(tally)
    print("(arm64: checkpatch runs with the x86_64 make test: the series is the same)")
    # The cross-built benchmarks' own checks (register-only mlp loops, one
    # streamk thread) need the arm64 toolchain, which only this pass's make
    # deps installs: where the bench unit suite ran without it, they skipped.
    suite_with_summary(tally, "bench unit tests of the arm64 cross build",
                       ["make", "--no-print-directory", "test-bench", "ONLY=test_arm64"], 900)
    if build(tally, make_args + ["ARCH=arm64"]):
        guest_harness(tally, args)
        kselftests(tally, args)
        suite_with_summary(tally, "reliability and security in the arm64 guest",
                           ["python3", "-m", "tests.reliability", "--arch", "arm64",
                            "--kernel", args.kernel, "--initrd", args.initrd,
                            "--stress-seconds", str(ARM64_STRESS_SECONDS)], 1800)
        suite_with_summary(tally, "bench guest test (arm64)",
                           [os.path.join(ROOT, "tests", "bench", "guest_test.sh"),
                            "--arch", "arm64", "--kernel", args.kernel,
                            "--initrd", args.initrd], 1500)
    else:
        tally.record("guest tests", False, "not run: the build failed")
    print("(arm64: the bench, plots and compare unit suites are host tests of the x86_64 "
          "make test; check-regression's baseline is the x86_64 guest's)")
    return tally.summary()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kernel", help="default build/kernel/bzImage (arm64: Image-arm64)")
    ap.add_argument("--initrd",
                    help="default build/initramfs.cpio (arm64: initramfs-arm64.cpio)")
    ap.add_argument("--make-args", default="")
    ap.add_argument("--variant", default="bzImage",
                    help="bzImage, or bzImage-debug for the debug kernel")
    ap.add_argument("--arch", default="x86_64", choices=("x86_64", "arm64"),
                    help="the guest's architecture")
    ap.add_argument("--no-host-tests", action="store_true",
                    help="leave the host unit suites to another run (make test-fresh, "
                    "or the x86_64 make test for arm64)")
    args = ap.parse_args()
    args.kernel = args.kernel or GUEST_FILES[args.arch][0]
    args.initrd = args.initrd or GUEST_FILES[args.arch][1]
    make_args = [a for a in args.make_args.split() if not a.endswith("=")]

    tally = Tally()
    print(ONE_TEST, flush=True)
    if args.arch == "arm64":
        return arm64(tally, args, make_args)

    normal = args.variant == "bzImage"
    reliability = ["python3", "-m", "tests.reliability", "--kernel", args.kernel,
                   "--initrd", args.initrd]
    if normal and args.no_host_tests:
        print("(the host, bench, plots and compare unit suites are left to another run: "
              "HOST_TESTS=0; .ci/run runs them in make test-fresh's new root)")
    elif normal:
        host_unit_tests(tally)
        suite_with_summary(tally, "bench unit tests", ["make", "--no-print-directory", "test-bench"], 900)
        suite_with_summary(tally, "plots tests", ["make", "--no-print-directory", "test-plots"], 600)
        suite_with_summary(tally, "compare unit tests", ["make", "--no-print-directory", "test-compare"], 600)
    else:
        # What does not depend on the kernel runs once, with the normal
        # kernel's make test (.ci/run runs both): the host unit suites,
        # checkpatch, run-qemu.sh's own behaviour, the docs check of the
        # patches, and the suite's handling of hung, killed and starved guests.
        print("(debug kernel: the host unit tests, checkpatch, the guest runner's "
              "checks and reliability's docs and bench-* cases run with `make test`, the "
              "normal kernel)")
        reliability += ["--only", ",".join(KERNEL_RELIABILITY)]
    if build(tally, make_args):
        if normal:
            checkpatch(tally)
            guest_harness(tally, args)
        kselftests(tally, args)
        suite_with_summary(tally, "reliability and security in the guest", reliability, 3600)
        suite_with_summary(tally, "path clients in the guest",
                           ["python3", "-m", "tests.pathcase.run", "--kernel", args.kernel,
                            "--initrd", args.initrd, "--timeout", "900" if normal else "1800",
                            "--wait", "90" if normal else "300"],
                           2000)
        if normal:
            check_regression(tally)
            guest_test = os.path.join(ROOT, "tests", "bench", "guest_test.sh")
            suite_with_summary(tally, "bench guest test", [guest_test, "--kernel", args.kernel,
                                                           "--initrd", args.initrd], 1500)
            suite_with_summary(tally, "a LAVA job through lava-run",
                               ["python3", "-m", "tests.lava_run_test", "--kernel", args.kernel,
                                "--initrd", args.initrd], 1800)
        else:
            # The baseline and the benchmark checks are about the normal
            # kernel; the debug kernel's job is the functional and stress tests.
            print("(debug kernel: check-regression and the bench guest test run "
                  "with the normal kernel only)")
    else:
        tally.record("guest tests", False, "not run: the build failed")

    return tally.summary()


if __name__ == "__main__":
    sys.exit(main())
