# SPDX-License-Identifier: GPL-2.0
"""What a page walk costs, where a PMU counts it (issue 29 section 6):
after the chase's native run, for each backing it measured on the page
hop, the chase once more at that backing's largest page-hop size, one
backing, pinned to the CPU the chase pinned to, under `perf stat -x, -e
EVENTS` with bench/walkcost.py's events for this CPU (perf's own tables:
Intel's dtlb_load_misses.walk_active/walk_pending/walk_completed/
stlb_hit, AMD's walk events, Arm's DTLB_WALK and DTLB_WALK_PERCYC; cycles
and instructions), and walkcost.py's report of it into meta.json
walk_cost.

perf stat counts the whole process: besides the timed repetitions the
chase maps and faults in its working set and builds its cycle (a
shuffle that swaps each element with a random one), work of the order
of a repetition's (a 1 GB page hop: 262144 faults and swaps against a
repetition's 1M hops).  So each
backing runs twice, with 1 and with 1 + R timed repetitions (R: the
repetitions of the chase's row), all else equal, and the shorter run's
counts are taken from the longer's: what is left is R repetitions of
`hops` chased accesses (the rows' reps and hops columns; no untimed pass
between repetitions, --warm-pass 0, so each repetition is one pass of
the cycle).  The TLB model is off in these runs (--model none): its
replay is not what is counted.  Its own counter group is off
(BENCH_PMU_OFF, bench/counters.c), so perf's events have the PMU's
counters to themselves: on Intel with SMT, perf's four raw events and
the chase's two would not fit four general-purpose counters, and perf
would multiplex them.

Where perf is missing, the CPU has no PMU (perf stat reads cycles as
<not supported> or <not counted>, or cannot open them), the CPU's id or
its events cannot be resolved, meta.json walk_cost records why, once,
and the run goes on: the walk cost never fails a run."""

import csv
import json
import os
import shutil
import subprocess
import tempfile

from bench import walkcost

from .base import read_text

HOP = "page"
# timed repetitions of the shorter of the two runs per backing
SHORT_REPS = 1
# seconds one chase under perf stat may take
PERF_TIMEOUT = 1800
# where a kernel for arm64 tells the MIDR perf matches its tables by
MIDR = "sys/devices/system/cpu/cpu%d/regs/identification/midr_el1"


def set_opts(cmd, opts):
    """cmd with each --NAME's value set to opts[NAME]: replaced where cmd
    has it, appended where not."""
    out = list(cmd)
    for name, value in opts.items():
        flag = "--" + name
        at = [i for i, a in enumerate(out[:-1]) if a == flag]
        for i in at:
            out[i + 1] = str(value)
        if not at:
            out += [flag, str(value)]
    return out


def chase_output(text):
    """(rows as dicts, @meta method, @error lines) of the chase's stdout
    (the line protocol, bench/rows.h)."""
    header, rows, method, errors = None, [], {}, []
    for line in text.splitlines():
        tag, _, rest = line.partition(" ")
        if tag == "@header":
            header = rest.partition(" ")[2].split(",")
        elif tag == "@row" and header:
            rows.append(dict(zip(header, rest.partition(" ")[2].split(","))))
        elif tag == "@meta" and rest.startswith("method "):
            try:
                method = json.loads(rest.partition(" ")[2])
            except ValueError:
                pass
        elif tag == "@error":
            errors.append(rest)
    return rows, method, errors


def page_hop_targets(path):
    """{backing: its row at its largest page-hop size} of chase.csv"""
    try:
        with open(path) as f:
            rows = [r for r in csv.DictReader(f) if r.get("hop") == HOP]
    except OSError:
        return {}
    out = {}
    for r in rows:
        b = r["backing"]
        if b not in out or int(r["wss_bytes"]) > int(out[b]["wss_bytes"]):
            out[b] = r
    return out


def cpu_id(meta, cpu, sys_root="/"):
    """(perf's id of the chase's CPU, None) or (None, why): an x86 id as
    the chase read it (@meta pmu, meta.json other.pmu.cpuid), else an
    arm64 MIDR from sysfs"""
    pmu = (meta.get("other") or {}).get("pmu") or {}
    if isinstance(pmu, dict) and pmu.get("cpuid"):
        return pmu["cpuid"], None
    path = os.path.join(sys_root, MIDR % (cpu if cpu is not None else 0))
    midr = read_text(path)
    if midr:
        return midr, None
    return None, ("the CPU's id is not known: the chase reported none "
                  "(@meta pmu cpuid) and /%s is not readable" %
                  os.path.relpath(path, sys_root))


