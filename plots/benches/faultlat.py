# SPDX-License-Identifier: GPL-2.0
"""faultlat.csv (bench/faultlat.c): per-fault first-touch latency as a
distribution (p50, p90, p99, max) per backing, on fresh memory and after
a fragmenter has aged it; a figure, a summary section, and check_row(),
the oracle that holds each row's numbers against its independent
sources (the loop's wall time, getrusage's fault count, smaps and
pagemap)."""
from bench import contract
from plots.parts import Job, Parts, Section
from plots.benches._fixture import MB
from plots.table import baseline, fmt_num, fnum, order_key

ORDER = 32
RANK = 32
FIGURES = {
    "faultlat": "First-touch fault latency per fault, fresh memory against memory aged by a "
                "fragmenter: box p50..p90, whisker to max, dot p99, log scale (faultlat.csv).",
}
CONDITIONS = ("fresh", "aged")
VMSTAT = ("thp_fault_alloc", "thp_fault_fallback", "compact_stall",
          "htlb_buddy_alloc_success", "htlb_buddy_alloc_fail")
TWO_MB = 2 * MB
# the clock check: what the loop may cost outside the timed stores, as a
# multiple of the same loop's cost measured over the touched pages, plus
# this share of the wall time (noise: an interrupt between two stores)
LOOP_SLACK = 4.0
WALL_SLACK = 0.01


def _n(r, col):
    v = fnum(r.get(col))
    return v if v is not None else None


def check_row(r):
    """The oracle: a list of what in row r disagrees with an independent
    source (empty: none).
    - clock: the per-fault times may not exceed the loop's wall time, and
      may miss of it only the loop's own cost between the timed stores
      (loop_ns_per_iter, measured by the same loop over the touched pages)
      times LOOP_SLACK, plus WALL_SLACK of the wall time;
    - count: every page of the mapping was timed (faults = size_bytes /
      page), and getrusage's minor faults over the loop equal them, but for
      at most one more per 2 MB of a 4 KB mapping (a page table's: seen
      once per 2 MB on Linux 6.18) and 2 else;
    - page: a 4 KB row has KernelPageSize 4 and no AnonHugePages; a hugetlb
      row has KernelPageSize = page_kb and every fault huge (pagemap); a
      THP row has pagemap's huge faults x 2 MB = smaps' AnonHugePages."""
    bad = []
    pk = int(_n(r, "page_kb") or 0)
    size = int(_n(r, "size_bytes") or 0)
    iters = size // (pk * 1024) if pk else 0
    faults = int(_n(r, "faults") or 0)
    wall, total = _n(r, "wall_us"), _n(r, "sum_us")
    loop = _n(r, "loop_ns_per_iter") or 0.0
    if wall is None or total is None:
        bad.append("clock: no wall_us or sum_us")
    else:
        missed = wall - total
        allow = LOOP_SLACK * iters * max(loop, 0.0) / 1e3 + WALL_SLACK * wall
        if missed < -0.001 * wall - 1:
            bad.append(f"clock: the faults' times ({total:.1f} us) exceed the loop's wall "
                       f"time ({wall:.1f} us)")
        elif missed > allow:
            bad.append(f"clock: {missed:.1f} us of the loop's {wall:.1f} us in no fault's "
                       f"time, over the {allow:.1f} us the loop itself may take")
    if faults != iters:
        bad.append(f"count: {faults} faults timed, the mapping has {iters} pages")
    mf = _n(r, "minflt")
    extra = size // TWO_MB if pk == 4 else 2
    if mf is None or not 0 <= mf - iters <= extra:
        bad.append(f"count: getrusage says {mf} minor faults over the loop for {iters} pages")
    kps, ahp = int(_n(r, "kernel_page_kb") or 0), int(_n(r, "anon_huge_kb") or 0)
    huge = _n(r, "huge_faults")
    if huge is None:   # no pagemap on that kernel: smaps alone
        huge = ahp // 2048 if pk > 4 and kps == 4 else iters if kps == pk and pk > 4 else 0
    huge = int(huge)
    if pk == 4:
        if kps != 4 or ahp or huge:
            bad.append(f"page: a 4 KB row with KernelPageSize {kps} kB, AnonHugePages {ahp} "
                       f"kB, {huge} huge faults")
    elif kps == pk:
        if huge != iters:
            bad.append(f"page: {huge} of {iters} faults mapped a {pk} kB page (pagemap), "
                       f"smaps says KernelPageSize {kps} kB")
    elif huge * 2048 != ahp:
        bad.append(f"page: {huge} faults counted huge, smaps' AnonHugePages says "
                   f"{ahp // 2048} ({ahp} kB)")
    return bad


