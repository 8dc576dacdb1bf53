#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Reliability and security of /dev/hugetlb, in the guest and around it.

    python3 -m tests.reliability --kernel K --initrd I [--arch arm64] [--seed S]
        [--stress-seconds 60] [--only NAME[,NAME...]]

Guest boots (each job runs with /proc/sys/kernel/panic_on_warn=1, and every
program under tests/stress/hguard, which checks that the huge page pools,
Committed_AS, kernel/tainted, the overcommit sysctls and the hugetlb cgroup
it ran in are back where they were):
  functional  tests/stress/hparity.c: pool exhaustion (ENOMEM at mmap against
              SIGBUS at fault), surplus pages, refault after MADV_DONTNEED
              (is the reservation given back?), overcommit_memory=2, hugetlb
              cgroup v2 max and rsvd.max, node modes and a non-root user,
              argument errors; /dev/hugetlb and MAP_HUGETLB must agree, at
              2 MB (and one 1 GB page) on x86_64, at each of 64 kB, 2 MB,
              32 MB and 1 GB on arm64 (hparity --every-size).
              tests/stress/hmapping.c: the mapping once made (fork,
              populate, MAP_SYNC, rounding, maps name, the pool after
              munmap and exit, mprotect/madvise/mremap, ia32 entry
              points), /dev/hugetlb against MAP_HUGETLB.  Then the
              hugetlb_dev kselftest under the same guard, and again
              SIGKILLed once its noexec tmpfs is mounted: nothing left.
  stress      tests/stress/hstress.c: seeded random operations by several
              processes for --stress-seconds, at every size with a pool
              (2 MB and 1 GB; arm64: 64 kB, 2 MB, 32 MB and 1 GB).
  fuzz        tests/stress/hfuzz.c: seeded random mmap() calls (flags, prot,
              length, offset, MAP_FIXED, size flags, noexec node,
              READ_IMPLIES_EXEC) by several processes for --stress-seconds,
              each on the device and as MAP_HUGETLB: equal outcomes, or
              the device's own documented error.
  qemu-client  an unmodified program that maps /dev/hugetlb by path:
              Debian's qemu-system-x86_64 (with its libraries and TCG
              module) takes its 64 MB of RAM from the pool with
              memory-backend-file,mem-path=/dev/hugetlb,align=2M: 32 pages
              in use while it runs, all back after; without align=2M it
              fails with EINVAL.
--arch arm64 boots the arm64 guest (run-qemu.sh --arch arm64) with the
programs cross-built (tests/stress/Makefile ARCH=arm64); it runs
functional, stress and fuzz, and records every other case as skipped,
saying why (ARM64_LEFT_OUT).
After each boot its console (build/reliability/<name>.console) is scanned
for BUG:, WARNING:, INFO:, KASAN, UBSAN, lockdep reports, "Bad page",
oopses and panics.  On a debug kernel (CONFIG_KASAN=y in its config) the
guest must also have booted with panic_on_warn=1.

Host side:
  docs        hugetlbpage.rst in the series says what LSMs and seccomp see.
  bench-hang  bench/run.py --run-qemu <wrapper that appends a hang to the
              guest job>: after the fault rows the guest hangs until
              run-qemu.sh's --timeout; the run must fail naming the
              timeout and keep every row.
  bench-panic  the same, but the guest kernel panics after the fault rows
              (OOM with vm.panic_on_oom=1): named, rows kept.
  bench-kill  QEMU SIGKILLed once the first rows are in: named, rows kept.
  bench-pool  bench/run.py asking for an impossible pool: a clear error.
  bench-exhausted  a 1-page pool: the hugetlb backings fail naming the
              pool, the devzero rows are kept.
  bench-signal  native bench/run.py killed by SIGINT and by SIGTERM mid-run:
              status "interrupted", rows kept, host sysctls restored
              (needs root; skipped otherwise).

Ends with "reliability: N passed, N failed, N skipped"; exit 1 on failure.
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time

from bench.contract import GUEST_FILES, QEMU_EXIT, QEMU_EXIT_REASON, SPLAT
from tests.harness import Tally
from bench.hostlock import HOST_LOCK

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "build", "reliability")
# Each architecture's build of tests/stress.
STRESS_BIN = {"x86_64": os.path.join(ROOT, "build", "stress"),
              "arm64": os.path.join(ROOT, "build", "stress-arm64")}
