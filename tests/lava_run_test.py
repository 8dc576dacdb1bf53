#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""make test's LAVA stage: the tiny job of lava/job.py for LAVA's qemu
device, run by lava-run alone (LAVA's own dispatcher, no server), then
fetched back with lava/fetch.py.

    python3 -m tests.lava_run_test [--kernel K] [--initrd I] [--keep DIR]

Checks: the stock initramfs without /job takes its job from the kernel
command line (an unknown step refused); the job is valid for LAVA's
schema; the stock initramfs booted
without /job (the command line's hugetlb.job=shell) and LAVA's test shell
ran the job; LAVA completed it and recorded a test case for every result
line, none failed; the folder fetched from the log has every @row the
guest printed and status complete.  Ends with `N passed, N failed`.
Needs lava-dispatcher and lava-common (make deps) and a built kernel and
initramfs (make kernel initramfs).  Takes about 3 minutes under TCG.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from tests.harness import Tally
from lava import fetch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

LAVA_PY = "/usr/bin/python3"
TIMEOUT = 1500


def sh(argv, timeout=600):
    return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def artifacts(tmp, kernel, initrd):
    """A tree with the kernel and initramfs where job.py's URLs point."""
    for src, dst in ((kernel, "build/kernel/bzImage"), (initrd, "build/initramfs.cpio")):
        os.makedirs(os.path.dirname(os.path.join(tmp, dst)), exist_ok=True)
        os.symlink(os.path.abspath(src), os.path.join(tmp, dst))
    return "file://" + tmp


def lava_cases(entries, definition):
    return [e["msg"] for e in entries if e["lvl"] == "results" and
            isinstance(e["msg"], dict) and e["msg"].get("definition") == definition]


def check_log(tally, out, seconds):
    with open(os.path.join(out, "job.log")) as f:
        entries = fetch.read_log(f.read())
    lines = list(fetch.guest_lines(entries))
    tally.record("lava-run: the stock initramfs waited at the prompt (hugetlb.job=shell)",
                 "@@hugetlb-guest-shell" in lines)
    cases = lava_cases(entries, "0_hugetlb-tiny-x86_64")
    rows = sum(ln.startswith("@row ") and not ln.startswith("@row realprog ") for ln in lines)
    exits = sum(ln.startswith("@exit ") for ln in lines)
    bad = [c["case"] for c in cases if c.get("result") not in ("pass", "skip")]
    tally.record("lava-run: a LAVA test case for each of %d rows, %d exits and the job"
                 % (rows, exits), len(cases) == rows + exits + 1 and rows > 0,
                 "%d cases" % len(cases))
    tally.record("lava-run: no test case failed", not bad, ", ".join(bad[:5]))
    done = [c for c in lava_cases(entries, "lava") if c.get("case") == "job"]
    tally.record("lava-run: LAVA completed the job (%.0f s)" % seconds,
                 bool(done) and done[-1].get("result") == "pass",
                 "; ".join(fetch.lava_failures(entries)))
    return lines


def check_fetch(tally, out, lines, tmp):
    results = os.path.join(tmp, "results")
    r = sh([sys.executable, "-m", "lava.fetch", "1", "--log", os.path.join(out, "job.log"),
            "--job-info", os.path.join(out, "job-info.json"), "--results-dir", results])
    runs = [d for d in os.listdir(results) if d != "latest"] if os.path.isdir(results) else []
    if r.returncode or len(runs) != 1:
        tally.record("lava-fetch: the run folder", False, r.stderr.strip()[-300:])
        return
    run = os.path.join(results, runs[0])
    with open(os.path.join(run, "meta.json")) as f:
        meta = json.load(f)
    tally.record("lava-fetch: status complete", meta["status"] == "complete",
                 "; ".join(meta["errors"]))
    printed = {}
    for ln in lines:
        if ln.startswith("@row "):
            _, bench, row = ln.split(" ", 2)
            printed.setdefault(bench, []).append(row)
    same = all(open(os.path.join(run, b + ".csv")).read().splitlines()[1:] == rs
               for b, rs in printed.items())
    tally.record("lava-fetch: every row the guest printed, in order (%d)"
                 % sum(map(len, printed.values())), same and bool(printed))


def check_cmdline_job(tally, kernel, initrd):
    """The stock initramfs with no /job takes its job from the command
    line, and says so on the only serial port: an unknown step is refused
    with status 2."""
    r = subprocess.run(["qemu-system-x86_64", "-nodefaults", "-no-reboot", "-display", "none",
                        "-serial", "stdio", "-m", "512", "-accel", "tcg", "-kernel", kernel,
                        "-initrd", initrd, "-append", "console=ttyS0 panic=-1 rdinit=/init "
                        "tsc=reliable no_timer_check hugetlb.job=nosuchstep"],
                       cwd=ROOT, stdin=subprocess.DEVNULL, capture_output=True, timeout=300)
    out = r.stdout.decode("utf-8", "replace").replace("\r", "")
    ok = ("@@hugetlb-guest-job unknown step 'nosuchstep'" in out and
          "@@hugetlb-guest-exit 2" in out)
    tally.record("/init: hugetlb.job=nosuchstep refused on the console, exit 2", ok,
                 "" if ok else out[-300:])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kernel", default="build/kernel/bzImage")
    ap.add_argument("--initrd", default="build/initramfs.cpio")
    ap.add_argument("--keep", help="copy lava-run's output here")
    args = ap.parse_args(argv)
    tally = Tally()
    check_cmdline_job(tally, args.kernel, args.initrd)
    if not shutil.which("lava-run"):
        tally.record("lava-run", False, "no lava-run: run 'make deps' (lava-dispatcher)")
        return tally.summary()
    with tempfile.TemporaryDirectory() as tmp:
        job = os.path.join(tmp, "job.yaml")
        r = sh([sys.executable, "-m", "lava.job", "--profile", "tiny", "--device", "qemu",
                "--artifacts", artifacts(tmp, args.kernel, args.initrd), "--out", job])
        v = sh([LAVA_PY, "lava/validate.py", job]) if not r.returncode else r
        tally.record("lava-job: the tiny qemu job, valid for LAVA", v.returncode == 0,
                     (r.stderr + v.stderr).strip())
        if v.returncode:
            return tally.summary()
        out = os.path.join(tmp, "lava-run")
        start = time.monotonic()
        sh([LAVA_PY, "-m", "lava.lava_run", job, out, "--timeout", str(TIMEOUT)], TIMEOUT + 60)
        lines = check_log(tally, out, time.monotonic() - start)
        check_fetch(tally, out, lines, tmp)
        if args.keep:
            shutil.copytree(out, args.keep, dirs_exist_ok=True)
    return tally.summary()


if __name__ == "__main__":
    sys.exit(main())