def section_of(fl, meta, src):
    """Per backing and condition: p50/p99/max against devzero's (for the
    2 MB rows against 512 4 KB faults: the work one 2 MB fault replaces),
    the share of faults that got the promised page, the vmstat deltas and
    the oracle's verdict."""
    base = baseline()
    rows = []

    def at(b, cond):
        return next((r for r in fl.rows if r["backing"] == b and r["condition"] == cond), None)

    for b in sorted(fl.backings(), key=order_key):
        for cond in CONDITIONS:
            r = at(b, cond)
            if r is None:
                continue
            d0 = at(base, cond)
            pk = int(_n(r, "page_kb") or 4)
            per = pk // 4
            p50, p99, mx = _n(r, "p50_us"), _n(r, "p99_us"), _n(r, "max_us")
            if b == base or d0 is None:
                vs = "baseline" if b == base else "n/a"
            else:
                b50 = _n(d0, "p50_us")
                vs = (f"{p50 / (b50 * per):.2f}x" if p50 is not None and b50 else "n/a")
            faults = int(_n(r, "faults") or 0)
            huge = int(_n(r, "huge_faults") or 0)
            got = "4 KB" if pk == 4 else f"{huge}/{faults}"
            vm = " ".join(f"{k.replace('htlb_buddy_alloc_', 'buddy_')}={int(_n(r, k))}"
                          for k in VMSTAT if _n(r, k))
            check = check_row(r)
            rows.append([b, cond, str(faults), fmt_num(p50, "us"), fmt_num(_n(r, "p90_us"), "us"),
                         fmt_num(p99, "us"), fmt_num(mx, "us"), vs, got,
                         fmt_num(_n(r, "free_2m_blocks")), vm or "-",
                         "ok" if not check else "FAILS: " + "; ".join(check)])
    absent = ((meta.get("bench_meta") or {}).get("faultlat_vmstat") or {}).get("absent")
    title = "Fault latency per fault, fresh and aged memory: p50/p99/max against " + base
    if not contract.timing_is_hardware(src):
        title += f" ({contract.timing_label(src)}: not what a CPU does)"
    return Section(title,
                   "faultlat.csv: each page of a new mapping faulted by one store, timed alone "
                   "(wall time, emulated under TCG); p50/p90/p99 nearest rank, max; aged: after "
                   "the fragmenter (4 KB pages filled to the MemAvailable floor or --frag-max, "
                   "every other one freed; frag_bytes held). vs " + base + ": p50 against " +
                   base + "'s p50 times the 4 KB pages one fault maps (512 for 2 MB). huge: "
                   "faults that mapped the promised page (pagemap). free 2M: the buddy "
                   "allocator's free 2 MB blocks before the loop (buddyinfo). vmstat: system-wide "
                   "deltas over the loop" + (f" (absent on this kernel: {', '.join(absent)})"
                                             if absent else "") +
                   ". oracle: check_row (wall time, getrusage, smaps/pagemap)",
                   ["backing", "memory", "faults", "p50", "p90", "p99", "max", f"p50 vs {base}",
                    "huge", "free 2M", "vmstat", "oracle"], rows, RANK)


def parts(run):
    """Nothing without faultlat.csv (a note when the run ran faultlat)."""
    if not run.exists("faultlat.csv"):
        if "faultlat" in (run.meta.get("bench_exit") or {}):
            run.notes.append("faultlat skipped: faultlat.csv missing")
        return Parts()
    if not run.listed("faultlat"):
        run.notes.append("faultlat skipped: the contract lists no faultlat benchmark")
        return Parts()
    fl = run.usable("faultlat")
    if fl is None:
        return Parts()
    return Parts([Job("faultlat", "faultlat.gp", fl.path, fl.backings(), timing=run.timing)],
                 [section_of(fl, run.meta, run.source)])


def fixture(spec, rng):
    """Invented faultlat rows for the plot tests: a 4 KB fault of about a
    microsecond, a 2 MB fault of about 250 (clearing the page), a 1 GB one
    of about 130 000; aged, THP compacts (a longer tail, some fallbacks),
    the pools are as fresh.  Rows that pass check_row."""
    rows = []
    size = 64 * MB
    for b, pk in spec.backings:
        n = size // (pk * 1024) if pk < 1024 * 1024 else 1
        sz = max(size, pk * 1024)
        for cond in CONDITIONS:
            base = {4: 1.2, 2048: 250.0}.get(pk, 130000.0) * spec.fault_scale
            tail = 1.0
            huge = n if pk > 4 else 0
            if b == "thp" and cond == "aged":
                tail, huge = 40.0, n - n // 8
            p50 = base * rng.uniform(0.95, 1.05) * (3.0 if tail > 1 else 1.0)
            loop = 22.0
            total = p50 * 1.2 * n
            wall = total + n * loop / 1e3 * 1.1
            rows.append(dict(
                backing=b, page_kb=pk, condition=cond, size_bytes=sz, faults=n,
                p50_us=round(p50, 3), p90_us=round(p50 * 1.3, 3),
                p99_us=round(p50 * 2.5 * tail, 3), max_us=round(p50 * 4 * tail, 3),
                mean_us=round(total / n, 3), huge_faults=huge,
                kernel_page_kb=4 if b in ("devzero", "thp") else pk,
                anon_huge_kb=huge * 2048 if b == "thp" else 0,
                minflt=n, wall_us=round(wall, 3), sum_us=round(total, 3),
                loop_ns_per_iter=loop, clock_ns_per_iter=70.0,
                free_2m_blocks=4000 if cond == "fresh" else 12,
                frag_bytes=0 if cond == "fresh" else 1 << 30,
                frag_build_s=0.0 if cond == "fresh" else 4.0,
                thp_fault_alloc=n if b == "thp" else 0,
                thp_fault_fallback=n // 8 if b == "thp" and cond == "aged" else 0,
                compact_stall=n if b == "thp" and cond == "aged" else 0,
                htlb_buddy_alloc_success=0, htlb_buddy_alloc_fail=0))
    return rows