def perf_stat(perf, events, cmd, timeout=PERF_TIMEOUT, pin=None):
    """(perf stat -x, output, the command's stdout, None) or (None, stdout,
    why)"""
    fd, out = tempfile.mkstemp(prefix="walkcost-", suffix=".csv")
    os.close(fd)
    try:
        try:
            # the chase's own counter group off (bench/counters.c): it
            # would share the PMU with perf's events and multiplex them
            p = subprocess.run([perf, "stat", "-x,", "-o", out, "-e",
                                ",".join(events), "--"] + cmd,
                               capture_output=True, text=True,
                               errors="replace", timeout=timeout,
                               preexec_fn=pin,
                               env=dict(os.environ, BENCH_PMU_OFF="1"))
        except subprocess.TimeoutExpired:
            return None, "", "perf stat of %s ran past %d s" % (
                os.path.basename(cmd[0]), timeout)
        except OSError as e:
            return None, "", "perf stat could not run: %s" % e
        with open(out, errors="replace") as f:
            text = f.read()
        if p.returncode:
            last = (p.stderr.strip().splitlines() or ["no message"])[-1]
            return None, p.stdout, "perf stat -e %s -- %s exited %d: %s" % (
                ",".join(events), os.path.basename(cmd[0]), p.returncode,
                last)
        return text, p.stdout, None
    finally:
        os.unlink(out)


def no_pmu(perf, cpu):
    """Why perf stat counts no cycles of a process on cpu, or None: the
    cheap probe (`perf stat -e cycles -- true`) before any chase runs."""
    pin = None if cpu is None else (lambda: os.sched_setaffinity(0, {cpu}))
    text, _, why = perf_stat(perf, ["cycles"], ["true"], timeout=60,
                             pin=pin)
    if why:
        return "perf cannot count cycles: " + why
    got = walkcost.parse_perf_stat(text).get("cycles")
    if got is None:
        return "no PMU: perf stat -e cycles printed no cycles"
    if got[0] is None:
        return "no PMU: perf stat -e cycles read %s" % got[2].replace(
            "perf: ", "")
    return None


def difference(short, long):
    """{event: (long - short, the lesser running percentage, why)} of two
    parse_perf_stat() results: counts of the longer run alone"""
    out = {}
    for ev, (value, pct, why) in long.items():
        s = short.get(ev)
        if s is None:
            out[ev] = (None, pct, "not in the shorter run's perf stat output")
        elif value is None or s[0] is None:
            out[ev] = (None, pct, why or s[2])
        else:
            pcts = [p for p in (pct, s[1]) if p is not None]
            out[ev] = (value - s[0], min(pcts) if pcts else None, None)
    return out


def one_backing(perf, events, arch, roles, cmd, row, cpu):
    """walk_cost's entry of one backing: report and counts, or reason"""
    wss, b = int(row["wss_bytes"]), row["backing"]
    reps = int(row["reps"])         # the chase's timed repetitions
    base = {"wss_bytes": wss, "page_kb": int(row["page_kb"]), "hop": HOP}
    runs = {}
    for n in (SHORT_REPS, SHORT_REPS + reps):
        opts = {"sizes": wss, "hop": HOP, "backings": b, "reps": n,
                "warm-pass": 0, "model": "none"}
        if cpu is not None:
            opts["cpu"] = cpu
        text, out, why = perf_stat(perf, events, set_opts(cmd, opts))
        got, method, errors = chase_output(out)
        mine = [r for r in got if r.get("backing") == b and
                r.get("hop") == HOP and int(r["wss_bytes"]) == wss]
        if why is None and not mine:
            why = "the chase under perf stat gave no %s-hop row of %s at " \
                "%d bytes%s" % (HOP, b, wss, (": " + errors[0]) if errors
                                else "")
        if why:
            return dict(base, reason=why)
        runs[n] = (walkcost.parse_perf_stat(text), mine[0], method)
    (s_counts, s_row, _), (l_counts, l_row, l_method) = \
        runs[SHORT_REPS], runs[SHORT_REPS + reps]
    hops = int(l_row["hops"])
    if int(s_row["hops"]) != hops:
        return dict(base, reason="the two runs chased %s and %s hops per "
                    "repetition" % (s_row["hops"], hops))
    passes = 1 + int(l_method.get("warm_pass", 0) or 0)
    accesses = (int(l_row["reps"]) - int(s_row["reps"])) * passes * hops
    ns = float(row["ns_per_access"]) if row.get("ns_per_access") else None
    counts = difference(s_counts, l_counts)
    rep = walkcost.report(arch, roles, counts, accesses, ns)
    return dict(
        base, accesses=accesses, hops=hops,
        reps=[int(s_row["reps"]), int(l_row["reps"])],
        ns_source="chase.csv ns_per_access of this backing at this size "
                  "(the chase's median repetition)",
        counts={ev: [runs[SHORT_REPS][0].get(ev, (None,))[0],
                     l_counts[ev][0]] for ev in l_counts},
        report={name: {"value": v, "source": src}
                for name, v, src in rep if name != "note"},
        notes=[src for name, _, src in rep if name == "note"])


