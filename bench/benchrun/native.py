# SPDX-License-Identifier: GPL-2.0
"""The native run: the binaries on the host kernel, one after another,
with the pools raised, and each benchmark's oracle after it (the chase's:
tests/bench/minichase.c), then what it measures after it (the chase's
walk cost under perf stat: walk.py)."""

import csv
import os
import re
import subprocess

from . import shootdowns
from .base import GB, KB_1G, KB_2M, MB
from .pools import fit_pool, raise_pools
from .rows import stream_lines
from .walk import walk_cost


def run_native(res, runs, cmds, pools, p, pooled, c):
    """Runs cmds (the native commands of runs) in turn, each benchmark's
    oracle (ORACLES) and measurements (AFTER) after it; the profile's
    fit_pool benchmarks cut to the 2 MB pool's free pages."""
    if pooled:
        raise_pools(res, pools, p)
        free = pools.read(KB_2M, "free_hugepages")
        cmds = [fit_pool(res, bench, cmd, free, c.arrays(bench))
                if bench in p.get("fit_pool", ()) else cmd
                for (bench, _), cmd in zip(runs, cmds)]
    else:
        print("bench: no hugetlb backing selected; pools left alone")
    rc = 0
    for (bench, _), cmd in zip(runs, cmds):
        r = stream_lines(cmd, res)
        rc = rc or r
        if bench in ORACLES and not r:
            rc = rc or ORACLES[bench](res, os.path.dirname(cmd[0]))
        if bench in AFTER and not r:
            AFTER[bench](res, os.path.dirname(cmd[0]), cmd)
    return rc


# The chase's oracle (issue 19, point 9): tests/bench/minichase.c, one
# process, one mapping, one cycle over every line (-p: every 4 KB page, the
# page hop), nothing shared with bench/.  After a native run it
# runs ORACLE_RUNS times, pinned (by this script, not by minichase) to the
# CPU the chase was pinned to: on a VM one vCPU is not another (on this
# project's Intel VM minichase's 64 MB page hop read 23.5 ns on CPU 0
# and 20.5 ns on CPU 1, run after run; CI's quiet run read the chase,
# pinned to the last CPU, 12-42 % over an unpinned minichase), so an
# oracle on another CPU judges the CPUs, not the chase.  It runs on the page size of each backing the chase
# measured, for each hop kind (at the chase's largest size of that hop up
# to ORACLE_MAX, if that is at least ORACLE_MIN: smaller working
# sets live in the caches, where the TLB question is not asked), each run
# a new mapping.  The chase's ns_per_access (the median of its
# repetitions: like for like, each minichase run is one timed pass, not a
# least; the chase's ns_min, its least repetition, read 10 and 21 % under
# minichase on the 2 MB page hop in CI's quiet run, see
# tests/bench/test_chase_oracle.py BothHops) must lie within the oracle's
# range over one attempt's runs, widened by ORACLE_TOLERANCE on each side
# (each attempt is judged alone, so retries do not widen it): the chase,
# too, measured one mapping, and on a VM host one mapping of 1 GB on 4 KB
# pages differs from the next by far more than 10 % (the least time of
# each of 8 mappings: 248 to 314 ns on this project's Zen 5 VM), so one
# mapping's time against the oracle's least over many would fail for no
# fault of either.  On a quiet bare-metal host the range is narrow and the
# check is the 10 % it says.  A disagreement fails the run (meta.json chase_oracle
# says which), unless the load average was above the CPU count: then it
# is a note, as wall time means little there.
ORACLE_KINDS = {4: "4k", KB_2M: "2m", KB_1G: "1g"}

ORACLE_TOLERANCE = 0.10

ORACLE_MIN, ORACLE_MAX = 64 * MB, GB

ORACLE_RUNS = 3

ORACLE_ATTEMPTS = 3