# Huge page pools (run-qemu.sh options) of each case.  arm64 has four
# sizes: hparity --every-size needs 2 free pages of each (its cgroup cases
# want a limit of at least one page below the pool), and stress and fuzz
# get the x86 pools plus 64 kB and 32 MB pages.
POOLS = {
    ("functional", "x86_64"): ["--hugepages", "16", "--hugepages-1g", "1"],
    ("functional", "arm64"): ["--hugepages-64k", "16", "--hugepages", "16",
                              "--hugepages-32m", "4", "--hugepages-1g", "2"],
    ("seeded", "x86_64"): ["--hugepages", "64", "--hugepages-1g", "1"],
    ("seeded", "arm64"): ["--hugepages-64k", "64", "--hugepages", "64",
                          "--hugepages-32m", "8", "--hugepages-1g", "1"],
}
# The cases --arch arm64 leaves out, and why.
ARM64_LEFT_OUT = {
    "docs": "reads the series' patches on the host, the same for both architectures: "
            "the x86_64 run checks them",
    "qemu-client": "the guest would need an arm64 build of QEMU and every library it "
                   "loads; this host has amd64 ones only",
    "bench-signal": "a native run on the host, which is x86_64",
}
for _b in ("bench-hang", "bench-panic", "bench-kill", "bench-pool", "bench-exhausted"):
    ARM64_LEFT_OUT[_b] = ("checks how bench/run.py handles a guest that fails, which does not "
                          "depend on the guest's architecture: the x86_64 run checks it")
TESTS = ("docs", "functional", "stress", "fuzz", "qemu-client", "bench-hang",
         "bench-panic", "bench-kill",
         "bench-pool", "bench-exhausted", "bench-signal")


def tail(text, n=15):
    return "\n".join(text.strip().splitlines()[-n:])


def is_debug_kernel(kernel):
    cfg = os.path.join(os.path.dirname(os.path.realpath(kernel)), "config")
    try:
        with open(cfg) as f:
            return "CONFIG_KASAN=y\n" in f.read()
    except OSError:
        return False


def build_programs(t, arch):
    r = subprocess.run(["make", "--no-print-directory", "-s", "-C",
                        os.path.join(ROOT, "tests", "stress"), "ARCH=" + arch,
                        "OUT=" + STRESS_BIN[arch]],
                       capture_output=True, text=True)
    return t.record("build tests/stress (static, %s)" % arch, r.returncode == 0,
                    tail(r.stdout + r.stderr))


def guest_boot(t, args, name, job, pool, timeout, smp=1):
    """Boot once and run job (a shell script) in the guest.  Each "ok - X"
    / "not ok - X" line it prints becomes a result; then the exit status,
    the console and the taint are checked.  Returns the guest's output."""
    console = os.path.join(OUT, name + ".console")
    progs = [os.path.join(STRESS_BIN[args.arch], p)
             for p in ("hguard", "hparity", "hmapping", "hstress", "hfuzz")]
    prologue = (
        'echo "@@ uptime at job start: $(cut -d" " -f1 /proc/uptime)"\n'
        'echo "@@ panic_on_warn at boot: $(cat /proc/sys/kernel/panic_on_warn)"\n'
        "echo 1 >/proc/sys/kernel/panic_on_warn\n"
        'taint0=$(cat /proc/sys/kernel/tainted)\n')
    epilogue = (
        '\nrc=$?\ntaint1=$(cat /proc/sys/kernel/tainted)\n'
        'echo "@@ tainted $taint0 -> $taint1"\n'
        'echo "@@ uptime at job end: $(cut -d" " -f1 /proc/uptime)"\nexit $rc\n')
    argv = [os.path.join(ROOT, "run-qemu.sh"), "--kernel", args.kernel,
            "--initrd", args.initrd, "--timeout", str(timeout),
            "--console-log", console, "--smp", str(smp), "--arch", args.arch] + pool
    for p in progs:
        argv += ["--add", p]
    argv += ["--", "sh", "-c", prologue + job + epilogue]
    start = time.time()
    try:
        r = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True,
                           timeout=timeout + 120)
        out, err, rc = r.stdout, r.stderr, r.returncode
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        err, rc = "run-qemu.sh itself did not return", 124
    took = time.time() - start
    with open(os.path.join(OUT, name + ".out"), "w") as f:
        f.write(out + "\n---- stderr ----\n" + err)
    for line in out.splitlines():
        if re.match(r"# (hstress|hparity|hmapping|hguard|hfuzz|FAIL|Totals)", line):
            print("  " + line, flush=True)
        m = re.match(r"^(ok|not ok) - (.*?)(?: # SKIP (.*))?$", line)
        if m:
            t.record("%s: %s" % (name, m.group(2)), m.group(1) == "ok",
                     m.group(3) or "", skip=m.group(3) is not None)
    cause = QEMU_EXIT_REASON.get(rc, "")
    t.record("%s: guest job exits 0" % name, rc == 0,
             "exit %d %s (%.0fs)%s" % (rc, cause, took,
                                       "\n" + tail(err) if rc else ""))
    try:
        with open(console, errors="replace") as f:
            text = f.read().replace("\r", "")
    except OSError:
        text = ""
    hits = [l for l in text.splitlines() if SPLAT.search(l)]
    t.record("%s: console clean (no BUG/WARNING/INFO/KASAN/UBSAN/lockdep/Bad page)" % name,
             bool(text) and not hits,
             "%d bad lines in %s, first: %s" % (len(hits), console, hits[:3])
             if hits else ("" if text else "no console log at " + console))
    m = re.search(r"^@@ tainted (\d+) -> (\d+)$", out, re.M)
    t.record("%s: /proc/sys/kernel/tainted unchanged" % name,
             m is not None and m.group(1) == m.group(2) == "0",
             m.group(0)[3:] if m else "the job did not get that far")
    if args.debug:
        m = re.search(r"^@@ panic_on_warn at boot: (\d+)$", out, re.M)
        t.record("%s: debug kernel booted with panic_on_warn=1" % name,
                 m is not None and m.group(1) == "1",
                 "panic_on_warn=%s" % (m.group(1) if m else "?"))
    up = re.findall(r"^@@ uptime at job (?:start|end): ([\d.]+)$", out, re.M)
    print("  %s: %.0fs in all%s" % (
        name, took, ", guest uptime %s s at job start, %s s at its end" % tuple(up)
        if len(up) == 2 else ""), flush=True)
    return out


