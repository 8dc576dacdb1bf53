# SPDX-License-Identifier: GPL-2.0
"""The profiles (tiny, quick, full): each benchmark's arguments, the
working sets, and the pools and guest memory they need (size_pools).

A benchmark without an entry of its own runs with the profile's "runner"
arguments: a new benchmark runs without touching this file."""

import json
import math
import os
import subprocess

from bench import contract

from .base import GB, KB_1G, KB_2M, MB, ROOT, size_bytes


def arch_backings(c, arch):
    """The backings of c whose pool (if any) arch has, in table order.  A
    backing whose pool the architecture never has is left out of the


    default list rather than recorded as skipped in every run: x86 figures
    and meta.json would otherwise carry ten backings that cannot exist
    there.  Named with --backings it still runs, and skips saying why
    (bench/backing.c)."""
    return [b["name"] for b in c.backings
            if not b["pool_kb"] or b["pool_kb"] in contract.arch_pools(arch)]


# The chase's working sets: a coarse sweep (BASE_SIZES: x4 steps) plus
# points on both sides of every reach of the run's TLB model, 4 KB and
# 2 MB entries, L1 and L2 (knee_points), so each knee is seen from below
# and above whatever the CPU.  The guest's base stops at 256 MB (TCG time
# is scarce), the native quick one at 1 GB.
BASE_SIZES = ["16K", "64K", "256K", "1M", "4M", "16M", "64M", "256M"]
BASE_SIZES_NATIVE = BASE_SIZES + ["512M", "1G"]

# The reaches a sweep brackets without a model's geometry (--model none,
# or auto, which each binary resolves): runner.c make_sweep's, Skylake's
# and Zen 2/3's (256K, 6M and 8M on 4 KB pages; 64M, 128M and 3G on 2 MB).
GENERIC_REACHES = [256 << 10, 6 * MB, 8 * MB, 64 * MB, 128 * MB, 3 * GB]


def model_reaches(model, benchtool=None):
    """{"l1 4K": bytes, "l1 2M", "l2 4K", "l2 2M"}: the reaches of model
    (a preset or spec; `benchtool tlbgeometry --model`), the levels and
    sizes it caches; {} for none or auto (decided by each binary)."""
    if not model or model in ("none", "auto"):
        return {}
    tool = benchtool or os.path.join(ROOT, contract.BENCHTOOL)
    try:
        p = subprocess.run([tool, "tlbgeometry", "--model", model],
                           capture_output=True, text=True)
        levels = json.loads(p.stdout)["levels"] or {}
    except (OSError, ValueError, KeyError):
        return {}
    return {"%s %s" % (lv, sz): d["reach_bytes"]
            for lv in ("l1", "l2") for sz in ("4K", "2M")
            for d in [(levels.get(lv) or {}).get(sz)] if d}


def whole_pages(n):
    """n bytes rounded to whole 4 KB pages."""
    return max(4096, round(n / 4096) * 4096)


def knee_points(reaches, top, exact=True):
    """Sizes 3/4 and 5/4 of each reach below top (5/4 capped at top), and
    the reach itself where exact: a point on either side of each knee
    (runner.c's make_sweep takes the same fractions)."""
    out = set()
    for r in reaches:
        if r >= top:
            continue
        out |= {whole_pages(r * 3 / 4), min(whole_pages(r * 5 / 4), top)}
        if exact:
            out.add(whole_pages(r))
    return out


def chase_sizes(base, reaches, top, exact=True):
    """The chase's --sizes: base up to top and the knee points, in bytes."""
    got = {size_bytes(x) for x in base if size_bytes(x) <= top}
    return ",".join(str(x) for x in sorted(got | knee_points(reaches, top, exact)))


