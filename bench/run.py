#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Run the benchmark profile in the QEMU guest or natively; collect results.

    python3 bench/run.py --mode guest|native [--profile tiny|quick|full]

The binaries (build/bench/{chase,stream,fault}) speak a line protocol on
stdout (see bench/runner.h): "@header BENCH CSV", "@row BENCH CSV",
"@meta KEY JSON", "@error BENCH TEXT", "@done BENCH RC"; everything else is
progress and is echoed.  Each row is appended to results/<run-id>/<bench>.csv
as it arrives, meta.json is rewritten as metadata arrives, and
results/latest points at the run.  results/README.md documents the files.

guest: ./run-qemu.sh --hugepages N [--hugepages-1g N] --mem SIZE -- sh -c ...
       runs the binaries one after another in one boot (docs/interfaces.md).
       --arch arm64 boots the arm64 guest (TCG) with a pool of each of its
       four sizes, and the chase and mlp model the TLB of a Neoverse N1.
native: the same binaries on the host kernel; vm.nr_hugepages (and the 1 GB
       pool) are raised for the run and restored on every exit path.

The benchmarks and backings are bench/contract.py's (from benchtool).  Each
binary maps its backings at once and takes the repetitions as the outer
loop, measuring each backing once per round, right after an untimed pass
of its own, in the order of a Williams design (bench/runner.c), so neither
drift during a run (heat, boost, load) nor the backing before favours one;
the first round's order is rotated by one more position for each benchmark
and by --rotate for the whole run (compare rotates it per round).  meta.json records the order and the machine's state around the
run.
run.py writes data only; plots/render.py draws it and writes the summary.
"""

import argparse
import csv
import datetime
import glob
import json
import math
import os
import platform
import re
import shlex
import signal
import subprocess
import sys

import contract
from hostlock import HOST_LOCK

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MB = 1 << 20
GB = 1 << 30
# Where the host's /proc and /sys are read and THP is set (tests point it
# at a fake tree).
HOST_ROOT = "/"
# The page sizes the pools have, and which guest architecture has which,
# are bench/contract.py's POOLS (arch_pools()); these name the two whose
# sizing is special: 2 MB (realprog, guest RAM) and 1 GB (aligned RAM).
KB_2M, KB_1G = 2048, 1048576
# The TLB model of the arm64 guest's runs: -cpu max is no real core, and
# the chase cannot pick a preset from a CPU the event tables do not know
# (bench/pmu.c), so the model is the Neoverse N1's (bench/tlbmodel.c).
ARM64_PRESET = "neoverse-n1"
# Why the arm64 run has no real-program step (meta.json notes).
ARM64_NO_REALPROG = ("realprog not run on arm64: it runs Debian's x86_64 "
                     "xz under an LD_PRELOAD library (bench/realprog/), "
                     "and the arm64 initramfs holds neither")


def arch_backings(c, arch):
    """The backings of c whose pool (if any) arch has, in table order.  A
    backing whose pool the architecture never has is left out of the
    default list rather than recorded as skipped in every run: x86 figures
    and meta.json would otherwise carry ten backings that cannot exist
    there.  Named with --backings it still runs, and skips saying why
    (bench/backing.c)."""
    return [b["name"] for b in c.backings
            if not b["pool_kb"] or b["pool_kb"] in contract.arch_pools(arch)]

# Working sets: dense near the TLB reaches (256K, 6M/8M, 64M/128M; see
# make_sweep in runner.c for where the numbers come from).
# The guest's sweep keeps one point at each knee: TCG time is scarce.
QUICK_SIZES_GUEST = ["16K", "64K", "256K", "1M", "4M", "6M", "8M", "16M",
                     "32M", "64M", "128M", "256M"]
QUICK_SIZES = ["16K", "64K", "192K", "256K", "320K", "1M", "4M", "6M", "8M",
               "10M", "32M", "64M", "96M", "128M", "160M", "256M"]

# The real-program step (bench/realprog/realprog.c): xz -9 on a generated
# corpus through hugepreload.so, one backing at a time.  xz -9 maps about
# 680 MB in three large blocks whatever the corpus (it reads stdin), so the
# 2 MB pool needs that much at once.  The guest's corpus is small: under
# TCG xz -9 compresses about 200 KB/s (see results/README.md, realprog.csv).
REALPROG = "realprog"
REALPROG_POOL = 720 * MB
REALPROG_BACKINGS = "off,none,thp,hugetlbfs,maphugetlb,devhugetlb"


def size_bytes(s):
    mult = {"K": 1 << 10, "M": MB, "G": GB}
    s = str(s)
    if s[-1].upper() in mult:
        return int(float(s[:-1]) * mult[s[-1].upper()])
    return int(s)


def profile(name, mode, mem_available=None, c=None, llc=None,
            arch="x86_64"):
    """The arguments of each benchmark, and the pools/memory they need.

    tiny: a few sizes, 2 reps: a smoke test (the guest test), not data.
    quick: >= 5 reps; the guest run fits ~4 minutes of TCG (which runs
        10-50x slower than native), so its sweep stops at 256 MB; natively
        it reaches 1 GB.
    full: the generated sweep up to 4 GB natively (where memory allows),
        1 GB in the guest, both hop kinds.
    "runner" holds the runner's own options for a benchmark that has no
    entry of its own: a new benchmark runs without touching this file.
    llc: the host's last-level cache in bytes (host_llc()), which sizes
    streamk natively; None in the guest or where it is unknown.
    arch: the guest's (or host's) architecture, which decides the default
    backings (contract.arch_pools()).
    """
    guest = mode == "guest"
    if name == "tiny":
        p = tiny_profile()
    elif name == "quick":
        p = quick_profile(guest, c, arch)
    elif name == "full":
        p = full_profile(guest, mem_available)
    else:
        raise ValueError("unknown profile %r" % name)
    c = c or contract.load()
    p["streamk"] = streamk_profile(name, guest, llc, p, mem_available,
                                   c.arrays("streamk"))
    # its one working set is sized by the LLC, which a short 2 MB pool may
    # not hold natively: cut to fit (fit_pool)
    p["fit_pool"] = ("streamk",)
    p.setdefault("backings", {})["tlbreach"] = TLBREACH_BACKINGS
    add_faultscale(p, name, guest, c, arch)
    return size_pools(p, arch=arch)


# streamk's guest working set in the quick profile (three arrays of 8 MB):
# about 30 s of TCG time over the 7 backings the quick guest run measures
# (48 MB took about 60 s).  QEMU's -cpu max reports a 16 MB L3, so STREAM's
# 4x rule would need 192 MB, about 4 minutes: the rows say it is not met.
STREAMK_QUICK_GUEST = 24 * MB


def streamk_profile(name, guest, llc, p, mem_available, arrays=3):
    """streamk's arguments: STREAM's rule, --warmup 1 --reps 9 (NTIMES =
    10), and one working set of its arrays (the contract's, three), each
    4x the last-level cache where the profile and memory allow (else what
    fits; the binary then says the rule was not met).  tiny is a smoke
    test, not STREAM's rule.  full may raise max_bytes (the pools) to
    reach 4x the LLC."""
    if name == "tiny":
        return ["--sizes", "384K", "--warmup", "1", "--reps", "2"]
    unit = arrays * 4096                        # whole 4 KB pages each
    want = -(-4 * arrays * llc // unit) * unit if llc else None   # 4 x LLC each
    if guest:
        cap = STREAMK_QUICK_GUEST if name == "quick" else p["max_bytes"]
    elif name == "quick":
        cap = p["max_bytes"]
    elif want:
        cap = max(p["max_bytes"], (mem_available or 0) // 3)
    else:
        cap = p["max_bytes"]
    cap = cap // unit * unit
    total = min(want, cap) if want else cap
    if name == "full" and not guest:
        p["max_bytes"] = max(p["max_bytes"], total)
    return ["--sizes", str(total), "--warmup", "1", "--reps", "9"]


def host_llc():
    """The host's last-level cache in bytes from `benchtool llc` (sysfs, or
    CPUID where sysfs has none: bench/llc.h); None when unknown."""
    tool = os.path.join(ROOT, contract.BENCHTOOL)
    try:
        p = subprocess.run([tool, "llc"], capture_output=True, text=True)
        return json.loads(p.stdout)["llc_bytes"] if p.returncode == 0 \
            else None
    except (OSError, ValueError, KeyError):
        return None


# Fault scalability (bench/faultscale.c) in the guest runs on this many
# vCPUs: multi-threaded TCG gives each its own host thread, and this host
# has 2 cores, so more would say nothing.
GUEST_CPUS = 2
# faultscale's region per task and its own options, per profile; the
# region shrinks so that the most tasks fit max_bytes (the pool) at once,
# twice over (a cow task holds its file and its copies).  --min-faults:
# iterations enough for that many faults per task and repetition; under
# TCG the quick profile takes fewer than the 1000 a row needs not to be
# marked short_window (each 2 MB fault costs milliseconds there).
FAULTSCALE = {
    "tiny": ("4M", ["--reps", "1", "--warmup", "0", "--iterations", "1"]),
    "quick": ("16M", ["--reps", "3", "--warmup", "0", "--min-faults", "64"]),
    "quick-native": ("1G", ["--reps", "3", "--warmup", "0",
                            "--min-faults", "1000"]),
    "full": ("1G", ["--reps", "5", "--warmup", "1", "--min-faults", "1000"]),
}


def add_faultscale(p, name, guest, c, arch="x86_64"):
    """faultscale's arguments: 1..CPUs tasks (full adds twice the CPUs,
    oversubscribed), each with a region of max_bytes / the most tasks at
    most; in the guest p["smp"] CPUs, and no 1 GB backings but in full
    (each 1 GB page costs seconds of clearing under TCG)."""
    cpus = GUEST_CPUS if guest else len(os.sched_getaffinity(0))
    counts = list(range(1, cpus + 1))
    key = name + ("-native" if name == "quick" and not guest else "")
    region, rest = FAULTSCALE[key]
    a = []
    if name == "full":
        counts.append(2 * cpus)
        a.append("--oversubscribe")
    most = max(counts)
    region = min(size_bytes(region), p["max_bytes"] // (2 * most) //
                 (2 * MB) * (2 * MB))
    p["faultscale"] = ["--sizes", str(region), "--tasks",
                       ",".join(map(str, counts))] + a + rest
    if guest:
        p["smp"] = cpus
        if name != "full":
            c = c or contract.load()
            small = [b for b in arch_backings(c, arch)
                     if c.needs_pool(b) != KB_1G]
            p.setdefault("backings", {})["faultscale"] = ",".join(small)


# tlbreach (bench/tlbreach.c): sizes at four per octave, so that a knee
# is placed within 19 %; from 4 pages of 4 KB to 256 pages of 2 MB
# natively (its 4 KB chains stop at --max-pages).  Under TCG its times
# say nothing of a TLB (plots/render.py claims no knee there): the guest
# sweep only shows the pipeline works.  The backings: one per kind of
# page, the device among them (the others map as maphugetlb does).
TLBREACH_BACKINGS = "devzero,thp,maphugetlb,devhugetlb"


def tlbreach_sizes(lo, hi, per_octave=4):
    """Sizes from lo to hi bytes, per_octave a doubling, whole 4 KB pages."""
    k = round(per_octave * math.log2(lo / 4096))
    out = []
    while 4096 * round(2 ** (k / per_octave)) <= hi:
        out.append(str(4096 * round(2 ** (k / per_octave))))
        k += 1
    return ",".join(out)


def tiny_profile():
    return {
        "chase": ["--sizes", "16K,1M,8M", "--reps", "2", "--warmup", "1",
                  "--hops", "32K", "--hop", "both"],
        "stream": ["--sizes", "64K,4M", "--reps", "2", "--warmup", "1",
                   "--min-bytes", "4M"],
        # every 1 GB mapping costs seconds of page clearing under TCG
        "fault": ["--sizes", "4M", "--reps", "1", "--warmup", "0"],
        "mlp": ["--sizes", "64K,4M", "--reps", "2", "--warmup", "1",
                "--hops", "16K"],
        "tlbreach": ["--sizes", "64K,1M,8M", "--reps", "2", "--warmup",
                     "1", "--hops", "16K"],
        "runner": ["--sizes", "64K,4M", "--reps", "2", "--warmup", "1"],
        REALPROG: ["--corpus", "64K", "--reps", "1", "--sample-ms", "500"],
        "max_bytes": 8 * MB, "timeout": 600,
    }


def quick_profile(guest, c, arch="x86_64"):
    sizes = QUICK_SIZES_GUEST if guest else \
        QUICK_SIZES + ["512M", "768M", "1G"]
    stream_sizes = "64K,1M,8M,64M" if guest else "64K,1M,8M,64M,256M,1G"
    p = {
        "chase": ["--sizes", ",".join(sizes), "--reps", "5",
                  "--warmup", "1", "--hops", "64K" if guest else "1M",
                  "--hop", "line" if guest else "both"],
        "stream": ["--sizes", stream_sizes, "--reps", "5", "--warmup",
                   "1", "--min-bytes", "16M" if guest else "256M"],
        "fault": ["--sizes", "16M" if guest else "256M", "--reps", "5",
                  "--warmup", "1"],
        # the parallel chase at N = 1, 2, 4, 8, 16 (its default --chains)
        "mlp": ["--sizes", "1M,64M" if guest else "1M,64M,1G",
                "--reps", "5", "--warmup", "1",
                "--hops", "32K" if guest else "1M"],
        "tlbreach": ["--sizes", tlbreach_sizes(16 << 10, 64 * MB, 2),
                     "--reps", "3", "--warmup", "1", "--hops", "16K"]
        if guest else ["--sizes", tlbreach_sizes(16 << 10, 512 * MB),
                       "--reps", "9", "--warmup", "1"],
        "runner": ["--sizes", stream_sizes, "--reps", "5", "--warmup", "1"],
        # 512K: about 20 s of TCG for the six backings
        REALPROG: ["--corpus", "512K", "--reps", "1", "--sample-ms", "1000"]
        if guest else ["--corpus", "16M", "--reps", "3"],
        "max_bytes": (256 if guest else 1024) * MB,
        "timeout": 900,
    }
    if guest:
        # Under TCG each touched 1 GB page costs ~7 s of clearing; the
        # quick guest run keeps the 1 GB variants for the chase (the
        # TLB question) and leaves the other benchmarks' to native/full.
        c = c or contract.load()
        small = [b for b in arch_backings(c, arch)
                 if c.needs_pool(b) != KB_1G]
        p["backings"] = {"*": ",".join(small), "chase": None}
    return p


def full_profile(guest, mem_available):
    top = GB if guest else 4 * GB
    if mem_available and not guest:
        # leave room: the 2M pool, a 4K mapping, the chase's cycle
        while top > 256 * MB and 3 * top > mem_available:
            top //= 2
    return {
        "chase": ["--min", "16K", "--max", str(top), "--reps", "7",
                  "--warmup", "1", "--hops", "1M", "--hop", "both",
                  "--model-cap", "256K"],
        "stream": ["--min", "16K", "--max", str(top), "--reps", "5",
                   "--warmup", "1", "--min-bytes", "256M"],
        "fault": ["--sizes", "64M,256M", "--reps", "7", "--warmup", "1"],
        "mlp": ["--sizes", ",".join(x for x in ("1M", "64M", "256M", "1G")
                                    if size_bytes(x) <= top),
                "--reps", "7", "--warmup", "1", "--hops", "1M"],
        "tlbreach": ["--sizes", tlbreach_sizes(16 << 10, top), "--reps",
                     "11", "--warmup", "1", "--max-pages", "64K"],
        "runner": ["--min", "16K", "--max", str(top), "--reps", "5",
                   "--warmup", "1"],
        REALPROG: ["--corpus", "2M", "--reps", "1", "--sample-ms", "1000"]
        if guest else ["--corpus", "64M", "--reps", "5"],
        "max_bytes": top, "timeout": 7200,
    }


def size_pools(p, with_1g=True, together=None, mem_available=None,
               arch="x86_64"):
    """Pools and guest memory for p["max_bytes"].  The runner maps every
    backing of a benchmark at once, to interleave their repetitions
    (bench/runner.c), so a pool gets one working set (plus slack) per
    backing that draws on it at once (together: {pool_kb: count}), unless
    that would take over half the host's available memory: then one each,
    and the runner measures the sizes that do not fit backing by backing
    (meta.json repetition_order says which).  The real-program step needs
    REALPROG_POOL of 2 MB pages at once, alone.  The guest also needs the 4K
    and THP working sets and room for the initramfs.  Every pool arch has
    is sized (p["hugepages_64k"] and p["hugepages_32m"] on arm64)."""
    together = together or {}
    kbs = [kb for kb in contract.arch_pools(arch) if with_1g or kb != KB_1G]
    n = {kb: together.get(kb, 1) for kb in kbs}
    pages = {kb: -(-p["max_bytes"] // (kb * 1024)) for kb in kbs}
    if mem_available and sum(n[kb] * pages[kb] * kb * 1024 for kb in kbs) \
            > mem_available // 2:
        n = {kb: min(k, 1) for kb, k in n.items()}
    n[KB_2M] = max(n[KB_2M], 1)
    realprog = -(-REALPROG_POOL // (2 * MB)) if p.get(REALPROG) else 0
    for kb in contract.arch_pools(arch):
        p[contract.POOL[kb].key] = n.get(kb, 0) * pages.get(kb, 0)
    p2m, p1g = contract.POOL[KB_2M].key, contract.POOL[KB_1G].key
    p[p2m] = max(p[p2m], realprog) + 8
    small = sum(p[contract.POOL[kb].key] * kb * 1024
                for kb in contract.arch_pools(arch) if kb != KB_1G)
    p["mem"] = "%dM" % (guest_mem(small + 2 * p["max_bytes"] + 768 * MB,
                                  p[p1g], arch) // MB)
    return p


def guest_mem(mem, pages_1g, arch):
    """Guest RAM for mem bytes of everything but the 1 GB pool, and that
    pool's pages_1g pages."""
    if not pages_1g:
        return mem
    if arch == "arm64":
        # -M virt has one RAM range, 1 GB aligned; early allocations
        # (memmap, page tables) sit at its top: one 1 GB block to spare.
        return -(-mem // GB) * GB + (pages_1g + 1) * GB
    # A boot-time 1 GB page needs a whole free 1 GB-aligned block.  On
    # QEMU's pc machine RAM past 3 GB moves above 4 GB, and early
    # allocations (the initramfs, memmap) sit at the top of each range,
    # so give the high range the pages plus 2 GB to spare: with 4 GB the
    # guest preallocates no 1 GB page, with 6 GB it does.
    return max(-(-mem // GB) * GB, 3 * GB) + (pages_1g + 2) * GB


def host_cpu(path="/proc/cpuinfo"):
    """The host CPU's model name."""
    try:
        with open(path) as f:
            for line in f:
                k, _, v = line.partition(":")
                if k.strip() == "model name":
                    return v.strip()
    except OSError:
        pass
    return platform.processor()


def git_rev():
    try:
        rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"],
                             capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain",
                                "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return (rev or "unknown") + ("-dirty" if dirty else "")
    except OSError:
        return "unknown"


class Results:
    """One run folder: CSVs written row by row, meta.json kept current."""

    STATUS_ORDER = {"failed": 2, "measured": 1, "skipped": 0}

    def __init__(self, results_dir, run_id, meta):
        self.results_dir = results_dir
        self.dir = os.path.join(results_dir, run_id)
        os.makedirs(self.dir, exist_ok=True)      # new_run_id made it
        self.meta = dict(meta)
        self.meta.setdefault("backings", {})
        self.meta.setdefault("counters", {})
        self.meta.setdefault("hugepages", {})
        self.meta.setdefault("method", {})
        self.meta.setdefault("errors", [])
        self.meta.setdefault("bench_exit", {})
        self.headers = {}
        self.rows = {}
        self.env = {}
        self.write_meta()
        self.point_latest()

    def point_latest(self):
        link = os.path.join(self.results_dir, "latest")
        tmp = link + ".tmp%d" % os.getpid()
        os.symlink(os.path.basename(self.dir), tmp)
        os.replace(tmp, link)

    def write_meta(self):
        path = os.path.join(self.dir, "meta.json")
        with open(path + ".tmp", "w") as f:
            json.dump(self.meta, f, indent=2, sort_keys=True)
            f.write("\n")
        os.replace(path + ".tmp", path)

    def csv_path(self, bench):
        return os.path.join(self.dir, bench + ".csv")

    def handle(self, line):
        """Consumes one line of a benchmark's stdout; returns the text to
        echo (None for nothing)."""
        line = line.rstrip("\r\n")
        if not line.startswith("@"):
            return line
        tag, _, rest = line.partition(" ")
        if tag == "@header":
            bench, _, header = rest.partition(" ")
            self.header(bench, header)
            return None
        if tag == "@row":
            bench, _, row = rest.partition(" ")
            return self.row(bench, row)
        if tag == "@meta":
            key, _, js = rest.partition(" ")
            try:
                self.add_meta(key, json.loads(js))
            except ValueError:
                return "bench: unreadable metadata: " + line
            return None
        if tag == "@error":
            self.meta["errors"].append(rest)
            self.write_meta()
            return "ERROR " + rest
        if tag in ("@done", "@exit"):   # @exit: the guest script's view
            bench, _, rc = rest.partition(" ")
            self.exit_status(bench, int(rc) if rc.isdigit() else rc)
            return None
        return line

    def exit_status(self, bench, rc):
        """A benchmark runs in more than one invocation: keep the worst."""
        ex = self.meta["bench_exit"]
        if ex.get(bench) in (None, 0):
            ex[bench] = rc
        self.write_meta()

    def header(self, bench, header):
        cols = header.split(",")
        if bench in self.headers:
            if self.headers[bench] != cols:
                raise ValueError("%s: header changed" % bench)
            return
        # Written whole and renamed into place, and only then recorded: an
        # interrupt between open() and write() must not leave an empty CSV.
        path = self.csv_path(bench)
        with open(path + ".tmp", "w") as f:
            f.write(header + "\n")
        os.replace(path + ".tmp", path)
        self.headers[bench] = cols
        self.rows.setdefault(bench, 0)

    def row(self, bench, row):
        cols = self.headers.get(bench)
        if cols is None:
            return "bench: row before header: " + row
        if len(row.split(",")) != len(cols):
            self.meta["errors"].append("%s: malformed row: %s" % (bench, row))
            return "bench: malformed row (%d fields, want %d): %s" % (
                len(row.split(",")), len(cols), row)
        with open(self.csv_path(bench), "a") as f:
            f.write(row + "\n")
            f.flush()
        self.rows[bench] += 1
        return None

    def add_meta(self, key, val):
        m = self.meta
        if key == "backing":
            b = m["backings"].setdefault(val["name"], {
                "status": val["status"], "reason": val["reason"],
                "page_kb": val["page_kb"], "promised_kb": val["promised_kb"],
                "benches": {}})
            b["benches"][val["bench"]] = val["status"]
            # failed anywhere > measured anywhere > skipped everywhere
            if self.STATUS_ORDER[val["status"]] > \
                    self.STATUS_ORDER[b["status"]]:
                b["status"] = val["status"]
                b["reason"] = val["reason"]
            if val["page_kb"]:
                b["page_kb"] = val["page_kb"]
        elif key == "method":
            bench = val.pop("bench", "?")
            m["method"].setdefault("per_bench", {})[bench] = val
            for k in ("warmup", "reps", "seed", "aslr_off", "cpu_pinned",
                      "timer_resolution_ns", "timer_getres_ns", "clock"):
                m["method"].setdefault(k, val.get(k))
            # the first benchmark that models the TLB (--model) names it
            if "model" in val and "tlb_model" not in m:
                m["tlb_model"] = {"preset": val.get("model"),
                                  "counted_accesses": val.get("model_cap"),
                                  "warm_accesses": val.get("model_cap")}
        elif key == "hugepages":
            if not m["hugepages"]:
                m["hugepages"] = {"%skB" % k: v for k, v in val.items()}
        elif key == "counters":
            if not m["counters"]:
                m["counters"] = val
        elif key == "order":
            # the rounds each point was measured in (bench/runner.c)
            bench = val.pop("bench", "?")
            m.setdefault("repetition_order", {}).setdefault(
                bench, []).append(val)
        elif key == "numa":
            # where each mapping's pages are, per node (bench/numa.h)
            bench = val.pop("bench", "?")
            m.setdefault("numa_placement", {}).setdefault(
                bench, {}).setdefault(val.pop("backing"), []).append(val)
        elif key == "thp_guest":
            # the guest kernel's THP knobs (the host's are in machine)
            m[key] = {k: bracketed(v) or None for k, v in val.items()}
        elif key == "skip":
            # a point a benchmark could not measure (faultscale: N regions
            # do not fit the pool), with the reason
            m.setdefault("skipped_points", []).append(val)
        elif key == "host_memory":
            # what backs guest RAM on the host (run-qemu.sh under KVM)
            m[key] = val
        elif key == "env":
            self.env = val
            m["kernel"] = val.get("kernel")
            m["measured_cpu"] = val.get("cpu")
            if m.get("mode") == "guest":
                m["series_id"] = val.get("series_id")
                if m.get("qemu") is not None:
                    accel = val.get("accel") or m["qemu"].get("accel")
                    icount = val.get("icount") == "1"
                    m["qemu"]["accel"] = accel
                    m["qemu"]["icount"] = icount
                    m["timing_source"] = "icount" if icount else accel
        else:
            m.setdefault("other", {})[key] = val
        self.write_meta()

    # QEMU emulates a PMU under TCG on arm64 (PMUv3): its cycles follow
    # emulated time, and a guest kernel with a PMU driver opens them.
    EMULATED_PMU = ("%s counted by the PMU QEMU emulates (timing source "
                    "%s): emulated, not hardware counts")

    def finish(self, status):
        src = self.meta.get("timing_source")
        counted = [e for e in ("cycles", "instructions")
                   if (self.meta["counters"].get(e) or {}).get("available")]
        if counted and src and not contract.timing_is_hardware(src):
            note = self.EMULATED_PMU % (" and ".join(counted), src)
            if note not in self.meta.setdefault("notes", []):
                self.meta["notes"].append(note)
        self.meta["status"] = status
        self.meta["rows"] = dict(self.rows)
        self.write_meta()


class HugePools:
    """Raises the host's hugetlb pools for a run; restore() puts back what
    was there (call it from finally; it is idempotent).  The first raise
    takes the host-state lock (bench/hostlock.py), the restore gives it
    back."""

    SYS = "/sys/kernel/mm/hugepages/hugepages-%dkB/nr_hugepages"

    def __init__(self, sysfmt=None):
        self.sysfmt = sysfmt or self.SYS
        self.saved = {}
        self.holding = False

    def _read(self, kb):
        with open(self.sysfmt % kb) as f:
            return int(f.read())

    def read(self, kb, name="nr_hugepages"):
        """A pool file (nr_hugepages, free_hugepages); 0 if unreadable."""
        path = os.path.join(os.path.dirname(self.sysfmt % kb), name)
        try:
            with open(path) as f:
                return int(f.read())
        except (OSError, ValueError):
            return 0

    def _write(self, kb, n):
        with open(self.sysfmt % kb, "w") as f:
            f.write("%d\n" % n)

    def hold(self):
        """Takes the host-state lock until restore(): call it before the
        reads a raise is computed from."""
        if not self.holding:
            HOST_LOCK.acquire()
            self.holding = True

    def raise_to(self, kb, n):
        """Returns the pool size obtained (the kernel may give fewer)."""
        self.hold()     # the pool as it is while no other run changes it
        try:
            cur = self._read(kb)
        except OSError:
            return 0
        if cur >= n:
            return cur
        self.saved.setdefault(kb, cur)
        try:
            self._write(kb, n)
        except OSError as e:
            print("bench: cannot set %d kB pool to %d: %s" % (kb, n, e))
        return self._read(kb)

    def restore(self):
        for kb, n in list(self.saved.items()):
            try:
                self._write(kb, n)
                del self.saved[kb]
            except OSError as e:
                print("bench: RESTORE FAILED for %d kB pool (want %d): %s"
                      % (kb, n, e), file=sys.stderr)
        # A pool left unrestored keeps the lock until this process ends.
        if self.holding and not self.saved:
            self.holding = False
            HOST_LOCK.release()


def stream_lines(cmd, res, cwd=None):
    """Runs cmd, feeding each stdout line to res; returns the exit code."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, cwd=cwd, text=True,
                            errors="replace", bufsize=1)
    try:
        for line in proc.stdout:
            out = res.handle(line)
            if out is not None:
                print(out, flush=True)
        return proc.wait()
    except BaseException:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        raise


def new_run_id(results_dir, mode, prof):
    """A new run's id; its folder is made here, by mkdir, so that two runs
    started in the same second cannot both take it."""
    base = datetime.datetime.now().strftime("%Y%m%d-%H%M%S") + \
        "-%s-%s" % (mode, prof)
    os.makedirs(results_dir, exist_ok=True)
    rid, i = base, 1
    while True:
        try:
            os.mkdir(os.path.join(results_dir, rid))
            return rid
        except FileExistsError:
            i += 1
            rid = "%s-%d" % (base, i)


def qemu_version(arch="x86_64"):
    qemu = {"arm64": "qemu-system-aarch64"}.get(arch, "qemu-system-x86_64")
    try:
        out = subprocess.run([qemu, "--version"],
                             capture_output=True, text=True).stdout
        return out.splitlines()[0].strip() if out else None
    except OSError:
        return None


def mem_available():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def read_text(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def bracketed(text):
    """The chosen value of a sysfs choice file: "always [madvise] never"."""
    m = re.search(r"\[([^]]+)\]", text or "")
    return m.group(1) if m else text


def loadavg(root="/"):
    text = read_text(os.path.join(root, "proc", "loadavg"))
    return [float(x) for x in text.split()[:3]] if text else None


def cpu_flags(root="/"):
    """The first flags line of /proc/cpuinfo as a set (x86); None where
    there is none (arm64 says "Features")."""
    text = read_text(os.path.join(root, "proc", "cpuinfo")) or ""
    for line in text.splitlines():
        if line.startswith("flags"):
            return set(line.partition(":")[2].split())
    return None


def hypervisor(root="/"):
    """True when /proc/cpuinfo's flags include "hypervisor" (a VM)."""
    return "hypervisor" in (cpu_flags(root) or ())


def paging_state(root="/"):
    """What changes the cost of a page walk or of a TLB miss besides the
    TLB: KPTI (page-table isolation: every kernel entry switches page
    tables, so user TLB entries do not survive it without PCID), la57
    (5-level paging, x86: the kernel clears the flag when it runs with 4
    levels), the mTHP knobs of each size (a 4 KB backing may get 16-2048
    KB folios) and NUMA balancing (it unmaps pages to sample them, which
    adds faults and TLB flushes).  None where the host does not say."""
    meltdown = read_text(os.path.join(root, "sys", "devices", "system",
                                      "cpu", "vulnerabilities", "meltdown"))
    flags = cpu_flags(root)
    mthp = {}
    for d in sorted(glob.glob(os.path.join(
            root, "sys", "kernel", "mm", "transparent_hugepage",
            "hugepages-*kB")), key=lambda d: int(d.rpartition("-")[2][:-2])):
        knobs = {f: bracketed(read_text(os.path.join(d, f)))
                 for f in sorted(os.listdir(d))
                 if os.path.isfile(os.path.join(d, f))}
        mthp[os.path.basename(d).partition("-")[2]] = knobs
    balancing = read_text(os.path.join(root, "proc", "sys", "kernel",
                                       "numa_balancing"))
    return {
        "kpti": None if meltdown is None else "PTI" in meltdown,
        "la57": None if flags is None else "la57" in flags,
        "thp_mthp": mthp or None,
        "numa_balancing": int(balancing) if balancing else None,
    }


def machine_state(root="/"):
    """What can move the numbers of this host: cpufreq governors (a count
    per governor), boost, SMT, THP, whether it is a virtual machine and
    paging_state().
    A value is null where the host does not offer it."""
    cpu = os.path.join(root, "sys", "devices", "system", "cpu")
    govs = {}
    for path in sorted(glob.glob(os.path.join(
            cpu, "cpu[0-9]*", "cpufreq", "scaling_governor"))):
        g = read_text(path)
        govs[g] = govs.get(g, 0) + 1
    boost = read_text(os.path.join(cpu, "cpufreq", "boost"))
    no_turbo = read_text(os.path.join(cpu, "intel_pstate", "no_turbo"))
    if boost is None and no_turbo is not None:
        boost = "0" if no_turbo == "1" else "1"
    thp = ThpSettings(root).read()
    return {
        "cpufreq_governor": govs or None,
        "boost": {"1": True, "0": False}.get(boost),
        "smt_active": {"1": True, "0": False}.get(
            read_text(os.path.join(cpu, "smt", "active"))),
        "thp_enabled": thp.pop("enabled"),
        "thp_defrag": thp.pop("defrag"),
        "thp_khugepaged": {k.partition("/")[2]: v for k, v in thp.items()
                           if v is not None} or None,
        "hypervisor": hypervisor(root),
        "numa_nodes": len(numa_nodes(root)) or None,
        **paging_state(root),
    }


def numa_nodes(root="/"):
    """The host's NUMA nodes' numbers, from sysfs ([] without NUMA)."""
    return sorted(int(os.path.basename(d)[4:]) for d in glob.glob(
        os.path.join(root, "sys", "devices", "system", "node", "node[0-9]*")))


# A node's own hugetlb pool: with more than one node the native run raises
# the pools of the node the runner pins to (its mappings are bound there,
# bench/numa.h) rather than the global nr_hugepages, which the kernel
# spreads over all nodes.
NODE_POOL = os.path.join("sys", "devices", "system", "node", "node%d",
                         "hugepages", "hugepages-%%dkB", "nr_hugepages")


def pinned_node(bindir, root="/"):
    """The node of the CPU the runner pins to (benchtool pickcpu, the same
    choice), on a host with more than one node; None otherwise."""
    if len(numa_nodes(root)) < 2:
        return None
    allowed = ",".join(str(c) for c in sorted(os.sched_getaffinity(0)))
    p = subprocess.run([os.path.join(bindir, "benchtool"), "pickcpu",
                        "--sysfs", root, "--allowed", allowed],
                       capture_output=True, text=True)
    m = re.match(r"cpu (\d+) ", p.stdout)
    nodes = glob.glob(os.path.join(root, "sys", "devices", "system", "cpu",
                                   "cpu%s" % (m.group(1) if m else "-"),
                                   "node[0-9]*"))
    return int(os.path.basename(nodes[0])[4:]) if nodes else None


class ThpSettings:
    """The transparent huge page knobs of a host: read for meta.json, and
    set for a run that measures the `thp` backing, which maps with
    MADV_HUGEPAGE.  That advice takes effect only when `enabled` is
    `always` or `madvise`, and a madvised fault compacts memory to get a
    huge page only when `defrag` is `always`, `madvise` or `defer+madvise`
    (with `defer` or `never` it falls back to 4 KB pages once memory is
    fragmented, and the backing fails its page-size check).  Where a knob
    allows neither, it is set to `madvise`: the least change that gives
    madvised regions huge pages and direct compaction, leaving every other
    process's memory as it was (`always` would not).  khugepaged is only
    recorded: the runner touches a mapping whole right after mapping it,
    so its huge pages come from the fault, not from khugepaged's scans.
    restore() puts back what apply() changed (call it from finally; it is
    idempotent)."""

    DIR = os.path.join("sys", "kernel", "mm", "transparent_hugepage")
    KNOBS = ("enabled", "defrag", "khugepaged/defrag",
             "khugepaged/pages_to_scan", "khugepaged/scan_sleep_millisecs")
    # knob: (values that serve MADV_HUGEPAGE, the value set otherwise)
    NEED = {"enabled": (("always", "madvise"), "madvise"),
            "defrag": (("always", "defer+madvise", "madvise"), "madvise")}

    def __init__(self, root="/"):
        self.dir = os.path.join(root, self.DIR)
        self.saved = {}
        self.locked = False

    def read(self):
        """{knob: value} (the chosen one of a choice file); None where the
        kernel has no such file."""
        return {k: bracketed(read_text(os.path.join(self.dir, k)))
                for k in self.KNOBS}

    def _write(self, knob, value):
        with open(os.path.join(self.dir, knob), "w") as f:
            f.write(value + "\n")

    def apply(self):
        """Sets what the thp backing needs, under the host-state lock
        (bench/hostlock.py) until restore(); returns the values in force."""
        HOST_LOCK.acquire()
        self.locked = True
        cur = self.read()
        for knob, (ok, want) in self.NEED.items():
            if cur[knob] is None or cur[knob] in ok:
                continue
            try:
                self._write(knob, want)
                self.saved.setdefault(knob, cur[knob])
                print("bench: THP %s set from %s to %s for the thp backing"
                      % (knob, cur[knob], want))
            except OSError as e:
                print("bench: cannot set THP %s to %s (%s): the thp backing "
                      "may fail its page-size check" % (knob, want, e),
                      file=sys.stderr)
        return {k: v for k, v in self.read().items() if k in self.NEED}

    def restore(self):
        for knob, value in list(self.saved.items()):
            try:
                self._write(knob, value)
                del self.saved[knob]
            except OSError as e:
                print("bench: RESTORE FAILED for THP %s (want %s): %s"
                      % (knob, value, e), file=sys.stderr)
        if self.locked and not self.saved:
            self.locked = False
            HOST_LOCK.release()


def needs_pools(backings, c):
    """False when a backing list names no hugetlb backing."""
    return any(c.needs_pool(b) for b in backings)


def wants_1g(backings, c):
    return any(c.needs_pool(b) == KB_1G for b in backings)


def rotation(backings, k):
    """backings rotated by k, as one comma list: the binary's first round
    of repetitions measures them in this order, and the later rounds follow
    a Williams design over it (bench/runner.c)."""
    k %= max(len(backings), 1)
    return ",".join(backings[k:] + backings[:k])


def together(runs, c):
    """{pool_kb: the most backings drawing on that pool that one binary
    maps at once}."""
    most = {}
    for bench, argv in runs:
        if bench not in c.bench_names():    # not a runner benchmark
            continue
        n = {}
        for b in argv[argv.index("--backings") + 1].split(","):
            kb = c.needs_pool(b)
            if kb:
                n[kb] = n.get(kb, 0) + 1
        for kb, k in n.items():
            most[kb] = max(most.get(kb, 0), k)
    return most


def bench_backings(p, bench, args, c):
    """The backings bench measures in this run, in table order."""
    profile_bk = p.get("backings", {})
    chosen = args.backings or profile_bk.get(bench, profile_bk.get("*"))
    if not chosen:
        return arch_backings(c, args.arch)
    want = chosen.split(",")
    for b in want:
        if b not in REALPROG_BACKINGS.split(","):
            c.backing(b)        # an unknown name stops here, named
    return [b for b in c.backing_names() if b in want]


def profile_args(p, bench):
    """The profile's arguments for bench, or the runner's own options."""
    return list(p.get(bench, p["runner"]))


def binary(bench, c):
    """The file name of bench's binary in build/bench (and the guest's
    /usr/local/bin)."""
    return REALPROG if bench == REALPROG else c.bench(bench)["binary"]


def native_binary(bench, c, bindir):
    """bench's binary for a native run: its build for this host's CPU,
    <binary>-native, where bench/bench.mk built one (streamk's -O3
    -march=native, which STREAM's rules allow and @meta streamk_build
    records); else binary()."""
    name = binary(bench, c)
    if os.path.exists(os.path.join(bindir, name + "-native")):
        return name + "-native"
    return name


def realprog_invocation(p, args):
    """The real-program step: one invocation, every backing (it rotates
    them per repetition itself, and skips what the kernel lacks)."""
    want = REALPROG_BACKINGS.split(",")
    if args.backings:
        want = [b for b in want if b in args.backings.split(",")]
    return (REALPROG, profile_args(p, REALPROG) +
            ["--seed", str(args.seed), "--backings", ",".join(want)])


def bench_args(p, bench, args, preset, c):
    """The profile's arguments, the seed, and the TLB model preset for a
    benchmark that takes --model (the contract's options say which)."""
    a = profile_args(p, bench) + ["--seed", str(args.seed)]
    if c.has_option(bench, "model"):
        a += ["--model", preset]
    return a


def invocations(p, args, preset, benches, c):
    """[(bench, argv without the binary)]: the run's binaries in order,
    each benchmark's first round of backings rotated one position more
    than the last's."""
    out = []
    for i, bench in enumerate(benches):
        if bench == REALPROG:
            out.append(realprog_invocation(p, args))
            continue
        out.append((bench, bench_args(p, bench, args, preset, c) + [
            "--backings", rotation(bench_backings(p, bench, args, c),
                                   args.rotate + i)]))
    return out


def parse_args(argv, c):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", choices=("guest", "native"), required=True)
    ap.add_argument("--arch", choices=contract.ARCHES,
                    help="guest: the guest's architecture (default: arm64 "
                    "for a --kernel named Image*, else x86_64); native: "
                    "this host's")
    ap.add_argument("--profile", default="quick",
                    choices=("tiny", "quick", "full"))
    ap.add_argument("--benches", default=None,
                    help="comma list (default: %(default)s; realprog is "
                    "the real-program step)")
    ap.add_argument("--backings", help="comma list (default: all)")
    ap.add_argument("--rotate", type=int, default=0,
                    help="start each benchmark's backings this many "
                    "positions further on (default 0)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--model", default="auto",
                    help="TLB model preset or spec for the chase (default "
                    "auto: the chase picks the preset of the core it is "
                    "pinned to, else its CPUID geometry on bare metal, "
                    "else no model, saying why)")
    ap.add_argument("--results-dir", default=os.path.join(ROOT, "results"))
    ap.add_argument("--bindir", default=os.path.join(ROOT, "build", "bench"))
    ap.add_argument("--run-qemu", default=os.path.join(ROOT, "run-qemu.sh"))
    ap.add_argument("--kernel", help="guest: bzImage (arm64: Image) for "
                    "run-qemu.sh")
    ap.add_argument("--initrd", help="guest: initramfs for run-qemu.sh")
    ap.add_argument("--qemu-arg", action="append", default=[],
                    help="extra run-qemu.sh argument (repeatable)")
    ap.add_argument("--no-1g", action="store_true",
                    help="do not preallocate 1 GB pages")
    ap.add_argument("--sizes", help="override the profile's working sets "
                    "(chase and stream), e.g. 1G or 16K,6M,1G")
    ap.add_argument("--dry-run", action="store_true")
    args = ap.parse_args(argv)
    args.benches_given = args.benches is not None
    if not args.benches_given:
        args.benches = ",".join(c.bench_names() + [REALPROG])
    set_arch(ap, args)
    try:
        for b in args.benches.split(","):
            if b != REALPROG:
                c.bench(b)
        for b in (args.backings or "").split(",") if args.backings else []:
            if b not in REALPROG_BACKINGS.split(","):
                c.backing(b)
    except contract.ContractError as e:
        ap.error(str(e))
    return args


def set_arch(ap, args):
    """args.arch from --arch, the kernel's name or the host; on arm64 the
    model preset (ARM64_PRESET) and no real-program step by default."""
    host = {"aarch64": "arm64"}.get(platform.machine(), platform.machine())
    if args.mode == "native":
        if args.arch and args.arch != host:
            ap.error("--arch %s with --mode native on a %s host: native runs "
                     "measure this host; use --mode guest" % (args.arch,
                                                              host))
        args.arch = host if host in contract.ARCHES else "x86_64"
    elif not args.arch:
        kernel = os.path.basename(args.kernel or "")
        args.arch = "arm64" if kernel.startswith("Image") else "x86_64"
    if args.arch != "arm64":
        return
    if args.model == "auto":
        args.model = ARM64_PRESET
    benches = args.benches.split(",")
    if REALPROG in benches:
        if args.benches_given:
            ap.error(ARM64_NO_REALPROG)
        args.benches = ",".join(b for b in benches if b != REALPROG)


def override_sizes(p, sizes, arch="x86_64"):
    """--sizes replaces the working sets of every benchmark but fault."""
    top = max(size_bytes(x) for x in sizes.split(","))
    for b in ("chase", "stream", "streamk", "mlp", "runner"):
        a = list(p[b])
        for opt in ("--sizes", "--min", "--max"):
            if opt in a:
                i = a.index(opt)
                del a[i:i + 2]
        p[b] = ["--sizes", sizes] + a
    p["max_bytes"] = max(top, size_bytes(p["fault"][1].split(",")[-1]))
    size_pools(p, arch=arch)


# The guest's THP knobs, as one @meta line (Results.add_meta: thp_guest).
GUEST_THP = ("t=/sys/kernel/mm/transparent_hugepage; printf '@meta thp_guest "
             "{\"enabled\": \"%s\", \"defrag\": \"%s\"}\\n' "
             "\"$(cat $t/enabled 2>/dev/null)\" \"$(cat $t/defrag 2>/dev/null)\"")


def guest_command(p, args, runs, c):
    """One run-qemu.sh boot that runs every invocation in turn; the
    initramfs has the binaries in /usr/local/bin."""
    script = "; ".join([GUEST_THP] + [
        "/usr/local/bin/%s %s; echo \"@exit %s $?\"" % (
            os.path.basename(binary(bench, c)),
            " ".join(shlex.quote(x) for x in argv), bench)
        for bench, argv in runs])
    cmd = [args.run_qemu]
    if args.arch != "x86_64":
        cmd += ["--arch", args.arch]
    # every pool of the architecture, 0 included: run-qemu.sh's own
    # defaults would otherwise fill the pools the run does not use
    for kb in contract.arch_pools(args.arch):
        pool = contract.POOL[kb]
        if p[pool.key] or kb != KB_1G:
            cmd += [pool.option, str(p[pool.key])]
    cmd += ["--mem", p["mem"], "--timeout", str(p["timeout"])]
    # the CPUs a benchmark that runs tasks in parallel (--tasks) spreads over
    if any(bench in c.bench_names() and c.has_option(bench, "tasks")
           for bench, _ in runs):
        cmd += ["--smp", str(p["smp"])]
    if args.kernel:
        cmd += ["--kernel", args.kernel]
    if args.initrd:
        cmd += ["--initrd", args.initrd]
    return cmd + args.qemu_arg + ["--", "sh", "-c", script]


def first_meta(args, run_id, cmds, runs):
    guest = args.mode == "guest"
    state = machine_state(HOST_ROOT)
    meta = {
        "run_id": run_id,
        "date": datetime.datetime.now().astimezone().isoformat(
            timespec="seconds"),
        "git_rev": git_rev(),
        "profile": args.profile,
        "mode": args.mode,
        "host_cpu": host_cpu(),
        "kernel": None if guest else platform.release(),
        "series_id": None if guest else "host",
        "arch": args.arch,
        "qemu": {"version": qemu_version(args.arch), "accel": None,
                 "icount": None}
        if guest else None,
        "timing_source": None if guest else "native",
        "commands": [" ".join(shlex.quote(x) for x in c) for c in cmds],
        "backing_order": {},
        "machine": dict(state, loadavg_start=loadavg(), loadavg_end=None,
                        thp_in_run={"enabled": state["thp_enabled"],
                                    "defrag": state["thp_defrag"]}),
        # the cores QEMU's vCPU threads share in guest mode (faultscale)
        "host_cpus": os.cpu_count(),
        "status": "running",
    }
    for bench, argv in runs:
        part = argv[argv.index("--backings") + 1].split(",")
        meta["backing_order"].setdefault(bench, []).extend(part)
    if state["hypervisor"] and not guest:
        meta["notes"] = [contract.HYPERVISOR_NOTE]
    if args.arch == "arm64" and not args.benches_given:
        meta.setdefault("notes", []).append(ARM64_NO_REALPROG)
    return meta


def stop_signals():
    """Turns the first SIGINT/SIGTERM/SIGHUP into KeyboardInterrupt and
    ignores the rest, so they cannot cut the cleanup short (child, pools,
    meta.json).  A signal that was ignored when we started (nohup, a
    background job) stays ignored.  Returns a function that ignores them
    all from then on."""
    stops = [s for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
             if signal.getsignal(s) != signal.SIG_IGN]

    def ignore_stops():
        for s in stops:
            signal.signal(s, signal.SIG_IGN)

    def on_term(sig, frame):
        ignore_stops()
        raise KeyboardInterrupt("signal %d" % sig)

    for s in stops:
        signal.signal(s, on_term)
    return ignore_stops


def guest_ram_on_host_pool(cmd):
    """(MB, page kB) of guest RAM run-qemu.sh will take from a host hugetlb
    pool (--host-pages hugetlb, its default under KVM), from its
    --print-config for the same options; (0, 0) for none."""
    i = cmd.index("--")
    p = subprocess.run(cmd[:i] + ["--print-config"], cwd=ROOT,
                       capture_output=True, text=True)
    try:
        ram = json.loads(p.stdout)["guest_ram"] if not p.returncode else {}
    except (ValueError, KeyError, TypeError):
        ram = {}
    if not ram.get("hugetlb"):
        return 0, 0
    return ram["size_mb"], ram["page_kb"]


def run_guest(res, cmd, pools):
    ram_mb, kb = guest_ram_on_host_pool(cmd)
    if ram_mb:
        # Room for all guest RAM on top of what the pool already lends out.
        pools.hold()
        total = pools.read(kb)
        free = pools.read(kb, "free_hugepages")
        got = pools.raise_to(kb, total - free + ram_mb * 1024 // kb)
        print("bench: host %d kB pool raised to %d for %d MB of guest RAM"
              % (kb, got, ram_mb))
    rc = stream_lines(cmd, res, cwd=ROOT)
    reason = contract.QEMU_EXIT_REASON.get(rc)
    if reason and rc != contract.QEMU_EXIT["USAGE"][0]:
        res.meta["errors"].append("run-qemu.sh: " + reason)
        print("bench: run-qemu.sh exit %d: %s" % (rc, reason),
              file=sys.stderr)
    return rc


def raise_pools(res, pools, p):
    """Raises the host's pools for a native run; 1 GB pages it cannot get
    in full are given back (the 1G backings then skip, saying why)."""
    got = pools.raise_to(KB_2M, p["hugepages"])
    if got < p["hugepages"]:
        print("bench: only %d of %d 2 MB pages" % (got, p["hugepages"]))
    if not p["hugepages_1g"]:
        return
    got1 = pools.raise_to(KB_1G, p["hugepages_1g"])
    if got1 < p["hugepages_1g"]:
        res.meta.setdefault("notes", []).append(
            "could get only %d of %d 1 GB pages; 1G backings skipped"
            % (got1, p["hugepages_1g"]))
        print("bench: could get only %d of %d 1 GB pages; giving them back"
              % (got1, p["hugepages_1g"]))
        if KB_1G in pools.saved:
            pools._write(KB_1G, pools.saved.pop(KB_1G))


def fit_pool(res, bench, cmd, free_2m, arrays=1):
    """cmd, with bench's working set (arrays equal arrays of whole 4 KB
    pages) cut to what free_2m free 2 MB pages hold when the pool could
    not be raised far enough for it (streamk's rows and @meta streamk_llc
    then say STREAM's 4x rule was not met; a note says why)."""
    if "--sizes" not in cmd:
        return cmd
    i = cmd.index("--sizes") + 1
    want = max(size_bytes(x) for x in cmd[i].split(","))
    unit = arrays * 4096
    room = free_2m * 2 * MB // unit * unit
    if want <= room:
        return cmd
    note = ("%s: the 2 MB pool had %d free pages, so it ran %d B of "
            "arrays instead of %d B" % (bench, free_2m, room, want))
    res.meta.setdefault("notes", []).append(note)
    print("bench: " + note)
    return cmd[:i] + [str(room)] + cmd[i + 1:]


def run_native(res, runs, cmds, pools, p, pooled, c):
    """Runs cmds (the native commands of runs) in turn, each benchmark's
    oracle (ORACLES) after it; the profile's fit_pool benchmarks cut to
    the 2 MB pool's free pages."""
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
    return rc


# The chase's oracle (issue 19, point 9): tests/bench/minichase.c, one
# process, one mapping, one cycle over every line, no pinning, nothing
# shared with bench/.  After a native run its least time per hop on the
# page size of each backing the chase measured (at the largest line-hop
# size up to ORACLE_MAX, if that is at least ORACLE_MIN: smaller working
# sets live in the caches, where the TLB question is not asked) must be
# within ORACLE_TOLERANCE of the chase's ns_min; a disagreement fails the
# run (meta.json chase_oracle says which), unless the load average was
# above the CPU count: then it is a note, as wall time means little there.
ORACLE_KINDS = {4: "4k", KB_2M: "2m", KB_1G: "1g"}
ORACLE_TOLERANCE = 0.10
ORACLE_MIN, ORACLE_MAX = 64 * MB, GB
ORACLE_RUNS = 3
ORACLE_ATTEMPTS = 3


def minichase(bindir, kind, wss, hops, runs=ORACLE_RUNS):
    """(least ns per hop over runs runs of the oracle, None) or (None,
    why).  It warms with as many hops as it times."""
    best, exe = None, os.path.join(bindir, "minichase")
    if not os.access(exe, os.X_OK):
        return None, "%s is not built (make bench-native builds it)" % exe
    for _ in range(runs):
        p = subprocess.run([exe, kind, str(wss), str(hops), str(hops)],
                           capture_output=True, text=True)
        m = re.match(r"ns_per_hop ([0-9.]+)", p.stdout)
        if p.returncode or not m:
            return None, (p.stderr.strip() or "exit %d" % p.returncode)
        best = min(best or float("inf"), float(m.group(1)))
    return best, None


def oracle_verdict(chase_ns, oracle_ns, tolerance=ORACLE_TOLERANCE):
    """{chase_ns_min, oracle_ns_min, ratio, agree} for one backing."""
    ratio = chase_ns / oracle_ns
    return {"chase_ns_min": chase_ns, "oracle_ns_min": oracle_ns,
            "ratio": round(ratio, 4), "agree": abs(ratio - 1) <= tolerance}


def chase_line_rows(path, top=ORACLE_MAX):
    """(wss, [rows]): the chase's line-hop rows at its largest size up to
    top; (None, []) when it has none."""
    try:
        with open(path) as f:
            rows = [r for r in csv.DictReader(f) if r["hop"] == "line" and
                    int(r["wss_bytes"]) <= top]
    except OSError:
        return None, []
    if not rows:
        return None, []
    wss = max(int(r["wss_bytes"]) for r in rows)
    return wss, [r for r in rows if int(r["wss_bytes"]) == wss]


def check_chase_oracle(res, bindir):
    """The oracle against the chase's rows in res; 0, or 2 on a
    disagreement (after ORACLE_ATTEMPTS rounds of oracle runs)."""
    wss, rows = chase_line_rows(res.csv_path("chase"))
    if not rows or wss < ORACLE_MIN:
        res.meta["chase_oracle"] = {
            "wss_bytes": wss, "backings": {},
            "reason": "not checked: no line-hop size of the chase from %d "
                      "to %d MB" % (ORACLE_MIN // MB, ORACLE_MAX // MB)}
        res.write_meta()
        return 0
    hops = min(wss // 64, 4 << 20)
    best, why, out = {}, {}, {}
    for attempt in range(1, ORACLE_ATTEMPTS + 1):
        for kb in {int(r["page_kb"]) for r in rows}:
            if kb not in ORACLE_KINDS or kb in why:
                why.setdefault(kb, "no oracle for %d kB pages" % kb)
                continue
            ns, err = minichase(bindir, ORACLE_KINDS[kb], wss, hops)
            if err:
                why[kb] = err
            else:
                best[kb] = min(best.get(kb, ns), ns)
        out = {r["backing"]: dict(
            oracle_verdict(float(r["ns_min"]), best[int(r["page_kb"])])
            if int(r["page_kb"]) in best else
            {"agree": None, "reason": why[int(r["page_kb"])]},
            page_kb=int(r["page_kb"])) for r in rows}
        if all(v["agree"] is not False for v in out.values()):
            break
    res.meta["chase_oracle"] = {
        "wss_bytes": wss, "hop": "line", "hops": hops,
        "tolerance": ORACLE_TOLERANCE, "attempts": attempt,
        "source": "native wall time: least of %d runs of build/bench/"
                  "minichase per attempt" % ORACLE_RUNS, "backings": out}
    bad = sorted(b for b, v in out.items() if v["agree"] is False)
    load = os.getloadavg()[0]
    if bad:
        msg = "chase disagrees with its oracle (minichase) by over %d %% " \
            "at %d bytes: %s" % (ORACLE_TOLERANCE * 100, wss, ", ".join(
                "%s %.1f ns vs %.1f ns" % (b, out[b]["chase_ns_min"],
                                           out[b]["oracle_ns_min"])
                for b in bad))
        if load > (os.cpu_count() or 1):
            res.meta.setdefault("notes", []).append(
                msg + "; not a failure: load average %.1f on %d CPUs"
                % (load, os.cpu_count() or 1))
            bad = []
        else:
            res.meta["errors"].append(msg)
    res.meta["chase_oracle"]["load_average"] = load
    print("bench: chase oracle at %d bytes: %s" % (wss, ", ".join(
        "%s %s" % (b, v.get("ratio", v.get("reason")))
        for b, v in sorted(out.items()))), flush=True)
    res.write_meta()
    return 2 if bad else 0


# A benchmark's independent check after its native run: 0, or an exit
# status that fails the run.
ORACLES = {"chase": check_chase_oracle}


def check_exits(res, benches, rc):
    """Every benchmark must have reported a status, and each status be 0."""
    exits = [v for v in res.meta["bench_exit"].values() if v != 0]
    missing = [b for b in benches if b not in res.meta["bench_exit"]]
    if missing:
        res.meta["errors"].append("no exit status from: " +
                                  ", ".join(missing))
    return rc or (2 if exits or missing else 0)


def report(res, status):
    bad = [n for n, b in res.meta["backings"].items()
           if b["status"] == "failed"]
    if bad:
        print("bench: FAILED backings: %s" % ", ".join(bad), file=sys.stderr)
    print("bench: rows %s; results in %s (%s)" % (
        json.dumps(res.rows, sort_keys=True), res.dir, status))
    print("bench: figures and summary: python3 plots/render.py %s" % res.dir)


def main(argv=None):
    c = contract.load()
    args = parse_args(argv, c)
    benches = [b for b in args.benches.split(",") if b]
    p = profile(args.profile, args.mode, mem_available(), c,
                llc=None if args.mode == "guest" else host_llc(),
                arch=args.arch)
    if args.sizes:
        override_sizes(p, args.sizes, args.arch)
    runs = invocations(p, args, args.model, benches, c)
    selected = {b for bench, argv in runs if bench != REALPROG
                for b in argv[argv.index("--backings") + 1].split(",")}
    if REALPROG not in benches:
        p.pop(REALPROG, None)
    size_pools(p, with_1g=not args.no_1g and wants_1g(selected, c),
               together=together(runs, c), mem_available=mem_available(),
               arch=args.arch)

    guest = args.mode == "guest"
    if guest:
        cmds = [guest_command(p, args, runs, c)]
    else:
        cmds = [[os.path.join(args.bindir, native_binary(b, c, args.bindir))]
                + a for b, a in runs]
    if args.dry_run:
        for cmd in cmds:
            print(" ".join(shlex.quote(x) for x in cmd))
        return 0

    os.makedirs(args.results_dir, exist_ok=True)
    run_id = new_run_id(args.results_dir, args.mode, args.profile)
    res = Results(args.results_dir, run_id,
                  first_meta(args, run_id, cmds, runs))
    print("bench: %s run %s -> %s" % (args.mode, args.profile, res.dir),
          flush=True)
    node = None if guest else pinned_node(args.bindir, HOST_ROOT)
    pools = HugePools(None if node is None else
                      os.path.join(HOST_ROOT, NODE_POOL % node))
    res.meta["machine"]["pool_node"] = node
    thp = ThpSettings(HOST_ROOT)
    ignore_stops = stop_signals()
    status, rc = "complete", 0
    try:
        # A native run holds the host-state lock throughout: it changes the
        # pools and THP, and another native run would disturb its timings.
        if not guest:
            pools.hold()
        # Natively THP is set for the thp backing (see ThpSettings).  A
        # guest needs nothing set: it boots fresh with the project config's
        # enabled=madvise, defrag=madvise and is discarded after the run;
        # its values are recorded (thp_guest).
        if not guest and any(c.needs_thp(b) for b in selected):
            res.meta["machine"]["thp_in_run"] = thp.apply()
            res.write_meta()
        if guest:
            rc = run_guest(res, cmds[0], pools)
        else:
            rc = run_native(res, runs, cmds, pools, p,
                            needs_pools(selected, c) or REALPROG in benches, c)
        rc = check_exits(res, benches, rc)
        if rc:
            status = "failed"
    except KeyboardInterrupt:
        status, rc = "interrupted", contract.QEMU_EXIT["INTERRUPTED"][0]
        print("bench: interrupted", file=sys.stderr)
    finally:
        # From here to exit nothing is left to stop, and a signal would only
        # turn a recorded status into a different exit code: ignore them.
        ignore_stops()
        pools.restore()
        thp.restore()
        res.meta["machine"]["loadavg_end"] = loadavg()
        res.finish(status)
    report(res, status)
    return rc


if __name__ == "__main__":
    try:
        sys.exit(main())
    except contract.ContractError as e:
        print("bench: " + str(e), file=sys.stderr)
        sys.exit(2)
