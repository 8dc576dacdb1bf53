#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""What page walks cost, from `perf stat` where a PMU counts them (issue 29
section 6).  Walk counts alone cannot say what a walk costs; the cycles a
walk is in progress can.

    walkcost.py events CPUID
        the events to count, one line each: ROLE PERF_EVENT NAME, and a
        last line "perf stat -x, -e ...": the command's event list
    walkcost.py report CPUID [FILE] --accesses N [--ns NS]
        reads that command's `perf stat -x,` output (FILE or stdin) and
        prints walk cost per access and per walk, each number with where
        it came from

CPUID is an x86 id as perf writes it (GenuineIntel-6-55-4, as `benchtool
events` takes it) or an arm64 MIDR as perf's mapfile.csv writes it
(0x00000000410fd0c0; variant and revision are ignored, as perf does).

Events come from perf's own tables of the kernel tree the project builds
(build/pmu-events, extracted by bench/bench.mk): on x86 the roles of
bench/pmu.h (`benchtool events`, bench/events/gen_table.py says what each
counts per vendor); on arm64 the core's JSON under arch/arm64, whose
ArchStdEvent names are resolved in common-and-microarch.json:

  l1_miss      L1D_TLB_REFILL (0x05)
  walk         DTLB_WALK (0x34): data accesses that caused a walk
  walk_pending DTLB_WALK_PERCYC: walks in progress, summed over cycles.
               Linux 6.12's tables do not have it; Arm's architecture
               numbers it 0x8128 (later perf tables and libpfm4 give the
               same), so it is counted raw and said so, and a core that
               does not implement it reads <not supported>

Per vendor, what a walk count means differs: Intel's walk role counts
completed walks; AMD's (0xf045) counts walks *requested* (L2 DTLB
misses), and only Zen 1 to 3 have a completed-walk count
(ls_tablewalker.dside); Zen 3 to 5 count reloads of coalesced entries
(four adjacent 4 KB pages in one L2 entry) apart.  AMD's tables have no
walk-duration event, so on AMD cycles per walk are not known and the
report says so.

perf stat -x, (tools/perf/Documentation/perf-stat.txt, CSV FORMAT) prints
per event: counter value, unit, event name, run time, percentage of the
time it ran, then optional fields; a value of <not supported> or <not
counted> is no count.  Counts perf scaled up from a multiplexed counter
(percentage under 100) are flagged.  On a hybrid part perf prints a
generic event once per core PMU (cpu_core/cycles/, cpu_atom/cycles/):
their counts are summed, and a core type's <not counted> (the process
never ran there) does not hide the other's count.