def test_docs(t, args):
    path = os.path.join(ROOT, "kernel", "patches")
    text = ""
    for f in sorted(os.listdir(path)):
        if f.endswith(".patch"):
            with open(os.path.join(path, f), errors="replace") as fh:
                text += fh.read()
    m = re.search(r"\+\+\+ b/Documentation/admin-guide/mm/hugetlbpage.rst\n(.*?)(?=^diff --git|\Z)",
                  text, re.S | re.M)
    doc = re.sub(r"\n\+", " ", m.group(1)) if m else ""
    doc = re.sub(r"\s+", " ", doc)
    t.record("docs: hugetlbpage.rst says LSMs see open() of the node and, in "
             "security_mmap_file(), the device file, as for /dev/zero",
             re.search(r"``open\(\)`` of the device node and, in ``security_mmap_file\(\)``, "
                       r"the device file .* as for ``/dev/zero``", doc) is not None)
    t.record("docs: hugetlbpage.rst says seccomp sees mmap() with a file descriptor "
             "and no MAP_HUGETLB",
             re.search(r"seccomp filters see an ``mmap\(\)`` with a file descriptor "
                       r"and without ``MAP_HUGETLB``", doc, re.I) is not None)
    t.record("docs: hugetlbpage.rst documents mode 0666 of the nodes",
             "0666" in doc)
    t.record("docs: hugetlbpage.rst says a length that is not a multiple of the huge "
             "page size fails with EINVAL",
             re.search(r"``len`` must be a multiple of it.*fails with ``EINVAL`` otherwise",
                       doc) is not None)
    # v4: the core change is a fop_flags bit; no function pointer in fs.h
    fs_h = re.findall(r"\+\+\+ b/include/linux/fs.h\n(.*?)(?=^diff --git|\Z)", text,
                      re.S | re.M)
    added = [ln for hunk in fs_h for ln in hunk.splitlines()
             if ln.startswith("+") and not ln.startswith("+++")]
    t.record("docs: the series adds no function pointer to include/linux/fs.h "
             "(%d lines added there)" % len(added),
             not any("(*" in ln for ln in added) and
             re.search(r"^\+.*mmap_substitute", text, re.M) is None)


# The kselftest killed as the kselftest timeout kills it, once it has
# mounted its noexec tmpfs (its /proc/PID/mounts has a line more than
# ours had): our mounts must be as before, since the tmpfs lives in the
# test's own mount namespace; hguard checks the pools, sysctls and cgroup.
# The mount lives from the noexec checks to the end, a fraction of a
# second on a fast guest: it is looked for every 10 ms, and a run that
# ends before it is seen (a poll missed it; not what is tested) is said
# and run again, three times at most.
KSELFTEST_SIGKILL = (
    'm0=$(cat /proc/mounts); n0=$(wc -l </proc/mounts); '
    'for try in 1 2 3; do /selftests/hugetlb_dev >/dev/null & '
    'p=$!; i=0; while kill -0 $p 2>/dev/null && [ $i -lt 15000 ] && '
    '[ "$(cat /proc/$p/mounts 2>/dev/null | wc -l)" -le $n0 ]; do sleep 0.01; i=$((i + 1)); done; '
    'kill -9 $p 2>/dev/null; wait $p; rc=$?; [ $rc = 137 ] && break; '
    'echo "# hugetlb_dev ended with status $rc before its mount was seen (try $try of 3)"; done; '
    '[ "$(cat /proc/mounts)" = "$m0" ] && same=yes || same=no; '
    'echo "# hugetlb_dev: status $rc after SIGKILL, our mounts as before: $same"; '
    '[ $rc = 137 ] && [ $same = yes ]')


