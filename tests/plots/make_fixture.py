#!/usr/bin/env python3
"""Regenerate the committed plot fixtures (tests/plots/fixture/*).

The numbers are invented but shaped like real runs: a TCG guest with no
hardware counters, every backing and the line hop only (fixture/tcg), and a
small KVM guest with dTLB counters and both hops (fixture/kvm).  Deterministic: same seed, same files.
The rows come from each benchmark's plot module (fixture() in
plots/benches/<benchmark>.py); the CSVs have the columns of the contract
the plot tests pin (tests/fixture/contract.json), and what a run does not
fill is left empty.

    python3 -m tests.plots.make_fixture
"""
import csv
import json
import os
import random

from plots import benches
from bench import contract
from plots.benches._fixture import GB, KB, MB, Spec

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixture")
TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CONTRACT = os.path.join(TESTS, "fixture", "contract.json")

def sizes(lo, hi, dense=True):
    out, s = [], lo
    while s <= hi:
        out.append(s)
        if dense and s * 3 // 2 <= hi:
            out.append(s * 3 // 2)
        s *= 2
    return out


def write_csv(path, bench, rows):
    """rows are dicts; the header is the contract's columns for bench."""
    cols = contract.load(CONTRACT).bench(bench)["columns"]
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, cols, restval="", lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def make_run(spec, meta, rng, skipped=None):
    """The run's CSVs from their plot modules' fixture(), drawn from one
    random stream in this order (streamk from its own, seeded by the run's
    name, so the others stay as they were), and its meta.json."""
    d = os.path.join(HERE, spec.name)
    os.makedirs(d, exist_ok=True)
    for bench in ("chase", "stream", "fault"):
        write_csv(os.path.join(d, bench + ".csv"), bench,
                  benches.module(bench).fixture(spec, rng))
    streamk = benches.module("streamk")
    write_csv(os.path.join(d, "streamk.csv"), "streamk",
              streamk.fixture(spec, random.Random(spec.name)))
    streamk_meta(meta, streamk.fixture_array(spec), streamk.FIXTURE_LLC)
    meta["backings"] = {b: {"status": "measured", "reason": "", "page_kb": pk}
                        for b, pk in spec.backings}
    meta["backings"].update(skipped or {})
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")


def streamk_meta(meta, arr, llc):
    """meta.json's other.streamk_llc, as bench/run.py keeps the binary's
    note on STREAM's 4x-LLC rule."""
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


ALL_BACKINGS = [("devzero", 4), ("hugetlbfs", 2048), ("shm", 2048),
             ("devhugetlb", 2048), ("maphugetlb", 2048), ("memfd", 2048),
             ("thp", 2048), ("devhugetlb-1G", 1048576),
             ("hugetlbfs-1G", 1048576), ("maphugetlb-1G", 1048576)]
# The two fixtures: a TCG guest with every backing, a KVM one with counters.
SPECS = {
    "tcg": Spec("tcg", ALL_BACKINGS, sizes(4 * KB, 256 * MB), scale=6.0, walk_ns=300.0,
                fault_scale=14.0, preset="skylake"),
    "kvm": Spec("kvm", [("devzero", 4), ("devhugetlb", 2048), ("maphugetlb", 2048),
                        ("thp", 2048), ("devhugetlb-1G", 1048576)],
                sizes(4 * KB, 1 * GB, dense=False), walk_ns=25.0, counters=True,
                stream_ns_col=True, hops=("line", "page"), preset="zen3"),
}


def main():
    rng = random.Random(4)
    no_pmu = "guest CPU model has no PMU under TCG (perf_event_open: ENOENT)"
    tcg = guest_meta(
        "20250114-101500-tcg-fixture", "quick", "Intel(R) Xeon(R) Platinum 8480+", "tcg",
        512, "skylake", warmup=1, reps=5,
        # as bench/run.py records a preset named with MODEL=skylake
        tlb_model={"arg": "skylake", "preset": "skylake", "source": "named",
                   "why": "--model skylake (MODEL=)",
                   "label": "MODEL: skylake geometry named by MODEL=/--model, not measured"},
        counters={"l1-dtlb-load-misses": {"available": False, "reason": no_pmu,
                                          "column": "l1_dtlb_misses_per_1k"},
                  "page-walks": {"available": False, "reason": no_pmu,
                                 "column": "walks_per_1k"},
                  "page-faults": {"available": True, "reason": "", "column": "faults"}},
        machine={"cpufreq_governor": {"performance": 112}, "boost": True,
                 "smt_active": True, "thp_enabled": "madvise", "thp_defrag": "madvise",
                 "hypervisor": False, "loadavg_start": [0.5, 0.4, 0.3],
                 "loadavg_end": [1.1, 0.6, 0.4]})
    make_run(SPECS["tcg"], tcg, rng,
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
    make_run(SPECS["kvm"], kvm, rng)


if __name__ == "__main__":
    main()
