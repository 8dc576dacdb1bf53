#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Guest test of the benchmark suite (see guest_test.sh).

Runs `bench/run.py --mode guest --profile tiny` into build/bench-guest-test/
(not results/, so results/latest keeps pointing at real data) and checks:
the run completed; meta.json has every required key and says where its
time came from; every backing was measured with the page size it promises
(smaps-verified in the guest), 1 GB ones included; and every benchmark has
the expected rows, each with that page size.
"""
import argparse
import csv
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import (REQUIRED_COLUMNS, REQUIRED_META, REQUIRED_METHOD,  # noqa
                    ROOT, promised_kb)

BACKINGS = ["devzero", "thp", "hugetlbfs", "shm", "devhugetlb", "maphugetlb",
            "memfd", "hugetlbfs-1G", "shm-1G", "devhugetlb-1G",
            "maphugetlb-1G", "memfd-1G"]
# rows per backing in the tiny profile (bench/run.py: profile("tiny"))
TINY_ROWS = {"chase": 3 * 2, "stream": 2 * 4, "fault": 3}


class Tally:
    def __init__(self):
        self.passed = self.failed = 0

    def check(self, name, ok, detail=""):
        if ok:
            self.passed += 1
            print("ok - %s" % name)
        else:
            self.failed += 1
            print("not ok - %s%s" % (name, ": " + detail if detail else ""))
        return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernel")
    ap.add_argument("--initrd")
    args = ap.parse_args()
    out = os.path.join(ROOT, "build", "bench-guest-test")
    os.makedirs(out, exist_ok=True)
    cmd = [sys.executable, os.path.join(ROOT, "bench", "run.py"),
           "--mode", "guest", "--profile", "tiny", "--results-dir", out]
    if args.kernel:
        cmd += ["--kernel", args.kernel]
    if args.initrd:
        cmd += ["--initrd", args.initrd]
    t = Tally()
    print("guest_test: " + " ".join(cmd), flush=True)
    rc = subprocess.call(cmd, cwd=ROOT)
    t.check("run.py --mode guest --profile tiny exits 0", rc == 0,
            "exit %d" % rc)
    run_dir = os.path.join(out, "latest")
    try:
        with open(os.path.join(run_dir, "meta.json")) as f:
            meta = json.load(f)
    except (OSError, ValueError) as e:
        t.check("meta.json readable", False, str(e))
        print("%d passed, %d failed" % (t.passed, t.failed))
        return 1

    missing = [k for k in REQUIRED_META if k not in meta]
    t.check("meta.json has the required keys", not missing, str(missing))
    missing = [k for k in REQUIRED_METHOD if k not in meta.get("method", {})]
    t.check("meta.json method has the required keys", not missing,
            str(missing))
    t.check("mode is guest", meta.get("mode") == "guest")
    t.check("timing_source is tcg, kvm or icount",
            meta.get("timing_source") in ("tcg", "kvm", "icount"),
            str(meta.get("timing_source")))
    t.check("qemu version recorded",
            bool((meta.get("qemu") or {}).get("version")))
    t.check("kernel and series recorded",
            bool(meta.get("kernel")) and meta.get("series_id") is not None,
            "%r %r" % (meta.get("kernel"), meta.get("series_id")))
    t.check("ASLR off in the guest", meta.get("method", {}).get("aslr_off")
            is True)
    t.check("no errors reported", not meta.get("errors"),
            "; ".join(meta.get("errors", []))[:800])
    t.check("page-faults counter available",
            meta.get("counters", {}).get("page-faults", {}).get("available")
            is True)

    if not any(os.path.exists(os.path.join(run_dir, b + ".csv"))
               for b in REQUIRED_COLUMNS):
        t.check("the guest produced rows", False,
                "none; see the errors above")
        print("%d passed, %d failed" % (t.passed, t.failed))
        return 1

    rows = {}
    for bench, cols in REQUIRED_COLUMNS.items():
        path = os.path.join(run_dir, bench + ".csv")
        try:
            with open(path) as f:
                header = f.readline().strip().split(",")
                f.seek(0)
                rows[bench] = list(csv.DictReader(f))
        except OSError as e:
            t.check("%s.csv exists" % bench, False, str(e))
            rows[bench] = []
            continue
        t.check("%s.csv has the required columns" % bench,
                header[:len(cols)] == cols, str(header))

    backs = meta.get("backings", {})
    for name in BACKINGS:
        b = backs.get(name, {})
        t.check("%s measured" % name, b.get("status") == "measured",
                "%s: %s" % (b.get("status", "absent"), b.get("reason", "")))
        t.check("%s verified page size %d kB" % (name, promised_kb(name)),
                b.get("page_kb") == promised_kb(name),
                "smaps gave %s kB" % b.get("page_kb"))
        for bench, want in TINY_ROWS.items():
            mine = [r for r in rows.get(bench, []) if r["backing"] == name]
            bad = [r["page_kb"] for r in mine
                   if int(r["page_kb"]) != promised_kb(name)]
            t.check("%s: %d %s rows with page_kb %d" % (
                name, want, bench, promised_kb(name)),
                len(mine) == want and not bad,
                "%d rows, wrong page_kb %s" % (len(mine), bad[:3]))
    nums = [float(r["ns_per_access"]) for r in rows.get("chase", [])]
    t.check("chase latencies positive", nums and min(nums) > 0)
    print("%d passed, %d failed" % (t.passed, t.failed))
    return 1 if t.failed else 0


if __name__ == "__main__":
    sys.exit(main())
