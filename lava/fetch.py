#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Rebuilds results/<id>/ from a LAVA job's log, as bench/run.py writes it
for a run of its own: every @header/@row into the CSVs, every @meta into
meta.json, plus where it ran (meta.json "lava": job id, device type,
device, server, LAVA's health and failure).

    python3 -m lava.fetch JOB [--server URL] [--identity NAME]
    python3 -m lava.fetch JOB --log FILE [--job-info FILE.json]

The log comes from a server's REST API (--server; a token, if the server
wants one, only in $LAVA_TOKEN), from lavacli (its configured identity,
--identity), or from a file (--log: lava-run's output or a saved log).
A job that failed keeps every row it printed; meta.json's "status" is
then "failed" and "errors" says why (LAVA's error, a benchmark's exit
status, a benchmark that never reported one).
"""
import argparse
import datetime
import gzip
import json
import os
import subprocess
import sys
import urllib.request

import yaml

from bench import contract
from bench import benchrun as bench_run  # bench/run.py's code

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class FetchError(Exception):
    """The job or its log could not be read; the message names cause and fix."""


def read_log(text):
    """The entries of a LAVA log: the server's YAML list ("- {dt: ...}")
    or lava-run's one JSON object a line."""
    entries = []
    for line in text.splitlines():
        line = line[2:] if line.startswith("- ") else line
        if not line.strip():
            continue
        try:
            e = yaml.safe_load(line)
        except yaml.YAMLError:
            continue    # a line cut short: the job was killed mid-line
        if isinstance(e, dict) and "lvl" in e:
            entries.append(e)
    return entries


def rest(server, path):
    req = urllib.request.Request(server.rstrip("/") + "/api/v0.2/" + path)
    token = os.environ.get("LAVA_TOKEN")
    if token:
        req.add_header("Authorization", "Token " + token)
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.read().decode("utf-8", "replace")
    except OSError as e:
        raise FetchError("%s: %s (is SERVER right, and LAVA_TOKEN set if "
                         "the job is not public?)" % (req.full_url, e))


def lavacli(identity, *args):
    cmd = ["lavacli"] + (["-i", identity] if identity else []) + list(args)
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except OSError:
        raise FetchError("no lavacli: run 'make deps', or give SERVER=URL")
    if p.returncode:
        raise FetchError("%s: %s (configure an identity with 'lavacli "
                         "identities add', or give SERVER=URL)"
                         % (" ".join(cmd), (p.stderr or p.stdout).strip()))
    return p.stdout


def job_source(args):
    """(job info dict, log text) from the server, lavacli or files."""
    if args.log:
        info = {}
        if args.job_info:
            with open(args.job_info) as f:
                info = json.load(f)
        opener = gzip.open if args.log.endswith(".gz") else open
        with opener(args.log, "rt") as f:
            return info, f.read()
    if args.server:
        return (json.loads(rest(args.server, "jobs/%s/" % args.job)),
                rest(args.server, "jobs/%s/logs/" % args.job))
    info = yaml.safe_load(lavacli(args.identity, "jobs", "show", "--yaml",
                                  str(args.job)))
    return info, lavacli(args.identity, "jobs", "logs", "--raw", str(args.job))


def lava_job_passed(entries):
    return any(e["lvl"] == "results" and isinstance(e["msg"], dict) and
               e["msg"].get("definition") == "lava" and
               e["msg"].get("case") == "job" and e["msg"].get("result") == "pass"
               for e in entries)


def cleanup_errors(entries):
    """LAVA's errors in its finalize (powering the machine off, after every
    result) of a job it passed: noted, not failures.  Seen: QEMU with a
    10 GB guest on a loaded host exiting later than pexpect waits."""
    if not lava_job_passed(entries):
        return []
    return [str(e["msg"]) for e in entries if e["lvl"] == "error" and
            str(e["msg"]).startswith("Failed to run 'finalize'")]


def lava_failures(entries):
    """LAVA's own errors (but cleanup_errors), and why its job failed (its
    "lava" suite's "job" case)."""
    noted = cleanup_errors(entries)
    why = [str(e["msg"]) for e in entries
           if e["lvl"] == "error" and str(e["msg"]) not in noted]
    for e in entries:
        m = e["msg"]
        if e["lvl"] == "results" and isinstance(m, dict) and \
                m.get("definition") == "lava" and m.get("case") == "job" \
                and m.get("result") == "fail":
            why.append("LAVA job failed (%s): %s" % (
                m.get("error_type"), str(m.get("error_msg")).strip()))
    return list(dict.fromkeys(why))


def guest_lines(entries):
    """What the guest printed, one line at a time (kernel console, the
    test shell's output).  LAVA put a backslash before every double quote
    (lava_dispatcher/shell.py): taking the one before each quote away
    gives the line back exactly."""
    for e in entries:
        if e["lvl"] == "target" and isinstance(e["msg"], str):
            yield from e["msg"].replace('\\"', '"').splitlines()


def job_meta(lava_job):
    """meta.json's start: guest mode under QEMU (TCG), native on hardware."""
    qemu = lava_job.get("device_type") == "qemu"
    return {
        "profile": lava_job.get("profile"),
        "arch": lava_job.get("arch"),
        "mode": "guest" if qemu else "native",
        "qemu": {"version": None, "accel": None, "icount": None}
        if qemu else None,
        "timing_source": None if qemu else "native",
        "host_cpu": None, "kernel": None, "series_id": None,
        "backing_order": {}, "commands": [],
    }


def first_pass(entries):
    """The @meta lava_job line the test definition prints first."""
    for line in guest_lines(entries):
        if line.startswith("@meta lava_job "):
            return json.loads(line[len("@meta lava_job "):])
    raise FetchError("no '@meta lava_job' line in the log: not a job "
                     "written by lava/job.py (make lava-job)")


def lava_info(args, info, lava_job, entries):
    """meta.json "lava": where the job ran and how LAVA saw it end."""
    return {
        "job_id": str(args.job),
        "server": args.server or (("lavacli identity %s" % (args.identity or
                                                            "default"))
                                  if not args.log else None),
        "device_type": info.get("device_type") or lava_job.get("device_type"),
        "device": info.get("actual_device") or info.get("device"),
        "state": info.get("state"),
        "health": info.get("health"),
        "failure_comment": info.get("failure_comment"),
        "log_entries": len(entries),
        "cleanup_errors": cleanup_errors(entries),
    }


def run_id(entries, job, profile):
    try:
        when = datetime.datetime.fromisoformat(entries[0]["dt"])
    except (ValueError, KeyError, IndexError):
        when = datetime.datetime.now()
    return "%s-lava%s-%s" % (when.strftime("%Y%m%d-%H%M%S"), job, profile)


def replay(res, entries):
    """Every guest line through bench/run.py's own line handler."""
    for line in guest_lines(entries):
        line = line.rstrip("\r")
        if line.startswith("@@hugetlb-guest-hugepages "):
            res.meta["errors"].append(line[len("@@hugetlb-guest-"):])
        elif line.startswith("@"):
            res.handle(line)


def finish(res, entries, lava_job, info):
    """The status and why: LAVA's errors, the job's own exit, the
    benchmarks' exits (bench/run.py's check_exits)."""
    m = res.meta
    if m["mode"] == "native":
        m["host_cpu"] = m.get("measured_cpu")
    else:
        m["host_cpu"] = "LAVA worker of device %s (not recorded)" % (
            m["lava"]["device"] or m["lava"]["device_type"])
    why = lava_failures(entries)
    health = info.get("health")
    if health and health != "Complete":
        why.append("LAVA job health %s" % health)
    m["errors"].extend(w for w in why if w not in m["errors"])
    rc = bench_run.check_exits(res, lava_job.get("benches", []), 1 if why else 0)
    res.finish("failed" if rc else "complete")
    return rc


def fetch(args):
    info, text = job_source(args)
    entries = read_log(text)
    if not entries:
        raise FetchError("job %s: the log has no entries" % args.job)
    lava_job = first_pass(entries)
    rid = run_id(entries, args.job, lava_job.get("profile"))
    if os.path.exists(os.path.join(args.results_dir, rid)):
        raise FetchError("%s already exists: remove it to fetch again"
                         % os.path.join(args.results_dir, rid))
    meta = dict(job_meta(lava_job), run_id=rid, date=entries[0].get("dt"),
                git_rev=lava_job.get("git_rev"), status="running",
                lava=lava_info(args, info, lava_job, entries))
    os.makedirs(args.results_dir, exist_ok=True)
    res = bench_run.Results(args.results_dir, rid, meta)
    replay(res, entries)
    rc = finish(res, entries, lava_job, info)
    bench_run.report(res, res.meta["status"])
    for e in res.meta["errors"]:
        print("lava-fetch: %s" % e, file=sys.stderr)
    return res.dir, rc


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("job", help="LAVA job id")
    ap.add_argument("--server", help="LAVA server URL (REST API); "
                    "a token only in $LAVA_TOKEN")
    ap.add_argument("--identity", help="lavacli identity (default: its own)")
    ap.add_argument("--log", help="read the log from this file instead "
                    "(.gz: gzip)")
    ap.add_argument("--job-info", help="with --log: the job's REST record "
                    "(JSON: device_type, actual_device, health, ...)")
    ap.add_argument("--results-dir", default=os.path.join(ROOT, "results"))
    args = ap.parse_args(argv)
    try:
        _, rc = fetch(args)
    except (FetchError, contract.ContractError) as e:
        print("lava-fetch: %s" % e, file=sys.stderr)
        return 2
    return 1 if rc else 0


if __name__ == "__main__":
    sys.exit(main())
