# SPDX-License-Identifier: GPL-2.0
"""fault.csv (bench/fault.c): fault cost and count per MB, demand against
populate, and setup cost (the prepare step and mmap + munmap); one figure
and three summary sections."""
import statistics

from bench import contract
from plots.parts import Job, Parts, Section
from plots.benches._fixture import MB, fmt
from plots.table import baseline, fmt_num, fnum

ORDER = 30
# a run recorded before fault timed the prepare step
DEFAULTS = {"prepare_us_per_call": ""}
FIGURES = {
    "faults": "Fault cost and faults per MB, demand against populate, and mmap setup cost per call "
              "(fault.csv).",
}
# after the chase's page walks, before its latency under emulated timing
RANK = 30


def sections_of(fault, src):
    """Fault cost against the baseline, faults per MB, and the hugetlb
    backings' setup cost, made and mapped."""
    base = baseline()

    def med(b, mode, col):
        vals = [fnum(r.get(col)) for r in fault.rows if r["backing"] == b and r["mode"] == mode]
        vals = [v for v in vals if v is not None]
        return statistics.median(vals) if vals else None

    cost = {"icount": "instruction-count time of the kernel's fault path",
            "tcg": "emulated time, not hardware"}.get(src, contract.timing_label(src))
    d0 = med(base, "demand", "us_per_mb")
    rows = []
    for b in fault.backings():
        d, p = med(b, "demand", "us_per_mb"), med(b, "populate", "us_per_mb")
        ratio = f"{d / d0:.2f}x" if d is not None and d0 else "n/a"
        rows.append([b, fmt_num(d, "us/MB"), fmt_num(p, "us/MB"), ratio])
    out = [Section(f"Fault cost relative to {base} ({cost})",
            f"fault.csv: us_per_mb, mode demand and populate: each the whole window per MB, "
            f"mmap, the touch of every 4 KB page (demand) or the prefault (populate), "
            f"munmap and freeing the pages; ratio = backing demand us_per_mb / {base} "
            f"demand us_per_mb",
            ["backing", "demand", "populate", f"demand vs {base}"], rows, RANK)]
    rows = [[b, fmt_num(med(b, "demand", "faults_per_mb")),
             fmt_num(med(b, "populate", "faults_per_mb"))] for b in fault.backings()]
    out.append(Section("Faults per MB (getrusage count)",
                "fault.csv: faults_per_mb, mode demand and populate (getrusage's minor + "
                "major faults of the process, which count populate's faults too; perf's "
                "page-faults software event misses them)",
                ["backing", "demand", "populate"], rows, RANK))
    rows = []
    c = contract.load()
    names = [b for b in fault.backings()
             if b in c.backing_names() and c.needs_pool(b)]
    def setup(b):
        """(prepare, mmap + munmap, total) per call of b's setup rows;
        total None where a part is missing (runs before prepare was timed)."""
        p, m = med(b, "setup", "prepare_us_per_call"), med(b, "setup", "us_per_call")
        return p, m, (p + m if p is not None and m is not None else None)

    for b in names:
        ref = next((setup(n)[2] for n in c.backing_names()
                    if n.startswith("devhugetlb") and c.needs_pool(n) == c.needs_pool(b)), None)
        p, m, t = setup(b)
        rows.append([b, fmt_num(p, "us/call"), fmt_num(m, "us/call"), fmt_num(t, "us/call"),
                     f"{t / ref:.2f}x" if t is not None and ref else "n/a"])
    out.append(Section(f"Setup cost of the hugetlb backings against devhugetlb ({cost})",
                "fault.csv, mode setup, per call, nothing touched: prepare_us_per_call "
                "(open the device; make, unlink and size the hugetlbfs file or the memfd; "
                "shmget) and us_per_call (mmap + munmap and the release).  Compare the "
                "totals: devhugetlb makes its hugetlbfs file inside mmap, hugetlbfs in its "
                "prepare step.  Ratio: total against devhugetlb's of the same page size",
                ["backing", "prepare", "mmap + munmap", "total", "total vs devhugetlb"],
                rows, RANK))
    return out


def parts(run):
    fault = run.usable("fault", "faults", DEFAULTS)
    if fault is None:
        return Parts()
    return Parts([Job("faults", "faults.gp", fault.path, fault.backings(), timing=run.timing)],
                 sections_of(fault, run.source))


# one mmap + munmap of the fixtures, and one prepare step, in us: neither
# scales with the size
FIXTURE_SETUP_US = {"devzero": 5.0, "shm": 21.0, "hugetlbfs": 48.0, "devhugetlb": 8.0,
                    "maphugetlb": 7.0, "memfd": 18.0, "thp": 6.0}
FIXTURE_PREPARE_US = {"devzero": 2.0, "shm": 3.0, "hugetlbfs": 8.0, "devhugetlb": 2.0,
                      "maphugetlb": 0.0, "memfd": 4.0, "thp": 0.0}


def fixture(spec, rng):
    """Invented fault rows for the plot tests: demand, populate and setup
    per backing, every page faulting once (thp with some fallbacks)."""
    rows = []
    for b, pk in spec.backings:
        per_mb = 1024.0 / pk  # faults per MB when every page faults once
        dem, pop = (210.0, 120.0) if pk == 4 else (95.0, 88.0) if pk == 2048 else (82.0, 80.0)
        if b == "thp":
            dem, pop = 130.0, 100.0
            per_mb = 0.75  # some 4K fallbacks around the edges
        setup = FIXTURE_SETUP_US[b.replace("-1G", "")]
        prep = fmt(FIXTURE_PREPARE_US[b.replace("-1G", "")] * spec.fault_scale, 3)
        mb = 16
        for mode, us, fpm in (("demand", dem, per_mb), ("populate", pop, per_mb)):
            us = us * spec.fault_scale * rng.uniform(0.95, 1.05)
            rows.append(dict(backing=b, page_kb=pk, mode=mode, us_per_mb=fmt(us, 3),
                             faults_per_mb=fmt(fpm, 6), size_bytes=mb * MB,
                             us_per_call=fmt(us * mb, 3), prepare_us_per_call=prep))
        rows.append(dict(backing=b, page_kb=pk, mode="setup", faults_per_mb=fmt(0.0, 6),
                         size_bytes=mb * MB,
                         us_per_call=fmt(setup * spec.fault_scale * rng.uniform(0.95, 1.05), 3),
                         prepare_us_per_call=prep))
    return rows