def walk_cost(res, bindir, cmd, sys_root="/"):
    """meta.json walk_cost after the chase's native run: {source, cpuid,
    cpu, events, backings: {name: ...}} or {reason}.  Always 0: the walk
    cost is never a reason to fail a run."""
    cpu = res.meta.get("method", {}).get("per_bench", {}).get(
        "chase", {}).get("cpu_pinned")
    cpu = cpu if isinstance(cpu, int) and cpu >= 0 else None
    out = {"hop": HOP, "cpu": cpu}
    try:
        out.update(measure(res, bindir, cmd, cpu, sys_root))
    except (OSError, ValueError, KeyError, walkcost.Error) as e:
        out["reason"] = "not measured: %s: %s" % (type(e).__name__, e)
    res.meta["walk_cost"] = out
    res.write_meta()
    if "reason" in out:
        print("bench: walk cost %s" % out["reason"],
              flush=True)
    else:
        print("bench: walk cost (perf stat) of %s" % ", ".join(
            "%s %s" % (b, "%.1f cycles/walk" % v["report"]
                       ["cycles_per_walk"]["value"]
                       if v.get("report", {}).get("cycles_per_walk", {})
                       .get("value") is not None else "measured"
                       if "report" in v else "not measured")
            for b, v in sorted(out["backings"].items())), flush=True)
    return 0


def measure(res, bindir, cmd, cpu, sys_root):
    """walk_cost's keys but hop and cpu (see walk_cost)"""
    targets = page_hop_targets(res.csv_path("chase"))
    if not targets:
        return {"reason": "not measured: chase.csv has no %s-hop row" % HOP}
    perf = shutil.which("perf")
    if perf is None:
        return {"reason": "not measured: perf is not installed (no perf "
                          "on PATH)"}
    why = no_pmu(perf, cpu)
    if why:
        return {"reason": "not measured: " + why}
    cpuid, why = cpu_id(res.meta, cpu, sys_root)
    if why:
        return {"reason": "not measured: " + why}
    try:
        arch, roles = walkcost.roles_of(
            cpuid, benchtool=os.path.join(bindir, "benchtool"))
    except (walkcost.Error, OSError) as e:
        return {"reason": "not measured: the walk events of CPU %s cannot "
                          "be resolved from perf's tables: %s" % (cpuid, e)}
    events = walkcost.event_list(roles)
    names = [e for _, e, _ in events]
    return {
        "source": "hardware counters: perf stat -x, -e %s on the chase "
                  "(%s hop, one backing, %s), each backing's count of "
                  "%d timed repetition taken from that of 1 + its rows' "
                  "reps (bench/benchrun/walk.py); quantities by "
                  "bench/walkcost.py" % (
                      ",".join(names), HOP, "pinned to CPU %d" % cpu
                      if cpu is not None else "unpinned", SHORT_REPS),
        "perf": perf, "cpuid": cpuid, "arch": arch,
        "events": [list(e) for e in events],
        "not_counted": {r: p for r, p in roles.items()
                        if isinstance(p, str)},
        "backings": {b: one_backing(perf, names, arch, roles, cmd, row, cpu)
                     for b, row in targets.items()}}