def beyond(reaches, top, where):
    """A note naming the reaches top leaves unbracketed, or None."""
    out = {k: r for k, r in reaches.items() if whole_pages(r * 5 / 4) > top}
    if not out:
        return None
    return ("%s stops at %d MB: no point above the model's %s reach%s (%s)"
            % (where, top // MB, ", ".join(sorted(out)), "es" if len(out) > 1
               else "", ", ".join("%d MB" % (r // MB) for _, r in
                                  sorted(out.items()))))


# The real-program step (bench/realprog/realprog.c): xz -9 on a generated
# corpus through hugepreload.so, one backing at a time.  xz -9 maps about
# 680 MB in three large blocks whatever the corpus (it reads stdin), so the
# 2 MB pool needs that much at once.  The guest's corpus is small: under
# TCG xz -9 compresses about 200 KB/s (see results/README.md, realprog.csv).
REALPROG = "realprog"

REALPROG_POOL = 720 * MB

# Its second program, memcached -L, holds --kv-items values of 100 bytes
# (-m: 256 B a key + 64 MB, one chunk on the backing) and the driver
# fetches --kv-gets of them at random; natively 1M keys (a 308 MB cache,
# about 8 s a run on this 2-CPU host, loaded), 2M in full (552 MB: within
# REALPROG_POOL with its 16 MB hash table).  Under TCG the same work runs
# ~30x slower: the guest's sizes keep the six backings to about a minute
# and a half in quick (50K keys, 100K fetched: ~15 s a run at most).
# memcached needs unix sockets (kernel/config/base.config has them): a
# kernel without CONFIG_UNIX runs xz alone, the driver saying why
# (results/README.md).
def memcached_args(items, gets):
    return ["--programs", "xz,memcached", "--kv-items", str(items),
            "--kv-gets", str(gets)]


def profile(name, mode, mem_available=None, c=None, llc=None,
            arch="x86_64", reaches=None, cpus=None):
    """The arguments of each benchmark, and the pools/memory they need.

    tiny: a few sizes, 2 reps: a smoke test (the guest test), not data.
    quick: >= 5 reps; the guest run fits ~4 minutes of TCG (which runs
        10-50x slower than native), so its sweep stops at 256 MB; natively
        it reaches 1 GB.
    full: powers of two and the points halfway between them, up to 4 GB
        natively (where memory allows; the chase past the model's 2 MB
        L2 reach where a third of memory allows), 1 GB in the guest, both
        hop kinds.
    Every profile but tiny adds the knee points of the model's reaches
    to the chase (knee_points()).
    "runner" holds the runner's own options for a benchmark that has no
    entry of its own: a new benchmark runs without touching this file.
    llc: the host's last-level cache in bytes (host_llc()), which sizes
    streamk natively; None in the guest or where it is unknown.
    arch: the guest's (or host's) architecture, which decides the default
    backings (contract.arch_pools()).
    reaches: the run's TLB model's reaches (model_reaches()), which place
    the chase's points; GENERIC_REACHES where None or empty.
    cpus: the CPUs of the machine measured natively (a board's, which
    this host is not); this process's where None.
    p["notes"] says where a sweep stops short of a reach.
    """
    guest = mode == "guest"
    reaches = reaches or {"reach %d" % i: r
                          for i, r in enumerate(GENERIC_REACHES)}
    if name == "tiny":
        p = tiny_profile()
    elif name == "quick":
        p = quick_profile(guest, c, arch, reaches)
    elif name == "full":
        p = full_profile(guest, mem_available, reaches)
    else:
        raise ValueError("unknown profile %r" % name)
    c = c or contract.load()
    p["streamk"] = streamk_profile(name, guest, llc, p, mem_available,
                                   c.arrays("streamk"))
    # its one working set is sized by the LLC, which a short 2 MB pool may
    # not hold natively: cut to fit (fit_pool)
    p["fit_pool"] = ("streamk",)
    p.setdefault("backings", {})["tlbreach"] = TLBREACH_BACKINGS
    add_faultscale(p, name, guest, c, arch, cpus)
    add_tlbflush(p, name, guest, c, arch, cpus)
    add_multiload(p, name, guest, cpus)
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
    """The last-level caches streamk's threads use natively, summed, in
    bytes, from `benchtool llc` (sysfs, or CPUID where sysfs has none:
    bench/llc.h; its threads: OMP_NUM_THREADS, else one per CPU this
    process may use, as streamk's); None when unknown."""
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

# faultscale.c's MAX_COUNTS and MAX_TASKS: the most --tasks counts, and
# the most tasks in one
FAULTSCALE_MAX_COUNTS, FAULTSCALE_MAX_TASKS = 32, 256

# faultscale's region per task and its own options, per profile; the
# region shrinks so that the most tasks fit max_bytes (the pool) at once,
# twice over (a cow task holds its file and its copies, a read task its
# file and what its private mapping reserves).  --min-faults:
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


def add_faultscale(p, name, guest, c, arch="x86_64", cpus=None):
    """faultscale's arguments: 1..CPUs tasks (full adds twice the CPUs,
    oversubscribed), each with a region of max_bytes / the most tasks at
    most; in the guest p["smp"] CPUs, and no 1 GB backings but in full
    (each 1 GB page costs seconds of clearing under TCG).  cpus: a
    board's (profile()), where the plan is checked on this host, which
    has fewer: --oversubscribe lets the counts pass the check here, and
    the rows the board writes still say whether a count shared CPUs."""
    board = cpus is not None and not guest
    if guest:
        cpus = GUEST_CPUS
    elif not board:
        cpus = len(os.sched_getaffinity(0))
    # each task faults at least one 2 MB page, twice over (see FAULTSCALE):
    # tiny's 8 MB pool holds two tasks, whatever the machine's CPUs
    fit = p["max_bytes"] // (2 * 2 * MB)
    if cpus > fit:
        p["notes"].append("faultscale stops at %d tasks of %d CPUs: the %s "
                          "profile's pool holds one 2 MB page a task for no "
                          "more" % (fit, cpus, name))
    counts = list(range(1, min(cpus, fit) + 1))
    if len(counts) > FAULTSCALE_MAX_COUNTS - 1:
        # more CPUs than faultscale takes counts (one is kept for full's
        # oversubscribed one): the powers of two, and all of them
        counts = sorted({1 << i for i in range(counts[-1].bit_length())} |
                        {counts[-1]})
    key = name + ("-native" if name == "quick" and not guest else "")
    region, rest = FAULTSCALE[key]
    a = []
    if name == "full":
        counts.append(min(2 * cpus, FAULTSCALE_MAX_TASKS))
    if name == "full" or board:
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


# TLB shootdowns (bench/tlbflush.c, issue 34 point 1): threads of one
# process writing and dropping pages of their own regions, 1..CPUs threads
# (the guest's GUEST_CPUS vCPUs, as faultscale), each with a region of
# TLBFLUSH_REGION (two 2 MB pages; a file thread holds twice that), for
# --duration-ms of each thread's clock per repetition.  The cost is time,
# not a count: a point's repetition takes its duration plus the untimed
# pass and the threads' start.  Under TCG, the quick guest's 16 backing
# and kind pairs x 2 thread counts x 3 repetitions x (100 ms + about
# 50 ms, an estimate) is about 15 s (tests/bench/test_tlbflush Profiles
# checks the arithmetic against TLBFLUSH_GUEST_S).
TLBFLUSH_REGION = 4 * MB
TLBFLUSH = {
    "tiny": ["--reps", "1", "--warmup", "0", "--duration-ms", "20"],
    "quick": ["--reps", "3", "--warmup", "0", "--duration-ms", "100"],
    "quick-native": ["--reps", "3", "--warmup", "0", "--duration-ms", "200"],
    "full": ["--reps", "5", "--warmup", "1", "--duration-ms", "500"],
}


def add_tlbflush(p, name, guest, c, arch="x86_64", cpus=None):
    """tlbflush's arguments: 1..CPUs threads (the board's where given, with
    --oversubscribe so that the plan passes the check on this host), one
    region of TLBFLUSH_REGION each (less where the profile's pool holds
    less for the most threads: a file thread holds two); in the guest no
    1 GB backings but in full, as faultscale."""
    board = cpus is not None and not guest
    if guest:
        cpus = GUEST_CPUS
    elif not board:
        cpus = len(os.sched_getaffinity(0))
    counts = list(range(1, min(cpus, FAULTSCALE_MAX_COUNTS) + 1))
    most = counts[-1]
    region = max(2 * MB, min(TLBFLUSH_REGION, p["max_bytes"] // (2 * most)
                             // (2 * MB) * (2 * MB)))
    key = name + ("-native" if name == "quick" and not guest else "")
    p["tlbflush"] = ["--sizes", str(region), "--threads",
                     ",".join(map(str, counts))] + \
        (["--oversubscribe"] if board else []) + TLBFLUSH[key]
    if guest and name != "full":
        c = c or contract.load()
        small = [b for b in arch_backings(c, arch)
                 if c.needs_pool(b) != KB_1G]
        p.setdefault("backings", {})["tlbflush"] = ",".join(small)


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


# GUPS (bench/gups.c, HPCC RandomAccess): tables of powers of two (HPCC's
# rule; the binary takes the largest that fits a size), every pass of
# 4 x table-size updates followed by HPCC's verification, which reruns
# them: a repetition costs two passes, and --warmup 0 --reps 3 with the
# runner's warm pass before each timed one makes 12.  Under TCG an update
# costs about 100 ns (an estimate from streamk's TCG time: about 40 ns per
# 8-byte access), so the quick guest's 64K, 1M and 4M take about 3 s a
# backing, some 25 s for its seven: the pipeline, not a TLB (TCG's time).
# Natively 256 MB (1 GB full) is far past the 4 KB pages' TLB reach and
# well inside 2 MB pages': 128M updates, about 2 s a pass there.
GUPS_SIZES = {
    ("quick", True): "64K,1M,4M",
    ("quick", False): "64K,1M,16M,256M",
    ("full", True): "64K,256K,1M,4M,16M",
    ("full", False): "64K,256K,1M,4M,16M,64M,256M,1G",
}


def gups_args(name, guest, top=None):
    """gups's arguments for the quick or full profile; top: the largest
    size the profile's pools hold (full's natively), which caps its
    sizes."""
    sizes = [x for x in GUPS_SIZES[(name, guest)].split(",")
             if top is None or size_bytes(x) <= top]
    reps = ["--reps", "3", "--warmup", "0"] if name == "quick" or guest \
        else ["--reps", "5", "--warmup", "1"]
    return ["--sizes", ",".join(sizes)] + reps


# faultlat (bench/faultlat.c): one mapping per backing and condition, each
# page faulted once and timed alone, so no repetitions.  The working set
# gives the count of faults (2 MB backings: size / 2 MB; devzero: size /
# 4 KB); --frag-max bounds the fragmenter's fill, which natively costs about
# 4-5 s per GB filled on this project's VM (and is done once per backing),
# and which the binary also stops at its MemAvailable floor (max(256 MB,
# MemTotal / 8) above the working set).  Under TCG an aged THP fault that
# compacts costs far more than a fresh one: the guest keeps 16 of them.
FAULTLAT_ARGS = {
    ("quick", True): ["--sizes", "32M", "--frag-max", "512M"],
    ("quick", False): ["--sizes", "256M", "--frag-max", "2G"],
    ("full", True): ["--sizes", "64M", "--frag-max", "1G"],
    ("full", False): ["--sizes", "1G", "--frag-max", "0"],
}


def faultlat_args(name, guest):
    """faultlat's arguments for the quick or full profile."""
    return list(FAULTLAT_ARGS[(name, guest)])


# Loaded latency (bench/multiload.c, multichase's multiload): the chase
# (line hop, as multichase's) at one working set past the caches, unloaded
# and while one load thread on every other CPU streams a buffer of its
# own of the same backing (read, and copy: read and written).  The load's
# buffers share the pool with the working set, backing by backing, so
# each is cut to what max_bytes leaves them (at most 64 MB, 16 MB in the
# guest); the binary skips a backing whose pool cannot hold them (1 GB
# pages: a page a thread) and says so.  A repetition is two chases of
# --hops hops.  Under TCG a hop costs about 300 ns (machine.md's chase),
# so the quick guest's 64K hops x 2 chases x 5 repetitions (3, 1 warmup
# and multiload's own warm one) x 2 loads x 7 backings are about 5.5 s,
# and the fills (one mix64 per word of 16 MB per point, an estimate of
# 30 ns each under TCG) about 1 s more: the pipeline, not a TLB (TCG's
# time).
MULTILOAD = {
    "tiny": ("4M", "4M", ["--reps", "2", "--warmup", "0", "--hops", "16K",
                          "--load", "read"]),
    ("quick", True): ("16M", "16M", ["--reps", "3", "--warmup", "1",
                                     "--hops", "64K"]),
    ("quick", False): ("256M", "64M", ["--reps", "5", "--warmup", "1",
                                       "--hops", "1M"]),
    ("full", True): ("64M", "16M", ["--reps", "5", "--warmup", "1",
                                    "--hops", "256K"]),
    ("full", False): ("1G", "256M", ["--reps", "7", "--warmup", "1",
                                     "--hops", "1M"]),
}


def multiload_args(name, guest, max_bytes, cpus=None):
    """multiload's arguments: its working set, and each load thread's
    buffer: what max_bytes leaves beside the working set over the load
    threads (one on each CPU but the chase's), whole 2 MB, at most the
    table's; fewer threads (--load-threads) where the pool holds no 2 MB
    buffer for each.  cpus: the machine's (the guest's GUEST_CPUS)."""
    wss, load, rest = MULTILOAD[name if name == "tiny" else (name, guest)]
    wss = min(size_bytes(wss), max_bytes // 2)
    cpus = GUEST_CPUS if guest else (cpus or len(os.sched_getaffinity(0)))
    threads = max(cpus - 1, 1)
    # fewer threads where the pool holds no 2 MB buffer for each (tiny's)
    fit = max((max_bytes - wss) // (2 * MB), 1)
    few = ["--load-threads", str(fit)] if fit < threads else []
    threads = min(threads, fit)
    each = (max_bytes - wss) // threads // (2 * MB) * (2 * MB)
    load = max(min(size_bytes(load), each), 2 * MB)
    return ["--sizes", str(wss), "--load-bytes", str(load)] + few + rest


def add_multiload(p, name, guest, cpus=None):
    """multiload's entry in profile p (see MULTILOAD)."""
    if isinstance(cpus, (list, tuple, set)):
        cpus = len(cpus)
    p["multiload"] = multiload_args(name, guest, p["max_bytes"], cpus)


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
        "gups": ["--sizes", "64K,1M", "--reps", "2", "--warmup", "0"],
        # per-fault latency: one pass per condition (no repetitions)
        "faultlat": ["--sizes", "4M", "--frag-max", "64M"],
        "runner": ["--sizes", "64K,4M", "--reps", "2", "--warmup", "1"],
        REALPROG: ["--corpus", "64K", "--reps", "1", "--sample-ms", "500"]
        + memcached_args(10000, 10000),
        "max_bytes": 8 * MB, "timeout": 600, "notes": [],
    }


def quick_profile(guest, c, arch, reaches):
    top = (256 if guest else 1024) * MB
    # the guest skips the point at each reach itself: TCG time
    sizes = chase_sizes(BASE_SIZES if guest else BASE_SIZES_NATIVE,
                        reaches.values(), top, exact=not guest)
    stream_sizes = "64K,1M,8M,64M" if guest else "64K,1M,8M,64M,256M,1G"
    p = {
        "chase": ["--sizes", sizes, "--reps", "5",
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
        "gups": gups_args("quick", guest),
        # per-fault latency, fresh and aged; the fragmenter fills up to
        # --frag-max (guest: bounded by its MemAvailable floor)
        "faultlat": faultlat_args("quick", guest),
        "runner": ["--sizes", stream_sizes, "--reps", "5", "--warmup", "1"],
        # 512K: about 20 s of TCG for the six backings
        REALPROG: ["--corpus", "512K", "--reps", "1", "--sample-ms", "1000"]
        + memcached_args(50000, 100000)
        if guest else ["--corpus", "16M", "--reps", "3"]
        + memcached_args(1000000, 4000000),
        "max_bytes": top,
        "timeout": 900,
        "notes": [n for n in [beyond(reaches, top, "the quick chase")] if n],
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


def full_profile(guest, mem_available, reaches):
    """The chase goes past every reach of the model where memory allows
    (at least to 4 GB natively), 1 GB in the guest (TCG); the other
    benchmarks to 4 GB natively (top).  Where the chase stops short of a
    reach, p["notes"] says so."""
    top = GB if guest else 4 * GB
    want = max([top] + [whole_pages(r * 5 / 4) for r in reaches.values()])
    chase_top = top if guest else want
    if mem_available and not guest:
        # leave room: the 2M pool, a 4K mapping, the chase's cycle
        while top > 256 * MB and 3 * top > mem_available:
            top //= 2
        chase_top = max(min(want, mem_available // 3 // (2 * MB) * (2 * MB)),
                        top)
    sweep = []
    s = 16 << 10
    while s <= chase_top:
        sweep += [s] + ([s * 3 // 2] if s * 3 // 2 <= chase_top else [])
        s *= 2
    where = "the full chase" + (" (guest: TCG time)" if guest else
                                " (a third of MemAvailable)"
                                if chase_top < want else "")
    notes = [n for n in [beyond(reaches, chase_top, where)] if n]
    return {
        "chase": ["--sizes", chase_sizes(map(str, sweep), reaches.values(),
                                         chase_top), "--reps", "7",
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
        "gups": gups_args("full", guest, top),
        "faultlat": faultlat_args("full", guest),
        "runner": ["--min", "16K", "--max", str(top), "--reps", "5",
                   "--warmup", "1"],
        REALPROG: ["--corpus", "2M", "--reps", "1", "--sample-ms", "1000"]
        + memcached_args(200000, 400000)
        if guest else ["--corpus", "64M", "--reps", "5"]
        + memcached_args(2000000, 8000000),
        "max_bytes": chase_top, "timeout": 7200, "notes": notes,
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


def override_sizes(p, sizes, arch="x86_64", top=None):
    """--sizes replaces the working sets of every benchmark but fault (and
    with them the chase's knee points and their notes); top: its largest
    in bytes, as the runner parses it (bench/run.py asks `benchtool
    sizes`)."""
    top = top or max(size_bytes(x) for x in sizes.split(","))
    p["notes"] = []
    for b in ("chase", "stream", "streamk", "mlp", "gups", "runner"):
        a = list(p[b])
        for opt in ("--sizes", "--min", "--max"):
            if opt in a:
                i = a.index(opt)
                del a[i:i + 2]
        p[b] = ["--sizes", sizes] + a
    p["max_bytes"] = max(top, size_bytes(p["fault"][1].split(",")[-1]))
    size_pools(p, arch=arch)
