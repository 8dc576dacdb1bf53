#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Runs a qemu job of lava/job.py with lava-run alone (LAVA's dispatcher,
no server), on this machine's QEMU.

    /usr/bin/python3 -m lava.lava_run JOB.yaml OUTDIR [--timeout SECONDS]

lava-run needs a device configuration as lava-server would render it from
its qemu device type and the job's context; device() writes that one
here: the QEMU LAVA's qemu device type would start, except that the
console is `-serial stdio` alone (a serial port muxed with the monitor, as
-nographic makes, takes LAVA's keyboard).  OUTDIR gets device.yaml and
job.log, the dispatcher's log (the entries a server's
/api/v0.2/jobs/N/logs/ returns, which lava/fetch.py reads), and
job-info.json, what the server would say of the job.  Exit status:
0 when LAVA says the job completed, 1 when not (the reason printed), 2 on
bad usage, 124 on --timeout.
"""
import argparse
import json
import os
import subprocess
import sys

import yaml

from lava import fetch

QEMU = {"amd64": "qemu-system-x86_64", "arm64": "qemu-system-aarch64"}


def device(ctx):
    """The rendered qemu device configuration for a job's context."""
    arch = ctx["arch"]
    opts = ["-nodefaults", "-no-reboot", "-display none", "-serial stdio",
            "-monitor none", "-m %s" % ctx["memory"]]
    if arch == "arm64":
        opts += ["-cpu %s" % ctx["cpu"], "-machine %s" % ctx["machine"]]
    return {
        "constants": {
            "posix": {"lava_test_sh_cmd": "/bin/sh",
                      "lava_test_results_dir": "/lava-%s",
                      "lava_test_shell_file": "~/.bashrc"},
            "shutdown-message": "The system is going down for reboot NOW",
            "kernel-start-message": "Linux version [0-9]",
            "default-shell-prompt": "lava-test: # ",
            "spawn_maxread": "4092",
            # empty: LAVA's default number of retries
            "failure_retry": "", "boot_retry": ""},
        "parameters": {"pass": None},
        "available_architectures": sorted(QEMU),
        "actions": {
            "deploy": {"connections": {"serial": None},
                       "methods": {"image": {"parameters": {"guest": {
                           "size": 512, "interface": "ide",
                           "driveid": "lavatest"}}}}},
            "boot": {"connections": {"serial": None},
                     "methods": {"qemu": {"parameters": {
                         "command": QEMU[arch], "options": opts,
                         "extra": list(ctx.get("extra_options", []))}}}}},
        "timeouts": {"actions": {}, "connections": {}},
    }


def outcome(log_path):
    """(completed?, why not) from the dispatcher's log."""
    with open(log_path) as f:
        entries = fetch.read_log(f.read())
    why = fetch.lava_failures(entries)
    done = any(e["lvl"] == "results" and isinstance(e["msg"], dict) and
               e["msg"].get("definition") == "lava" and
               e["msg"].get("case") == "job" and
               e["msg"].get("result") == "pass" for e in entries)
    return done and not why, "; ".join(why) or "no passing lava.job result"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("job")
    ap.add_argument("outdir")
    ap.add_argument("--timeout", type=int, default=3600)
    args = ap.parse_args(argv)
    with open(args.job) as f:
        job = yaml.safe_load(f)
    if job.get("device_type") != "qemu":
        ap.error("%s is for device type %s: lava-run here runs qemu jobs "
                 "only" % (args.job, job.get("device_type")))
    os.makedirs(args.outdir, exist_ok=True)
    dev = os.path.join(args.outdir, "device.yaml")
    with open(dev, "w") as f:
        yaml.safe_dump(device(job["context"]), f, sort_keys=False)
    log = os.path.join(args.outdir, "job.log")
    work = os.path.join(args.outdir, "work")
    with open(log, "w") as out:
        try:
            # The job id names the dispatcher's directory under
            # /var/lib/lava/dispatcher/tmp/: ours alone.
            subprocess.run(["lava-run", "--job-id", str(os.getpid()),
                            "--output-dir", work,
                            "--device", dev, args.job], stdout=out,
                           stderr=subprocess.STDOUT, timeout=args.timeout)
        except subprocess.TimeoutExpired:
            print("lava-run: still running after %d s: killed" % args.timeout,
                  file=sys.stderr)
            return 124
    done, why = outcome(log)
    # What a server's REST API would say of the job, for lava/fetch.py.
    with open(os.path.join(args.outdir, "job-info.json"), "w") as f:
        json.dump({"id": 1, "device_type": "qemu",
                   "actual_device": "lava-run on %s" % os.uname().nodename,
                   "health": "Complete" if done else "Incomplete"}, f)
    if not done:
        print("lava-run: the job did not complete: %s (log: %s)" % (why, log),
              file=sys.stderr)
    return 0 if done else 1


if __name__ == "__main__":
    sys.exit(main())
