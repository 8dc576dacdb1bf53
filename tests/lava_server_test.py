#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""make test-lava: the quick job through a real LAVA lab on loopback.

    python3 -m tests.lava_server_test [--profile quick] [--keep DIR]

Runs `make deps` and `make initramfs`, writes the qemu job (`make
lava-job`), starts lava/lab.py's lab (PostgreSQL, lava-server, scheduler,
worker, qemu device; private directory, loopback only), submits the job
with lavacli, waits for it, fetches the run back (`make lava-fetch JOB=N
SERVER=...`) and renders it (plots/render.py).  Checks: LAVA completed the
job; a LAVA test case for each row, exit and the job, none failed; the
fetched CSVs hold exactly the @row lines the guest printed (the job's log
through lavacli, in order), meta.json says which job, device and type;
the page is drawn; no token or key in any log, the fetched run or the
repository; every process the lab started is gone afterwards.  Prints each
step's wall time, then `N passed, N failed`.  The lab's logs and the run
are kept in DIR (default build/test-lava/).  Needs root for make deps and
the PostgreSQL cluster (run as the postgres user).
"""
import argparse
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import yaml

from tests.harness import Tally
from lava import fetch
from lava import lab as lablib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

WAIT_S = 3600


class StepError(Exception):
    pass


def step(times, name, argv, env=None, timeout=3600):
    """A command, timed; its stdout.  Its output goes to our stdout only
    when it fails (it never holds a secret: see check_secrets)."""
    t = time.monotonic()
    p = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=timeout)
    times[name] = time.monotonic() - t
    if p.returncode:
        raise StepError("%s: exit %d: %s" % (name, p.returncode,
                                             (p.stdout + p.stderr).strip()[-800:]))
    return p.stdout


def printed_rows(lines):
    """{bench: [row, ...]} of the guest's @row lines."""
    rows = {}
    for ln in lines:
        if ln.startswith("@row "):
            _, bench, row = ln.split(" ", 2)
            rows.setdefault(bench, []).append(row.rstrip("\r"))
    return rows


def fetched_rows(run):
    rows = {}
    for path in sorted(glob.glob(os.path.join(run, "*.csv"))):
        with open(path) as f:
            rows[os.path.basename(path)[:-4]] = f.read().splitlines()[1:]
    return rows


def check_rows(tally, lines, run):
    """The fetched CSVs equal the guest's @row lines, bench by bench."""
    want, got = printed_rows(lines), fetched_rows(run)
    bad = [b for b in sorted(set(want) | set(got)) if want.get(b) != got.get(b)]
    tally.record("lava-fetch: the CSVs hold exactly the %d rows the guest "
                 "printed, in order" % sum(map(len, want.values())),
                 want and not bad, "differ: " + ", ".join(bad) if bad else "")


def check_cases(tally, results, lines, definition):
    """A LAVA test case for each row (realprog's are not turned into
    cases), each @exit and the job; none failed."""
    cases = [r for r in results if r.get("suite") == definition]
    rows = sum(ln.startswith("@row ") and not ln.startswith("@row realprog ")
               for ln in lines)
    exits = sum(ln.startswith("@exit ") for ln in lines)
    tally.record("lavacli results: a test case for each of %d rows, %d exits "
                 "and the job" % (rows, exits),
                 rows > 0 and len(cases) == rows + exits + 1, "%d cases" % len(cases))
    bad = [c.get("name") for c in cases if c.get("result") not in ("pass", "skip")]
    tally.record("lavacli results: no test case failed", not bad, ", ".join(bad[:5]))


def check_meta(tally, run, job, device):
    with open(os.path.join(run, "meta.json")) as f:
        meta = json.load(f)
    lava = meta.get("lava") or {}
    tally.record("lava-fetch: meta.json status complete", meta.get("status") == "complete",
                 "; ".join(meta.get("errors", [])))
    tally.record("lava-fetch: meta.json names job %s on %s (qemu)" % (job, device),
                 (lava.get("job_id"), lava.get("device"), lava.get("device_type"))
                 == (str(job), device, "qemu"), json.dumps(lava))


def check_secrets(tally, secrets, places, outputs):
    """No secret in a file under places, in the commands' output, or in
    the repository's files."""
    found = []
    for top in places:
        for d, _, files in os.walk(top):
            for name in files:
                path = os.path.join(d, name)
                with open(path, "rb") as f:
                    data = f.read()
                if any(s.encode() in data for s in secrets):
                    found.append(path)
    found += ["a command's output" for o in outputs if any(s in o for s in secrets)]
    for s in secrets:
        if subprocess.run(["git", "grep", "-q", "-F", s], cwd=ROOT).returncode == 0:
            found.append("the repository")
    tally.record("secrets: no token or key in the lab's logs, the job's files, "
                 "the fetched run, %d commands' output or the repository" % len(outputs),
                 not found, ", ".join(found[:5]))


