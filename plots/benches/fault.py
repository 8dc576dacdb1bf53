# SPDX-License-Identifier: GPL-2.0
"""fault.csv (bench/fault.c): fault cost and count per MB, demand against
populate, and mmap setup cost; one figure and three summary sections."""
import statistics

import contract
from parts import Job, Parts, Section
from table import baseline, fmt_num, fnum

ORDER = 30
FIGURES = {
    "faults": "Fault cost and faults per MB, demand against populate, and mmap setup cost per call "
              "(fault.csv).",
}
# after the chase's page walks, before its latency under emulated timing
RANK = 30


def sections_of(fault, src):
    """Fault cost against the baseline, faults per MB, and the hugetlb
    backings' mmap setup cost."""
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
            f"fault.csv: us_per_mb, mode demand and populate; ratio = backing demand "
            f"us_per_mb / {base} demand us_per_mb",
            ["backing", "demand", "populate", f"demand vs {base}"], rows, RANK)]
    rows = [[b, fmt_num(med(b, "demand", "faults_per_mb")),
             fmt_num(med(b, "populate", "faults_per_mb"))] for b in fault.backings()]
    out.append(Section("Faults per MB (software event count)",
                "fault.csv: faults_per_mb, mode demand and populate (perf's page-fault "
                "software event)", ["backing", "demand", "populate"], rows, RANK))
    rows = []
    c = contract.load()
    names = [b for b in fault.backings()
             if b in c.backing_names() and c.needs_pool(b)]
    for b in names:
        ref = next((med(n, "setup", "us_per_call") for n in c.backing_names()
                    if n.startswith("devhugetlb") and c.needs_pool(n) == c.needs_pool(b)), None)
        v = med(b, "setup", "us_per_call")
        rows.append([b, fmt_num(v, "us/call"),
                     f"{v / ref:.2f}x" if v is not None and ref else "n/a"])
    out.append(Section(f"mmap setup cost of the hugetlb backings against devhugetlb ({cost})",
                "fault.csv: us_per_call, mode setup (one mmap + munmap, nothing touched); "
                "ratio against devhugetlb of the same page size",
                ["backing", "setup", "vs devhugetlb"], rows, RANK))
    return out


def parts(run):
    fault = run.table("fault")
    if not fault.ok:
        run.notes.append(f"faults skipped: {fault.problem}")
        return Parts()
    return Parts([Job("faults", "faults.gp", fault.path, fault.backings(), timing=run.timing)],
                 sections_of(fault, run.source))