def test_functional(t, args):
    # hguard prints "ok - NAME" for the kselftest and its invariants; the
    # kselftest's own TAP lines are in build/reliability/functional.out.
    # (Nothing goes to a file: tmpfs pages count in Committed_AS.)
    every = " --every-size" if args.arch == "arm64" else ""
    job = ("hguard hparity hparity%s\nhguard hmapping hmapping\n"
           "hguard hugetlb_dev /selftests/hugetlb_dev\n"
           "hguard hugetlb_dev-SIGKILLed-with-its-noexec-mount sh -c '%s'"
           % (every, KSELFTEST_SIGKILL))
    timeout = 900 if args.debug else 400
    guest_boot(t, args, "functional", job, POOLS["functional", args.arch], timeout)


def seeded_program(t, args, name, prog):
    """hguard around one seeded run of prog (hstress or hfuzz) on 2 CPUs."""
    job = "hguard %s %s --seed %d --procs %d --seconds %d --ops %d" % (
        prog, prog, args.seed, args.procs, args.stress_seconds, args.ops)
    print("  %s: seed %d, %d processes, %d s; replay: python3 -m tests.reliability "
          "--kernel %s --initrd %s --arch %s --only %s --seed %d --stress-seconds %d"
          % (name, args.seed, args.procs, args.stress_seconds, args.kernel, args.initrd,
             args.arch, name, args.seed, args.stress_seconds), flush=True)
    timeout = args.stress_seconds + (600 if args.debug else 300)
    guest_boot(t, args, name, job, POOLS["seeded", args.arch], timeout, smp=2)


def test_stress(t, args):
    seeded_program(t, args, "stress", "hstress")


def test_fuzz(t, args):
    seeded_program(t, args, "fuzz", "hfuzz")


QEMU = "/usr/bin/qemu-system-x86_64"
QEMU_MODULES = "/usr/lib/x86_64-linux-gnu/qemu"
# The guest's QEMU: paused (-S), no devices, RAM from the node by path.
QEMU_JOB = r"""
tar -xf /add/qemu-client.tar -C /
export QEMU_MODULE_DIR=%(modules)s
free() { awk '/^HugePages_Free:/ { print $2 }' /proc/meminfo; }
obj=memory-backend-file,id=m,size=64M,mem-path=/dev/hugetlb,prealloc=on,share=off
run() {
	%(qemu)s -machine none -nodefaults -display none -S -object "$1" \
		>/tmp/qemu.out 2>&1 &
}
free0=$(free)
run "$obj,align=2M"
pid=$!
used=0
for i in $(seq 120); do
	used=$((free0 - $(free)))
	[ "$used" -ge 32 ] || ! kill -0 $pid 2>/dev/null && break
	sleep 1
done
sleep 2
used=$((free0 - $(free)))
if kill -0 $pid 2>/dev/null && [ "$used" = 32 ]; then
	echo "ok - QEMU with mem-path=/dev/hugetlb,align=2M holds 32 pool pages"
else
	echo "not ok - QEMU with mem-path=/dev/hugetlb,align=2M holds $used pool pages, expected 32"
	sed 's/^/# qemu: /' /tmp/qemu.out
fi
kill $pid
wait $pid
after=$(free)
[ "$after" = "$free0" ] && ok=ok || ok="not ok"
echo "$ok - HugePages_Free back to $free0 after QEMU exits (is $after)"
run "$obj"
pid=$!
for i in $(seq 60); do
	kill -0 $pid 2>/dev/null || break
	sleep 1
done
if kill -0 $pid 2>/dev/null; then
	kill $pid
	echo "not ok - QEMU without align=2M still runs, expected EINVAL"
elif grep -q "Invalid argument" /tmp/qemu.out; then
	echo "ok - QEMU without align=2M fails with EINVAL"
else
	echo "not ok - QEMU without align=2M: $(head -c 300 /tmp/qemu.out)"
fi
"""