bench/run.py --mode native runs this after the chase, on each backing
(bench/benchrun/walk.py, meta.json walk_cost).
"""
import argparse
import csv
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCHTOOL = os.path.join(ROOT, "build", "bench", "benchtool")
ARM64 = os.path.join(ROOT, "build", "pmu-events", "tools", "perf",
                     "pmu-events", "arch", "arm64")

# Arm's architected number of DTLB_WALK_PERCYC, for tables without it
ARM_DTLB_WALK_PERCYC = 0x8128
# MIDR bits perf ignores when it matches mapfile.csv: variant, revision
MIDR_VARIANT_REVISION = 0x00f0000f

SOURCE = "hardware counter (perf stat)"


class Error(Exception):
    pass


def x86_roles(cpuid, benchtool=BENCHTOOL):
    """{role: [(event name, config, pmu)] or reason} from benchtool
    events, for the first core PMU (cpu, or cpu_core on hybrid parts)"""
    out = subprocess.run([benchtool, "events", "--cpuid", cpuid],
                         capture_output=True, text=True)
    if out.returncode:
        raise Error(out.stderr.strip() or "benchtool events failed")
    roles, pmu = {}, None
    for line in out.stdout.splitlines()[1:]:
        f = line.split(" ", 3)
        if f[0] == "preset":
            if pmu is None:
                pmu = f[2]
            continue
        this = f[2] if f[1] == "none" else f[3]
        if pmu is not None and this != pmu:
            continue            # the second PMU of a hybrid part
        if f[1] == "none":
            roles[f[0]] = f[3]
        else:
            roles[f[0]] = [(n, int(c, 16), this) for n, c in
                           zip(f[1].split("+"), f[2].split("+"))]
    return roles


def arm_row(midr, arm64):
    """the core's JSON directory of perf's arm64 mapfile row for midr"""
    want = int(midr, 16) & ~MIDR_VARIANT_REVISION
    with open(os.path.join(arm64, "mapfile.csv")) as f:
        for row in csv.reader(ln for ln in f if not ln.startswith("#")):
            if len(row) >= 4 and row[3] == "core" and \
                    int(row[0], 16) & ~MIDR_VARIANT_REVISION == want:
                return row[2]
    raise Error("no row of perf's arm64 mapfile.csv matches MIDR %s" % midr)


def arm_roles(midr, arm64=ARM64):
    """{role: [(event name, config, pmu)] or reason} from perf's arm64
    tables"""
    model = arm_row(midr, arm64)
    with open(os.path.join(arm64, "common-and-microarch.json")) as f:
        std = {e["EventName"]: int(e["EventCode"], 16) for e in json.load(f)
               if "EventName" in e and "EventCode" in e}
    have = {}
    d = os.path.join(arm64, model)
    for name in sorted(os.listdir(d)):
        if name.endswith(".json"):
            with open(os.path.join(d, name)) as f:
                for e in json.load(f):
                    n = e.get("ArchStdEvent") or e.get("EventName")
                    code = e.get("EventCode")
                    have[n] = int(code, 16) if code else std.get(n)
    roles = {"stlb_hit": "not counted on Arm: L2D_TLB and L2D_TLB_REFILL "
                         "count a unified L2 TLB's instruction-side "
                         "accesses too",
             "walk_completed": "Arm counts walks (DTLB_WALK) without "
                               "telling completed ones apart"}
    for role, name in (("l1_miss", "L1D_TLB_REFILL"), ("walk", "DTLB_WALK")):
        if have.get(name) is None:
            roles[role] = "%s's JSON has no %s" % (model, name)
        else:
            roles[role] = [(name, have[name], "cpu")]
    if have.get("DTLB_WALK_PERCYC") is not None:
        roles["walk_pending"] = [("DTLB_WALK_PERCYC",
                                  have["DTLB_WALK_PERCYC"], "cpu")]
    else:
        # not in these tables: Arm's number, said so in the name
        roles["walk_pending"] = [("DTLB_WALK_PERCYC (0x8128, not in this "
                                  "tree's perf tables)",
                                  ARM_DTLB_WALK_PERCYC, "cpu")]
    return model, roles


def roles_of(cpuid, benchtool=BENCHTOOL, arm64=ARM64):
    """(arch, {role: parts or reason})"""
    if re.fullmatch(r"0x[0-9a-fA-F]+", cpuid):
        return "arm64", arm_roles(cpuid, arm64)[1]
    return "x86", x86_roles(cpuid, benchtool)


def perf_event(config, pmu):
    """the -e spelling of a raw event; perf prints it back as the name"""
    return "r%x" % config if pmu == "cpu" else "%s/config=0x%x/" % (pmu,
                                                                   config)


def event_list(roles):
    """[(roles joined by "+", perf event, event name)], cycles and
    instructions first, each raw event once"""
    out = [["cycles", "cycles", "cycles"],
           ["instructions", "instructions", "instructions"]]
    seen = {}
    for role, parts in roles.items():
        if isinstance(parts, str):
            continue
        for name, config, pmu in parts:
            ev = perf_event(config, pmu)
            if ev in seen:
                seen[ev][0] += "+" + role
            else:
                seen[ev] = [role, ev, name]
                out.append(seen[ev])
    return [tuple(e) for e in out]


def parse_perf_stat(text):
    """{event as perf printed it (lower case, a PMU prefix of a generic
    event removed): (count or None, percentage running or None, why)}"""
    out = {}
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        f = line.split(",")
        if len(f) < 3:
            continue
        value, event = f[0].strip(), f[2].strip().lower()
        m = re.fullmatch(r"[a-z_0-9]+/([a-z-]+)/", event)
        if m:
            event = m.group(1)          # cpu_core/cycles/ -> cycles
        pct = None
        if len(f) > 4 and f[4].strip():
            try:
                pct = float(f[4])
            except ValueError:
                pct = None
        if value.startswith("<"):
            # a generic event of a hybrid part: the other core type's
            # line (<not counted> where the process never ran there)
            # leaves a count alone
            out.setdefault(event, (None, pct, "perf: " + value))
            continue
        try:
            n = float(value)
        except ValueError:
            raise Error("perf stat line %r: %r is no count" % (line, value))
        old = out.get(event)
        if old is not None and old[0] is not None:
            # counted on both core types of a hybrid part: the process's
            # count is the sum
            n += old[0]
            pct = min(p for p in (pct, old[1]) if p is not None) \
                if pct is not None or old[1] is not None else None
        out[event] = (n, pct, None)
    return out


def role_count(role, roles, counts):
    """(sum of the role's parts, flags) or (None, why)"""
    parts = roles.get(role)
    if parts is None:
        return None, "no such role here"
    if isinstance(parts, str):
        return None, parts
    total, flags = 0.0, []
    for name, config, pmu in parts:
        got = counts.get(perf_event(config, pmu).lower())
        if got is None:
            return None, "%s (%s) not in the perf stat output" % (
                name, perf_event(config, pmu))
        value, pct, why = got
        if value is None:
            return None, "%s: %s" % (name, why)
        if pct is not None and pct < 100:
            flags.append("%s ran %.1f %% of the time (perf scaled it)" %
                         (name, pct))
        total += value
    return total, flags


def report(arch, roles, counts, accesses, ns=None):
    """[(quantity, value or None, source or why)]"""
    rows = []
    raw = {}
    for r in ("cycles", "instructions"):
        got = counts.get(r)
        raw[r] = got[0] if got else None
    for r in ("l1_miss", "walk", "stlb_hit", "walk_completed",
              "walk_active", "walk_pending", "coalesced"):
        raw[r], _ = role_count(r, roles, counts)
    amd = arch == "x86" and isinstance(roles.get("stlb_hit"), str) and \
        "AMD" in roles["stlb_hit"]
    flags = []
    for r in roles:
        v, f = role_count(r, roles, counts)
        if v is not None:
            flags += f

    def ratio(name, num, den, scale, src, why=None):
        a, b = raw.get(num), raw.get(den) if isinstance(den, str) else den
        if a is None or not b:
            missing = num if a is None else den
            if why is None:
                why = role_count(missing, roles, counts)[1] if \
                    missing in roles else "%s not counted" % missing
            rows.append((name, None, why))
        else:
            rows.append((name, scale * a / b, src))

    rows.append(("ns_per_access", ns,
                 "wall time (the benchmark's)" if ns is not None else
                 "not given (--ns)"))
    ratio("cycles_per_access", "cycles", accesses, 1, SOURCE)
    ratio("instructions_per_cycle", "instructions", "cycles", 1, SOURCE)
    ratio("l1_misses_per_1k", "l1_miss", accesses, 1000, SOURCE)
    ratio("walks_per_1k", "walk", accesses, 1000, SOURCE + (
        ": walks requested (L2 DTLB misses), not completed" if amd else ""))
    ratio("completed_walks_per_1k", "walk_completed", accesses, 1000, SOURCE)
    if amd:
        # AMD: an L1 miss either hits the L2 DTLB or requests a walk
        a, b = raw.get("l1_miss"), raw.get("walk")
        rows.append(("stlb_hits_per_1k",
                     None if a is None or b is None else
                     1000 * (a - b) / accesses,
                     SOURCE + ": l1_miss - walk"))
    else:
        ratio("stlb_hits_per_1k", "stlb_hit", accesses, 1000, SOURCE)
    if "coalesced" in roles and not isinstance(roles["coalesced"], str):
        ratio("coalesced_reloads_per_1k", "coalesced", accesses, 1000,
              SOURCE)
    # a walk's cycles: walks in progress summed over cycles, per walk
    per_walk = "walk_completed" if arch == "x86" else "walk"
    ratio("cycles_per_walk", "walk_pending", per_walk, 1, SOURCE)
    ratio("walk_cycles_per_access", "walk_pending", accesses, 1, SOURCE)
    if arch == "x86":
        ratio("walks_in_flight", "walk_pending", "walk_active", 1, SOURCE)
        ratio("walk_active_share_of_cycles", "walk_active", "cycles", 1,
              SOURCE)
    for f in flags:
        rows.append(("note", None, f))
    return rows


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    ev = sub.add_parser("events")
    ev.add_argument("cpuid")
    rp = sub.add_parser("report")
    rp.add_argument("cpuid")
    rp.add_argument("--accesses", type=int, required=True)
    rp.add_argument("--ns", type=float)
    rp.add_argument("file", nargs="?")
    for p in (ev, rp):
        p.add_argument("--benchtool", default=BENCHTOOL)
        p.add_argument("--arm64", default=ARM64)
    a = ap.parse_args(argv)
    try:
        arch, roles = roles_of(a.cpuid, a.benchtool, a.arm64)
        if a.cmd == "events":
            evs = event_list(roles)
            for role, e, name in evs:
                print(role, e, name)
            for role, parts in roles.items():
                if isinstance(parts, str):
                    print(role, "none", parts)
            print("perf stat -x, -e " + ",".join(e for _, e, _ in evs))
            return 0
        if a.accesses < 1:
            raise Error("--accesses must be at least 1")
        text = open(a.file).read() if a.file else sys.stdin.read()
        for name, value, src in report(arch, roles, parse_perf_stat(text),
                                       a.accesses, a.ns):
            print("%s %s %s" % (name, "-" if value is None else
                                "%.3f" % value, src))
        return 0
    except (Error, OSError) as e:
        sys.stderr.write("walkcost: %s\n" % e)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
