#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Guest test of the benchmark suite (see guest_test.sh).

Runs `bench/run.py --mode guest --profile tiny` into build/bench-guest-test/
(not results/, so results/latest keeps pointing at real data) and checks:
the run completed; meta.json has every required key and says where its
time came from; every backing of the contract was measured with the page
size it promises (smaps-verified in the guest), 1 GB ones included; and
every backing has the same points as every other, at the working-set sizes
the tiny profile asks for, each row with that page size.
"""
import argparse
import csv
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import (REQUIRED_MACHINE, REQUIRED_META, REQUIRED_METHOD,  # noqa
                    ROOT, contract, load_run_module, promised_kb)
from harness import Tally  # noqa: E402

OUT = os.path.join(ROOT, "build", "bench-guest-test")


def run_bench(t, args):
    os.makedirs(OUT, exist_ok=True)
    cmd = [sys.executable, os.path.join(ROOT, "bench", "run.py"),
           "--mode", "guest", "--profile", "tiny", "--results-dir", OUT]
    if args.kernel:
        cmd += ["--kernel", args.kernel]
    if args.initrd:
        cmd += ["--initrd", args.initrd]
    print("guest_test: " + " ".join(cmd), flush=True)
    rc = subprocess.call(cmd, cwd=ROOT)
    t.record("run.py --mode guest --profile tiny exits 0", rc == 0,
             "exit %d" % rc)


def check_meta(t, meta):
    missing = [k for k in REQUIRED_META if k not in meta]
    t.record("meta.json has the required keys", not missing, str(missing))
    missing = [k for k in REQUIRED_METHOD if k not in meta.get("method", {})]
    t.record("meta.json method has the required keys", not missing,
             str(missing))
    missing = [k for k in REQUIRED_MACHINE
               if k not in meta.get("machine", {})]
    t.record("meta.json records the host's state", not missing, str(missing))
    t.record("mode is guest", meta.get("mode") == "guest")
    t.record("timing_source is tcg, kvm or icount",
             meta.get("timing_source") in ("tcg", "kvm", "icount"),
             str(meta.get("timing_source")))
    t.record("qemu version recorded",
             bool((meta.get("qemu") or {}).get("version")))
    t.record("kernel and series recorded",
             bool(meta.get("kernel")) and meta.get("series_id") is not None,
             "%r %r" % (meta.get("kernel"), meta.get("series_id")))
    t.record("ASLR off in the guest",
             meta.get("method", {}).get("aslr_off") is True)
    t.record("no errors reported", not meta.get("errors"),
             "; ".join(meta.get("errors", []))[:800])
    t.record("the guest's THP settings recorded, serving MADV_HUGEPAGE",
             (meta.get("thp_guest") or {}).get("enabled") in
             ("always", "madvise"), str(meta.get("thp_guest")))
    t.record("page-faults counter available",
             meta.get("counters", {}).get("page-faults", {}).get("available")
             is True)


def read_csvs(t, run_dir, c):
    """{bench: rows}; each CSV's header must be the contract's columns."""
    rows = {}
    for bench in c.bench_names():
        path = os.path.join(run_dir, bench + ".csv")
        try:
            with open(path) as f:
                reader = csv.DictReader(f)
                rows[bench] = list(reader)
                header = reader.fieldnames
        except OSError as e:
            t.record("%s.csv exists" % bench, False, str(e))
            continue
        t.record("%s.csv has the contract's columns" % bench,
                 header == c.bench(bench)["columns"], str(header))
    return rows


def tiny_sizes(bench):
    """The working sets the tiny profile gives bench, from bench/run.py."""
    run = load_run_module()
    a = run.profile_args(run.profile("tiny", "guest"), bench)
    return {run.size_bytes(x) for x in a[a.index("--sizes") + 1].split(",")}


def check_backings(t, meta, rows, c):
    """Every backing measured, at its page size, at the same points."""
    backs = meta.get("backings", {})
    for name in c.backing_names():
        b = backs.get(name, {})
        t.record("%s measured" % name, b.get("status") == "measured",
                 "%s: %s" % (b.get("status", "absent"), b.get("reason", "")))
        t.record("%s verified page size %d kB" % (name, promised_kb(name)),
                 b.get("page_kb") == promised_kb(name),
                 "smaps gave %s kB" % b.get("page_kb"))
    for bench, rs in rows.items():
        # size_bytes is the mapped size, rounded up to the backing's pages:
        # the one key column that differs between backings by design.
        key = [k for k in c.bench(bench)["key"]
               if k not in ("backing", "size_bytes")]
        points, counts = {}, {}
        for r in rs:
            points.setdefault(r["backing"], set()).add(
                tuple(r[k] for k in key))
            counts[r["backing"]] = counts.get(r["backing"], 0) + 1
        every = set().union(*points.values()) if points else set()
        most = max(counts.values(), default=0)
        for name in c.backing_names():
            bad = [r["page_kb"] for r in rs if r["backing"] == name
                   and int(r["page_kb"]) != promised_kb(name)]
            t.record("%s: every %s point (%d rows), each with page_kb %d" % (
                name, bench, most, promised_kb(name)),
                every and points.get(name) == every
                and counts.get(name) == most and not bad,
                "%d rows, wrong page_kb %s" % (counts.get(name, 0), bad[:3]))
        if "wss_bytes" in key:
            got = {int(r["wss_bytes"]) for r in rs}
            t.record("%s: the tiny profile's working sets" % bench,
                     got == tiny_sizes(bench), str(sorted(got)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernel")
    ap.add_argument("--initrd")
    args = ap.parse_args()
    c = contract.load()
    t = Tally()
    run_bench(t, args)
    run_dir = os.path.join(OUT, "latest")
    try:
        with open(os.path.join(run_dir, "meta.json")) as f:
            meta = json.load(f)
    except (OSError, ValueError) as e:
        t.record("meta.json readable", False, str(e))
        return t.summary()
    check_meta(t, meta)
    rows = read_csvs(t, run_dir, c)
    if not any(rows.values()):
        t.record("the guest produced rows", False, "none; see the errors above")
        return t.summary()
    check_backings(t, meta, rows, c)
    nums = [float(r["ns_per_access"]) for r in rows.get("chase", [])]
    t.record("chase latencies positive", bool(nums) and min(nums) > 0)
    return t.summary()


if __name__ == "__main__":
    sys.exit(main())
