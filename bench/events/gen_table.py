#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn perf's pmu-events JSON for x86 into the C table of bench/pmu.h.

    gen_table.py ARCH_X86_DIR OUT.c

ARCH_X86_DIR is tools/perf/pmu-events/arch/x86 of the kernel tree (the
build extracts it from the same linux-source tarball the kernel is built
from, see bench/bench.mk).  For every row of its mapfile.csv and every core
PMU the model's JSON names (cpu_core and cpu_atom on hybrid parts, the
plain "cpu" PMU otherwise) the table holds these roles:

  l1_miss         loads that missed the first-level data TLB
  walk            page walks caused by loads: completed ones on Intel;
                  on AMD walks *requested* (L2 DTLB misses, 0xf045: "page-
                  table walks are requested", in perf's own description of
                  ls_l1_d_tlb_miss.all_l2_miss), cancelled ones included
  stlb_hit        first-level misses that hit the second level (Intel:
                  DTLB_LOAD_MISSES.STLB_HIT; on AMD it is l1_miss - walk)
  walk_completed  walks that completed: Intel's walk event again; AMD's
                  ls_tablewalker.dside (Zen 1 to 3: "Total Page Table
                  Walks on D-side"); Zen 4 and 5's JSON has none
  walk_active     cycles with at least one load walk in progress:
                  DTLB_LOAD_MISSES.WALK_ACTIVE, or WALK_DURATION (Haswell,
                  Broadwell: cycles the page-miss handler is busy)
  walk_pending    walks in progress summed over cycles:
                  DTLB_LOAD_MISSES.WALK_PENDING, so pending / completed is
                  the cycles a walk takes and pending / active the walks
                  in flight; AMD's JSON has no walk-duration event
  coalesced       AMD: first-level misses on coalesced L2 entries (one
                  entry for four adjacent 4 KB pages, "a 16k page"; umasks
                  0x02 hit and 0x20 miss of event 0x45, Zen 3 to 5), which
                  the TLB model leaves out

bench/walkcost.py turns a `perf stat` of these roles, with cycles and
instructions, into what walks cost; on Arm it reads perf's arm64 tables
itself.

Each role is the first rule below whose events the model's JSON has:

  walk:    DTLB_LOAD_MISSES.WALK_COMPLETED             Intel, most cores
           sum of DTLB_LOAD_MISSES.WALK_COMPLETED_4K,  Goldmont Plus (no
             _2M_4M and _1GB                           all-sizes event)
           PAGE_WALKS.D_SIDE_WALKS                     Silvermont, KNL
           ls_l1_d_tlb_miss.all_l2_miss                AMD Zen 4, Zen 5
           l2_dtlb_misses (recommended.json)           AMD Zen 1 .. Zen 3
  l1_miss: ls_l1_d_tlb_miss.all                        AMD (one event)
           DTLB_LOAD_MISSES.STLB_HIT + the walk events Intel cores with
                                                       a second-level TLB
           MEM_UOPS_RETIRED.UTLB_MISS(_LOADS)          Silvermont, KNL
           DATA_TLB_MISSES.L0_DTLB_MISS_LD             Bonnell

Intel has no single "L1 dTLB load miss" event on Sandy Bridge and later:
an L1 miss either hits the STLB (STLB_HIT) or walks, so the role is the
sum of the two, counted as separate events and added.  Walks that start
but do not complete (aborted on a wrong path) are in neither count.  On
AMD an L2 DTLB miss is what starts a walk: l2_dtlb_misses and
.all_l2_miss are unit mask 0xf0 of event 0x45, the same 0xf045 the kernel
uses for the generic DTLB read-miss event on family 17h and later
(arch/x86/events/amd/core.c).  A role with no rule that fits gets a reason
naming what was looked for.  A walk or miss event whose encoding the JSON
also gives to a cycle-counting event is not trusted (bonnell lists
PAGE_WALKS.D_SIDE_WALKS with the encoding of PAGE_WALKS.D_SIDE_CYCLES).
"""
import csv
import json
import os
import sys

CORE_UNITS = ("cpu_core", "cpu_atom")
WALK_SIZES = ["DTLB_LOAD_MISSES.WALK_COMPLETED_4K",
              "DTLB_LOAD_MISSES.WALK_COMPLETED_2M_4M",
              "DTLB_LOAD_MISSES.WALK_COMPLETED_1GB"]
MAX_PARTS = 3


def num(v):
    return int(v, 0) if isinstance(v, str) else int(v or 0)


def encode(e):
    """perf_event_attr.config of a core event (kernel format attributes:
    event config:0-7 (AMD also 32-35), umask 8-15, edge 18, inv 23,
    cmask 24-31)."""
    code = num(e.get("EventCode", "0"))
    cfg = (code & 0xff) | ((code >> 8) & 0xf) << 32
    cfg |= (num(e.get("UMask", "0")) & 0xff) << 8
    cfg |= (num(e.get("EdgeDetect", "0")) & 1) << 18
    cfg |= (num(e.get("Invert", "0")) & 1) << 23
    cfg |= (num(e.get("CounterMask", "0")) & 0xff) << 24
    return cfg


def load_events(model_dir):
    """{unit: {name: config}} of the model's core events."""
    units = {}
    clash = {}
    for f in sorted(os.listdir(model_dir)):
        if not f.endswith(".json") or "metric" in f or "uncore" in f:
            continue
        with open(os.path.join(model_dir, f)) as fh:
            data = json.load(fh)
        for e in data if isinstance(data, list) else []:
            # events programmed through an extra MSR, or on two counters
            # ("0xB7, 0xBB"), cannot be opened as one raw config
            if not isinstance(e, dict) or "EventName" not in e or \
                    "," in str(e.get("EventCode", ",")) or \
                    e.get("MSRIndex") not in (None, "0", "0x00") or \
                    e.get("Deprecated") == "1":
                continue
            unit = e.get("Unit", "cpu")
            if unit != "cpu" and unit not in CORE_UNITS:
                continue
            cfg = encode(e)
            units.setdefault(unit, {})[e["EventName"]] = cfg
            clash.setdefault((unit, cfg), set()).add(e["EventName"])
    for (unit, cfg), names in clash.items():
        cycles = sorted(n for n in names if "CYCLES" in n)
        for n in names:
            if cycles and n not in cycles:
                units[unit][n] = (cfg, cycles[0])
    return units


def pick(ev, names):
    """[(name, config)] when every name is an unambiguous event, else None
    (and the clash, if that was why)."""
    out = []
    for n in names:
        v = ev.get(n)
        if v is None:
            return None, None
        if isinstance(v, tuple):
            return None, "%s has the encoding of %s" % (n, v[1])
        out.append((n, v))
    return out, None


def first_of(ev, candidates):
    """The first of the candidate event lists the model has, and why the
    ones before it were refused."""
    clashes = []
    for names in candidates:
        got, clash = pick(ev, names)
        if got:
            return got, clashes
        if clash:
            clashes.append(clash)
    return None, clashes


def walk_role(model, ev):
    got, clashes = first_of(ev, (["DTLB_LOAD_MISSES.WALK_COMPLETED"], WALK_SIZES,
                                 ["PAGE_WALKS.D_SIDE_WALKS"],
                                 ["ls_l1_d_tlb_miss.all_l2_miss"],
                                 ["l2_dtlb_misses"]))
    if got:
        return got, None
    why = "%s's JSON has no completed-walk count for loads (looked for " \
          "DTLB_LOAD_MISSES.WALK_COMPLETED[_4K/_2M_4M/_1GB], " \
          "PAGE_WALKS.D_SIDE_WALKS, ls_l1_d_tlb_miss.all_l2_miss, " \
          "l2_dtlb_misses)" % model
    return None, why + ("; " + "; ".join(clashes) if clashes else "")


def l1_role(model, ev, walk):
    got, clashes = first_of(ev, (["ls_l1_d_tlb_miss.all"],))
    if got:
        return got, None
    got, clash = pick(ev, ["DTLB_LOAD_MISSES.STLB_HIT"])
    if got and walk and len(walk) + 1 <= MAX_PARTS:
        return got + walk, None
    if clash:
        clashes.append(clash)
    got, more = first_of(ev, (["MEM_UOPS_RETIRED.UTLB_MISS_LOADS"],
                              ["MEM_UOPS_RETIRED.UTLB_MISS"],
                              ["DATA_TLB_MISSES.L0_DTLB_MISS_LD"]))
    if got:
        return got, None
    clashes += more
    why = "%s's JSON has no first-level dTLB load-miss count (looked for " \
          "ls_l1_d_tlb_miss.all, DTLB_LOAD_MISSES.STLB_HIT with a walk " \
          "event, MEM_UOPS_RETIRED.UTLB_MISS[_LOADS], " \
          "DATA_TLB_MISSES.L0_DTLB_MISS_LD)" % model
    if "DTLB_LOAD_MISSES.STLB_HIT" in ev and not walk:
        why += "; STLB_HIT alone misses the loads that walked"
    return None, why + ("; " + "; ".join(clashes) if clashes else "")


def simple_role(model, ev, what, candidates):
    """The first candidate list the model has, or a reason naming them."""
    got, clashes = first_of(ev, candidates)
    if got:
        return got, None
    why = "%s's JSON has no %s (looked for %s)" % (
        model, what, ", ".join("+".join(c) for c in candidates))
    return None, why + ("; " + "; ".join(clashes) if clashes else "")


def extra_roles(model, ev, walk):
    """The walk-cost roles, stlb_hit to coalesced in pmu.h's order."""
    amd = model.startswith("amd")
    out = []
    if amd:
        out.append((None, "AMD counts no L2 DTLB hit on its own: it is "
                    "l1_miss - walk (0xff45 - 0xf045)"))
    else:
        out.append(simple_role(model, ev, "STLB hit count for loads",
                               (["DTLB_LOAD_MISSES.STLB_HIT"],)))
    if amd:
        out.append(simple_role(
            model, ev, "completed-walk count (walk, 0xf045, counts walks "
            "requested)", (["ls_tablewalker.dside"],)))
    elif walk:
        out.append((walk, None))
    else:
        out.append((None, "%s's JSON has no completed-walk count for "
                    "loads" % model))
    out.append(simple_role(model, ev, "walk-active cycle count",
                           (["DTLB_LOAD_MISSES.WALK_ACTIVE"],
                            ["DTLB_LOAD_MISSES.WALK_DURATION"])))
    out.append(simple_role(model, ev, "walk-pending cycle count",
                           (["DTLB_LOAD_MISSES.WALK_PENDING"],)))
    out.append(simple_role(
        model, ev, "coalesced-entry TLB reload count",
        (["ls_l1_d_tlb_miss.tlb_reload_coalesced_page_hit",
          "ls_l1_d_tlb_miss.tlb_reload_coalesced_page_miss"],)))
    return out


EXTRA = ("PMU_ROLE_STLB_HIT", "PMU_ROLE_WALK_COMPLETED",
         "PMU_ROLE_WALK_ACTIVE", "PMU_ROLE_WALK_PENDING",
         "PMU_ROLE_COALESCED")


def c_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def c_role(parts, why):
    if not parts:
        return "{ .reason = %s }" % c_str(why)
    return "{ .nparts = %d, .part = { %s } }" % (len(parts), ", ".join(
        "{ %s, 0x%xULL }" % (c_str(n), v) for n, v in parts))


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: gen_table.py ARCH_X86_DIR OUT.c\n")
        return 64
    arch, out = argv[1], argv[2]
    rows = []
    with open(os.path.join(arch, "mapfile.csv")) as f:
        for r in csv.DictReader(f):
            rows.append(r)
    lines = ["/* generated by bench/events/gen_table.py from %s; "
             "do not edit */" % "tools/perf/pmu-events/arch/x86",
             '#include "pmu.h"', "",
             "const struct pmu_model pmu_models[] = {"]
    for r in rows:
        model = r["Filename"]
        units = load_events(os.path.join(arch, model))
        names = [u for u in CORE_UNITS if u in units] or ["cpu"]
        pmus = []
        for u in names:
            ev = units.get(u, {})
            walk, wwhy = walk_role(model, ev)
            l1, lwhy = l1_role(model, ev, walk)
            more = "".join(",\n\t\t    [%s] = %s" % (r, c_role(*got))
                           for r, got in zip(EXTRA,
                                             extra_roles(model, ev, walk)))
            pmus.append("\t\t{ %s, { [PMU_ROLE_L1_MISS] = %s,\n"
                        "\t\t    [PMU_ROLE_WALK] = %s%s } }" %
                        (c_str(u), c_role(l1, lwhy), c_role(walk, wwhy),
                         more))
        lines.append("\t{ %s, %s, %s, %d, {\n%s } }," % (
            c_str(r["Family-model"]), c_str(model), c_str(r["Version"]),
            len(pmus), ",\n".join(pmus)))
    lines += ["\t{ .cpuid_re = NULL },", "};", ""]
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines))
    os.rename(tmp, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
