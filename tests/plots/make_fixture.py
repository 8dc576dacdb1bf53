#!/usr/bin/env python3
"""Regenerate the committed plot fixtures (tests/plots/fixture/*).

The numbers are invented but shaped like real runs: a TCG guest with no
hardware counters, every backing and the line hop only (fixture/tcg), and a
small KVM guest with dTLB counters and both hops (fixture/kvm).  Deterministic: same seed, same files.
The CSVs have the columns of the contract the plot tests pin
(tests/fixture/contract.json); what a run does not fill is left empty.

    python3 tests/plots/make_fixture.py
"""
import csv
import json
import os
import random
import sys

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixture")
TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(TESTS), "bench"))
import contract  # noqa: E402

CONTRACT = os.path.join(TESTS, "fixture", "contract.json")

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


def write_csv(path, bench, rows):
    """rows are dicts; the header is the contract's columns for bench."""
    cols = contract.load(CONTRACT).bench(bench)["columns"]
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, cols, restval="", lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def make_run(name, meta, backings, wss_list, scale, walk_ns, counters, rng,
             fault_scale, stream_ns_col, skipped=None, hops=("line",)):
    d = os.path.join(HERE, name)
    os.makedirs(d, exist_ok=True)
    preset = meta["tlb_model"]["preset"]
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
            chase.append(dict(backing=b, page_kb=pk, wss_bytes=wss, ns_per_access=fmt(ns),
                              ns_min=fmt(lo), ns_max=fmt(hi), l1_dtlb_misses_per_1k=fmt(dt),
                              walks_per_1k=fmt(wk), model_l1_misses_per_1k=fmt(m1),
                              model_walks_per_1k=fmt(mw), hop=hop, reps=5,
                              model_preset=preset))
    write_csv(os.path.join(d, "chase.csv"), "chase", chase)

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
                    row = dict(backing=b, page_kb=pk, wss_bytes=wss, kernel=k,
                               gb_per_s=fmt(gbs, 4))
                    if stream_ns_col:
                        row["ns_per_access"] = fmt(ns)
                else:
                    gbs = peak[k] / scale * (0.93 if pk == 4 else 1.0)
                    gbs *= rng.uniform(0.96, 1.04)
                    row = dict(backing=b, page_kb=pk, wss_bytes=wss, kernel=k,
                               gb_per_s=fmt(gbs, 3))
                stream.append(row)
    write_csv(os.path.join(d, "stream.csv"), "stream", stream)

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
        # one mmap + munmap, in us: it does not scale with the size
        setup = {"devzero": 5.0, "shm": 21.0, "hugetlbfs": 48.0,
                 "devhugetlb": 8.0, "maphugetlb": 7.0, "memfd": 18.0,
                 "thp": 6.0}[b.replace("-1G", "")]
        mb = 16
        for mode, us, fpm in (("demand", dem, per_mb), ("populate", pop, per_mb)):
            us = us * fault_scale * rng.uniform(0.95, 1.05)
            fault.append(dict(backing=b, page_kb=pk, mode=mode, us_per_mb=fmt(us, 3),
                              faults_per_mb=fmt(fpm, 6), size_bytes=mb * MB,
                              us_per_call=fmt(us * mb, 3)))
        fault.append(dict(backing=b, page_kb=pk, mode="setup", faults_per_mb=fmt(0.0, 6),
                          size_bytes=mb * MB,
                          us_per_call=fmt(setup * fault_scale * rng.uniform(0.95, 1.05), 3)))
    write_csv(os.path.join(d, "fault.csv"), "fault", fault)
    make_streamk(d, name, meta, backings, scale)

    meta["backings"] = {b: {"status": "measured", "reason": "", "page_kb": pk}
                        for b, pk in backings}
    meta["backings"].update(skipped or {})
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")


def make_streamk(d, name, meta, backings, scale):
    """streamk.csv: STREAM's kernels, best MB/s; the TCG run's arrays are
    below 4x the LLC and it leaves the 1 GB backings out, as the quick
    guest profile does.  Its own random stream, so the other files stay
    as they were."""
    rng = random.Random(name)
    arr, llc = (4 * MB if scale > 1 else 256 * MB), 32 * MB
    peak = {"copy": 11000.0, "scale": 10800.0, "add": 12100.0, "triad": 12000.0}
    rows = []
    for b, pk in backings:
        if pk == 1048576 and scale > 1:
            continue
        for k, n in (("copy", 2), ("scale", 2), ("add", 3), ("triad", 3)):
            mbs = peak[k] / scale * (0.97 if pk == 4 else 1.0) * rng.uniform(0.97, 1.03)
            best = n * arr / (mbs * 1e6)
            rows.append(dict(backing=b, page_kb=pk, wss_bytes=3 * arr, kernel=k,
                             mb_per_s=fmt(mbs, 1), array_bytes=arr, bytes_per_iter=n * arr,
                             best_s=fmt(best, 9), avg_s=fmt(best * 1.03, 9),
                             max_s=fmt(best * 1.08, 9), reps=9, llc_x=fmt(arr / llc, 3)))
    write_csv(os.path.join(d, "streamk.csv"), "streamk", rows)
    met = arr >= 4 * llc
    meta.setdefault("other", {})["streamk_llc"] = {
        "llc_bytes": llc, "level": 3, "source": "sysfs", "cpu": 0, "array_bytes": arr,
        "need_bytes": 4 * llc, "rule_met": met,
        "note": ("arrays of %d B are %s 4x the last-level cache (%d B, sysfs)%s"
                 % (arr, "at least" if met else "below", llc,
                    "" if met else ": not STREAM's rule; the run used what its "
                    "profile and memory allow"))}