def qemu_bundle():
    """Debian's QEMU, its TCG module and every library ldd names for them,
    as an uncompressed tar to unpack at / in the guest; (path, error)."""
    accel = os.path.join(QEMU_MODULES, "accel-tcg-x86_64.so")
    for f in (QEMU, accel):
        if not os.path.exists(f):
            return None, "%s is missing: install Debian's qemu-system-x86 (make deps)" % f
    r = subprocess.run(["ldd", QEMU, accel], capture_output=True, text=True)
    libs = sorted(set(re.findall(r"\s(/\S+) \(0x", r.stdout)))
    tar = os.path.join(OUT, "qemu-client.tar")
    r = subprocess.run(["tar", "-chf", tar, "-P", QEMU, accel] + libs,
                       capture_output=True, text=True)
    return (tar, "") if r.returncode == 0 else (None, "tar: " + tail(r.stderr))


def test_qemu_client(t, args):
    tar, err = qemu_bundle()
    if not t.record("qemu-client: bundle QEMU for the guest", tar is not None, err):
        return
    args_pool = ["--hugepages", "40", "--add", tar]
    guest_boot(t, args, "qemu-client", QEMU_JOB % {"qemu": QEMU, "modules": QEMU_MODULES},
               args_pool, 900 if args.debug else 300)


def bench_run(args, extra, name, popen=False):
    results = os.path.join(OUT, "results-" + name)
    os.makedirs(results, exist_ok=True)
    before = set(os.listdir(results))
    argv = [sys.executable, "-m", "bench.run", "--profile", "tiny",
            "--results-dir", results] + extra
    if popen:
        return argv, results, before
    r = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=900)
    return r, new_run_dir(results, before)


def new_run_dir(results, before):
    runs = sorted(d for d in set(os.listdir(results)) - before if d != "latest")
    return os.path.join(results, runs[-1]) if runs else None


def read_meta(run):
    try:
        with open(os.path.join(run, "meta.json")) as f:
            return json.load(f)
    except (OSError, TypeError, ValueError):
        return {}


def csv_rows(run, bench):
    try:
        with open(os.path.join(run, bench + ".csv")) as f:
            return [l for l in f.read().splitlines()[1:] if l.strip()]
    except (OSError, TypeError):
        return []


def wait_for_fault_rows(proc, results, before, timeout):
    """Polls until the bench/run.py process proc has written its first
    fault rows, has ended, or timeout seconds have passed; returns its
    run folder (None if there is none yet)."""
    deadline, run = time.time() + timeout, None
    while time.time() < deadline and proc.poll() is None:
        run = run or new_run_dir(results, before)
        if run and csv_rows(run, "fault"):
            break
        time.sleep(0.05)
    return run


def collect(proc, timeout):
    """proc's (stdout, stderr) once it has ended; killed after timeout s."""
    try:
        return proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.communicate()


def job_wrapper(name, comment, more):
    """A run-qemu.sh for bench/run.py's --run-qemu that appends the shell
    text more to the guest job (its last argument) and runs the real one.
    ("--" cannot travel in --qemu-arg: argparse drops it.)  more lands in
    double quotes on the host: no "$" in it."""
    wrapper = os.path.join(OUT, "run-qemu-then-%s.sh" % name)
    with open(wrapper, "w") as f:
        f.write('#!/bin/bash\n# run-qemu.sh whose guest %s after its job\n'
                'set -- "${@:1:$#-1}" "${!#}; %s"\nexec %s "$@"\n'
                % (comment, more, os.path.join(ROOT, "run-qemu.sh")))
    os.chmod(wrapper, 0o755)
    return wrapper


GUEST_FAULT = ["--mode", "guest", "--benches", "fault", "--backings", "devzero,maphugetlb"]


def guest_fault_args(args, extra):
    return GUEST_FAULT + ["--kernel", args.kernel, "--initrd", args.initrd] + extra


def check_failed_run(t, name, cause, r, run, want_error, rows_before=None):
    """A guest run that went wrong: failed status, the cause named in
    meta.json and on the terminal, and the rows written before it kept."""
    meta = read_meta(run)
    rows = csv_rows(run, "fault")
    out = r.stdout + r.stderr
    t.record("%s: bench/run.py fails when %s (exit != 0, status failed)" % (name, cause),
             r.returncode != 0 and meta.get("status") == "failed",
             "exit %d, status %r" % (r.returncode, meta.get("status")))
    t.record("%s: the error names the cause (%s)" % (name, want_error),
             any(want_error in e for e in meta.get("errors", [])) and want_error in out,
             "meta.json errors %r" % meta.get("errors"))
    if rows_before is None:
        t.record("%s: rows completed before it are kept (fault.csv, both backings)" % name,
                 any(l.startswith("devzero,") for l in rows)
                 and any(l.startswith("maphugetlb,") for l in rows),
                 "%d rows in %s" % (len(rows), run))
    else:
        t.record("%s: the %d fault rows written before it are kept" % (name, rows_before),
                 rows_before > 0 and len(rows) >= rows_before,
                 "%d rows in %s" % (len(rows), run))