def stopped(tally, pids):
    alive = []
    for pid in pids:
        try:
            os.kill(pid, 0)
            alive.append(pid)
        except ProcessLookupError:
            pass
    tally.record("lab: every process it started is gone (%d)" % len(pids),
                 not alive, "alive: %s" % alive)


def run_job(tally, lab, times, args, outputs):
    """Submit, wait, fetch, render; check what came back."""
    env = lab.env
    lcli = ["lavacli", "-i", lablib.IDENTITY]
    jobfile = os.path.join(ROOT, "build", "lava", "%s-x86_64-qemu.yaml" % args.profile)
    out = step(times, "lavacli jobs submit", lcli + ["jobs", "submit", jobfile], env)
    job = out.strip().split()[-1]
    outputs.append(step(times, "lavacli jobs wait (the job: boot and benchmarks)",
                        lcli + ["jobs", "wait", "--polling", "5", job], env, WAIT_S))
    info = yaml.safe_load(step(times, "lavacli jobs show",
                               lcli + ["jobs", "show", "--yaml", job], env))
    tally.record("LAVA job %s on %s: health Complete" % (job, info.get("device")),
                 info.get("health") == "Complete",
                 "%s (%s)" % (info.get("health"), info.get("failure_comment")))
    log = step(times, "lavacli jobs logs", lcli + ["jobs", "logs", "--raw", job], env)
    with open(lab.path("logs", "job-%s.yaml" % job), "w") as f:
        f.write(log)
    lines = list(fetch.guest_lines(fetch.read_log(log)))
    results = yaml.safe_load(step(times, "lavacli results",
                                  lcli + ["results", "--yaml", job], env)) or []
    check_cases(tally, results, lines, "0_hugetlb-%s-x86_64" % args.profile)
    # The REST API; the token in the environment only (the job is public:
    # it is not needed, and must not show up anywhere).
    fenv = dict(env, LAVA_TOKEN=lab.secrets[0])
    outputs.append(step(times, "make lava-fetch", [
        "make", "--no-print-directory", "lava-fetch", "JOB=" + job,
        "SERVER=" + lab.url, "RESULTS_DIR=" + lab.path("results")], fenv))
    runs = glob.glob(lab.path("results", "*-lava%s-*" % job))
    if not tally.record("lava-fetch: one run folder", len(runs) == 1, str(runs)):
        return
    check_rows(tally, lines, runs[0])
    check_meta(tally, runs[0], job, lablib.DEVICE)
    outputs.append(step(times, "plots.render", [sys.executable, "-m", "plots.render",
                                                   runs[0], "--no-link"]))
    tally.record("render: the run's page and figures",
                 os.path.exists(os.path.join(runs[0], "index.html")) and
                 bool(glob.glob(os.path.join(runs[0], "*.svg"))))
    shutil.copytree(runs[0], os.path.join(args.keep, os.path.basename(runs[0])))


def prepare(times, args):
    for target in (["deps"], ["initramfs"],
                   ["lava-job", "PROFILE=" + args.profile, "DEVICE=qemu"]):
        step(times, "make " + target[0], ["make", "--no-print-directory"] + target)


def interrupted(signum, frame):
    raise KeyboardInterrupt("signal %d" % signum)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--profile", default="quick", choices=("tiny", "quick"))
    ap.add_argument("--keep", default=os.path.join(ROOT, "build", "test-lava"),
                    help="the lab's logs and the fetched run end up here")
    args = ap.parse_args(argv)
    signal.signal(signal.SIGTERM, interrupted)
    tally, times, outputs = Tally(), {}, []
    shutil.rmtree(args.keep, ignore_errors=True)
    os.makedirs(args.keep)
    try:
        prepare(times, args)
    except StepError as e:
        tally.record("prepare", False, str(e))
        return tally.summary()
    lab = lablib.Lab()
    pids = []
    try:
        lab.start()
        times.update(("lab: " + k, v) for k, v in lab.times.items())
        pids = [p.pid for _, p in lab.procs] + [lab.pg_pid]
        run_job(tally, lab, times, args, outputs)
    except (StepError, lablib.LabError) as e:
        tally.record("test-lava", False, str(e))
    finally:
        pids += lab.job_pids()
        t = time.monotonic()
        lab.stop()
        times["lab: stop"] = time.monotonic() - t
        stopped(tally, pids)
        secrets = getattr(lab, "secrets", [])
        check_secrets(tally, secrets, [lab.path(d) for d in ("logs", "media", "results")] +
                      [lab.path("worker", "tmp"), args.keep], outputs)
        shutil.copytree(lab.path("logs"), os.path.join(args.keep, "logs"))
        lab.remove()
    for name, s in times.items():
        print("time: %-50s %7.1f s" % (name, s))
    print("time: %-50s %7.1f s" % ("total", sum(times.values())))
    return tally.summary()


if __name__ == "__main__":
    sys.exit(main())