def guest_meta(run_id, profile, host_cpu, accel, pool_2m, preset, warmup, reps, **more):
    """meta.json of a guest run, as bench/run.py writes it."""
    return dict({
        "run_id": run_id, "date": "2025-01-14T%s:%s:00Z" % (run_id[9:11], run_id[11:13]),
        "git_rev": "0123abc", "profile": profile, "mode": "guest", "host_cpu": host_cpu,
        "kernel": "6.12.0-devhugetlb+", "series_id": "devhugetlb-v1",
        "qemu": {"version": "QEMU emulator version 7.2.15", "accel": accel, "icount": False},
        "timing_source": accel,
        "hugepages": {"2048kB": {"total": pool_2m, "free": pool_2m},
                      "1048576kB": {"total": 2, "free": 2}},
        "method": {"warmup": warmup, "reps": reps, "seed": 1, "aslr_off": True,
                   "cpu_pinned": True, "timer_resolution_ns": 1},
        "tlb_model": {"preset": preset, "warm_accesses": 65536, "counted_accesses": 65536},
    }, **more)


def main():
    rng = random.Random(4)
    all_b = [("devzero", 4), ("hugetlbfs", 2048), ("shm", 2048),
             ("devhugetlb", 2048), ("maphugetlb", 2048), ("memfd", 2048),
             ("thp", 2048), ("devhugetlb-1G", 1048576),
             ("hugetlbfs-1G", 1048576), ("maphugetlb-1G", 1048576)]
    no_pmu = "guest CPU model has no PMU under TCG (perf_event_open: ENOENT)"
    tcg = guest_meta(
        "20250114-101500-tcg-fixture", "quick", "Intel(R) Xeon(R) Platinum 8480+", "tcg",
        512, "skylake", warmup=1, reps=5,
        counters={"l1-dtlb-load-misses": {"available": False, "reason": no_pmu,
                                          "column": "l1_dtlb_misses_per_1k"},
                  "page-walks": {"available": False, "reason": no_pmu,
                                 "column": "walks_per_1k"},
                  "page-faults": {"available": True, "reason": "", "column": "faults"}},
        machine={"cpufreq_governor": {"performance": 112}, "boost": True,
                 "smt_active": True, "thp_enabled": "madvise", "thp_defrag": "madvise",
                 "hypervisor": False, "loadavg_start": [0.5, 0.4, 0.3],
                 "loadavg_end": [1.1, 0.6, 0.4]})
    make_run("tcg", tcg, all_b, sizes(4 * KB, 256 * MB), scale=6.0,
             walk_ns=300.0, counters=False, rng=rng, fault_scale=14.0,
             stream_ns_col=False,
             skipped={"memfd-1G": {"status": "skipped", "page_kb": 0,
                                   "reason": "kernel lacks MFD_HUGE_1GB support for memfd"}})

    kvm = guest_meta(
        "20250114-120000-kvm-fixture", "full", "AMD EPYC 7763 64-Core Processor", "kvm",
        1024, "zen3", warmup=2, reps=11,
        counters={"ls_l1_d_tlb_miss.all": {"available": True, "reason": "",
                                           "column": "l1_dtlb_misses_per_1k"},
                  "l2_dtlb_misses": {"available": True, "reason": "",
                                     "column": "walks_per_1k"}},
        machine={"cpufreq_governor": None, "boost": None, "smt_active": True,
                 "thp_enabled": "always", "thp_defrag": "madvise", "hypervisor": False,
                 "loadavg_start": [2.0, 1.5, 1.0], "loadavg_end": [2.2, 1.6, 1.0]},
        host_memory={"host_pages": "hugetlb", "kernel_page_kb": 2048,
                     "anon_huge_kb_max": 0, "guest_ram_mb": 8192,
                     "thp_enabled": "always [madvise] never",
                     "thp_defrag": "always defer defer+madvise [madvise] never",
                     "checked_in": "/proc/PID/smaps of QEMU"})
    make_run("kvm", kvm, [("devzero", 4), ("devhugetlb", 2048),
                          ("maphugetlb", 2048), ("thp", 2048),
                          ("devhugetlb-1G", 1048576)],
             sizes(4 * KB, 1 * GB, dense=False), scale=1.0, walk_ns=25.0,
             counters=True, rng=rng, fault_scale=1.0, stream_ns_col=True,
             hops=("line", "page"))


if __name__ == "__main__":
    main()