def test_bench_hang(t, args):
    """The guest runs the real fault benchmark, then hangs."""
    timeout = 120 if args.debug else 60
    wrapper = job_wrapper("hang", "hangs",
                          "echo 'guest: job done, now hanging'; sleep 100000")
    r, run = bench_run(args, guest_fault_args(args, [
        "--run-qemu", wrapper, "--qemu-arg=--timeout", "--qemu-arg=%d" % timeout]), "hang")
    check_failed_run(t, "bench-hang", "the guest hangs", r, run, "guest timed out")


def test_bench_panic(t, args):
    """The guest runs the real fault benchmark, then its kernel panics: a
    real panic, from the OOM killer with vm.panic_on_oom=1 (no sysrq in
    the tinyconfig kernel), under overcommit_memory=1 so that 16 x 256 MB
    of dd buffers outgrow the guest's RAM."""
    wrapper = job_wrapper(
        "panic", "panics (out of memory, panic_on_oom=1)",
        "echo 1 >/proc/sys/vm/panic_on_oom; echo 1 >/proc/sys/vm/overcommit_memory; "
        "for i in %s; do dd if=/dev/zero of=/dev/null bs=256M count=100000 & done; wait"
        % " ".join(str(i) for i in range(16)))
    r, run = bench_run(args, guest_fault_args(args, [
        "--run-qemu", wrapper, "--qemu-arg=--timeout", "--qemu-arg=600"]), "panic")
    check_failed_run(t, "bench-panic", "the guest kernel panics", r, run,
                     "guest kernel panic")


