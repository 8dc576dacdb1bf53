#!/usr/bin/env python3
"""Regenerate the committed plot fixtures (tests/plots/fixture/*).

The numbers are invented but shaped like real runs: a TCG guest with no
hardware counters, every backing and the line hop only (fixture/tcg), and a
small KVM guest with dTLB counters and both hops (fixture/kvm).  Deterministic: same seed, same files.

    python3 tests/plots/make_fixture.py
"""
import csv
import json
import os
import random

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixture")

CHASE_HDR = ["backing", "page_kb", "wss_bytes", "ns_per_access", "ns_min",
             "ns_max", "l1_dtlb_misses_per_1k", "walks_per_1k",
             "model_l1_misses_per_1k", "model_walks_per_1k", "hop", "reps",
             "model_preset"]
STREAM_HDR = ["backing", "page_kb", "wss_bytes", "kernel", "gb_per_s"]
FAULT_HDR = ["backing", "page_kb", "mode", "us_per_mb", "faults_per_mb"]

# Skylake-like TLB geometry: entries per level for each page size.
L1 = {4: 64, 2048: 32, 1048576: 4}
STLB = {4: 1536, 2048: 1536, 1048576: 16}

KB, MB, GB = 1024, 1024 ** 2, 1024 ** 3


def miss_per_1k(wss, page_kb, entries):
    reach = entries * page_kb * KB
    return 0.0 if wss <= reach else 1000.0 * (1.0 - reach / wss)