def minichase(bindir, kind, wss, hops, runs=ORACLE_RUNS, hop="line",
              cpu=None):
    """([ns per hop of each of runs runs of the oracle], None) or (None,
    why).  It warms with as many hops as it times; hop "page": one
    element per 4 KB page (minichase -p), as the chase's page hop; cpu:
    the one CPU it runs on (None: wherever the scheduler puts it)."""
    got, exe = [], os.path.join(bindir, "minichase")
    if not os.access(exe, os.X_OK):
        return None, "%s is not built (make bench-native builds it)" % exe
    pin = None if cpu is None else \
        (lambda: os.sched_setaffinity(0, {cpu}))
    for _ in range(runs):
        p = subprocess.run([exe] + (["-p"] if hop == "page" else []) +
                           [kind, str(wss), str(hops), str(hops)],
                           capture_output=True, text=True, preexec_fn=pin)
        m = re.match(r"ns_per_hop ([0-9.]+)", p.stdout)
        if p.returncode or not m:
            return None, (p.stderr.strip() or "exit %d" % p.returncode)
        got.append(float(m.group(1)))
    return got, None


def oracle_verdict(chase_ns, oracle_ns, tolerance=ORACLE_TOLERANCE):
    """{chase_ns, oracle_ns_min, oracle_ns_max, oracle_runs, ratio,
    agree} for one backing: agree when chase_ns is within the oracle's
    runs' range widened by tolerance; ratio is against the oracle's
    least."""
    lo, hi = min(oracle_ns), max(oracle_ns)
    return {"chase_ns": chase_ns, "oracle_ns_min": lo,
            "oracle_ns_max": hi, "oracle_runs": len(oracle_ns),
            "ratio": round(chase_ns / lo, 4),
            "agree": lo * (1 - tolerance) <= chase_ns <= hi * (1 + tolerance)}


def chase_hop_rows(path, hop, top=ORACLE_MAX):
    """(wss, [rows]): the chase's rows of one hop kind at its largest size
    up to top; (None, []) when it has none."""
    try:
        with open(path) as f:
            rows = [r for r in csv.DictReader(f) if r["hop"] == hop and
                    int(r["wss_bytes"]) <= top]
    except OSError:
        return None, []
    if not rows:
        return None, []
    wss = max(int(r["wss_bytes"]) for r in rows)
    return wss, [r for r in rows if int(r["wss_bytes"]) == wss]


def check_chase_oracle(res, bindir):
    """The oracle against the chase's rows in res, for each hop kind (the
    line hop in meta.json chase_oracle, the page hop, the one that
    isolates the TLB, in chase_oracle_page); 0, or 2 on a disagreement
    (after ORACLE_ATTEMPTS rounds of oracle runs)."""
    return max(check_chase_hop(res, bindir, hop) for hop in ("line", "page"))