def descendants(pid):
    """pid's descendant processes, as {pid: comm}, from /proc."""
    parent, comm = {}, {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                stat = f.read()
        except (OSError, ValueError):
            continue
        # comm may hold spaces: the fields after it start past the last ")".
        parent[int(d)] = int(stat[stat.rindex(")") + 2:].split()[1])
        comm[int(d)] = stat[stat.index("(") + 1:stat.rindex(")")]
    found, todo = {}, [pid]
    while todo:
        p = todo.pop()
        for c, pp in parent.items():
            if pp == p and c not in found:
                found[c] = comm[c]
                todo.append(c)
    return found


def test_bench_kill(t, args):
    """QEMU is SIGKILLed (as the OOM killer or a user would) once the
    guest has written its first rows."""
    # A chase after the fault rows (the later --benches wins), so that
    # there is time to kill it.
    argv, results, before = bench_run(args, guest_fault_args(args, [
        "--benches", "fault,chase", "--sizes", "64M",
        "--qemu-arg=--timeout", "--qemu-arg=600"]), "kill", popen=True)
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    run, killed = wait_for_fault_rows(proc, results, before, 300), []
    if csv_rows(run, "fault"):
        killed = [p for p, c in descendants(proc.pid).items()
                  if c.startswith("qemu-system")]
        for p in killed:
            os.kill(p, signal.SIGKILL)
    rows_then = len(csv_rows(run, "fault"))
    out, err = collect(proc, 120)
    if not killed:
        t.record("bench-kill: QEMU killed mid-run", False,
                 "the run ended before its first rows, or no QEMU process was "
                 "found: %s" % tail(out + err, 5))
        return
    r = subprocess.CompletedProcess(argv, proc.returncode, out, err)
    check_failed_run(t, "bench-kill", "QEMU is killed mid-run", r,
                     run or new_run_dir(results, before),
                     "guest died without reporting a status", rows_then)


def test_bench_pool(t, args):
    """A pool the guest's RAM cannot hold on paper is refused before any
    boot (run-qemu.sh's own check, through bench/run.py's dry run): no run
    folder.  One that fits on paper but not in the guest (a 1 GB page in
    2 GB of x86_64 RAM, none of it 1 GB-aligned above 4 GB; the same
    boot as tests/run.py's) fails the run with run-qemu.sh's error."""
    r, run = bench_run(args, guest_fault_args(args, ["--qemu-arg=" + a for a in (
        "--hugepages", "100000", "--mem", "1G", "--timeout", "300")]), "pool")
    out = r.stdout + r.stderr
    t.record("bench-pool: a pool larger than the guest is refused before a boot",
             r.returncode == 2 and run is None
             and "raise --mem or ask for fewer pages" in r.stderr,
             "exit %d, run folder %s; output: %s" % (r.returncode, run, tail(out, 5)))
    r, run = bench_run(args, guest_fault_args(args, ["--qemu-arg=" + a for a in (
        "--hugepages-1g", "1", "--mem", "2G", "--timeout", "300")]), "pool")
    meta = read_meta(run)
    out = r.stdout + r.stderr
    t.record("bench-pool: a pool the guest cannot preallocate fails the run with a clear error",
             r.returncode != 0 and meta.get("status") == "failed"
             and any("could not be preallocated" in e for e in meta.get("errors", []))
             and "could not be preallocated" in out,
             "exit %d, status %r, errors %r; output: %s"
             % (r.returncode, meta.get("status"), meta.get("errors"), tail(out, 5)))


def test_bench_exhausted(t, args):
    """A pool too small for the hugetlb backings (1 page; the fault
    benchmark maps 4 MB): they fail, each saying why, devzero is kept."""
    r, run = bench_run(args, guest_fault_args(args, [
        "--backings", "devzero,maphugetlb,devhugetlb",
        "--qemu-arg=--hugepages", "--qemu-arg=1"]), "exhausted")
    meta = read_meta(run)
    backings = meta.get("backings", {})
    rows = csv_rows(run, "fault")
    t.record("bench-exhausted: bench/run.py fails when the pool runs out (exit != 0, status failed)",
             r.returncode != 0 and meta.get("status") == "failed",
             "exit %d, status %r" % (r.returncode, meta.get("status")))
    for b in ("maphugetlb", "devhugetlb"):
        reason = backings.get(b, {}).get("reason", "")
        t.record("bench-exhausted: %s failed, naming the cause" % b,
                 backings.get(b, {}).get("status") == "failed"
                 and "insufficient huge pages" in reason and reason in r.stderr + r.stdout,
                 "%r" % backings.get(b))
    t.record("bench-exhausted: the devzero rows are kept",
             backings.get("devzero", {}).get("status") == "measured"
             and any(l.startswith("devzero,") for l in rows),
             "%d rows in %s" % (len(rows), run))


HOST_SYSCTLS = ["/proc/sys/vm/nr_hugepages", "/proc/sys/vm/nr_overcommit_hugepages",
                "/proc/sys/vm/overcommit_memory",
                "/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages"]


def host_sysctls():
    vals = {}
    for p in HOST_SYSCTLS:
        try:
            with open(p) as f:
                vals[p] = f.read().strip()
        except OSError:
            pass
    return vals


def test_bench_signal(t, args):
    if os.geteuid() != 0:
        t.record("bench-signal: native run killed mid-run restores the host's sysctls",
                 True, "needs root", skip=True)
        return
    if not all(os.access(os.path.join(ROOT, "build", "bench", b), os.X_OK)
               for b in ("fault", "chase")):
        t.record("bench-signal: native run killed mid-run", False,
                 "build/bench/{fault,chase} missing: run 'make initramfs' first")
        return
    # Held from the snapshot of the settings to the check that they came
    # back: another suite raising the pool meanwhile (the bench suite of a
    # parallel make) would make "restored" false.  bench/run.py, started
    # from here, finds its ancestor holding it and does not wait.
    HOST_LOCK.acquire("reliability bench-signal")
    try:
        signal_runs(t, args)
    finally:
        HOST_LOCK.release()


def signal_runs(t, args):
    for sig in (signal.SIGINT, signal.SIGTERM):
        name = "SIG" + ("INT" if sig == signal.SIGINT else "TERM")
        sizes = "64M"
        for attempt in range(3):
            saved = host_sysctls()
            argv, results, before = bench_run(
                args, ["--mode", "native", "--benches", "fault,chase",
                       "--backings", "devzero,maphugetlb", "--sizes", sizes],
                "signal", popen=True)
            # A shell without job control starts background commands with
            # SIGINT ignored, and bench/run.py leaves an ignored signal
            # ignored: give the run SIGINT's default back.
            proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, text=True,
                                    preexec_fn=lambda: signal.signal(
                                        signal.SIGINT, signal.SIG_DFL))
            # Mid-run: the pool was raised and the first rows are written.
            run = wait_for_fault_rows(proc, results, before, 120)
            raised = host_sysctls() != saved
            rows_then = len(csv_rows(run, "fault"))
            # Then more of the same, as an impatient user would send: they
            # must not cut the cleanup short.
            for _ in range(50):
                proc.send_signal(sig)
                if proc.poll() is not None:
                    break
                time.sleep(0.02)
            out, _ = collect(proc, 60)
            run = run or new_run_dir(results, before)
            meta = read_meta(run)
            if meta.get("status") == "complete":
                sizes = {"64M": "256M", "256M": "512M"}.get(sizes, sizes)
                continue        # finished before the signal: make it longer
            after = host_sysctls()
            t.record("bench-signal: %s mid-run: status interrupted, exit 130" % name,
                     proc.returncode == QEMU_EXIT["INTERRUPTED"][0]
                     and meta.get("status") == "interrupted",
                     "exit %s, status %r; %s" % (proc.returncode, meta.get("status"),
                                                tail(out, 3)))
            t.record("bench-signal: %s mid-run: the %d fault rows written before it are kept"
                     % (name, rows_then),
                     rows_then > 0 and len(csv_rows(run, "fault")) >= rows_then)
            t.record("bench-signal: %s mid-run: host sysctls restored%s"
                     % (name, " (the pool had been raised)" if raised else ""),
                     after == saved, "before %r after %r" % (saved, after))
            break
        else:
            t.record("bench-signal: %s mid-run" % name, False,
                     "the run always finished before the signal, or ignored it")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", default="x86_64", choices=("x86_64", "arm64"),
                    help="the guest's architecture (default x86_64)")
    ap.add_argument("--kernel", help="default build/kernel/bzImage (arm64: Image-arm64)")
    ap.add_argument("--initrd",
                    help="default build/initramfs.cpio (arm64: initramfs-arm64.cpio)")
    ap.add_argument("--seed", type=int, default=int(os.environ.get("RELIABILITY_SEED", "1")))
    ap.add_argument("--stress-seconds", type=int, default=60)
    ap.add_argument("--procs", type=int, default=4)
    ap.add_argument("--ops", type=int, default=1000000,
                    help="operations per stress process at most")
    ap.add_argument("--only", help="comma list of: " + ",".join(TESTS))
    args = ap.parse_args()
    args.kernel = os.path.abspath(args.kernel or os.path.join(ROOT, GUEST_FILES[args.arch][0]))
    args.initrd = os.path.abspath(args.initrd or os.path.join(ROOT, GUEST_FILES[args.arch][1]))
    args.debug = is_debug_kernel(args.kernel)
    only = args.only.split(",") if args.only else TESTS
    bad = [x for x in only if x not in TESTS]
    if bad:
        ap.error("unknown test %s" % bad)
    os.makedirs(OUT, exist_ok=True)
    print("reliability: %s kernel %s (%s), initrd %s" % (
        args.arch, args.kernel, "debug" if args.debug else "normal", args.initrd), flush=True)
    start = time.time()
    t = Tally()
    guest_ok = all(os.path.exists(p) for p in (args.kernel, args.initrd))
    left_out = ARM64_LEFT_OUT if args.arch == "arm64" else {}
    for name in [x for x in only if x in left_out]:
        t.record("%s (arm64)" % name, True, left_out[name], skip=True)
    only = [x for x in only if x not in left_out]
    needs_guest = set(TESTS) - {"docs", "bench-signal"}
    if not guest_ok and needs_guest & set(only):
        t.record("kernel and initramfs present", False,
                 "missing %s or %s: run 'make kernel initramfs%s'" % (
                     args.kernel, args.initrd, " ARCH=arm64" if args.arch == "arm64" else ""))
    built = (build_programs(t, args.arch)
             if {"functional", "stress", "fuzz", "qemu-client"} & set(only) else True)
    for name in only:
        if name in needs_guest and not guest_ok:
            continue
        if name in ("functional", "stress", "fuzz", "qemu-client") and not built:
            continue
        t0 = time.time()
        print("== %s" % name, flush=True)
        {"docs": test_docs, "functional": test_functional, "stress": test_stress,
         "fuzz": test_fuzz, "qemu-client": test_qemu_client,
         "bench-hang": test_bench_hang, "bench-panic": test_bench_panic,
         "bench-kill": test_bench_kill, "bench-pool": test_bench_pool,
         "bench-exhausted": test_bench_exhausted,
         "bench-signal": test_bench_signal}[name](t, args)
        print("  (%s took %.0fs)" % (name, time.time() - t0), flush=True)
    print("reliability: took %.0fs on the %s %s kernel" % (
        time.time() - start, args.arch, "debug" if args.debug else "normal"))
    return t.summary("reliability: ")


if __name__ == "__main__":
    sys.exit(main())