def sizes(lo, hi, dense=True):
    out, s = [], lo
    while s <= hi:
        out.append(s)
        if dense and s * 3 // 2 <= hi:
            out.append(s * 3 // 2)
        s *= 2
    return out


def cache_ns(wss, scale):
    # L1 / L2 / LLC / DRAM plateaus of the host, stretched by `scale`.
    if wss <= 32 * KB:
        return 1.2 * scale
    if wss <= 1 * MB:
        return 4.0 * scale
    if wss <= 24 * MB:
        return 14.0 * scale
    return 80.0 * scale


def fmt(x, nd=2):
    return "" if x is None else f"{x:.{nd}f}"


def write_csv(path, hdr, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(hdr)
        w.writerows(rows)


def make_run(name, meta, backings, wss_list, scale, walk_ns, counters, rng,
             fault_scale, stream_ns_col, skipped=None, hops=("line",)):
    d = os.path.join(HERE, name)
    os.makedirs(d, exist_ok=True)
    preset = (meta.get("model") or meta.get("tlb_model"))["preset"]
    chase = []
    for hop, b, pk in [(h, b, pk) for h in hops for b, pk in backings]:
        for wss in wss_list:
            m1 = miss_per_1k(wss, pk, L1[pk])
            mw = miss_per_1k(wss, pk, STLB[pk])
            ns = cache_ns(wss * (4 if hop == "page" else 1), scale) + \
                (0.009 * m1 + walk_ns * mw / 1000.0)
            ns *= rng.uniform(0.97, 1.03)
            lo, hi = ns * rng.uniform(0.90, 0.98), ns * rng.uniform(1.02, 1.15)
            dt = wk = None
            if counters:
                # measured runs a little above the model (prefetch, page
                # table lines), never above one miss per access.
                dt = min(1000.0, m1 * rng.uniform(1.0, 1.08) + rng.uniform(0, 0.4))
                wk = min(1000.0, mw * rng.uniform(1.0, 1.15) + rng.uniform(0, 0.2))
            chase.append([b, pk, wss, fmt(ns), fmt(lo), fmt(hi), fmt(dt),
                          fmt(wk), fmt(m1), fmt(mw), hop, 5, preset])
    write_csv(os.path.join(d, "chase.csv"), CHASE_HDR, chase)

    hdr = STREAM_HDR + (["ns_per_access"] if stream_ns_col else [])
    stream = []
    peak = {"read": 9.5, "write": 6.0, "copy": 5.2}
    for b, pk in backings:
        for wss in (64 * MB, 256 * MB):
            for k in ("read", "write", "copy", "stride"):
                walks = miss_per_1k(wss, pk, STLB[pk]) / 1000.0
                if k == "stride":
                    # one 8-byte read per 4 KB page: nearly every access walks
                    # with 4K pages, almost none with huge pages.
                    ns = (60.0 + (walk_ns * 0.9 if pk == 4 else walk_ns * walks))
                    ns = ns * scale / 1.0 * rng.uniform(0.95, 1.05)
                    gbs = 8.0 / ns
                    row = [b, pk, wss, k, fmt(gbs, 4)]
                    if stream_ns_col:
                        row.append(fmt(ns))
                else:
                    gbs = peak[k] / scale * (0.93 if pk == 4 else 1.0)
                    gbs *= rng.uniform(0.96, 1.04)
                    row = [b, pk, wss, k, fmt(gbs, 3)]
                    if stream_ns_col:
                        row.append("")
                stream.append(row)
    write_csv(os.path.join(d, "stream.csv"), hdr, stream)

    fault = []
    for b, pk in backings:
        per_mb = 1024.0 / pk  # faults per MB when every page faults once
        if pk == 4:
            dem = 210.0
            pop = 120.0
        elif pk == 2048:
            dem, pop = 95.0, 88.0
        else:
            dem, pop = 82.0, 80.0
        if b == "thp":
            dem, pop = 130.0, 100.0
            per_mb = 0.75  # some 4K fallbacks around the edges
        setup = {"devzero": 0.04, "shm": 0.9, "hugetlbfs": 1.1,
                 "devhugetlb": 0.35, "maphugetlb": 0.30, "memfd": 0.8,
                 "thp": 0.05}[b.replace("-1G", "")]
        if b.endswith("-1G"):
            setup *= 0.2
        for mode, us, fpm in (("demand", dem, per_mb), ("populate", pop, per_mb),
                              ("setup", setup, 0.0)):
            us = us * fault_scale * rng.uniform(0.95, 1.05)
            fault.append([b, pk, mode, fmt(us, 3), fmt(fpm, 6)])
    write_csv(os.path.join(d, "fault.csv"), FAULT_HDR, fault)

    meta["backings"] = {b: {"status": "measured", "reason": "", "page_kb": pk}
                        for b, pk in backings}
    meta["backings"].update(skipped or {})
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")


def main():
    rng = random.Random(4)
    all_b = [("devzero", 4), ("hugetlbfs", 2048), ("shm", 2048),
             ("devhugetlb", 2048), ("maphugetlb", 2048), ("memfd", 2048),
             ("thp", 2048), ("devhugetlb-1G", 1048576),
             ("hugetlbfs-1G", 1048576), ("maphugetlb-1G", 1048576)]
    no_pmu = "guest CPU model has no PMU under TCG (perf_event_open: ENOENT)"
    tcg = {
        "run_id": "20250114-101500-tcg-fixture",
        "date": "2025-01-14T10:15:00Z",
        "git_rev": "0123abc",
        "profile": "quick",
        "mode": "guest",
        "host_cpu": "Intel(R) Xeon(R) Platinum 8480+",
        "kernel": "6.12.0-devhugetlb+",
        "series_id": "devhugetlb-v1",
        "qemu": {"version": "7.2.15", "accel": "tcg", "icount": False},
        "timing_source": "tcg",
        "hugepages": {"2048kB": {"total": 512, "free": 512},
                      "1048576kB": {"total": 2, "free": 2}},
        "counters": {"l1-dtlb-load-misses": {"available": False, "reason": no_pmu,
                                             "column": "l1_dtlb_misses_per_1k"},
                     "page-walks": {"available": False, "reason": no_pmu,
                                    "column": "walks_per_1k"},
                     "page-faults": {"available": True, "reason": "",
                                     "column": "faults"}},
        "method": {"warmup": 1, "reps": 5, "seed": 1, "aslr_off": True,
                   "cpu_pinned": True, "timer_resolution_ns": 1},
        "model": {"preset": "skylake",
                  "source": "Intel SDM vol. 3 / optimization manual, Skylake client"},
    }
    make_run("tcg", tcg, all_b, sizes(4 * KB, 256 * MB), scale=6.0,
             walk_ns=300.0, counters=False, rng=rng, fault_scale=14.0,
             stream_ns_col=False,
             skipped={"memfd-1G": {"status": "skipped", "page_kb": 0,
                                   "reason": "kernel lacks MFD_HUGE_1GB support for memfd"}})

    kvm = {
        "run_id": "20250114-120000-kvm-fixture",
        "date": "2025-01-14T12:00:00Z",
        "git_rev": "0123abc",
        "profile": "full",
        "mode": "guest",
        "host_cpu": "AMD EPYC 7763 64-Core Processor",
        "kernel": "6.12.0-devhugetlb+",
        "series_id": "devhugetlb-v1",
        "qemu": {"version": "7.2.15", "accel": "kvm", "icount": False},
        "timing_source": "kvm",
        "hugepages": {"2048kB": {"total": 1024, "free": 1024},
                      "1048576kB": {"total": 2, "free": 2}},
        "counters": {"ls_l1_d_tlb_miss.all": {"available": True, "reason": "",
                                              "column": "l1_dtlb_misses_per_1k"},
                     "l2_dtlb_misses": {"available": True, "reason": "",
                                        "column": "walks_per_1k"}},
        "method": {"warmup": 2, "reps": 11, "seed": 1, "aslr_off": True,
                   "cpu_pinned": True, "timer_resolution_ns": 1},
        # no "model" key: bench/ writes tlb_model, which the plots fall back to
        "tlb_model": {"preset": "zen3", "warm_accesses": 65536,
                      "counted_accesses": 65536},
    }
    make_run("kvm", kvm, [("devzero", 4), ("devhugetlb", 2048),
                          ("maphugetlb", 2048), ("thp", 2048),
                          ("devhugetlb-1G", 1048576)],
             sizes(4 * KB, 1 * GB, dense=False), scale=1.0, walk_ns=25.0,
             counters=True, rng=rng, fault_scale=1.0, stream_ns_col=True,
             hops=("line", "page"))


if __name__ == "__main__":
    main()