def check_chase_hop(res, bindir, hop):
    """check_chase_oracle for one hop kind."""
    key = "chase_oracle" if hop == "line" else "chase_oracle_" + hop
    step = 64 if hop == "line" else 4096
    wss, rows = chase_hop_rows(res.csv_path("chase"), hop)
    if not rows or wss < ORACLE_MIN:
        res.meta[key] = {
            "wss_bytes": wss, "hop": hop, "backings": {},
            "reason": "not checked: no %s-hop size of the chase from %d "
                      "to %d MB" % (hop, ORACLE_MIN // MB, ORACLE_MAX // MB)}
        res.write_meta()
        return 0
    hops = min(wss // step, 4 << 20)
    cpu = res.meta.get("method", {}).get("per_bench", {}).get(
        "chase", {}).get("cpu_pinned")
    cpu = cpu if isinstance(cpu, int) and cpu >= 0 else None  # -1: unpinned
    runs, why, out = {}, {}, {}
    for attempt in range(1, ORACLE_ATTEMPTS + 1):
        for kb in {int(r["page_kb"]) for r in rows}:
            if kb not in ORACLE_KINDS or kb in why:
                why.setdefault(kb, "no oracle for %d kB pages" % kb)
                continue
            ns, err = minichase(bindir, ORACLE_KINDS[kb], wss, hops,
                                hop=hop, cpu=cpu)
            if err:
                why[kb] = err
            else:
                # this attempt's runs alone: a retry must not widen the
                # band by adding its runs to the last attempt's
                runs[kb] = ns
        out = {r["backing"]: dict(
            oracle_verdict(float(r["ns_per_access"]),
                           runs[int(r["page_kb"])])
            if int(r["page_kb"]) in runs else
            {"agree": None, "reason": why[int(r["page_kb"])]},
            page_kb=int(r["page_kb"])) for r in rows}
        if all(v["agree"] is not False for v in out.values()):
            break
    res.meta[key] = {
        "wss_bytes": wss, "hop": hop, "hops": hops,
        "tolerance": ORACLE_TOLERANCE, "attempts": attempt,
        "source": "native wall time: %d runs of build/bench/minichase "
                  "per attempt, each a new mapping, %s" % (
                      ORACLE_RUNS, "unpinned (the chase's CPU is not "
                      "known)" if cpu is None else
                      "pinned to CPU %d as the chase was" % cpu),
        "cpu": cpu,
        "backings": out}
    bad = sorted(b for b, v in out.items() if v["agree"] is False)
    msg = bad and "chase (%s hop) disagrees with its oracle (minichase) " \
        "by over %d %% at %d bytes: %s" % (hop, ORACLE_TOLERANCE * 100, wss,
                                          ", ".join(
            "%s %.1f ns vs %.1f to %.1f ns" % (
                b, out[b]["chase_ns"], out[b]["oracle_ns_min"],
                out[b]["oracle_ns_max"]) for b in bad))
    return settle(res, key, msg, "chase oracle (%s hop) at %d bytes"
                  % (hop, wss))


def settle(res, key, msg, what):
    """The end of an oracle's check, its verdicts in res.meta[key]:
    msg, a disagreement (or nothing), fails the run (meta.json errors),
    unless the load average is above the CPU count: then it is a note,
    as wall time means little there.  Prints each backing's ratio or
    why none; 0, or 2 on a disagreement judged."""
    load = os.getloadavg()[0]
    bad = bool(msg)
    if bad and load > (os.cpu_count() or 1):
        res.meta.setdefault("notes", []).append(
            msg + "; not judged (neither passed nor failed): load "
            "average %.1f on %d CPUs" % (load, os.cpu_count() or 1))
        bad = False
    elif bad:
        res.meta["errors"].append(msg)
    res.meta[key]["load_average"] = load
    print("bench: %s: %s" % (what, ", ".join(
        "%s %s" % (b, v.get("ratio", v.get("reason")))
        for b, v in sorted(res.meta[key]["backings"].items()))), flush=True)
    res.write_meta()
    return 2 if bad else 0


# gups's oracle (issue 34, point 3): tests/bench/minigups.c, HPCC's
# RandomAccess written again with nothing of bench/ (its own LFSR, its
# lanes' starts found by stepping the stream), one untimed and one timed
# pass, both verified.  After a native run it runs ORACLE_RUNS times on the
# page size of each backing gups measured (4 KB and 2 MB: minigups has no
# 1 GB kind), pinned to gups's CPU, at gups's largest size from
# GUPS_ORACLE_MIN to GUPS_ORACLE_MAX (smaller tables live in the caches);
# gups's ns_per_update (the median of its repetitions) must lie within the
# oracle's range over one attempt, widened by ORACLE_TOLERANCE, as the
# chase's; and minigups's own verification must find no error.
GUPS_ORACLE_KINDS = {4: "4k", KB_2M: "2m"}

GUPS_ORACLE_MIN, GUPS_ORACLE_MAX = 64 * MB, 256 * MB


def minigups(bindir, kind, wss, runs=ORACLE_RUNS, cpu=None):
    """([ns per update of each of runs runs of minigups], None) or (None,
    why); cpu: the one CPU it runs on (None: wherever the scheduler puts
    it)."""
    got, exe = [], os.path.join(bindir, "minigups")
    if not os.access(exe, os.X_OK):
        return None, "%s is not built (make bench-native builds it)" % exe
    pin = None if cpu is None else \
        (lambda: os.sched_setaffinity(0, {cpu}))
    for _ in range(runs):
        p = subprocess.run([exe, kind, str(wss)], capture_output=True,
                           text=True, preexec_fn=pin)
        m = re.match(r"ns_per_update ([0-9.]+)\nerrors 0\n", p.stdout)
        if p.returncode or not m:
            return None, (p.stderr.strip() or p.stdout.strip() or
                          "exit %d" % p.returncode)
        got.append(float(m.group(1)))
    return got, None


def check_gups_oracle(res, bindir):
    """minigups against gups's rows in res (meta.json gups_oracle): 0, or
    2 on a disagreement (after ORACLE_ATTEMPTS rounds of oracle runs)."""
    try:
        with open(res.csv_path("gups")) as f:
            rows = [r for r in csv.DictReader(f)
                    if GUPS_ORACLE_MIN <= int(r["table_bytes"]) <=
                    GUPS_ORACLE_MAX]
    except OSError:
        rows = []
    if not rows:
        res.meta["gups_oracle"] = {
            "backings": {},
            "reason": "not checked: no gups table from %d to %d MB"
                      % (GUPS_ORACLE_MIN // MB, GUPS_ORACLE_MAX // MB)}
        res.write_meta()
        return 0
    wss = max(int(r["table_bytes"]) for r in rows)
    rows = [r for r in rows if int(r["table_bytes"]) == wss]
    cpu = res.meta.get("method", {}).get("per_bench", {}).get(
        "gups", {}).get("cpu_pinned")
    cpu = cpu if isinstance(cpu, int) and cpu >= 0 else None
    runs, why, out = {}, {}, {}
    for attempt in range(1, ORACLE_ATTEMPTS + 1):
        for kb in {int(r["page_kb"]) for r in rows}:
            if kb not in GUPS_ORACLE_KINDS or kb in why:
                why.setdefault(kb, "no oracle for %d kB pages" % kb)
                continue
            got, err = minigups(bindir, GUPS_ORACLE_KINDS[kb], wss, cpu=cpu)
            if err:
                why[kb] = err
            else:
                runs[kb] = got
        out = {}
        for r in rows:
            kb = int(r["page_kb"])
            if kb in runs:
                v = oracle_verdict(float(r["ns_per_update"]), runs[kb])
                v["gups_ns"] = v.pop("chase_ns")
            else:
                v = {"agree": None, "reason": why[kb]}
            out[r["backing"]] = dict(v, page_kb=kb)
        if all(v["agree"] is not False for v in out.values()):
            break
    res.meta["gups_oracle"] = {
        "table_bytes": wss, "tolerance": ORACLE_TOLERANCE,
        "attempts": attempt,
        "source": "native wall time: %d runs of build/bench/minigups per "
                  "attempt, each a new mapping, %s" % (
                      ORACLE_RUNS, "unpinned (gups's CPU is not known)"
                      if cpu is None else "pinned to CPU %d as gups was"
                      % cpu),
        "cpu": cpu, "backings": out}
    bad = sorted(b for b, v in out.items() if v["agree"] is False)
    msg = bad and "gups disagrees with its oracle (minigups) by over %d %% " \
        "at a %d-byte table: %s" % (ORACLE_TOLERANCE * 100, wss, ", ".join(
            "%s %.2f ns vs %.2f to %.2f ns" % (
                b, out[b]["gups_ns"], out[b]["oracle_ns_min"],
                out[b]["oracle_ns_max"]) for b in bad))
    return settle(res, "gups_oracle", msg,
                  "gups oracle at a %d-byte table" % wss)


# tlbflush's oracle (issue 34, point 1; shootdowns.py): the kernel's own
# count of TLB shootdowns (/proc/interrupts' TLB line), read by this
# script around short runs of its own of tlbflush (anon: devzero at two
# threads and one, maphugetlb at two), against the operations each row
# claims.
def check_tlbflush_oracle(res, bindir):
    """shootdowns.check on devzero anon at 2 and 1 threads and maphugetlb
    anon at 2 (meta.json tlbflush_oracle): 0, or 2 when the count
    disagrees."""
    out = {}
    two = len(os.sched_getaffinity(0)) > 1
    # devzero's 4 KB drops at two threads and one, and a 2 MB backing's
    # (maphugetlb, from the pool the run raised) at two
    for b, size, n in ([("devzero", "1M", 2)] if two else []) + \
            [("devzero", "1M", 1)] + \
            ([("maphugetlb", "4M", 2)] if two else []):
        v = shootdowns.check(bindir, backing=b, size=size, threads=n)
        out["%s anon %d thread%s" % (b, n, "s" if n > 1 else "")] = {
            "agree": v["ok"], "reason": v["why"],
            "shootdowns": v.get("delta"), "noise": v.get("noise"),
            "ops": int(v["row"]["ops"]) if v.get("row") else None,
            "flush_via": v.get("flush_via")}
    res.meta["tlbflush_oracle"] = {
        "source": "/proc/interrupts TLB line read by bench/run.py around "
                  "its own runs of build/bench/tlbflush (one repetition)",
        "backings": out}
    bad = sorted(k for k, v in out.items() if v["agree"] is False)
    msg = bad and "tlbflush: the kernel's shootdown count disagrees with " \
        "the operations claimed: " + "; ".join(out[k]["reason"] for k in bad)
    return settle(res, "tlbflush_oracle", msg, "tlbflush oracle")


# faultlat's oracle (issue 34, point 2): plots/benches/faultlat.py
# check_row on every row, each against its own sources (the loop's wall
# time, getrusage's fault count, smaps and pagemap).  A row whose count
# or page size disagrees fails the run; one whose clock does is judged as
# the timing oracles are (settle(): a note when the load average is over
# the CPU count, since a preemption between two timed stores lands in no
# fault's time).
def check_faultlat_oracle(res, bindir):
    """check_row over faultlat.csv in res (meta.json faultlat_oracle): 0,
    or 2 on a disagreement."""
    from plots.benches.faultlat import check_row
    del bindir
    try:
        with open(res.csv_path("faultlat")) as f:
            rows = list(csv.DictReader(f))
    except OSError:
        rows = []
    out = {}
    for r in rows:
        bad = check_row(r)
        out["%s/%s" % (r["backing"], r["condition"])] = {
            "agree": not bad, "ratio": "ok" if not bad else "; ".join(bad),
            "clock_only": bool(bad) and all(x.startswith("clock") for x in bad)}
    res.meta["faultlat_oracle"] = {
        "source": "check_row: per-fault times against the loop's wall "
                  "time, faults against getrusage, page size against "
                  "smaps and pagemap", "backings": out}
    hard = sorted(k for k, v in out.items()
                  if not v["agree"] and not v["clock_only"])
    if hard:
        res.meta["errors"].append(
            "faultlat disagrees with its oracle: " + ", ".join(
                "%s: %s" % (k, out[k]["ratio"]) for k in hard))
    clock = sorted(k for k, v in out.items() if v["clock_only"])
    msg = clock and "faultlat's per-fault clock disagrees with the loop's " \
        "wall time: " + ", ".join("%s: %s" % (k, out[k]["ratio"])
                                   for k in clock)
    rc = settle(res, "faultlat_oracle", msg, "faultlat oracle")
    return 2 if hard else rc


# A benchmark's independent check after its native run: 0, or an exit
# status that fails the run.
ORACLES = {"chase": check_chase_oracle, "gups": check_gups_oracle,
           "tlbflush": check_tlbflush_oracle,
           "faultlat": check_faultlat_oracle}

# What a benchmark's native run measures after it (and after its oracle),
# given its command; it records its result or why there is none in
# meta.json and never fails the run: the chase's walk cost under perf
# stat (walk.py).
AFTER = {"chase": walk_cost}
